// Package dsm is SVM's Go API: shared memory across the processes of a job,
// kept coherent by lazy release consistency.
//
// Every process (rank) of a job calls Join, which maps the job's shared
// region at the same address in every rank, so pointers stored in shared
// memory are valid everywhere. Memory comes from Alloc (collective) or
// Malloc (one rank; hand the address to the others with Share). Writes of
// one rank become visible to another through synchronization: what a rank
// wrote before Unlock is visible to the next rank that Locks the same lock,
// and what every rank wrote before a Barrier is visible to all after it.
//
// The coherence engine runs in another process (svmf run starts one); this
// package is only the application's side: it maps the region, registers it
// with a userfaultfd that the engine reads, and makes synchronous calls to
// the engine. Calls on one Node are serialized; any goroutine may make them.
//
// With userfaultfd in user mode, a system call that writes into a shared
// page the rank does not hold current (read(2) into a shared buffer) fails
// with EFAULT instead of faulting: call Validate on the buffer first.
package dsm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/dsm/internal/ctl"
	"github.com/svmcluster/svm/dsm/internal/link"
	"github.com/svmcluster/svm/dsm/slurm"
	"github.com/svmcluster/svm/dsm/uffd"
	"github.com/svmcluster/svm/protocol"
)

// Addr is an address in the shared region: the same value in every rank.
type Addr uintptr

// The environment svmf run and svmd give each rank.
const (
	EnvSocket = "SVM_SOCKET" // the engine's socket
	EnvRank   = "SVM_RANK"   // this process's rank
	// EnvNProcs is the job's size, for programs (and scripts) that want it
	// before they join; Join itself learns it from the engine.
	EnvNProcs = "SVM_NPROCS"
)

// ErrClosed is returned by calls on a Node after Close.
var ErrClosed = errors.New("dsm: node is closed")

// Node is this process's membership in a job.
type Node struct {
	mu   sync.Mutex
	conn *link.Conn
	// slot, if the engine has one, carries the calls that fit in it
	// (link.Slot).
	slot     *link.Slot
	rank     int
	nprocs   int
	base     uintptr
	size     uintptr
	pageSize int
	locks    uint32
	barriers uint32
	closed   bool
	// held tracks the locks this rank holds, to refuse a wrong Unlock here.
	held map[int]bool
	// pagemap, when open (asynchronous write protection), is this process's
	// /proc/self/pagemap, read before each call that may end an interval
	// for the pages written since, of those the control area ctl tracks;
	// runs, scan and written are scratch space.
	pagemap int
	ctl     *ctl.Area
	runs    []ctl.Run
	scan    []uffd.PageRegion
	written []uffd.PageRegion
	// yielded is when a call last let the scheduler run its goroutine
	// afresh (see keepMonitorQuiet), as the time since clockOrigin.
	yielded time.Duration
	// local counts what this rank did alone (see alone); the engine
	// learns it with Stats and Close.
	local link.LocalCounts
}

// The runtime's monitor thread (sysmon) wakes every 20 us, each wake
// costing about 18 us of the rank's CPU on a virtual machine, whenever it
// has lately taken a processor (P) from a thread in a system call, and
// backs off to 10 ms otherwise. It takes one when no other P is idle, or
// when one goroutine has kept its P for 10 ms; a C program's thread keeps
// its P while it computes between calls. So a rank runs with at least two
// Ps, and a call lets the scheduler run its goroutine afresh every few
// milliseconds; so do the lock calls that the control area's cache answers
// without the engine (a C loop of cached locks alone, 200 half-steps of
// red-black SOR at 2 ranks with a spin barrier: 0.163 -> 0.157 s).
const yieldEvery = 5 * time.Millisecond

// yieldSometimes lets the scheduler run the calling goroutine afresh if
// yieldEvery has passed since it last did; n.mu is held.
func (n *Node) yieldSometimes() {
	if now := time.Since(clockOrigin); now-n.yielded > yieldEvery {
		runtime.Gosched()
		n.yielded = now
	}
}

