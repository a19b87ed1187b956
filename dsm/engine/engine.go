// Package engine is SVM's coherence engine for the ranks of a job that run
// on one machine. It owns each rank's memory (a memfd, mapped here for the
// engine's own access), reads each rank's page faults from the userfaultfd
// the application registered, and drives the rank's protocol state machine
// (package rank): page actions become userfaultfd ioctls, protocol messages
// go to the other ranks, and the application's synchronous calls (lock,
// barrier, allocation, ...) arrive over a unix socket.
//
// The engine never runs inside an application process: a fault handler in
// the faulting Go process deadlocks with the garbage collector (see
// docs/design.md). The goroutines that read the sockets and userfaultfds do the
// protocol work themselves, under the lock of the rank they serve, so that
// different ranks' faults and calls run side by side: a fault costs no
// hand-off between goroutines. A message for another hosted rank waits in
// that rank's inbox, and whichever thread next holds or frees the rank's
// lock steps it (settle).
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/dsm/internal/link"
	"github.com/svmcluster/svm/dsm/rank"
	"github.com/svmcluster/svm/dsm/uffd"
	"github.com/svmcluster/svm/lrc"
	"github.com/svmcluster/svm/protocol"
)

// Config describes one engine's part of a job.
type Config struct {
	Settings
	// Socket is the path of the unix socket the ranks connect to.
	Socket string
	// Ranks are the ranks this engine hosts; empty: every rank of the job.
	// When a job spans engines, each hosts some ranks, Remote reaches the
	// others, and the engine of rank 0 keeps the job's allocator.
	Ranks  []int
	Remote Remote
	// Owner, when set, is the user the ranks run as: the socket is theirs
	// and only their processes may join. Unset: this process's user.
	Owner *Owner
	// Observer, when set, hears of every completed lock acquire and barrier.
	Observer Observer
}

// Remote carries protocol messages to the engines that host the ranks this
// one does not. Send must not block on the receiving engine: it queues.
// encoded is env.Msg's encoding, valid only during the call. Send is called
// concurrently for different sending ranks, in order for each.
type Remote interface {
	Send(env protocol.Envelope, encoded []byte) error
}

// Owner is the user a job runs as.
type Owner struct {
	UID, GID int
}

// Observer hears how long ranks waited. It is called under the waiting
// rank's lock, concurrently for different ranks, and must not block.
type Observer interface {
	// LockAcquired: remote is true when the grant took messages.
	LockAcquired(rank int, remote bool, wait time.Duration)
	BarrierLeft(rank int, wait time.Duration)
}

// DefaultConfig returns the defaults for an engine hosting every rank of a
// job of nprocs ranks.
func DefaultConfig(nprocs int, socket string) Config {
	return Config{Settings: DefaultSettings(nprocs), Socket: socket}
}

// Engine serves one job.
type Engine struct {
	cfg      Config
	pageSize int
	pages    int
	ln       *net.UnixListener
	hosts    []*host
	// mu guards err, the failure that ended the job. Each rank's protocol
	// work is under its host's lock.
	mu  sync.Mutex
	err error
	// stopping is set when the job fails or the engine closes: no more
	// protocol work.
	stopping atomic.Bool
	// ended is closed when the job has finished or failed.
	ended     chan struct{}
	endedOnce sync.Once
	closeOnce sync.Once
	// closedRanks counts the hosted ranks whose application called Close.
	closedRanks atomic.Int32
	// stopFD is an eventfd that wakes the fault readers when the engine closes.
	stopFD int
	// pageBufs are page-sized buffers free for pageCopy.
	pageBufsMu sync.Mutex
	pageBufs   [][]byte
	// asyncWrites: the ranks' writes are found without faults (see
	// AsyncWrites).
	asyncWrites bool
	// hosted is the number of ranks this engine serves, cpus the number
	// of CPUs it may use.
	hosted, cpus int
}

// New checks the configuration, creates every rank's memory and listens on
// the job's socket (mode 0600).
func New(cfg Config) (*Engine, error) {
	ps := os.Getpagesize()
	if err := cfg.Check(MaxRanks); err != nil {
		return nil, err
	}
	local := make([]bool, cfg.NProcs)
	for _, r := range cfg.Ranks {
		if r < 0 || r >= cfg.NProcs || local[r] {
			return nil, fmt.Errorf("engine: hosted ranks %v: rank %d out of range or twice", cfg.Ranks, r)
		}
		local[r] = true
	}
	if len(cfg.Ranks) == 0 {
		for r := range local {
			local[r] = true
		}
	} else if len(cfg.Ranks) < cfg.NProcs && cfg.Remote == nil {
		return nil, fmt.Errorf("engine: hosting ranks %v of %d with no way to reach the others", cfg.Ranks, cfg.NProcs)
	}
	hosted := len(cfg.Ranks)
	if hosted == 0 {
		hosted = cfg.NProcs
	}
	if err := cfg.CheckResources(hosted); err != nil {
		return nil, err
	}
	stopFD, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("engine: eventfd: %w", err)
	}
	e := &Engine{
		cfg: cfg, pageSize: ps, pages: int(cfg.RegionSize / uint64(ps)), hosted: hosted, cpus: usableCPUs(),
		asyncWrites: !cfg.WriteFaults && AsyncWritesError() == nil,
		ended:       make(chan struct{}), stopFD: stopFD,
		hosts: make([]*host, cfg.NProcs),
	}
	for r := range cfg.NProcs {
		if !local[r] {
			continue
		}
		h, err := e.newHost(r)
		if err != nil {
			e.closeHosts()
			return nil, err
		}
		e.hosts[r] = h
	}
	ln, err := listen(cfg.Socket, cfg.Owner)
	if err != nil {
		e.closeHosts()
		return nil, err
	}
	e.ln = ln
	reserveProcs(hosted)
	return e, nil
}

