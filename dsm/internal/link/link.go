// Package link is the connection between an application process and the
// engine that serves its rank: a unix stream socket carrying length-prefixed
// msgpack frames, with file descriptors (the rank's memfd one way, its
// userfaultfd the other) passed as SCM_RIGHTS. Every call is a request
// answered by one reply.
//
// A Conn reads and writes its socket with blocking system calls, not
// through the Go runtime's poller: a thread waiting for the other end is
// woken by the kernel directly, which is what a call's round trip costs
// (the poller adds a hand-off between threads on each side).
package link

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/protocol"
)

// Op is a request kind.
type Op uint8

// The requests.
const (
	OpJoin     Op = iota + 1 // Rank joins; reply: Join, the memfd, and the control area's memfd with AsyncWrites
	OpAttach                 // with the userfaultfd; reply: empty
	OpAlloc                  // Size; reply: Value = address
	OpMalloc                 // Size; reply: Value = address
	OpFree                   // Addr
	OpShare                  // Root, Addr; reply: Value, Zap
	OpLock                   // ID; reply: Zap
	OpUnlock                 // ID
	OpBarrier                // ID, Members; reply: Zap
	OpValidate               // Addr, Size, Write
	OpStats                  // reply: Stats
	OpClose
	OpFetchAdd // ID = counter, Delta; reply: Value = the counter's previous value
	OpSetHome  // Addr, Size, Root = the home rank
	// OpWaitCounter waits until counter ID is at least Delta; reply: Value
	// = the counter's value then.
	OpWaitCounter
	// OpSlot asks for a call slot (Slot); reply: its three descriptors. An
	// engine that has none answers with an error, and the calls go by the
	// socket.
	OpSlot
)

var opNames = [...]string{"", "join", "attach", "alloc", "malloc", "free", "share", "lock", "unlock", "barrier", "validate", "stats", "close", "fetch-add", "set-home", "wait-counter", "slot"}

// Allocates reports whether o is a call on the job's allocator or its
// counters, which waits for rank 0 or a counter's keeper, not for ranks.
func (o Op) Allocates() bool {
	return o == OpAlloc || o == OpMalloc || o == OpFree || o == OpFetchAdd
}

