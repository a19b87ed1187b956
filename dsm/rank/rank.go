// Package rank is the protocol engine of one rank of an SVM job. It joins the
// lrc, lock and barrier state machines: the application's synchronization
// calls and page faults, and the messages of other ranks, go in; messages to
// other ranks and actions on the application's page mappings come out.
//
// Messages to one rank must be delivered in the order they were produced
// (one transport stream per pair of ranks, as TCP and the engine's queues
// give): a home's copy takes a writer's diffs in the order the writer made
// them.
//
// Like the packages it joins it is a pure state machine in the style of etcd's
// raft: no I/O, no clock, no goroutine. The engine of the runtime and the
// deterministic simulator drive the same code.
package rank

import (
	"fmt"
	"slices"

	"github.com/svmcluster/svm/barrier"
	"github.com/svmcluster/svm/lock"
	"github.com/svmcluster/svm/lrc"
	"github.com/svmcluster/svm/protocol"
)

// Config describes one rank of a job.
type Config struct {
	Rank, NProcs int
	PageSize     int
	Pages        int
	// Base is the address of the region: allocations answer addresses.
	Base uint64
	// ChunkSize is what rank 0 hands a rank at a time to cut small objects
	// from, a power of two of at least 64 bytes (0: DefaultChunkSize).
	ChunkSize uint64
	Locks     uint32
	Barriers  uint32
	// GCThreshold is the protocol metadata, in bytes at any one rank, above
	// which a whole-job barrier collects the history all ranks share: every
	// rank brings up to date the pages it uses or keeps, drops its copies of
	// the others, and a second, internal barrier (2(n-1) more messages)
	// proves all are done before the history goes.
	GCThreshold int64
	// Homes, AsyncWrites, Funneled, Prefetch, Colocated: see lrc.Config.
	Homes       bool
	AsyncWrites bool
	Funneled    bool
	Prefetch    bool
	Colocated   []bool
}

// Defaults for a job.
const (
	DefaultLocks       = 1024
	DefaultBarriers    = 64
	DefaultGCThreshold = 64 << 20
)

// Ready is what the rank produced since the last call to Ready.
type Ready struct {
	// Messages go to other ranks, in any order.
	Messages []protocol.Envelope
	// Actions change the application's page mappings, in this order, before
	// the messages are sent (a page sent whole goes as it is after them).
	// Dropping a mapping is not among them: only the application can drop
	// its own mappings, and it does so with Zap.
	Actions []lrc.Action
	// Done: the outstanding call finished; for an allocation or counter
	// call, with Value (an address, or the counter's previous value) or
	// Err, what was wrong with it.
	Done  bool
	Value uint64
	Err   error
	// Zap, with Done, are the pages (sorted) the application must drop
	// before it goes on: those the call invalidated and did not bring up to
	// date in place. Every page the rank's state holds unmapped is then
	// unmapped in the application too.
	Zap []uint32
	// Wanted are locks the application holds, for the protocol, that
	// another rank now waits for. An engine that lets the application
	// release and retake locks without a call (see ReleaseCached) takes
	// each away, or has the application's next release come to it.
	Wanted []uint32
}

// Stats counts this rank's protocol events.
type Stats struct {
	lrc.Stats
	LockAcquiresLocal, LockAcquiresRemote int64
	Barriers                              int64
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.Stats.Add(o.Stats)
	s.LockAcquiresLocal += o.LockAcquiresLocal
	s.LockAcquiresRemote += o.LockAcquiresRemote
	s.Barriers += o.Barriers
}

type opKind uint8

const (
	opNone opKind = iota
	opAcquire
	opBarrier
	opValidate
	opAlloc // allocation or fetch-and-add: waits for rank 0 or a counter's keeper
)

func (k opKind) String() string {
	return [...]string{"none", "lock acquire", "barrier", "validate", "allocation"}[k]
}

// op is the application's outstanding synchronous call.
type op struct {
	kind         opKind
	id           uint32 // lock or barrier id
	members      []int  // barrier processor set, nil: every rank
	first, count uint32 // validate range
	write        bool
	// collecting: the barrier has departed with a collection; this rank
	// validates its kept pages, then waits at the collection barrier.
	collecting bool
	// collectArrived: it has arrived at the collection barrier.
	collectArrived bool
	// share is the value this rank hands every member at the barrier.
	share *uint64
	// refreshing: the acquire has merged what it brought and waits for the
	// pages in use to be brought up to date in place.
	refreshing bool
	// arrivedAt is this rank's own entry of the vector time it arrived with.
	arrivedAt uint32
	alloc     allocOp
}