func listen(path string, owner *Owner) (*net.UnixListener, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("engine: listen on %s: %w", path, err)
	}
	err = os.Chmod(path, 0o600)
	if err == nil && owner != nil {
		err = os.Chown(path, owner.UID, owner.GID)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	return ln, nil
}

// AsyncWritesError reports why this kernel cannot find writes without
// faults (userfaultfd's asynchronous write protection and PAGEMAP_SCAN,
// Linux 6.7+), or nil when it can. An engine on such a kernel finds them by
// write-protection faults, which cost a round trip to the engine each.
func AsyncWritesError() error {
	asyncOnce.Do(func() { asyncErr = uffd.AsyncWritesError() })
	return asyncErr
}

var (
	asyncOnce sync.Once
	asyncErr  error
)

// AsyncWrites reports whether the engine finds the ranks' writes without
// faults.
func (e *Engine) AsyncWrites() bool { return e.asyncWrites }

// uid is the user whose processes may join.
func (e *Engine) uid() int {
	if e.cfg.Owner != nil {
		return e.cfg.Owner.UID
	}
	return os.Getuid()
}

// Run serves the job until every rank has closed, ctx is done or the job
// fails, and returns the failure, if any. The ranks stay connected until
// Close, so that whoever runs the job can stop them first and report the
// failure before they see the engine go.
func (e *Engine) Run(ctx context.Context) error {
	go e.accept()
	select {
	case <-e.ended:
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fail ends the job with err (the first failure wins).
func (e *Engine) fail(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
	}
	e.stopping.Store(true)
}

// do runs f under h's lock, then steps the messages it caused and checks
// whether the job has ended. It returns false, without running f, once the
// engine is closed or the job has ended.
func (e *Engine) do(h *host, f func()) bool {
	e.lock(h)
	if e.stopping.Load() {
		h.mu.Unlock()
		return false
	}
	f()
	e.drain(h)
	e.unlock(h)
	e.settle()
	e.checkEnd()
	return true
}

// checkEnd closes ended once the job has failed or every hosted rank has
// closed, and fails it when its ranks wait for each other forever.
func (e *Engine) checkEnd() {
	if !e.stopping.Load() && !e.finished() {
		e.checkDeadlock()
	}
	if e.finished() || e.failed() {
		e.endedOnce.Do(func() { close(e.ended) })
	}
}

// failed reports whether the job has failed.
func (e *Engine) failed() bool {
	if !e.stopping.Load() {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err != nil
}

// lock takes h's lock. Where each hosted rank has a CPU, a thread that
// finds it taken polls it for up to spinFor first, yielding its CPU between
// polls: the engine's threads are locked to their ranks' CPUs, and one that
// slept on a lock woke through the Go scheduler (another thread started to
// run it, then handed it back to its own), which took a tenth of the
// engine's CPU in shallow water at 2 ranks.
func (e *Engine) lock(h *host) {
	if h.mu.TryLock() {
		return
	}
	if e.hosted > e.cpus {
		h.mu.Lock()
		return
	}
	for start := time.Now(); !h.mu.TryLock(); link.Yield() {
		if time.Since(start) >= spinFor {
			h.mu.Lock()
			return
		}
	}
}

// unlock releases h's lock; whoever releases it must settle next, as a
// message pushed while the lock was held is the holder's to step.
func (e *Engine) unlock(h *host) {
	h.idle.Store(h.closed || h.gone || h.waitsForOthers())
	h.mu.Unlock()
}

// settle steps the messages waiting for each hosted rank whose lock is
// free, until none waits. A rank whose lock another thread holds is that
// thread's to settle when it releases it: a message is pushed before its
// receiver's lock is tried, and the holder looks at the inbox after it
// unlocks, so no message is left waiting with no thread to step it.
func (e *Engine) settle() {
	for again := true; again && !e.stopping.Load(); {
		again = false
		for _, g := range e.hosts {
			if g == nil || g.pending.Load() == 0 || !g.mu.TryLock() {
				continue
			}
			if !e.stopping.Load() {
				e.drain(g)
			}
			e.unlock(g)
			again = true
		}
	}
}

// finished reports whether every rank hosted here has closed.
func (e *Engine) finished() bool { return int(e.closedRanks.Load()) == e.hosted }

// checkDeadlock ends the job when every rank still running waits in a lock,
// barrier or share that no other rank can end. Only an engine that hosts
// every rank knows that. A first look without the ranks' locks rules out
// the usual cases, a rank at work or a message on its way; the verdict
// takes every rank's lock, in order.
func (e *Engine) checkDeadlock() {
	if e.cfg.Remote != nil {
		return
	}
	for _, h := range e.hosts {
		if !h.idle.Load() || h.pending.Load() > 0 {
			return
		}
	}
	for _, h := range e.hosts {
		h.mu.Lock()
	}
	err := e.deadlock()
	for _, h := range e.hosts {
		e.unlock(h)
	}
	if err != nil {
		e.fail(err)
		return
	}
	e.settle()
}

// deadlock, with every rank's lock held, describes the deadlock the ranks
// are in, or returns nil if some rank can still go on.
func (e *Engine) deadlock() error {
	var waits []string
	gone := 0
	for _, h := range e.hosts {
		switch {
		case h.pending.Load() > 0:
			return nil
		case h.closed || h.gone:
			gone++
			waits = append(waits, fmt.Sprintf("rank %d has %s", h.id, map[bool]string{true: "closed", false: "exited"}[h.closed]))
		case h.waitsForOthers():
			waits = append(waits, fmt.Sprintf("rank %d waits in %s", h.id, h.call))
		default:
			return nil
		}
	}
	if gone == len(e.hosts) {
		return nil
	}
	return fmt.Errorf("deadlock: %s", strings.Join(waits, "; "))
}

// Close releases everything the engine holds: the socket, the ranks'
// connections, userfaultfds and memory. Call it after Run has returned; a
// second call does nothing.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		e.stopping.Store(true)
		// Work under way finishes first; any after it sees the engine
		// stopping.
		e.eachHost(func(*host) {})
		e.ln.Close()
		e.closeHosts()
		os.Remove(e.cfg.Socket)
		releaseProcs(e.hosted)
	})
}