// clockOrigin makes yieldSometimes read the clock once (time.Since reads
// only the monotonic clock, time.Now the wall clock too): it runs at every
// cached Lock, ~0.6 us with its Unlock.
var clockOrigin = time.Now()

func keepMonitorQuiet() {
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
}

// Stats are a rank's counters. Messages are the protocol messages between
// ranks (what TreadMarks counted), not the calls to the engine.
type Stats struct {
	ReadFaults, WriteFaults, Twins, DiffsCreated, DiffsApplied, DiffBytes int64
	MessagesSent, MessagesReceived, BytesSent, BytesReceived              int64
	MessagesByType                                                        map[string]int64 // sent
	LockAcquiresLocal, LockAcquiresRemote, Barriers, Invalidations        int64
}

// Option is an option of Join.
type Option func(*joinOptions)

type joinOptions struct{ funneled bool }

// Funneled promises that no thread of the process writes shared memory
// while another thread is inside a call on the Node (MPI's
// THREAD_FUNNELED, and what TreadMarks assumed). The engine then leaves the
// pages written since the last synchronisation as they are during each
// call, instead of write-protecting them first so that no write slips past
// the comparison with their twins: one protection change per written page
// and synchronisation saved. A Go program whose goroutines write shared
// memory while another calls Barrier or Unlock must not use it.
func Funneled() Option { return func(o *joinOptions) { o.funneled = true } }

// Join joins the job this process was started in, using the environment
// set by svmf run or svmd, or by Slurm's srun (one job per job step), and
// maps the shared region.
func Join(ctx context.Context, opts ...Option) (*Node, error) {
	var o joinOptions
	for _, opt := range opts {
		opt(&o)
	}
	socket, r, err := jobOf(ctx)
	if err != nil {
		return nil, err
	}
	type result struct {
		n   *Node
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := join(socket, r, o)
		done <- result{n, err}
	}()
	select {
	case res := <-done:
		return res.n, res.err
	case <-ctx.Done():
		go func() {
			if res := <-done; res.n != nil {
				res.n.Close()
			}
		}()
		return nil, fmt.Errorf("dsm: join: %w", ctx.Err())
	}
}

// jobOf finds the engine socket and the rank of this process: from the
// environment svmf run and svmd set, else, in a task started by Slurm's
// srun, from the engine of the job step on this node (package slurm).
func jobOf(ctx context.Context) (string, int, error) {
	socket := os.Getenv(EnvSocket)
	rankStr := os.Getenv(EnvRank)
	if socket == "" && rankStr == "" && slurm.InStep(os.Getenv) {
		socket, r, err := slurm.Attach(ctx, os.Getenv)
		if err != nil {
			return "", 0, fmt.Errorf("dsm: join: %w", err)
		}
		return socket, r, nil
	}
	if socket == "" || rankStr == "" {
		return "", 0, fmt.Errorf("dsm: join: %s and %s are not set: start the program with svmf run (or srun)", EnvSocket, EnvRank)
	}
	r, err := strconv.Atoi(rankStr)
	if err != nil {
		return "", 0, fmt.Errorf("dsm: join: %s=%q is not a rank", EnvRank, rankStr)
	}
	return socket, r, nil
}