// Rank is the protocol engine of one rank.
type Rank struct {
	cfg      Config
	limits   protocol.Limits
	lrc      *lrc.State
	locks    *lock.Table
	barriers *barrier.Table
	op       op
	// knownBy holds, per barrier manager, this rank's vector time when it last
	// left one of that manager's barriers: the manager knew at least that.
	knownBy map[int]protocol.VectorTime
	// floor is the history collected everywhere: every rank knows it.
	floor protocol.VectorTime
	// collectUpTo is the history the collection under way drops.
	collectUpTo protocol.VectorTime
	// shared is the value shared at the last barrier, if sharedOK.
	shared   uint64
	sharedOK bool
	// placements are the home placements asked for since this rank last
	// left a barrier of every rank, in order.
	placements []protocol.HomeRange
	// job is the job's allocator, at rank 0; objects, this rank's small
	// objects; counters, the fetch-and-add counters this rank keeps.
	job         *jobAllocator
	objects     objects
	counters    map[uint32]int64
	counterWait map[uint32][]counterWaiter
	nextAllocID uint32
	out         Ready
	stats       Stats
}

// New returns the engine of rank cfg.Rank over the rank's memory mem.
func New(cfg Config, mem []byte) (*Rank, error) {
	l, err := lrc.New(lrc.Config{
		Rank: cfg.Rank, NProcs: cfg.NProcs, PageSize: cfg.PageSize, Pages: cfg.Pages,
		Homes: cfg.Homes, AsyncWrites: cfg.AsyncWrites, Funneled: cfg.Funneled, Prefetch: cfg.Prefetch,
		Colocated: cfg.Colocated,
	}, mem)
	if err != nil {
		return nil, err
	}
	locks, err := lock.New(lock.Config{Self: cfg.Rank, NProcs: cfg.NProcs, Locks: cfg.Locks})
	if err != nil {
		return nil, err
	}
	// One barrier id past the applications' serves garbage collection.
	barriers, err := barrier.New(barrier.Config{Self: cfg.Rank, NProcs: cfg.NProcs, Barriers: cfg.Barriers + 1})
	if err != nil {
		return nil, err
	}
	if cfg.GCThreshold <= 0 {
		return nil, fmt.Errorf("rank: garbage collection threshold %d bytes", cfg.GCThreshold)
	}
	if cfg.ChunkSize == 0 {
		cfg.ChunkSize = DefaultChunkSize
	}
	if cfg.ChunkSize < 4*minClass || cfg.ChunkSize&(cfg.ChunkSize-1) != 0 {
		return nil, fmt.Errorf("rank: chunk size %d is not a power of two of at least %d bytes", cfg.ChunkSize, 4*minClass)
	}
	r := &Rank{
		cfg:         cfg,
		limits:      protocol.Limits{NProcs: cfg.NProcs, Pages: uint32(cfg.Pages), Locks: cfg.Locks, Barriers: cfg.Barriers + 1},
		lrc:         l,
		locks:       locks,
		barriers:    barriers,
		knownBy:     make(map[int]protocol.VectorTime),
		floor:       make(protocol.VectorTime, cfg.NProcs),
		counters:    make(map[uint32]int64),
		counterWait: make(map[uint32][]counterWaiter),
	}
	if cfg.Rank == 0 {
		r.job = &jobAllocator{space: newAllocator(uint64(cfg.Pages) * uint64(cfg.PageSize)), calls: make([]int, cfg.NProcs)}
	}
	return r, nil
}

// Ready returns and clears what the rank produced.
func (r *Rank) Ready() Ready {
	rd := r.out
	r.out = Ready{}
	if rd.Done {
		rd.Zap = r.lrc.TakeZap()
	}
	out := r.lrc.TakeOutput()
	// The consistency engine's messages first: the diffs a release sends
	// home go before the message that makes its interval known.
	rd.Messages = append(out.Messages, rd.Messages...)
	rd.Actions = append(rd.Actions, out.Actions...)
	return rd
}