// closeHosts stops the fault readers and releases every rank, side by
// side: the kernel frees a rank's memory as its memfd closes (shallow water
// at 1024², 2 ranks: 25 ms in one thread, the job's last).
func (e *Engine) closeHosts() {
	unix.Write(e.stopFD, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	var wg sync.WaitGroup
	for _, h := range e.hosts {
		if h != nil {
			wg.Go(h.close)
		}
	}
	wg.Wait()
	unix.Close(e.stopFD)
}

// accept takes connections until the listener closes; each one must join
// as a rank first.
func (e *Engine) accept() {
	for {
		c, err := e.ln.AcceptUnix()
		if err != nil {
			return
		}
		conn, err := link.New(c)
		if err != nil {
			continue
		}
		go e.serve(conn)
	}
}

// serve runs one application's calls, and its faults once it has attached,
// until the engine stops. One thread waits on both in poll(2), rather than
// in the runtime's poller, and it runs on the application's CPU when that
// is one: a call or a fault wakes exactly this thread, where the
// application has just left the CPU free.
func (e *Engine) serve(c *link.Conn) {
	var h *host
	unpin := func() {}
	defer func() {
		unpin()
		if h != nil && h.readerDone != nil {
			close(h.readerDone)
		}
	}()
	faults := make([]byte, 64*uffd.MsgSize)
	connected := true
	var pfds []unix.PollFd
	yielded := time.Now()
	for {
		if now := time.Now(); now.Sub(yielded) > yieldEvery {
			runtime.Gosched()
			yielded = now
		}
		if connected && c.Buffered() {
			if !e.serveRequest(c, &h, &unpin) {
				connected = false
			}
			continue
		}
		pfds = append(pfds[:0], unix.PollFd{Fd: int32(e.stopFD), Events: unix.POLLIN})
		if connected {
			pfds = append(pfds, unix.PollFd{Fd: int32(c.FD()), Events: unix.POLLIN})
		}
		if connected && h != nil && h.slot != nil {
			pfds = append(pfds, unix.PollFd{Fd: int32(h.slot.RequestFD()), Events: unix.POLLIN})
		}
		if h != nil && h.uffd >= 0 {
			pfds = append(pfds, unix.PollFd{Fd: int32(h.uffd), Events: unix.POLLIN})
		} else if !connected {
			return
		}
		if _, err := unix.Poll(pfds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			e.fail(fmt.Errorf("engine: waiting for requests and faults: %w", err))
			return
		}
		if pfds[0].Revents != 0 {
			if h == nil && connected {
				c.Close()
			}
			return
		}
		for _, p := range pfds[1:] {
			switch {
			case p.Revents == 0:
			case connected && int(p.Fd) == c.FD():
				if !e.serveRequest(c, &h, &unpin) {
					connected = false
				}
			case connected && h != nil && h.slot != nil && int(p.Fd) == h.slot.RequestFD():
				e.serveSlot(h)
			case h != nil && int(p.Fd) == h.uffd:
				if !e.readFaults(h, faults) {
					return
				}
			}
		}
	}
}

// serveRequest reads and runs one request on c, whose application joined
// as *h (nil before it joins); a join of a bound rank pins the thread to
// its CPU and sets *unpin. It returns false when the connection has ended.
func (e *Engine) serveRequest(c *link.Conn, h **host, unpin *func()) bool {
	var req link.Request
	fds, err := c.Recv(&req)
	if err != nil {
		if *h != nil {
			e.do(*h, func() { e.disconnected(*h, err) })
		} else {
			c.Close()
		}
		return false
	}
	if *h == nil {
		if *h = e.join(c, req, fds); *h == nil {
			c.Close()
			return false
		}
		if (*h).bound {
			*unpin = pinThread((*h).cpu)
		}
		return true
	}
	if !e.do(*h, func() { e.request(*h, req, fds) }) {
		closeFDs(fds)
	}
	return true
}

// serveSlot runs the request h's application made through its call slot,
// if it made one.
func (e *Engine) serveSlot(h *host) {
	e.do(h, func() {
		// Under h's lock: the thread that answers the last call may be
		// another, and the slot remembers which call it answers.
		req, ok, err := h.slot.Request()
		if !ok {
			return
		}
		h.slotCall = true
		if err != nil {
			e.replyErr(h, req.Op, err)
			return
		}
		e.request(h, req, nil)
	})
}

func (e *Engine) join(c *link.Conn, req link.Request, fds []int) *host {
	closeFDs(fds)
	refuse := func(format string, args ...any) *host {
		c.Send(link.Reply{Err: fmt.Sprintf(format, args...)})
		return nil
	}
	if req.Op != link.OpJoin {
		return refuse("the first request must be join, not %v", req.Op)
	}
	cred, err := c.PeerCred()
	if err != nil {
		return refuse("reading the peer's credentials: %v", err)
	}
	if int(cred.Uid) != e.uid() {
		return refuse("rank %d runs as uid %d, the job as uid %d", req.Rank, cred.Uid, e.uid())
	}
	if req.Rank < 0 || req.Rank >= e.cfg.NProcs {
		return refuse("rank %d out of range [0,%d)", req.Rank, e.cfg.NProcs)
	}
	h := e.hosts[req.Rank]
	if h == nil {
		return refuse("rank %d is not hosted by this engine", req.Rank)
	}
	joined := false
	if !e.do(h, func() { joined = e.admit(h, c, req, cred.Pid) }) || !joined {
		return nil
	}
	return h
}

// admit makes the application on c rank h, if no other has joined as it,
// and reports whether it has.
func (e *Engine) admit(h *host, c *link.Conn, req link.Request, pid int32) bool {
	if h.conn != nil || h.closed {
		c.Send(link.Reply{Err: fmt.Sprintf("rank %d has already joined", req.Rank)})
		return false
	}
	h.conn = c
	h.pid = int(pid)
	h.funneled = req.Funneled
	h.proto.SetFunneled(req.Funneled)
	h.bound, h.cpu = req.Bound, req.CPU
	var spin time.Duration
	if h.bound && e.hosted <= e.cpus {
		spin = spinFor
	}
	region := []int{h.memfd}
	if h.ctl != nil {
		region = append(region, h.ctlFD)
	}
	err := c.Send(link.Reply{Join: &link.Join{
		NProcs: e.cfg.NProcs, Base: e.cfg.Base, Size: e.cfg.RegionSize, PageSize: e.pageSize,
		Locks: e.cfg.Locks, Barriers: e.cfg.Barriers, AsyncWrites: h.ctl != nil, Spin: spin,
	}}, region...)
	if err != nil {
		// The rank died while joining (killed, or it exited): it is gone,
		// as after any failed send, and its launcher says how it ended.
		h.gone = true
		return false
	}
	return true
}

// disconnected runs when a rank's connection ends. A rank that exits
// without Close is gone: its memory stays served, and the job goes on until
// its launcher decides from the exit status.
func (e *Engine) disconnected(h *host, err error) {
	if h.closed {
		return
	}
	h.gone = true
	h.call = nil
	// A rank killed with a reply unread resets the connection: that is how
	// it ended, not the engine's failure.
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, unix.ECONNRESET) && !errors.Is(err, unix.EPIPE) {
		e.fail(fmt.Errorf("rank %d: connection: %w", h.id, err))
	}
}

