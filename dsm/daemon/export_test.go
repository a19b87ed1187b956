package daemon

// What the tests outside the package need to speak the control protocol
// by hand, as a hostile or broken client would.
const (
	KindSubmit   = kindSubmit
	KindAccepted = kindAccepted
	KindOutput   = kindOutput
	KindExit     = kindExit
)

// Exit is the frame that ends a submission.
type Exit = exit