func join(socket string, r int, o joinOptions) (*Node, error) {
	conn, err := link.Dial(socket)
	if err != nil {
		return nil, fmt.Errorf("dsm: join: connecting to the engine: %w", err)
	}
	n := &Node{conn: conn, rank: r, held: make(map[int]bool), pagemap: -1}
	cpu, bound := boundCPU()
	rep, fds, err := n.roundTrip(link.Request{Op: link.OpJoin, Rank: r, Funneled: o.funneled, Bound: bound, CPU: cpu})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("dsm: join: %w", err)
	}
	if rep.Join == nil || len(fds) != 1 && !rep.Join.AsyncWrites || len(fds) != 2 && rep.Join.AsyncWrites {
		conn.Close()
		closeFDs(fds)
		return nil, errors.New("dsm: join: the engine sent no region")
	}
	j := rep.Join
	n.nprocs, n.base, n.size, n.pageSize = j.NProcs, uintptr(j.Base), uintptr(j.Size), j.PageSize
	n.locks, n.barriers = j.Locks, j.Barriers
	conn.SetSpin(j.Spin)
	keepMonitorQuiet()
	if j.AsyncWrites {
		n.ctl, err = ctl.Map(fds[1], int(n.size)/n.pageSize, int(n.locks))
	}
	if err == nil {
		err = n.attach(fds[0], j.AsyncWrites)
	}
	closeFDs(fds) // the mappings keep the memory
	if err != nil {
		n.closeCtl()
		conn.Close()
		return nil, fmt.Errorf("dsm: join: %w", err)
	}
	n.openSlot()
	return n, nil
}

// openSlot asks the engine for a call slot. An engine without one refuses,
// and the calls go by the socket.
func (n *Node) openSlot() {
	if _, fds, err := n.roundTrip(link.Request{Op: link.OpSlot}); err == nil {
		n.slot, _ = link.MapSlot(fds) // it closes fds if it fails
	}
}

// boundCPU returns the CPU this thread runs on if it may run on one only:
// the launcher bound the rank there.
func boundCPU() (int, bool) {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil || set.Count() != 1 {
		return 0, false
	}
	for cpu := 0; ; cpu++ {
		if set.IsSet(cpu) {
			return cpu, true
		}
	}
}

// attach maps the region at its fixed base, registers it with a new
// userfaultfd and hands that to the engine. The process keeps no copy of
// the userfaultfd: if the engine dies, the region stops being handled
// instead of blocking faults forever. With async, writes to write-protected
// pages go through without a fault, and the process reads which pages it
// wrote from its own page tables (only it may) before each call.
//
// A job of one rank needs no coherence: its region is private anonymous
// memory, as a sequential program's heap is, and page faults are the
// kernel's, without the engine's round trip (the engine never reads or
// writes a lone rank's pages). Its pages are small, as a sequential
// program's are: transparent huge pages, asked for with madvise, made the
// first touch of shallow water at 1024² (1 rank) a gamble on this
// development machine's virtual memory, 0.49 or 0.65–0.71 s run by run
// against a steady 0.54 s with small pages (gfortran alone 0.51 s, 11
// interleaved rounds), and a job that touches a few elements of large
// arrays cleared 2 MiB for each.
func (n *Node) attach(memfd int, async bool) error {
	if n.nprocs == 1 {
		return mapFixed(n.base, n.size, -1)
	}
	if err := mapFixed(n.base, n.size, memfd); err != nil {
		return err
	}
	features := uint64(uffd.UFFD_FEATURE_MISSING_SHMEM | uffd.UFFD_FEATURE_MINOR_SHMEM | uffd.UFFD_FEATURE_WP_HUGETLBFS_SHMEM)
	if async {
		features |= uffd.UFFD_FEATURE_WP_ASYNC
		pm, err := unix.Open("/proc/self/pagemap", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			unmap(n.base, n.size)
			return fmt.Errorf("opening /proc/self/pagemap to find written pages: %w", err)
		}
		n.pagemap, n.scan = pm, make([]uffd.PageRegion, scanRegions)
	}
	fd, err := uffd.Open(features)
	if err != nil {
		n.closeCtl()
		unmap(n.base, n.size)
		return explainUserfaultfd(err)
	}
	defer unix.Close(fd)
	// A page never mapped counts as written until it is protected: the
	// engine protects each block of the region before it maps a page in it.
	err = uffd.Register(fd, n.base, n.size, uffd.UFFDIO_REGISTER_MODE_MISSING|uffd.UFFDIO_REGISTER_MODE_MINOR|uffd.UFFDIO_REGISTER_MODE_WP)
	if err == nil {
		_, _, err = n.roundTrip(link.Request{Op: link.OpAttach}, fd)
	}
	if err != nil {
		n.closeCtl()
		unmap(n.base, n.size)
		return err
	}
	return nil
}