// reply answers h's request, the way it came; descriptors go by the
// socket. A rank that cannot be sent its reply is gone.
func (e *Engine) reply(h *host, r link.Reply, fds ...int) {
	var err error
	bySlot := h.slotCall
	h.slotCall = false
	if bySlot && h.slot != nil && len(fds) == 0 {
		err = h.slot.Reply(r, h.conn)
	} else {
		err = h.conn.Send(r, fds...)
	}
	if err != nil && !h.gone {
		h.gone = true
		h.call = nil
	}
}

func (e *Engine) replyErr(h *host, op link.Op, err error) {
	e.reply(h, link.Reply{Err: fmt.Sprintf("%v: %v", op, err)})
}

// request runs one application call.
func (e *Engine) request(h *host, req link.Request, fds []int) {
	if h.closed {
		closeFDs(fds)
		return
	}
	if req.Op == link.OpAttach {
		if err := e.attach(h, fds); err != nil {
			e.fail(fmt.Errorf("rank %d: attach: %w", h.id, err))
			e.replyErr(h, req.Op, err)
			return
		}
		e.reply(h, link.Reply{})
		return
	}
	closeFDs(fds)
	if h.call != nil {
		e.replyErr(h, req.Op, fmt.Errorf("called while %v is in progress", h.call))
		return
	}
	if err := e.takeWritten(h); err != nil {
		e.fail(fmt.Errorf("rank %d: %v: %w", h.id, req.Op, err))
		e.replyErr(h, req.Op, err)
		return
	}
	if len(req.Written) > 0 {
		if err := h.proto.Written(req.Written); err != nil {
			e.fail(fmt.Errorf("rank %d: %v: %w", h.id, req.Op, err))
			e.replyErr(h, req.Op, err)
			return
		}
	}
	var err error
	switch req.Op {
	case link.OpLock:
		err = e.begin(h, req, func() error { return h.proto.Acquire(req.ID) })
	case link.OpUnlock:
		if err = e.checkLock(req.ID); err == nil && h.ctl != nil {
			err = h.ctl.Unlocking(req.ID)
		}
		if err == nil {
			e.protect(h)
			if err = h.proto.Release(req.ID); err == nil {
				e.flush(h)
				e.reply(h, link.Reply{})
			}
		}
	case link.OpBarrier:
		err = e.begin(h, req, func() error {
			if req.ID >= e.cfg.Barriers {
				return fmt.Errorf("barrier %d out of range [0,%d)", req.ID, e.cfg.Barriers)
			}
			return h.proto.Barrier(req.ID, req.Members)
		})
	case link.OpShare:
		err = e.begin(h, req, func() error {
			if req.Root < 0 || req.Root >= e.cfg.NProcs {
				return fmt.Errorf("root rank %d out of range [0,%d)", req.Root, e.cfg.NProcs)
			}
			// Share among every rank uses the barrier past the
			// applications' ids; among a processor set, the id given.
			if req.ID > e.cfg.Barriers {
				return fmt.Errorf("barrier %d out of range [0,%d)", req.ID, e.cfg.Barriers)
			}
			if len(req.Members) > 0 && !slices.Contains(req.Members, req.Root) {
				return fmt.Errorf("root rank %d is not in the processor set %v", req.Root, req.Members)
			}
			if h.id == req.Root {
				return h.proto.ShareAt(req.ID, req.Members, req.Addr)
			}
			return h.proto.Barrier(req.ID, req.Members)
		})
	case link.OpFetchAdd:
		err = e.begin(h, req, func() error { return h.proto.FetchAdd(req.ID, req.Delta) })
	case link.OpWaitCounter:
		err = e.begin(h, req, func() error { return h.proto.WaitCounter(req.ID, req.Delta) })
	case link.OpValidate:
		err = e.validate(h, req)
	case link.OpSetHome:
		err = e.setHome(h, req)
	case link.OpAlloc:
		err = e.begin(h, req, func() error { return h.proto.Alloc(req.Size) })
	case link.OpMalloc:
		err = e.begin(h, req, func() error { return h.proto.Malloc(req.Size) })
	case link.OpFree:
		err = e.begin(h, req, func() error { return h.proto.Free(req.Addr) })
	case link.OpStats:
		h.takeLocal(req.Local)
		e.reply(h, link.Reply{Stats: h.stats()})
	case link.OpSlot:
		err = e.openSlot(h)
	case link.OpClose:
		h.takeLocal(req.Local)
		h.actMu.Lock() // act reads it outside h's lock
		h.closed = true
		h.actMu.Unlock()
		e.closedRanks.Add(1)
		e.reply(h, link.Reply{})
	default:
		err = fmt.Errorf("unknown request")
	}
	if err != nil {
		e.replyErr(h, req.Op, err)
	}
}