func (o Op) String() string {
	if int(o) < len(opNames) && o > 0 {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Request is a call from the application.
type Request struct {
	Op      Op     `msgpack:"o"`
	Rank    int    `msgpack:"r,omitempty"`
	ID      uint32 `msgpack:"i,omitempty"`
	Size    uint64 `msgpack:"s,omitempty"`
	Addr    uint64 `msgpack:"a,omitempty"`
	Root    int    `msgpack:"t,omitempty"`
	Write   bool   `msgpack:"w,omitempty"`
	Members []int  `msgpack:"m,omitempty"`
	Delta   int64  `msgpack:"d,omitempty"`
	// Funneled (OpJoin): no thread of the application writes shared
	// memory while another is inside a call.
	Funneled bool `msgpack:"f,omitempty"`
	// Written (with Join.AsyncWrites, on calls that may close the
	// interval): the pages the application wrote without a fault.
	Written []protocol.PageRange `msgpack:"wr,omitempty"`
	// Local (OpStats, OpClose): what a rank alone in its job did without
	// calling the engine, since it joined.
	Local *LocalCounts `msgpack:"l,omitempty"`
	// Bound (OpJoin): the application runs on one CPU, CPU.
	Bound bool `msgpack:"b,omitempty"`
	CPU   int  `msgpack:"c,omitempty"`
}

// LocalCounts are the synchronisations a rank alone in its job completes
// by itself: there is no one to synchronise with.
type LocalCounts struct {
	Barriers, LockAcquires int64
}

// Reply answers a request. Err, if set, says what was wrong with it.
type Reply struct {
	Err   string `msgpack:"e,omitempty"`
	Value uint64 `msgpack:"v,omitempty"`
	// Zap are the pages the application must drop before it goes on.
	Zap   []protocol.PageRange `msgpack:"z,omitempty"`
	Join  *Join                `msgpack:"j,omitempty"`
	Stats *Stats               `msgpack:"st,omitempty"`
}

// Join describes the job to a joining rank.
type Join struct {
	NProcs   int
	Base     uint64
	Size     uint64
	PageSize int
	Locks    uint32
	Barriers uint32
	// AsyncWrites: the application registers the region with asynchronous
	// write protection and reports the pages it wrote (Request.Written),
	// of those its control area (the second descriptor) tracks.
	AsyncWrites bool
	// Spin is how long the application polls for a reply before it sleeps
	// (link.Conn.SetSpin): nonzero when it has a CPU of its own.
	Spin time.Duration
}

// Stats are a rank's counters (see dsm.Stats).
type Stats struct {
	ReadFaults, WriteFaults, Twins, DiffsCreated, DiffsApplied, DiffBytes int64
	MessagesSent, MessagesReceived, BytesSent, BytesReceived              int64
	MessagesByType                                                        map[string]int64
	LockAcquiresLocal, LockAcquiresRemote, Barriers, Invalidations        int64
}

// maxFrame bounds a frame, so a corrupt length cannot make a peer allocate
// without limit. A request, which an engine inside svmd reads from any
// process of the job's user, is bounded much lower: the largest, a
// processor-set barrier's list of members, takes a few bytes per rank.
const (
	maxFrame   = 64 << 20
	maxRequest = 1 << 20
)

// Conn is one end of a link. Send and Recv may be called from different
// goroutines, but each by one goroutine at a time.
type Conn struct {
	// f owns the socket, in blocking mode; fd is its descriptor, which
	// system calls reach through raw (see use).
	f         *os.File
	raw       syscall.RawConn
	fd        int
	wmu       sync.Mutex
	closeOnce sync.Once
	rbuf      []byte // bytes read and not yet consumed
	buf       []byte // the read buffer
	oob       []byte
	// spin is how long Recv polls before it sleeps (SetSpin).
	spin time.Duration
}

// FD is the connection's descriptor, to wait on with poll(2) beside
// others; Buffered says whether Recv has bytes already read to go on with.
func (c *Conn) FD() int { return c.fd }

// Buffered reports whether bytes already read wait in c: Recv may return
// without the descriptor becoming readable.
func (c *Conn) Buffered() bool { return len(c.rbuf) > 0 }

// SetSpin makes Recv poll for up to d, yielding the CPU between polls,
// before it sleeps in the kernel. Waking a sleeping thread costs tens of
// microseconds when its CPU has gone idle; a thread with a CPU of its own
// loses nothing by polling instead.
func (c *Conn) SetSpin(d time.Duration) { c.spin = d }

// New takes over a connected unix stream socket. Its descriptor leaves the
// runtime's poller (net.UnixConn.File would keep it registered there, and
// every wake-up on the socket would wake the poller's thread too).
func New(c *net.UnixConn) (*Conn, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("link: %w", err)
	}
	fd := -1
	cerr := raw.Control(func(s uintptr) {
		fd, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	})
	c.Close()
	if err == nil {
		err = cerr
	}
	if err == nil {
		if err = unix.SetNonblock(fd, false); err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("link: taking over the connection: %w", err)
	}
	return newConn(os.NewFile(uintptr(fd), "link")), nil
}

func newConn(f *os.File) *Conn {
	raw, err := f.SyscallConn()
	if err != nil {
		panic(err) // an *os.File from NewFile always has one
	}
	return &Conn{f: f, raw: raw, fd: int(f.Fd()), buf: make([]byte, 64<<10), oob: make([]byte, unix.CmsgSpace(4*4))}
}

// use runs call on the descriptor, which stays open until call returns even
// if Close runs meanwhile (it cannot be closed and its number reused under
// a system call); after Close it returns net.ErrClosed without calling.
func (c *Conn) use(call func(fd int)) error {
	if err := c.raw.Control(func(fd uintptr) { call(int(fd)) }); err != nil {
		return net.ErrClosed
	}
	return nil
}

// Dial connects to the engine's socket.
func Dial(path string) (*Conn, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("link: socket: %w", err)
	}
	f := os.NewFile(uintptr(fd), path)
	for {
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, &net.OpError{Op: "dial", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: os.NewSyscallError("connect", err)}
	}
	return newConn(f), nil
}

// Close closes the connection; a Recv under way returns.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.use(func(fd int) { unix.Shutdown(fd, unix.SHUT_RDWR) }) // wakes a blocked read
		c.wmu.Lock()
		c.f.Close()
		c.wmu.Unlock()
	})
	return nil
}

// PeerCred returns the credentials of the process at the other end, as they
// were when it connected (SO_PEERCRED).
func (c *Conn) PeerCred() (*unix.Ucred, error) {
	var cred *unix.Ucred
	var err error
	if cerr := c.use(func(fd int) { cred, err = unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED) }); cerr != nil {
		return nil, cerr
	}
	return cred, err
}

// PeerCred returns the credentials of the process at the other end of c,
// as they were when it connected (SO_PEERCRED).
func PeerCred(c *net.UnixConn) (*unix.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, credErr
}