// closeCtl drops what asynchronous write tracking holds.
func (n *Node) closeCtl() {
	if n.pagemap >= 0 {
		unix.Close(n.pagemap)
		n.pagemap = -1
	}
	if n.ctl != nil {
		n.ctl.Close()
		n.ctl = nil
	}
}

// trackedGap is how many untracked pages between two runs of tracked ones
// writtenPages looks at too, to scan both runs in one PAGEMAP_SCAN. A scan
// costs a system call, a page-table walk from the top and a bounce buffer
// in the kernel, whatever its length; a page looked at too many costs a
// page-table entry read, and, if it is an untracked page written in place,
// one protection the kernel lifts again at its next write, without a
// userfault. A rank that works on scattered pages homed elsewhere (QSORT's
// second rank: every page it has mapped is tracked, between the stale ones
// it dropped) had thousands of runs, one ioctl each, at every lock call:
// 2M-key QSORT at 2 ranks spent 4.0 s of system time in them for a 2.9 s
// run; with this gap 0.8 s, and the run took 1.0 s.
const trackedGap = 16

// scanRegions is how many runs of written pages one PAGEMAP_SCAN returns.
// The kernel copies them through a buffer it allocates at every scan, of
// up to 512 runs: 12 KiB from the page allocator. 64 runs take 1.5 KiB
// from a slab: at a barrier every 25 us (red-black SOR on 16 rows) the
// allocation took a sixth of the scan's time. More runs than that take
// another ioctl.
const scanRegions = 64

// writtenPages lists the tracked pages this process wrote without a fault
// since they were last write-protected, for a call that may end the
// interval, and write-protects them again: the next write to each is
// recorded anew. Runs of tracked pages fewer than trackedGap pages apart
// are scanned as one; an untracked page between them that was written
// (in place, homed here) is reported too, which costs the engine only the
// time to look, and protected again, which costs the application a
// protection fault the kernel resolves by itself at its next write.
func (n *Node) writtenPages() ([]protocol.PageRange, error) {
	n.runs = n.ctl.Tracked(n.runs[:0], trackedGap)
	n.written = n.written[:0]
	ps := uintptr(n.pageSize)
	for _, r := range n.runs {
		start := n.base + uintptr(r.First)*ps
		var err error
		n.written, err = uffd.WrittenProtect(n.pagemap, start, start+uintptr(r.Count)*ps, n.scan, n.written)
		if err != nil {
			return nil, fmt.Errorf("finding the pages written: %w", err)
		}
	}
	rs := make([]protocol.PageRange, 0, len(n.written))
	for _, w := range n.written {
		first := (uintptr(w.Start) - n.base) / ps
		count := (uintptr(w.End) - uintptr(w.Start)) / ps
		if k := len(rs); k > 0 && rs[k-1].End() == uint64(first) {
			rs[k-1].Count += uint32(count)
			continue
		}
		rs = append(rs, protocol.PageRange{First: uint32(first), Count: uint32(count)})
	}
	return rs, nil
}

// explainUserfaultfd says which kernel setting or permission a failed
// userfaultfd needs.
func explainUserfaultfd(err error) error {
	var hint string
	switch {
	case errors.Is(err, unix.ENOSYS):
		hint = "this kernel has no userfaultfd (CONFIG_USERFAULTFD is off)"
	case errors.Is(err, unix.EPERM):
		hint = "user-mode userfaultfd is not allowed here: set the sysctl vm.unprivileged_userfaultfd=1, grant CAP_SYS_PTRACE, or lift the seccomp filter of the container that blocks it"
	case errors.Is(err, unix.EINVAL):
		hint = "the kernel lacks userfaultfd on shared memory with minor faults and write protection (Linux 6.1 or newer has them)"
	default:
		hint = "userfaultfd is unavailable"
	}
	return fmt.Errorf("%w: %s", err, hint)
}