// openSlot makes h's call slot and sends the application its descriptors.
func (e *Engine) openSlot(h *host) error {
	if h.slot != nil {
		return errors.New("the call slot is open already")
	}
	s, fds, err := link.NewSlot()
	if err != nil {
		return err
	}
	if e.reply(h, link.Reply{}, fds...); h.gone {
		s.Close()
		return nil
	}
	h.slot = s
	h.waitForReader()
	return nil
}

func (e *Engine) checkLock(id uint32) error {
	if id >= e.cfg.Locks {
		return fmt.Errorf("lock %d out of range [0,%d)", id, e.cfg.Locks)
	}
	return nil
}

// begin starts a call that waits for the protocol: protect the dirty pages,
// start it, and answer when the rank reports it done.
func (e *Engine) begin(h *host, req link.Request, start func() error) error {
	if req.Op == link.OpLock {
		if err := e.checkLock(req.ID); err != nil {
			return err
		}
	}
	e.protect(h)
	c := &call{op: req.Op, id: req.ID, root: req.Root, start: time.Now(), remoteBefore: h.proto.Stats().LockAcquiresRemote}
	if err := start(); err != nil {
		return err
	}
	h.call = c
	e.flush(h)
	return nil
}

func (e *Engine) validate(h *host, req link.Request) error {
	end := req.Addr + req.Size
	if req.Size == 0 {
		e.reply(h, link.Reply{})
		return nil
	}
	if req.Addr < e.cfg.Base || end < req.Addr || end > e.cfg.Base+e.cfg.RegionSize {
		return fmt.Errorf("range [%#x,+%d) is not inside the shared region [%#x,+%d)", req.Addr, req.Size, e.cfg.Base, e.cfg.RegionSize)
	}
	first := (req.Addr - e.cfg.Base) / uint64(e.pageSize)
	last := (end - 1 - e.cfg.Base) / uint64(e.pageSize)
	if err := h.proto.Validate(uint32(first), uint32(last-first+1), req.Write); err != nil {
		return err
	}
	h.call = &call{op: req.Op}
	e.flush(h)
	return nil
}