// Busy reports whether an Acquire, Barrier or Validate is outstanding.
func (r *Rank) Busy() bool { return r.op.kind != opNone }

// Stats returns the rank's counters.
func (r *Rank) Stats() Stats {
	s := r.stats
	s.Stats = r.lrc.Stats()
	return s
}

// PageState returns the coherence state of page p.
func (r *Rank) PageState(p uint32) lrc.PageState { return r.lrc.PageState(p) }

// VT returns the rank's vector time.
func (r *Rank) VT() protocol.VectorTime { return r.lrc.VT() }

// Metadata returns the bytes of protocol metadata the rank holds.
func (r *Rank) Metadata() int64 { return r.lrc.Metadata() }

func (r *Rank) begin(o op) error {
	if r.op.kind != opNone {
		return fmt.Errorf("rank %d: %v called while a %v is in progress", r.cfg.Rank, o.kind, r.op.kind)
	}
	r.op = o
	return nil
}

func (r *Rank) done() {
	r.op = op{}
	r.out.Done = true
}

func (r *Rank) send(to int, m protocol.Message) {
	r.out.Messages = append(r.out.Messages, protocol.Envelope{From: r.cfg.Rank, To: to, Msg: m})
}

// ProtectDirty write-protects the pages written in the open interval. An
// engine whose application has other threads calls it, and carries out its
// actions, before every call but Fault and Validate (see lrc.ProtectDirty).
func (r *Rank) ProtectDirty() { r.lrc.ProtectDirty() }

// SetFunneled tells whether the application writes shared memory only while
// no call is under way (see lrc.Config); call it before the application
// touches shared memory.
func (r *Rank) SetFunneled(funneled bool) { r.lrc.SetFunneled(funneled) }

// Written reports the pages the application wrote without a fault (see
// lrc.Written); the engine calls it before every call that may close the
// interval.
func (r *Rank) Written(rs []protocol.PageRange) error { return r.lrc.Written(rs) }

// SetHome places the home of pages [first, first+count) at rank home. It
// takes effect when the next barrier of every rank completes; the ranks may
// place pages in any number of calls, and any rank may place any page, but
// two ranks that place one page at different homes fail that barrier.
// Without the home-based protocol it does nothing.
func (r *Rank) SetHome(first, count uint32, home int) error {
	switch {
	case home < 0 || home >= r.cfg.NProcs:
		return fmt.Errorf("home rank %d out of range [0,%d)", home, r.cfg.NProcs)
	case count == 0 || uint64(first)+uint64(count) > uint64(r.cfg.Pages):
		return fmt.Errorf("pages [%d,+%d) are not inside the region's %d", first, count, r.cfg.Pages)
	}
	if r.cfg.Homes {
		r.placements = append(r.placements, protocol.HomeRange{First: first, Count: count, Rank: home})
	}
	return nil
}

// Home returns the rank page p is home at, or -1 without the home-based
// protocol.
func (r *Rank) Home(p uint32) int { return r.lrc.Home(p) }

// Fault handles an access to page p that trapped. The page is mapped by a
// later action, at once if the rank's copy is current.
func (r *Rank) Fault(p uint32, write bool) error {
	return r.lrc.Fault(p, write)
}

// Validate makes pages [first, first+count) current and mapped (writable if
// write), fetching what is missing in as few messages as possible. Ready
// reports Done when they are.
func (r *Rank) Validate(first, count uint32, write bool) error {
	if err := r.begin(op{kind: opValidate, first: first, count: count, write: write}); err != nil {
		return err
	}
	if err := r.lrc.Validate(first, count, write); err != nil {
		r.op = op{}
		return err
	}
	return r.progress()
}

// Acquire acquires lock id. Ready reports Done when the lock is held and the
// writes that preceded its release are visible.
func (r *Rank) Acquire(id uint32) error {
	if err := r.begin(op{kind: opAcquire, id: id}); err != nil {
		return err
	}
	r.lrc.CloseInterval()
	local, send, err := r.locks.Acquire(id, r.lrc.VT())
	if err != nil {
		r.op = op{}
		return err
	}
	r.out.Messages = append(r.out.Messages, send...)
	if local {
		r.stats.LockAcquiresLocal++
		r.done()
	}
	return nil
}