// roundTrip sends a request and waits for its reply. Calls that pass no
// descriptors and get none back go through the call slot if there is one.
func (n *Node) roundTrip(req link.Request, fds ...int) (link.Reply, []int, error) {
	var rep link.Reply
	var got []int
	var err error
	if n.slot != nil && len(fds) == 0 && req.Op.BySlot() {
		rep, err = n.slot.Call(req, n.conn)
	} else {
		rep, got, err = n.conn.Call(req, fds...)
	}
	if err != nil {
		return link.Reply{}, nil, fmt.Errorf("the engine is gone: %w", err)
	}
	if rep.Err != "" {
		closeFDs(got)
		return rep, nil, errors.New(rep.Err)
	}
	return rep, got, nil
}

// call makes one synchronous call and drops the pages the engine says are
// stale before returning.
func (n *Node) call(req link.Request) (link.Reply, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return link.Reply{}, ErrClosed
	}
	if n.pagemap >= 0 {
		switch req.Op {
		case link.OpLock, link.OpUnlock, link.OpBarrier, link.OpShare:
			w, err := n.writtenPages()
			if err != nil {
				return link.Reply{}, fmt.Errorf("dsm: %w", err)
			}
			req.Written = w
		}
	}
	n.yieldSometimes()
	rep, fds, err := n.roundTrip(req)
	closeFDs(fds)
	if err != nil {
		return rep, fmt.Errorf("dsm: %w", err)
	}
	for _, r := range rep.Zap {
		off := uintptr(r.First) * uintptr(n.pageSize)
		if err := zap(n.base+off, uintptr(r.Count)*uintptr(n.pageSize)); err != nil {
			return rep, fmt.Errorf("dsm: dropping stale pages: %w", err)
		}
	}
	return rep, nil
}

// Rank returns this process's rank, 0..NProcs()-1.
func (n *Node) Rank() int { return n.rank }

// NProcs returns the number of ranks in the job.
func (n *Node) NProcs() int { return n.nprocs }

// PageSize returns the size of a page of shared memory.
func (n *Node) PageSize() int { return n.pageSize }

// RegionSize returns the size of the shared region in bytes.
func (n *Node) RegionSize() int { return int(n.size) }

// Locks returns the job's lock count: lock ids are 0..Locks()-1.
func (n *Node) Locks() int { return int(n.locks) }

// Barriers returns the job's barrier count: barrier ids are 0..Barriers()-1.
func (n *Node) Barriers() int { return int(n.barriers) }

// Alloc allocates size bytes of shared memory, page aligned. It is
// collective: every rank calls it, in the same order with the same sizes,
// and gets the same address. The memory is not zeroed if it was freed before.
func (n *Node) Alloc(size int) (Addr, error) {
	if err := n.checkSize(size); err != nil {
		return 0, fmt.Errorf("dsm: alloc: %w", err)
	}
	rep, err := n.call(link.Request{Op: link.OpAlloc, Size: uint64(size)})
	return Addr(rep.Value), err
}

// Malloc allocates size bytes of shared memory for this rank alone (16-byte
// aligned); Share hands the address to the others.
func (n *Node) Malloc(size int) (Addr, error) {
	if err := n.checkSize(size); err != nil {
		return 0, fmt.Errorf("dsm: malloc: %w", err)
	}
	rep, err := n.call(link.Request{Op: link.OpMalloc, Size: uint64(size)})
	return Addr(rep.Value), err
}

func (n *Node) checkSize(size int) error {
	if size <= 0 {
		return fmt.Errorf("size %d", size)
	}
	if uintptr(size) > n.size {
		return fmt.Errorf("size %d exceeds the %d-byte shared region", size, n.size)
	}
	return nil
}

