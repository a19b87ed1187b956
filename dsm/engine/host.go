package engine

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/dsm/internal/ctl"
	"github.com/svmcluster/svm/dsm/internal/link"
	"github.com/svmcluster/svm/dsm/rank"
	"github.com/svmcluster/svm/dsm/uffd"
	"github.com/svmcluster/svm/lrc"
	"github.com/svmcluster/svm/protocol"
)

// host is one rank of the job as the engine holds it: its memory, its
// protocol engine, and its application's connection and userfaultfd.
type host struct {
	id int
	// mu serializes the rank's protocol work: proto and the fields below
	// that say so are under it.
	mu    sync.Mutex
	proto *rank.Rank
	// inbox holds the messages for the rank not yet stepped, from ranks
	// hosted here and from the other engines; pending counts them, for
	// threads that look without inboxMu.
	inboxMu   sync.Mutex
	inbox     []delivery
	inboxHead int
	pending   atomic.Int32
	// idle (set as mu is released): the rank waits in a call that only
	// another rank can end, or has left; the deadlock check's first look.
	idle atomic.Bool
	// faulting (under mu): the rank's faults are being resolved, and the
	// actions of its flushes wait for runDeferred.
	faulting  bool
	encodeBuf []byte
	memfd     int
	// view is the engine's own mapping of the rank's memory, never
	// registered with a userfaultfd.
	view []byte
	// actMu orders the page actions on the application: deferred holds
	// those waiting (Engine.flush), populated marks the pages known to be
	// in the memfd's page cache; both are guarded by it.
	actMu     sync.Mutex
	deferred  []pageAction
	populated pageBits
	// protectedBlocks (with asynchronous write tracking) has a bit for each
	// block of protectBlock pages of the application's region that has been
	// write-protected whole, as it is before the first of its pages is
	// mapped: see protectBlocks. Guarded by actMu.
	protectedBlocks pageBits
	// ctl (with asynchronous write tracking) is the control area shared
	// with the application: which pages it reports written, and its cached
	// locks; ctlFD its memfd; written, the runs last taken from it.
	ctl     *ctl.Area
	ctlFD   int
	written []protocol.PageRange
	uffd    int
	// readerDone is closed when serve, which reads uffd and slot, has
	// stopped (see waitForReader).
	readerDone chan struct{}
	conn       *link.Conn
	// slot, once the application asked for it, carries its calls beside
	// conn; slotCall: the call under way came through it, and so does its
	// reply.
	slot     *link.Slot
	slotCall bool
	pid      int
	// bound: the application runs on CPU cpu alone; the engine's threads
	// that serve it run there too, so that waking them wakes no idle CPU.
	bound bool
	cpu   int
	// closed: the application called Close; gone: its connection ended
	// without it. Either way the rank's memory stays served.
	closed, gone bool
	// funneled: the application writes shared memory only from threads not
	// inside a call, so its dirty pages need no protection around calls.
	funneled bool
	call     *call
	// local is what the application did alone (link.LocalCounts).
	local link.LocalCounts
	// barrierWait and lockWait are the time the application spent in
	// barriers (and shares) and in lock acquires.
	barrierWait, lockWait time.Duration
	sent                  traffic
	// received counts what other ranks sent this one.
	received traffic
}

// waitsForOthers reports whether h's application waits in a call that only
// other ranks can end (a lock, a barrier, a share), not in a validation or
// an allocation, which the protocol ends without any application.
func (h *host) waitsForOthers() bool {
	return h.call != nil && h.call.op != link.OpValidate && !h.call.op.Allocates()
}

// delivery is a message waiting in a rank's inbox, and the bytes it took
// on the wire (or would have, handed over in memory).
type delivery struct {
	env  protocol.Envelope
	size int
}

// push queues d for h. The count moves with the inbox, under inboxMu: a
// pop between the append and the count would take it below zero.
func (h *host) push(d delivery) {
	h.inboxMu.Lock()
	defer h.inboxMu.Unlock()
	h.inbox = append(h.inbox, d)
	h.pending.Add(1)
}