// acquired finishes an acquire whose intervals are merged: once the pages
// in use it invalidated are up to date in place, the call is done.
func (r *Rank) acquired() {
	r.lrc.StartRefresh()
	if r.lrc.Refreshing() {
		r.op.refreshing = true
		return
	}
	r.done()
}

// Release releases lock id, passing it on if another rank waits for it.
func (r *Rank) Release(id uint32) error {
	if r.op.kind != opNone {
		return fmt.Errorf("rank %d: lock release called while a %v is in progress", r.cfg.Rank, r.op.kind)
	}
	return r.release(id)
}

// ReleaseCached releases lock id in the application's place, at any time,
// another call of the application's under way or not: the application
// released it without a call, and kept using memory, while the protocol
// held the lock for it; now another rank waits for it (Ready.Wanted). The
// interval the release closes holds every write reported before it: the
// engine reports what the application wrote since its last call, and
// protects those pages, if the application runs on, before the close.
func (r *Rank) ReleaseCached(id uint32) error { return r.release(id) }

// LockWanted reports whether another rank waits for lock id, which the
// application holds.
func (r *Rank) LockWanted(id uint32) bool { return r.locks.Wanted(id) }

func (r *Rank) release(id uint32) error {
	if !r.locks.Held(id) {
		_, err := r.locks.Release(id) // reports the misuse precisely
		return err
	}
	r.lrc.CloseInterval()
	g, err := r.locks.Release(id)
	if err != nil {
		return err
	}
	return r.grant(g)
}

func (r *Rank) grant(g *lock.Grant) error {
	if g == nil {
		return nil
	}
	ivs, err := r.lrc.IntervalsFor(g.VT)
	if err != nil {
		return fmt.Errorf("granting lock %d to rank %d: %w", g.Lock, g.To, err)
	}
	r.send(g.To, &protocol.LockGrant{Lock: g.Lock, Intervals: ivs})
	return nil
}

// Barrier waits at barrier id with the processor set members (nil or empty:
// every rank). Ready reports Done when every member has arrived and this
// rank has merged what they wrote before arriving.
func (r *Rank) Barrier(id uint32, members []int) error {
	return r.barrier(id, members, nil)
}

// ShareAt is Barrier for the member that hands value to every member; the
// others read it with Shared once their barrier is done. At most one member
// may share at a barrier.
func (r *Rank) ShareAt(id uint32, members []int, value uint64) error {
	return r.barrier(id, members, &value)
}

// Shared returns the value shared at the last barrier this rank crossed, and
// whether one was.
func (r *Rank) Shared() (uint64, bool) { return r.shared, r.sharedOK }

func (r *Rank) barrier(id uint32, members []int, share *uint64) error {
	if id >= r.cfg.Barriers {
		return fmt.Errorf("barrier %d out of range [0,%d)", id, r.cfg.Barriers)
	}
	set, err := barrier.Normalize(members, r.cfg.NProcs)
	if err != nil {
		return err
	}
	if err := r.begin(op{kind: opBarrier, id: id, members: set, share: share}); err != nil {
		return err
	}
	if err := r.arrive(id, set, share); err != nil {
		r.op = op{}
		return err
	}
	return nil
}

// collectBarrier is the id of the barrier that ends a collection.
func (r *Rank) collectBarrier() uint32 { return r.cfg.Barriers }

// arrive sends this rank's arrival at barrier id over the processor set.
func (r *Rank) arrive(id uint32, set []int, share *uint64) error {
	r.lrc.CloseInterval()
	if len(set) == 0 {
		r.lrc.PushWritten()
	}
	mgr := barrier.Manager(id, set, r.cfg.NProcs)
	ivs, err := r.lrc.IntervalsFor(r.broughtByOthers(mgr, set))
	if err != nil {
		return err
	}
	a := &protocol.BarrierArrive{
		Barrier:   id,
		Members:   set,
		VT:        r.lrc.VT(),
		Intervals: ivs,
		Metadata:  uint64(r.lrc.Metadata()),
	}
	if len(set) == 0 {
		a.Homes = r.placements
	}
	r.op.arrivedAt = a.VT[r.cfg.Rank]
	if share != nil {
		a.Shares, a.Value = true, *share
	}
	res, err := r.barriers.Arrive(a)
	if err != nil {
		return err
	}
	return r.barrierResult(res)
}