// Share is collective: every rank calls it with the same root and gets the
// address root passed. It orders memory like a barrier: what root wrote
// before it is visible to every rank after it returns.
func (n *Node) Share(root int, a Addr) (Addr, error) {
	if root < 0 || root >= n.nprocs {
		return 0, fmt.Errorf("dsm: share: root rank %d out of range [0,%d)", root, n.nprocs)
	}
	if n.alone() {
		return a, n.barrierAlone()
	}
	rep, err := n.call(link.Request{Op: link.OpShare, ID: n.barriers, Root: root, Addr: uint64(a)})
	return Addr(rep.Value), err
}

// alone reports whether this rank is the whole job: its barriers, shares
// and locks then complete at once here, with nothing to make coherent and
// no one to wait for, without a round trip to the engine.
func (n *Node) alone() bool { return n.nprocs == 1 }

// barrierAlone is a barrier of a rank alone.
func (n *Node) barrierAlone() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	n.yieldSometimes()
	n.local.Barriers++
	return nil
}

// ShareAmong is Share within a processor set: every member of members calls
// it with the same barrier id, root and set, and gets the value root passed;
// what root wrote before it is visible to every member after it. It is a
// barrier over the set (id as for BarrierAmong) that carries one value.
func (n *Node) ShareAmong(id int, members []int, root int, value uint64) (uint64, error) {
	if err := n.checkSet("share", id, members); err != nil {
		return 0, err
	}
	if !slices.Contains(members, root) {
		return 0, fmt.Errorf("dsm: share: root rank %d is not in the processor set %v", root, members)
	}
	if n.alone() {
		return value, n.barrierAlone()
	}
	rep, err := n.call(link.Request{Op: link.OpShare, ID: uint32(id), Members: members, Root: root, Addr: value})
	return rep.Value, err
}

// BarrierAmong waits until every rank of the processor set members (which
// must include this rank) has called BarrierAmong(id, members); then what
// each wrote before it is visible to all of them. Ranks outside the set take
// no part. Sets in use at the same time must use different ids unless they
// are disjoint.
func (n *Node) BarrierAmong(id int, members []int) error {
	if err := n.checkSet("barrier", id, members); err != nil {
		return err
	}
	if n.alone() {
		return n.barrierAlone()
	}
	_, err := n.call(link.Request{Op: link.OpBarrier, ID: uint32(id), Members: members})
	return err
}

func (n *Node) checkSet(what string, id int, members []int) error {
	if id < 0 || uint64(id) >= uint64(n.barriers) {
		return fmt.Errorf("dsm: %s: barrier %d out of range [0,%d)", what, id, n.barriers)
	}
	if len(members) == 0 {
		return fmt.Errorf("dsm: %s: empty processor set", what)
	}
	if !slices.Contains(members, n.rank) {
		return fmt.Errorf("dsm: %s: processor set %v does not include rank %d", what, members, n.rank)
	}
	for _, r := range members {
		if r < 0 || r >= n.nprocs {
			return fmt.Errorf("dsm: %s: processor set %v names rank %d, outside [0,%d)", what, members, r, n.nprocs)
		}
	}
	return nil
}

// FetchAdd adds delta to shared counter c and returns the value it had.
// Counters start at 0; each is kept by the engine of rank c mod NProcs and
// updated there atomically, in one round trip: self-scheduled loops take
// their chunks from one. FetchAdd orders no memory.
func (n *Node) FetchAdd(c uint32, delta int64) (int64, error) {
	rep, err := n.call(link.Request{Op: link.OpFetchAdd, ID: c, Delta: delta})
	return int64(rep.Value), err
}

// WaitCounter sleeps until shared counter c is at least until (FetchAdd
// calls of other ranks get it there) and returns its value then. Like
// FetchAdd it orders no memory. A job whose every running rank waits, in
// WaitCounter or in a lock or barrier, ends as deadlocked.
func (n *Node) WaitCounter(c uint32, until int64) (int64, error) {
	rep, err := n.call(link.Request{Op: link.OpWaitCounter, ID: c, Delta: until})
	return int64(rep.Value), err
}