// Send writes one frame holding v, passing fds with it.
func (c *Conn) Send(v any, fds ...int) error {
	body, err := msgpack.Marshal(v)
	if err != nil {
		return fmt.Errorf("link: encode: %w", err)
	}
	frame := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(len(body)))
	frame = append(frame, body...)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	for len(frame) > 0 {
		var n int
		if cerr := c.use(func(fd int) { n, err = unix.SendmsgN(fd, frame, oob, nil, unix.MSG_NOSIGNAL) }); cerr != nil {
			err = unix.EBADF
		}
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EBADF):
			return fmt.Errorf("link: send: %w", net.ErrClosed)
		case err != nil:
			return fmt.Errorf("link: send: %w", err)
		}
		frame, oob = frame[n:], nil
	}
	return nil
}

// Call sends req, with fds, and reads its reply (the rank's side): a call
// by the socket.
func (c *Conn) Call(req Request, fds ...int) (Reply, []int, error) {
	if err := c.Send(req, fds...); err != nil {
		return Reply{}, nil, err
	}
	var rep Reply
	got, err := c.Recv(&rep)
	return rep, got, err
}

// Recv reads one frame into v and returns the descriptors that came with
// it. io.EOF means the peer closed the connection between frames. A frame
// for a *Request may take 1 MiB, any other 64 MiB.
func (c *Conn) Recv(v any) ([]int, error) {
	limit := uint32(maxFrame)
	if _, ok := v.(*Request); ok {
		limit = maxRequest
	}
	var fds []int
	var deadline time.Time
	if c.spin > 0 {
		deadline = time.Now().Add(c.spin)
	}
	for {
		if len(c.rbuf) >= 4 {
			n := binary.LittleEndian.Uint32(c.rbuf)
			if n > limit {
				closeAll(fds)
				return nil, fmt.Errorf("link: frame of %d bytes exceeds %d", n, limit)
			}
			if uint64(len(c.rbuf)) >= 4+uint64(n) {
				body := c.rbuf[4 : 4+n]
				err := protocol.ScanMsgpack(body)
				if err == nil {
					err = msgpack.Unmarshal(body, v)
				}
				c.rbuf = c.rbuf[:copy(c.rbuf, c.rbuf[4+n:])]
				if err != nil {
					closeAll(fds)
					return nil, fmt.Errorf("link: decode: %w", err)
				}
				return fds, nil
			}
		}
		var n, oobn int
		var err error
		if cerr := c.use(func(fd int) {
			n, oobn, _, _, err = unix.Recvmsg(fd, c.buf, c.oob, unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT)
		}); cerr != nil {
			err = unix.EBADF
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			if !deadline.IsZero() && time.Now().Before(deadline) {
				Yield()
			} else if cerr := c.use(func(fd int) { err = waitReadable(fd) }); cerr != nil || err != nil {
				if cerr != nil {
					err = cerr
				}
				closeAll(fds)
				return nil, fmt.Errorf("link: %w", err)
			}
			continue
		}
		if errors.Is(err, unix.EBADF) {
			err = net.ErrClosed
		}
		n, oobn = max(n, 0), max(oobn, 0) // -1 on some errors
		if oobn > 0 {
			got, perr := parseRights(c.oob[:oobn])
			fds = append(fds, got...)
			if perr != nil {
				closeAll(fds)
				return nil, perr
			}
		}
		c.rbuf = append(c.rbuf, c.buf[:n]...)
		if err != nil {
			closeAll(fds)
			if errors.Is(err, io.EOF) && len(c.rbuf) > 0 {
				return nil, fmt.Errorf("link: connection closed inside a frame: %w", io.ErrUnexpectedEOF)
			}
			return nil, err
		}
		if n == 0 {
			closeAll(fds)
			if len(c.rbuf) > 0 {
				return nil, fmt.Errorf("link: connection closed inside a frame: %w", io.ErrUnexpectedEOF)
			}
			return nil, io.EOF
		}
	}
}

// waitReadable sleeps until fd has data or its connection ends. It waits
// in poll(2), not in recvmsg(2): a reader asleep in recvmsg on a unix
// stream socket is woken each time the peer reads what this end sent
// (the wake-up that says there is room to write again), which costs two
// context switches a call; poll sleeps until there is something to read.
func waitReadable(fd int) error {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(pfd, -1)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// Yield gives the CPU to another thread that wants it, if any.
func Yield() { syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("link: control message: %w", err)
	}
	var fds []int
	for i := range msgs {
		got, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			return fds, fmt.Errorf("link: control message: %w", err)
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