// setHome places the home of the pages of [Addr, Addr+Size) at rank Root;
// it takes effect at the next barrier of every rank.
func (e *Engine) setHome(h *host, req link.Request) error {
	end := req.Addr + req.Size
	if req.Size == 0 || req.Addr < e.cfg.Base || end < req.Addr || end > e.cfg.Base+e.cfg.RegionSize {
		return fmt.Errorf("range [%#x,+%d) is not inside the shared region [%#x,+%d)", req.Addr, req.Size, e.cfg.Base, e.cfg.RegionSize)
	}
	first := (req.Addr - e.cfg.Base) / uint64(e.pageSize)
	last := (end - 1 - e.cfg.Base) / uint64(e.pageSize)
	if err := h.proto.SetHome(uint32(first), uint32(last-first+1), req.Root); err != nil {
		return err
	}
	e.reply(h, link.Reply{})
	return nil
}

// Deliver hands the engine a message from a rank hosted elsewhere, which
// took size bytes on the wire.
func (e *Engine) Deliver(env protocol.Envelope, size int) error {
	if env.To < 0 || env.To >= e.cfg.NProcs || e.hosts[env.To] == nil {
		return fmt.Errorf("engine: a message for rank %d, which this engine does not host", env.To)
	}
	if env.From < 0 || env.From >= e.cfg.NProcs || e.hosts[env.From] != nil {
		return fmt.Errorf("engine: a message from rank %d, which is not remote", env.From)
	}
	if e.stopping.Load() {
		return errors.New("engine: the job has ended")
	}
	e.hosts[env.To].push(delivery{env, size})
	e.settle()
	e.checkEnd()
	return nil
}

// protect write-protects the pages written in h's open interval before a
// call that may close it, so that no write slips in between the close's
// comparison with the twins and the protection.
//
// An application that promised funneled calls cannot write while it waits
// in one, so its pages stay as they are: a change of protection per page and
// synchronisation saved.
func (e *Engine) protect(h *host) {
	if h.funneled {
		return
	}
	h.proto.ProtectDirty()
	e.flush(h)
}

// flush carries out what h's protocol engine produced.
func (e *Engine) flush(h *host) { e.flushing(h, false) }

// flushing is flush; now: the page actions are carried out before it
// returns, even during h's fault.
//
// The page actions of a fault's own resolution wait, in order, until h's
// lock is released (runDeferred): filling and mapping a run of pages takes
// the kernel hundreds of microseconds, and under the lock the messages
// other ranks send h (a request for a page homed at h) would wait for
// them. Every other flush of h first carries out what waits, so h's
// actions keep their order; a flush that completes h's call carries out
// everything before the reply, which may tell the application to drop
// pages.
func (e *Engine) flushing(h *host, now bool) {
	rd := h.proto.Ready()
	h.actMu.Lock()
	for i := 0; i < len(rd.Actions); {
		// Protection changes and mappings of consecutive pages, back to
		// back, take one ioctl: a close that protects a band of pages, or
		// a fault that maps a run of them, costs one call.
		a, n := rd.Actions[i], 1
		switch a.Kind {
		case lrc.ActWriteProtect, lrc.ActUnprotect, lrc.ActMapReadOnly, lrc.ActMapReadWrite:
			for i+n < len(rd.Actions) && rd.Actions[i+n] == (lrc.Action{Kind: a.Kind, Page: a.Page + uint32(n)}) {
				n++
			}
		}
		h.deferred = append(h.deferred, pageAction{a, n})
		i += n
	}
	var err error
	if !h.faulting || rd.Done || now {
		err = e.runActions(h)
	}
	h.actMu.Unlock()
	if err != nil {
		e.fail(err)
		return
	}
	for _, env := range rd.Messages {
		e.send(h, env)
	}
	if rd.Done {
		e.finish(h, rd)
	}
	for _, id := range rd.Wanted {
		if h.ctl != nil && h.ctl.TakeAway(id) {
			e.releaseCached(h, id)
		}
	}
}