// broughtByOthers is what the manager of a barrier over set (every rank if
// empty) knows or gets from another member: the intervals of each other
// member, which that member's own arrival carries if the manager may lack
// them. An arrival so carries this rank's intervals, and those of ranks
// outside the set, once each; with every rank's intervals on every arrival,
// a barrier after lock-passing phases moved each interval to the manager
// once per member.
func (r *Rank) broughtByOthers(mgr int, set []int) protocol.VectorTime {
	vt := r.floor.Clone()
	if k := r.knownBy[mgr]; k != nil {
		vt.Merge(k)
	}
	own := r.lrc.VT()
	for m := range r.cfg.NProcs {
		if m != r.cfg.Rank && (len(set) == 0 || slices.Contains(set, m)) {
			vt[m] = max(vt[m], own[m])
		}
	}
	return vt
}

// Step handles one message from another rank.
func (r *Rank) Step(env protocol.Envelope) error {
	if env.To != r.cfg.Rank {
		return fmt.Errorf("rank %d got a message addressed to rank %d", r.cfg.Rank, env.To)
	}
	if env.From < 0 || env.From >= r.cfg.NProcs || env.From == r.cfg.Rank {
		return fmt.Errorf("rank %d got a message from rank %d", r.cfg.Rank, env.From)
	}
	if err := r.limits.Check(env.Msg); err != nil {
		return fmt.Errorf("message from rank %d: %w", env.From, err)
	}
	var err error
	switch m := env.Msg.(type) {
	case *protocol.LockRequest, *protocol.LockGrant:
		var res lock.Result
		if res, err = r.locks.Step(env.From, m); err == nil {
			err = r.lockResult(res)
		}
	case *protocol.BarrierArrive, *protocol.BarrierDepart:
		var res barrier.Result
		if res, err = r.barriers.Step(env.From, m); err == nil {
			err = r.barrierResult(res)
		}
	case *protocol.DiffRequest:
		err = r.lrc.HandleDiffRequest(env.From, m)
	case *protocol.DiffResponse:
		err = r.lrc.HandleDiffResponse(env.From, m)
	case *protocol.PageRequest:
		err = r.lrc.HandlePageRequest(env.From, m)
	case *protocol.PageResponse:
		err = r.lrc.HandlePageResponse(env.From, m)
	case *protocol.HomeDiffs:
		err = r.lrc.HandleHomeDiffs(env.From, m)
	case *protocol.PagePush:
		err = r.lrc.HandlePagePush(env.From, m)
	case *protocol.PushStop:
		err = r.lrc.HandlePushStop(env.From, m)
	case *protocol.AllocRequest, *protocol.AllocReply, *protocol.CounterRequest, *protocol.CounterReply:
		err = r.stepAlloc(env.From, m)
	default:
		err = fmt.Errorf("unexpected message %v", env.Msg.Type())
	}
	if err == nil {
		err = r.progress()
	}
	if err != nil {
		return fmt.Errorf("rank %d: %w", r.cfg.Rank, err)
	}
	return nil
}

func (r *Rank) lockResult(res lock.Result) error {
	r.out.Messages = append(r.out.Messages, res.Send...)
	if res.Wanted {
		r.out.Wanted = append(r.out.Wanted, res.WantedLock)
	}
	if err := r.grant(res.Grant); err != nil {
		return err
	}
	if g := res.Acquired; g != nil {
		if r.op.kind != opAcquire || r.op.id != g.Lock {
			return fmt.Errorf("grant of lock %d while waiting for %v", g.Lock, r.op.kind)
		}
		if err := r.lrc.Acquire(g.Intervals); err != nil {
			return fmt.Errorf("grant of lock %d: %w", g.Lock, err)
		}
		r.stats.LockAcquiresRemote++
		r.acquired()
	}
	return nil
}