// SetHome places the home of the pages holding [a, a+size) at rank home:
// the rank whose copy of them is the master, which writes them in place and
// to which the others send their changes and turn for whole pages. Place
// each array where its elements are computed. A placement takes effect
// when the next Barrier completes; any rank may place any page, but two
// ranks that place one page at different homes before the same Barrier
// make it fail. Without placements, a page's home moves to the rank that
// alone wrote it between two barriers. With the homeless protocol
// (svmf run -protocol homeless) it does nothing.
func (n *Node) SetHome(a Addr, size int, home int) error {
	if size <= 0 || uintptr(a) < n.base || uintptr(a)+uintptr(size) > n.base+n.size || uintptr(a)+uintptr(size) < uintptr(a) {
		return fmt.Errorf("dsm: set home: [%#x,+%d) is not inside the shared region [%#x,+%d)", uintptr(a), size, n.base, n.size)
	}
	if home < 0 || home >= n.nprocs {
		return fmt.Errorf("dsm: set home: rank %d out of range [0,%d)", home, n.nprocs)
	}
	_, err := n.call(link.Request{Op: link.OpSetHome, Addr: uint64(a), Size: uint64(size), Root: home})
	return err
}

// Free returns memory from Alloc or Malloc.
func (n *Node) Free(a Addr) error {
	_, err := n.call(link.Request{Op: link.OpFree, Addr: uint64(a)})
	return err
}

// Lock acquires lock id (0 <= id < the job's lock count, 1024 by default).
// Writes made under the lock by earlier holders are visible once it returns.
func (n *Node) Lock(id int) error {
	if id < 0 || uint64(id) >= uint64(n.locks) {
		return fmt.Errorf("dsm: lock %d out of range [0,%d)", id, n.locks)
	}
	if n.alone() {
		n.mu.Lock()
		defer n.mu.Unlock()
		switch {
		case n.closed:
			return ErrClosed
		case n.held[id]:
			return fmt.Errorf("dsm: lock: lock %d is already held by rank %d", id, n.rank)
		}
		n.yieldSometimes()
		n.held[id] = true
		n.local.LockAcquires++
		return nil
	}
	if n.lockCached(id) {
		return nil
	}
	if _, err := n.call(link.Request{Op: link.OpLock, ID: uint32(id)}); err != nil {
		return err
	}
	n.mu.Lock()
	n.held[id] = true
	n.mu.Unlock()
	return nil
}

// lockCached takes lock id without a call if the engine left it here: this
// rank released it last and no other rank has asked for it since.
func (n *Node) lockCached(id int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ctl == nil || n.closed || n.held[id] || !n.ctl.TryLock(uint32(id)) {
		return false // a lock held already: the engine names the misuse
	}
	n.held[id] = true // counted by the area, for the engine's statistics
	// Here, not in its release too: one clock read a pair is enough.
	n.yieldSometimes()
	return true
}

// Unlock releases lock id, which this rank must hold.
func (n *Node) Unlock(id int) error {
	n.mu.Lock()
	held := n.held[id]
	n.mu.Unlock()
	if !held {
		return fmt.Errorf("dsm: unlock of lock %d, which rank %d does not hold", id, n.rank)
	}
	if n.alone() {
		n.mu.Lock()
		defer n.mu.Unlock()
		switch {
		case n.closed:
			return ErrClosed
		case !n.held[id]: // another thread released it meanwhile
			return fmt.Errorf("dsm: unlock of lock %d, which rank %d does not hold", id, n.rank)
		}
		delete(n.held, id)
		return nil
	}
	if cached, err := n.unlockCached(id); cached || err != nil {
		return err
	}
	if _, err := n.call(link.Request{Op: link.OpUnlock, ID: uint32(id)}); err != nil {
		return err
	}
	n.mu.Lock()
	delete(n.held, id)
	n.mu.Unlock()
	return nil
}