// releaseCached releases lock id in h's application's place: the
// application released it without a call, another rank wants it, and the
// engine took it from the cache (ctl.Area.TakeAway). The application may be
// running: the pages its scans reported are protected already (the scan
// protects what it reports), and ProtectDirty protects the other written
// ones, mapped writable at a write fault, before the close compares them
// with their twins, so that a write after the comparison is found by the
// next report, as for an application with other threads.
func (e *Engine) releaseCached(h *host, id uint32) {
	if err := e.takeWritten(h); err != nil {
		e.fail(fmt.Errorf("rank %d: releasing lock %d: %w", h.id, id, err))
		return
	}
	h.proto.ProtectDirty()
	e.flushing(h, true)
	if err := h.proto.ReleaseCached(id); err != nil {
		e.fail(fmt.Errorf("rank %d: releasing lock %d: %w", h.id, id, err))
		return
	}
	e.flush(h)
}

// takeWritten hands h's protocol the pages its application reported
// written without a call (when it released a lock into its cache).
func (e *Engine) takeWritten(h *host) error {
	if h.ctl == nil {
		return nil
	}
	h.written = h.ctl.TakeWritten(h.written[:0])
	if len(h.written) == 0 {
		return nil
	}
	return h.proto.Written(h.written)
}

// pageAction is an action on count pages from a.Page.
type pageAction struct {
	a     lrc.Action
	count int
}

// runActions carries out the actions waiting for h, in order; h.actMu is
// held.
func (e *Engine) runActions(h *host) error {
	defer func() { h.deferred = h.deferred[:0] }()
	for _, pa := range h.deferred {
		if err := e.act(h, pa.a, pa.count); err != nil {
			return fmt.Errorf("rank %d: %v of pages [%d,+%d): %w", h.id, pa.a.Kind, pa.a.Page, pa.count, err)
		}
	}
	return nil
}

// runDeferred carries out, outside h's lock, the actions of h's
// faults that flush left waiting.
func (e *Engine) runDeferred(h *host) {
	h.actMu.Lock()
	err := e.runActions(h)
	h.actMu.Unlock()
	if err != nil {
		e.fail(err)
		e.checkEnd()
	}
}

// finish answers h's outstanding call, which the protocol has completed;
// the application drops the pages in rd.Zap before it goes on.
func (e *Engine) finish(h *host, rd rank.Ready) {
	c := h.call
	h.call = nil
	if c == nil {
		return
	}
	switch c.op {
	case link.OpLock:
		h.lockWait += time.Since(c.start)
	case link.OpBarrier, link.OpShare:
		h.barrierWait += time.Since(c.start)
	}
	if o := e.cfg.Observer; o != nil {
		switch c.op {
		case link.OpLock:
			o.LockAcquired(h.id, h.proto.Stats().LockAcquiresRemote > c.remoteBefore, time.Since(c.start))
		case link.OpBarrier:
			o.BarrierLeft(h.id, time.Since(c.start))
		}
	}
	r := link.Reply{Zap: protocol.Ranges(rd.Zap), Value: rd.Value}
	if c.op == link.OpLock && rd.Err == nil && h.ctl != nil {
		// Held now; released and taken again without a call while no
		// other rank asks for it.
		h.ctl.SetHeld(c.id, h.proto.LockWanted(c.id))
	}
	switch {
	case rd.Err != nil:
		r.Err = fmt.Sprintf("%v: %v", c.op, rd.Err)
	case c.op == link.OpShare:
		v, ok := h.proto.Shared()
		if !ok {
			r.Err = fmt.Sprintf("share: rank %d, the root, did not share a value", c.root)
		}
		r.Value = v
	}
	e.reply(h, r)
}