func (r *Rank) barrierResult(res barrier.Result) error {
	r.out.Messages = append(r.out.Messages, res.Send...)
	if c := res.Complete; c != nil {
		return r.completeBarrier(c)
	}
	if d := res.Departed; d != nil {
		if r.op.kind != opBarrier || r.op.id != d.Barrier {
			return fmt.Errorf("departure from barrier %d while waiting for %v", d.Barrier, r.op.kind)
		}
		whole := len(r.op.members) == 0
		var err error
		if whole && r.cfg.Homes {
			if err = r.lrc.Merge(d.Intervals); err == nil {
				err = r.lrc.AcquireAtEpoch(d.Homes)
			}
		} else {
			err = r.lrc.Acquire(d.Intervals)
		}
		if err != nil {
			return fmt.Errorf("departure from barrier %d: %w", d.Barrier, err)
		}
		r.acquiredAt(d.Barrier, whole)
		if !r.op.collecting {
			r.shared, r.sharedOK = d.Value, d.Shared
		}
		return r.leaveBarrier(d.GC)
	}
	return nil
}

// acquiredAt records what leaving barrier id taught: its manager knew all
// that this rank knows now, but for an interval this rank may have closed as
// it left (writes of other threads during the wait). Home-based, a barrier
// of every rank ended an epoch (see lrc.AcquireAtEpoch): every rank knows
// the history up to it.
func (r *Rank) acquiredAt(id uint32, whole bool) {
	known := r.lrc.VT()
	known[r.cfg.Rank] = r.op.arrivedAt
	r.knownBy[barrier.Manager(id, r.op.members, r.cfg.NProcs)] = known
	if whole {
		r.placements = nil
		if r.cfg.Homes {
			r.floor = known
		}
	}
}

// completeBarrier runs at a barrier's manager once every member has arrived:
// merge what they brought, answer each with what it lacks, and leave.
func (r *Rank) completeBarrier(c *barrier.Complete) error {
	whole := len(c.Arrivals[0].Members) == 0
	var placements []protocol.HomeRange
	if whole {
		var err error
		if placements, err = mergePlacements(c, r.cfg.Pages); err != nil {
			return err
		}
	}
	collect := false
	sharer := -1
	collectDone := c.Barrier == r.collectBarrier()
	var ivs []protocol.Interval
	for _, a := range c.Arrivals {
		ivs = append(ivs, a.Intervals...)
		collect = collect || (whole && !collectDone && !r.cfg.Homes && a.Metadata > uint64(r.cfg.GCThreshold))
		if a.Shares && !collectDone {
			if sharer >= 0 {
				return fmt.Errorf("barrier %d: ranks %d and %d both share a value", c.Barrier, sharer, a.From)
			}
			sharer = a.From
			r.shared = a.Value
		}
	}
	if !collectDone {
		r.sharedOK = sharer >= 0
		if !r.sharedOK {
			r.shared = 0
		}
	}
	// Ending an epoch, the departures carry what each member lacks of what
	// the arrivals brought, before this rank closes any interval of its own
	// as it leaves.
	epoch := whole && r.cfg.Homes
	var err error
	if epoch {
		err = r.lrc.Merge(ivs)
	} else {
		err = r.lrc.Acquire(ivs)
	}
	if err != nil {
		return fmt.Errorf("barrier %d: %w", c.Barrier, err)
	}
	for _, a := range c.Arrivals {
		if a.From == r.cfg.Rank {
			continue
		}
		lacking, err := r.lrc.IntervalsFor(a.VT)
		if err != nil {
			return fmt.Errorf("barrier %d: departure of rank %d: %w", c.Barrier, a.From, err)
		}
		r.send(a.From, &protocol.BarrierDepart{Barrier: c.Barrier, Episode: a.Episode, Intervals: lacking, GC: collect,
			Shared: sharer >= 0, Value: r.shared, Homes: placements})
	}
	if err := r.barriers.Leave(c.Barrier); err != nil {
		return err
	}
	if epoch {
		if err := r.lrc.AcquireAtEpoch(placements); err != nil {
			return fmt.Errorf("barrier %d: %w", c.Barrier, err)
		}
	}
	r.acquiredAt(c.Barrier, whole)
	return r.leaveBarrier(collect)
}

