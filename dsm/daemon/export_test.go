package daemon

import "time"

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

// AsUser runs f on a thread with cred's effective ids (nil: as this
// process): the sockets f makes are cred's user's.
var AsUser = asUser

// What the tests outside the package need to join Slurm steps by hand.
const (
	KindStepJoin  = kindStepJoin
	KindStepReady = kindStepReady
)

// StepReady is the frame that gives a step's engine socket.
type StepReady = stepReady

// SetAnswerWait sets how long Submit waits for svmd's first answer, and
// returns what puts it back.
func SetAnswerWait(d time.Duration) (restore func()) {
	old := answerWait
	answerWait = d
	return func() { answerWait = old }
}