func (e *Engine) send(from *host, env protocol.Envelope) {
	if to := e.hosts[env.To]; to != nil {
		// Handed over in memory: counted as its encoding, not encoded.
		size := protocol.EncodedSize(env.Msg)
		from.sent.count(env.Msg.Type(), env.To, size)
		// Pages sent whole may be the sender's memory, which its
		// application goes on writing: taken now, as a message on the wire
		// is. (Pages are pushed only to ranks of other engines: see
		// colocated.)
		if m, ok := env.Msg.(*protocol.PageResponse); ok {
			for i := range m.Pages {
				m.Pages[i].Data = e.pageCopy(m.Pages[i].Data)
			}
		}
		to.push(delivery{env, size})
		return
	}
	var err error
	from.encodeBuf, err = protocol.AppendEncode(from.encodeBuf[:0], env.Msg)
	if err != nil {
		e.fail(fmt.Errorf("rank %d: %w", from.id, err))
		return
	}
	from.sent.count(env.Msg.Type(), env.To, len(from.encodeBuf))
	if err := e.cfg.Remote.Send(env, from.encodeBuf); err != nil {
		e.fail(fmt.Errorf("rank %d: sending %v to rank %d: %w", from.id, env.Msg.Type(), env.To, err))
	}
}

// maxPageBufs bounds the buffers pageCopy keeps (4 MiB of 4 KiB pages).
const maxPageBufs = 1024

// pageCopy returns a copy of page data taken for a page response handed
// over in memory, in a buffer that drain takes back once the response is
// handled: allocating and clearing a buffer per page took as long as the
// copy.
func (e *Engine) pageCopy(data []byte) []byte {
	if len(data) == e.pageSize {
		e.pageBufsMu.Lock()
		if n := len(e.pageBufs); n > 0 {
			b := e.pageBufs[n-1]
			e.pageBufs = e.pageBufs[:n-1]
			e.pageBufsMu.Unlock()
			copy(b, data)
			return b
		}
		e.pageBufsMu.Unlock()
	}
	return slices.Clone(data)
}

// reusePages takes back the buffers of a page response handed over in
// memory, once its pages are copied into the receiving rank's memory.
func (e *Engine) reusePages(m *protocol.PageResponse) {
	e.pageBufsMu.Lock()
	defer e.pageBufsMu.Unlock()
	for _, pc := range m.Pages {
		if len(pc.Data) == e.pageSize && len(e.pageBufs) < maxPageBufs {
			e.pageBufs = append(e.pageBufs, pc.Data)
		}
	}
}

// drain steps the messages waiting for h, whose lock is held, until none
// is left.
func (e *Engine) drain(h *host) {
	for !e.stopping.Load() {
		d, ok := h.pop()
		if !ok {
			return
		}
		env := d.env
		h.received.count(env.Msg.Type(), env.From, d.size)
		switch env.Msg.(type) {
		case *protocol.LockGrant, *protocol.BarrierArrive, *protocol.BarrierDepart:
			// These may close h's interval, but only while h waits in a
			// call: an arrival at a barrier h has not reached closes
			// nothing, and protecting then would take away pages h's
			// application holds writable, validated for a system call.
			if h.call != nil && h.call.op != link.OpValidate {
				e.protect(h)
			}
		}
		if err := h.proto.Step(env); err != nil {
			e.fail(err)
			return
		}
		if m, ok := env.Msg.(*protocol.PageResponse); ok && e.hosts[env.From] != nil {
			// Its pages, pageCopy's, are copied into the rank's memory,
			// not kept.
			e.reusePages(m)
		}
		e.flush(h)
	}
}

// fault handles page faults that h's application took. Their mappings
// wait for runDeferred.
func (e *Engine) fault(h *host, faults []uffd.Fault) {
	h.faulting = true
	defer func() { h.faulting = false }()
	for _, f := range faults {
		if f.Address < e.cfg.Base || f.Address >= e.cfg.Base+e.cfg.RegionSize {
			e.fail(fmt.Errorf("rank %d: fault at %#x, outside the shared region", h.id, f.Address))
			return
		}
		p := uint32((f.Address - e.cfg.Base) / uint64(e.pageSize))
		if err := h.proto.Fault(p, f.Write()); err != nil {
			e.fail(fmt.Errorf("rank %d: %w", h.id, err))
			return
		}
		e.flush(h)
	}
}

// call is an application call waiting for the protocol.
type call struct {
	op   link.Op
	id   uint32
	root int
	// start and remoteBefore time a lock or barrier call and tell whether
	// its grant took messages.
	start        time.Time
	remoteBefore int64
}

func (c *call) String() string {
	switch c.op {
	case link.OpLock:
		return fmt.Sprintf("lock %d", c.id)
	case link.OpBarrier:
		return fmt.Sprintf("barrier %d", c.id)
	case link.OpShare:
		return fmt.Sprintf("share from rank %d", c.root)
	}
	return c.op.String()
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// SocketDir creates a private directory for a job's socket: under
// $XDG_RUNTIME_DIR when set, else the system's temporary directory.
func SocketDir() (string, error) {
	parent := os.Getenv("XDG_RUNTIME_DIR")
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "svm-job-")
	if err != nil {
		return "", fmt.Errorf("engine: socket directory: %w", err)
	}
	return dir, nil
}

// SocketPath is the socket of a job in dir.
func SocketPath(dir string) string { return filepath.Join(dir, "engine.sock") }