// mergePlacements merges the home placements the members of a barrier of
// every rank asked for: within a rank a later placement of a page overrides
// an earlier one; two ranks that place one page at different homes are an
// error. A soft placement (an allocation's first guess) gives way to any
// other placement of the page, a soft one to the lowest rank's. The result
// covers each placed page once, in page order.
//
// The placements' ends cut the pages they cover into segments, each covered
// by the same placements throughout, and the rules are applied segment by
// segment: the work and memory follow the placements, not the pages (maps
// keyed by page took 8 ms for shallow water's 27 000 placed pages at 2
// ranks, as long as its first time step; arrays over the span placed would
// take 48 bytes a page of a 1T region for two placements at its ends). A
// placement beyond the region is an error.
func mergePlacements(c *barrier.Complete, pages int) ([]protocol.HomeRange, error) {
	type placed struct {
		home, by  int
		soft, set bool
	}
	var cuts []uint64
	for _, a := range c.Arrivals {
		for _, h := range a.Homes {
			end := uint64(h.First) + uint64(h.Count)
			if end > uint64(pages) {
				return nil, fmt.Errorf("barrier %d: rank %d places pages [%d,+%d), beyond the region's %d pages", c.Barrier, a.From, h.First, h.Count, pages)
			}
			if h.Count > 0 {
				cuts = append(cuts, uint64(h.First), end)
			}
		}
	}
	if len(cuts) == 0 {
		return nil, nil
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	segment := func(p uint64) int {
		i, _ := slices.BinarySearch(cuts, p)
		return i
	}
	merged, own := make([]placed, len(cuts)-1), make([]placed, len(cuts)-1)
	for _, a := range c.Arrivals {
		if len(a.Homes) == 0 {
			continue
		}
		clear(own)
		for _, h := range a.Homes {
			if h.Count == 0 {
				continue
			}
			pl := placed{home: h.Rank, by: a.From, soft: h.Soft, set: true}
			for i := segment(uint64(h.First)); i < segment(uint64(h.First)+uint64(h.Count)); i++ {
				if prev := own[i]; !prev.set || prev.soft || !h.Soft {
					own[i] = pl
				}
			}
		}
		for i, pl := range own {
			if !pl.set {
				continue
			}
			prev := merged[i]
			switch {
			case !prev.set, prev.soft && !pl.soft, prev.soft && pl.soft && pl.by < prev.by:
				merged[i] = pl
			case !pl.soft && !prev.soft && prev.home != pl.home:
				return nil, fmt.Errorf("barrier %d: ranks %d and %d place page %d at different homes (ranks %d and %d)", c.Barrier, prev.by, a.From, cuts[i], prev.home, pl.home)
			}
		}
	}
	var out []protocol.HomeRange
	for i, pl := range merged {
		if !pl.set {
			continue
		}
		first, count := uint32(cuts[i]), uint32(cuts[i+1]-cuts[i])
		if n := len(out); n > 0 && out[n-1].Rank == pl.home && out[n-1].Soft == pl.soft && out[n-1].First+out[n-1].Count == first {
			out[n-1].Count += count
			continue
		}
		out = append(out, protocol.HomeRange{First: first, Count: count, Rank: pl.home, Soft: pl.soft})
	}
	return out, nil
}

// leaveBarrier finishes a barrier at any member. If the barrier starts a
// collection, the rank validates the pages it keeps and then waits at the
// collection barrier; when that one is left, every rank has, and the
// history goes.
func (r *Rank) leaveBarrier(collect bool) error {
	if r.op.collecting {
		if err := r.lrc.Collect(r.collectUpTo); err != nil {
			return err
		}
		r.floor, r.collectUpTo = r.collectUpTo, nil
		r.done()
		return nil
	}
	r.stats.Barriers++
	if !collect {
		r.acquired()
		return nil
	}
	r.collectUpTo = r.lrc.VT()
	r.op.collecting = true
	r.lrc.StartCollection()
	return r.progress()
}

// progress moves the outstanding call on if what it waited for is in.
func (r *Rank) progress() error {
	switch {
	case r.op.refreshing && !r.lrc.Refreshing():
		r.done()
	case r.op.kind == opValidate:
		// A page it validated may have lost its mapping since (a home's
		// page sent to another rank is write-protected first): again.
		if err := r.lrc.Validate(r.op.first, r.op.count, r.op.write); err != nil {
			return err
		}
		if r.lrc.Ready(r.op.first, r.op.count, r.op.write) {
			r.done()
		}
	case r.op.kind == opBarrier && r.op.collecting && !r.op.collectArrived && r.lrc.Settled():
		r.op.collectArrived = true
		r.lrc.Freeze()
		r.op.id, r.op.members, r.op.share = r.collectBarrier(), nil, nil
		return r.arrive(r.op.id, nil, nil)
	}
	return nil
}