// unlockCached releases lock id without a call, keeping it here, unless
// another rank waits for it: it reports the pages written since the last
// report in the control area, where the engine takes them when the lock
// leaves or at the next call, and reports true.
func (n *Node) unlockCached(id int) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.closed:
		return false, ErrClosed
	case !n.held[id]: // another thread released it meanwhile
		return false, fmt.Errorf("dsm: unlock of lock %d, which rank %d does not hold", id, n.rank)
	case n.ctl == nil || n.ctl.Wanted(uint32(id)):
		return false, nil // the call reports the pages written
	}
	w, err := n.writtenPages()
	if err != nil {
		return false, fmt.Errorf("dsm: %w", err)
	}
	n.ctl.AddWritten(w)
	if !n.ctl.TryUnlock(uint32(id)) {
		return false, nil // wanted: the release goes to the engine
	}
	delete(n.held, id)
	return true, nil
}

// Holds reports whether this rank holds lock id.
func (n *Node) Holds(id int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.held[id]
}

// Barrier waits until every rank has called Barrier(id) (0 <= id < the job's
// barrier count, 64 by default); then what every rank wrote before it is
// visible to all.
func (n *Node) Barrier(id int) error {
	if id < 0 || uint64(id) >= uint64(n.barriers) {
		return fmt.Errorf("dsm: barrier %d out of range [0,%d)", id, n.barriers)
	}
	if n.alone() {
		return n.barrierAlone()
	}
	_, err := n.call(link.Request{Op: link.OpBarrier, ID: uint32(id)})
	return err
}

// Validate makes [a, a+size) present and current now (writable if write), in
// as few messages as possible: before a system call writes into shared
// memory, or to fetch a range ahead of use.
func (n *Node) Validate(a Addr, size int, write bool) error {
	if size < 0 || uintptr(a) < n.base || uintptr(a)+uintptr(size) > n.base+n.size || uintptr(a)+uintptr(size) < uintptr(a) {
		return fmt.Errorf("dsm: validate: [%#x,+%d) is not inside the shared region [%#x,+%d)", uintptr(a), size, n.base, n.size)
	}
	_, err := n.call(link.Request{Op: link.OpValidate, Addr: uint64(a), Size: uint64(size), Write: write})
	return err
}

// Stats returns this rank's counters.
func (n *Node) Stats() Stats {
	n.mu.Lock()
	local := n.local
	n.mu.Unlock()
	rep, err := n.call(link.Request{Op: link.OpStats, Local: &local})
	if err != nil || rep.Stats == nil {
		return Stats{}
	}
	s := rep.Stats
	return Stats{
		ReadFaults: s.ReadFaults, WriteFaults: s.WriteFaults, Twins: s.Twins,
		DiffsCreated: s.DiffsCreated, DiffsApplied: s.DiffsApplied, DiffBytes: s.DiffBytes,
		MessagesSent: s.MessagesSent, MessagesReceived: s.MessagesReceived,
		BytesSent: s.BytesSent, BytesReceived: s.BytesReceived, MessagesByType: s.MessagesByType,
		LockAcquiresLocal: s.LockAcquiresLocal, LockAcquiresRemote: s.LockAcquiresRemote,
		Barriers: s.Barriers, Invalidations: s.Invalidations,
	}
}

// Close leaves the job and unmaps the region; the engine keeps serving this
// rank's memory to the others. Shared memory must not be touched after it.
func (n *Node) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	n.closed = true
	_, fds, err := n.roundTrip(link.Request{Op: link.OpClose, Local: &n.local})
	closeFDs(fds)
	n.closeCtl()
	if n.slot != nil {
		n.slot.Close()
	}
	unmap(n.base, n.size)
	n.conn.Close()
	if err != nil {
		return fmt.Errorf("dsm: close: %w", err)
	}
	return nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