// pop takes the oldest message waiting for h.
func (h *host) pop() (delivery, bool) {
	h.inboxMu.Lock()
	defer h.inboxMu.Unlock()
	if h.inboxHead == len(h.inbox) {
		return delivery{}, false
	}
	d := h.inbox[h.inboxHead]
	h.inbox[h.inboxHead] = delivery{}
	if h.inboxHead++; h.inboxHead == len(h.inbox) {
		h.inbox, h.inboxHead = h.inbox[:0], 0
	}
	h.pending.Add(-1)
	return d, true
}

// traffic counts one direction of a rank's messages.
type traffic struct {
	messages, bytes int64
	// flows[typ][peer] counts the messages of type typ with peer: an index
	// on every message, not a map's hash (7 % of the engine's time at a
	// barrier every 25 us).
	flows [][]FlowCount
}

// Flow is the messages of one type between a rank and one other rank.
type Flow struct {
	Type protocol.MsgType
	Peer int
}

// FlowCount is what passed in a flow.
type FlowCount struct {
	Messages, Bytes int64
}

func (e *Engine) newHost(r int) (*host, error) {
	memfd, err := unix.MemfdCreate(fmt.Sprintf("svm-rank-%d", r), unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("engine: memory of rank %d: memfd_create: %w", r, err)
	}
	h := &host{id: r, memfd: memfd, uffd: -1, ctlFD: -1, populated: newPageBits(e.pages)}
	if err := unix.Ftruncate(memfd, int64(e.cfg.RegionSize)); err != nil {
		h.close()
		return nil, fmt.Errorf("engine: memory of rank %d: %w", r, err)
	}
	h.view, err = unix.Mmap(memfd, 0, int(e.cfg.RegionSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		h.close()
		return nil, fmt.Errorf("engine: mapping the memory of rank %d: %w", r, err)
	}
	if e.asyncWrites && e.cfg.NProcs > 1 {
		if h.ctl, h.ctlFD, err = ctl.Create(e.pages, int(e.cfg.Locks)); err != nil {
			h.close()
			return nil, fmt.Errorf("engine: rank %d: %w", r, err)
		}
		h.protectedBlocks = newPageBits((e.pages + protectBlock - 1) / protectBlock)
	}
	h.proto, err = rank.New(rank.Config{
		Rank: r, NProcs: e.cfg.NProcs, PageSize: e.pageSize, Pages: e.pages, Base: e.cfg.Base,
		Locks: e.cfg.Locks, Barriers: e.cfg.Barriers + 1, // the last one serves Share
		GCThreshold: e.cfg.GCThreshold, Prefetch: e.cfg.Prefetch,
		Homes: !e.cfg.Homeless, AsyncWrites: e.asyncWrites && e.cfg.NProcs > 1,
		Colocated: e.colocated(),
	}, h.view)
	if err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

// colocated marks the ranks this engine hosts.
func (e *Engine) colocated() []bool {
	c := make([]bool, e.cfg.NProcs)
	if len(e.cfg.Ranks) == 0 {
		for r := range c {
			c[r] = true
		}
	}
	for _, r := range e.cfg.Ranks {
		c[r] = true
	}
	return c
}

// close releases the host; the engine's stop descriptor must have been
// signalled, so that the fault reader lets go of the userfaultfd first.
func (h *host) close() {
	if h.conn != nil {
		h.conn.Close() // wakes serve if it waits inside a request
	}
	if h.readerDone != nil {
		<-h.readerDone
	}
	if h.uffd >= 0 {
		unix.Close(h.uffd)
		h.uffd = -1
	}
	if h.view != nil {
		unix.Munmap(h.view)
		h.view = nil
	}
	if h.memfd >= 0 {
		unix.Close(h.memfd)
		h.memfd = -1
	}
	if h.ctl != nil {
		h.ctl.Close()
		unix.Close(h.ctlFD)
		h.ctl, h.ctlFD = nil, -1
	}
	if h.slot != nil {
		h.slot.Close()
		h.slot = nil
	}
	if h.conn != nil {
		h.conn.Close()
	}
}

// waitForReader makes close wait for serve, which from now on reads h's
// userfaultfd or its call slot, to stop first. It runs on serve's thread.
func (h *host) waitForReader() {
	if h.readerDone == nil {
		h.readerDone = make(chan struct{})
	}
}

// attach takes the userfaultfd the application registered its view of the
// region with, and starts reading its faults.
func (e *Engine) attach(h *host, fds []int) error {
	if len(fds) != 1 {
		closeFDs(fds)
		return fmt.Errorf("want one userfaultfd, got %d descriptors", len(fds))
	}
	if h.uffd >= 0 {
		closeFDs(fds)
		return errors.New("already attached")
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		closeFDs(fds)
		return err
	}
	h.uffd = fds[0]
	h.waitForReader()
	return nil
}

// readFaults handles the faults waiting on h's userfaultfd, which buf
// holds while they are read. It returns false when the engine is stopping.
func (e *Engine) readFaults(h *host, buf []byte) bool {
	n, err := unix.Read(h.uffd, buf)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
		return true
	}
	if err != nil {
		e.fail(fmt.Errorf("engine: rank %d: reading faults: %w", h.id, err))
		return false
	}
	var faults []uffd.Fault
	for off := 0; off+uffd.MsgSize <= n; off += uffd.MsgSize {
		if flt, ok := uffd.ParseFault(buf[off : off+uffd.MsgSize]); ok {
			faults = append(faults, flt)
		}
	}
	if len(faults) == 0 {
		return true
	}
	if !e.do(h, func() { e.fault(h, faults) }) {
		return false
	}
	e.runDeferred(h)
	return true
}

// act carries out a page action on h's application, for count pages from
// a.Page (more than one only for protection changes).
func (e *Engine) act(h *host, a lrc.Action, count int) error {
	switch a.Kind {
	case lrc.ActTrack:
		h.ctl.Track(a.Page)
		return nil
	case lrc.ActUntrack:
		h.ctl.Untrack(a.Page)
		return nil
	}
	if h.uffd < 0 || h.closed {
		return nil // not attached, or closed (unmapping): nothing to change
	}
	addr := uintptr(e.cfg.Base) + uintptr(a.Page)*uintptr(e.pageSize)
	size := uintptr(count) * uintptr(e.pageSize)
	var err error
	switch a.Kind {
	case lrc.ActWriteProtect:
		err = retry(func() error { return uffd.WriteProtect(h.uffd, addr, size, uffd.UFFDIO_WRITEPROTECT_MODE_WP) })
	case lrc.ActUnprotect:
		err = retry(func() error { return uffd.WriteProtect(h.uffd, addr, size, 0) })
	case lrc.ActMapReadOnly, lrc.ActMapReadWrite:
		if err = e.protectBlocks(h, a.Page, count); err != nil {
			break
		}
		if a.Kind == lrc.ActMapReadWrite && h.populated.none(a.Page, count) {
			// Pages never touched (a first touch): zeroed and mapped in one
			// call, a fifth cheaper than fallocate and CONTINUE. One the
			// engine wrote through its view is in the page cache: EEXIST,
			// and the pages go the other way.
			err = retry(func() error { return uffd.ZeroPage(h.uffd, addr, size) })
			if err == nil {
				for p := a.Page; p < a.Page+uint32(count); p++ {
					h.populated.set(p)
				}
				break
			}
			if !errors.Is(err, unix.EEXIST) {
				break
			}
		}
		if err = e.populate(h, a.Page, count); err != nil {
			return err
		}
		mode := uint64(uffd.UFFDIO_CONTINUE_MODE_WP)
		if a.Kind == lrc.ActMapReadWrite {
			mode = 0
		}
		err = retry(func() error { return uffd.Continue(h.uffd, addr, size, mode) })
		if errors.Is(err, unix.EEXIST) && count > 1 {
			// Some page of the run is mapped already: one at a time.
			for i := range count {
				if err = e.act(h, lrc.Action{Kind: a.Kind, Page: a.Page + uint32(i)}, 1); err != nil {
					return err
				}
			}
			return nil
		}
		if errors.Is(err, unix.EEXIST) {
			// Already mapped (a second thread's fault on the page): make the
			// protection what the protocol wants and wake the waiters.
			if a.Kind == lrc.ActMapReadWrite {
				err = retry(func() error { return uffd.WriteProtect(h.uffd, addr, size, 0) })
			} else {
				err = retry(func() error { return uffd.Wake(h.uffd, addr, size) })
			}
		}
	default:
		return fmt.Errorf("unknown action %v", a.Kind)
	}
	if errors.Is(err, unix.ESRCH) {
		return nil // the application has exited
	}
	return err
}

// retry repeats a userfaultfd ioctl that the kernel refused with EAGAIN
// because the application's address space was changing.
func retry(f func() error) error {
	for {
		if err := f(); !errors.Is(err, unix.EAGAIN) {
			return err
		}
	}
}

// protectBlock is how many pages the engine write-protects at once ahead of
// their first mapping: 2 MiB of 4 KiB pages, the span of one page table.
const protectBlock = 512

// protectBlocks write-protects, with asynchronous write tracking, each
// block of protectBlock pages that pages [first, first+count) fall in and
// that no page was mapped in before. A page never mapped counts as written
// in the application's scan until it is protected; protected while nothing
// in it is mapped, a block costs a page table with a marker for each of its
// pages, and then only writes show. The application once protected its
// whole region up front: a page table for every 2 MiB of the region, used
// or not (at -region 64G, 128 MiB a rank and 0.5 s at the start).
func (e *Engine) protectBlocks(h *host, first uint32, count int) error {
	if h.protectedBlocks == nil {
		return nil
	}
	for b := first / protectBlock; b <= (first+uint32(count)-1)/protectBlock; b++ {
		if h.protectedBlocks.has(b) {
			continue
		}
		pages := min(protectBlock, e.pages-int(b)*protectBlock)
		addr := uintptr(e.cfg.Base) + uintptr(b)*protectBlock*uintptr(e.pageSize)
		if err := retry(func() error {
			return uffd.WriteProtect(h.uffd, addr, uintptr(pages)*uintptr(e.pageSize), uffd.UFFDIO_WRITEPROTECT_MODE_WP)
		}); err != nil {
			return fmt.Errorf("write-protecting pages [%d,+%d) before their first mapping: %w", b*protectBlock, pages, err)
		}
		h.protectedBlocks.set(b)
	}
	return nil
}

// populate makes sure pages [first, first+count) are in the rank's page
// cache, so that CONTINUE can map them: a page never touched has none yet.
// Each run of pages not known to be there takes one fallocate, which puts
// them in the page cache without mapping them in the engine's view: the
// engine touches few of them (a fault there is cheap), and setting up its
// page tables for all of them cost a third of a large array's first touch.
func (e *Engine) populate(h *host, first uint32, count int) error {
	end := first + uint32(count)
	for p := first; p < end; {
		if h.populated.has(p) {
			p++
			continue
		}
		q := p + 1
		for q < end && !h.populated.has(q) {
			q++
		}
		off, n := int64(p)*int64(e.pageSize), int64(q-p)*int64(e.pageSize)
		if err := unix.Fallocate(h.memfd, 0, off, n); err != nil {
			return fmt.Errorf("populating pages [%d,+%d): %w", p, q-p, err)
		}
		for ; p < q; p++ {
			h.populated.set(p)
		}
	}
	return nil
}

// pageBits is a bit a page of the region (or a block of pages), in blocks
// of bitsBlock bits allocated at their first bit set: a bitmap of the whole
// region up front took 32 MB a rank at -region 1T.
type pageBits [][]uint64

const bitsBlock = lrc.ChunkPages

func newPageBits(pages int) pageBits { return make(pageBits, (pages+bitsBlock-1)/bitsBlock) }

func (b pageBits) has(p uint32) bool {
	blk := b[p/bitsBlock]
	return blk != nil && blk[p%bitsBlock/64]&(1<<(p%64)) != 0
}

// none reports whether no page of [first, first+count) has its bit.
func (b pageBits) none(first uint32, count int) bool {
	for p := first; p < first+uint32(count); p++ {
		if b.has(p) {
			return false
		}
	}
	return true
}

func (b pageBits) set(p uint32) {
	if b[p/bitsBlock] == nil {
		b[p/bitsBlock] = make([]uint64, bitsBlock/64)
	}
	b[p/bitsBlock][p%bitsBlock/64] |= 1 << (p % 64)
}

func (t *traffic) count(typ protocol.MsgType, peer, size int) {
	t.messages++
	t.bytes += int64(size)
	if int(typ) >= len(t.flows) {
		t.flows = append(t.flows, make([][]FlowCount, int(typ)+1-len(t.flows))...)
	}
	f := t.flows[typ]
	if peer >= len(f) {
		f = append(f, make([]FlowCount, peer+1-len(f))...)
		t.flows[typ] = f
	}
	f[peer].Messages++
	f[peer].Bytes += int64(size)
}

// byFlow returns the counts of the flows that carried messages.
func (t *traffic) byFlow() map[Flow]FlowCount {
	m := make(map[Flow]FlowCount)
	for typ, peers := range t.flows {
		for peer, c := range peers {
			if c.Messages > 0 {
				m[Flow{protocol.MsgType(typ), peer}] = c
			}
		}
	}
	return m
}

// takeLocal records the application's own counts, which only grow.
func (h *host) takeLocal(c *link.LocalCounts) {
	if c != nil && c.Barriers >= h.local.Barriers && c.LockAcquires >= h.local.LockAcquires {
		h.local = *c
	}
}

// rankStats are the rank's protocol counters with what its application
// did alone (link.LocalCounts) and the locks it took from its cache.
func (h *host) rankStats() rank.Stats {
	s := h.proto.Stats()
	s.Barriers += h.local.Barriers
	s.LockAcquiresLocal += h.local.LockAcquires
	if h.ctl != nil {
		s.LockAcquiresLocal += h.ctl.CachedLocks()
	}
	return s
}

func (h *host) stats() *link.Stats {
	s := h.rankStats()
	st := &link.Stats{
		ReadFaults: s.ReadFaults, WriteFaults: s.WriteFaults, Twins: s.Twins,
		DiffsCreated: s.DiffsCreated, DiffsApplied: s.DiffsApplied, DiffBytes: s.DiffBytesCreated,
		MessagesSent: h.sent.messages, MessagesReceived: h.received.messages,
		BytesSent: h.sent.bytes, BytesReceived: h.received.bytes,
		MessagesByType:    make(map[string]int64),
		LockAcquiresLocal: s.LockAcquiresLocal, LockAcquiresRemote: s.LockAcquiresRemote,
		Barriers: s.Barriers, Invalidations: s.Invalidations,
	}
	for f, n := range h.sent.byFlow() {
		st.MessagesByType[f.Type.String()] += n.Messages
	}
	return st
}

// RankSnapshot is one hosted rank's counters at a moment.
type RankSnapshot struct {
	Rank  int
	Stats rank.Stats
	// Metadata is the protocol metadata the rank holds, in bytes.
	Metadata int64
	// BarrierWait and LockWait are the time the application spent in
	// barriers (and shares) and waiting for locks.
	BarrierWait, LockWait time.Duration
	Sent, Received        map[Flow]FlowCount
}

// AddCounts adds o's counters, waits and metadata to s, not its flows of
// messages (kept by peer, they are summed by whoever knows what a peer is).
func (s *RankSnapshot) AddCounts(o RankSnapshot) {
	s.Stats.Add(o.Stats)
	s.Metadata += o.Metadata
	s.BarrierWait += o.BarrierWait
	s.LockWait += o.LockWait
}

// Snapshot returns the counters of every rank this engine hosts.
func (e *Engine) Snapshot() []RankSnapshot {
	var snaps []RankSnapshot
	e.eachHost(func(h *host) {
		snaps = append(snaps, RankSnapshot{
			Rank: h.id, Stats: h.rankStats(), Metadata: h.proto.Metadata(),
			BarrierWait: h.barrierWait, LockWait: h.lockWait,
			Sent: h.sent.byFlow(), Received: h.received.byFlow(),
		})
	})
	return snaps
}

// eachHost calls f for each hosted rank, under its lock, one at a time.
func (e *Engine) eachHost(f func(h *host)) {
	for _, h := range e.hosts {
		if h == nil {
			continue
		}
		h.mu.Lock()
		f(h)
		e.unlock(h)
	}
	e.settle()
}
