// Package sim is a deterministic simulator of an SVM job: N ranks, each with
// its own page memory and a simulated MMU, running the real protocol engine
// (package rank over lrc, lock, barrier and protocol) with every message
// encoded and decoded by the real codec. A seeded scheduler delays and
// interleaves messages and rank steps; messages from one rank to another
// arrive in the order they were sent, as the transports deliver them.
//
// Every read the simulated programs make is checked against a reference
// memory updated in the simulation's global order: for the data-race-free
// programs the simulator runs, that is the value a sequentially consistent
// execution with the same synchronization order returns. The first mismatch,
// protocol error or deadlock stops the run with a trace that the seed replays.
//
// The simulator is test infrastructure: it does no I/O besides what its
// caller asks to print.
package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/svmcluster/svm/dsm/internal/ctl"
	"github.com/svmcluster/svm/dsm/rank"
	"github.com/svmcluster/svm/lrc"
	"github.com/svmcluster/svm/protocol"
)

// Config describes a simulated job.
type Config struct {
	NProcs      int
	Pages       int
	PageSize    int
	Locks       uint32
	Barriers    uint32
	GCThreshold int64
	Prefetch    bool
	// Homes runs the home-based protocol; AsyncWrites has writes to
	// write-protected pages go through without a fault, recorded in the MMU
	// and reported before every synchronisation, as the kernel's
	// asynchronous write protection does.
	Homes       bool
	AsyncWrites bool
	// Nodes, when set, is the node of each rank: the ranks of a node share
	// an engine, so their homes do not push pages to each other (see
	// lrc.Config.Colocated). Unset: every rank on a node of its own.
	Nodes []int
	// Mutate, when set, may change or drop each message in flight, to check
	// that the simulation catches a broken protocol. It returns the message
	// to deliver, or nil to drop it.
	Mutate func(rng *rand.Rand, from, to int, m protocol.Message) protocol.Message
	// Seed drives the random scheduler; Run with Random set uses it.
	Seed uint64
	// Trace keeps every event; otherwise only the last traceTail are kept.
	Trace bool
	// StrayFaults lets the random scheduler also fault random pages of any
	// rank at any time, as another thread of the process touching memory
	// would — while the rank's program waits for a lock, a barrier or a diff.
	// They read and write no values, so programs stay race free.
	StrayFaults bool
}

const traceTail = 200

// perm is a simulated MMU permission: none (unmapped), read (mapped
// write-protected; with AsyncWrites a write goes through and lifts the
// protection) or write.
type perm uint8

const (
	permNone perm = iota
	permRead
	permWrite
)

// Sim is one simulated job.
type Sim struct {
	cfg    Config
	rng    *rand.Rand
	ranks  []*simRank
	flight []flight
	// seen is scratch space for heads.
	seen   []bool
	ref    []byte
	trace  []string
	events int
	stats  Stats
	// maxMetadata is the most protocol metadata any rank held at any time.
	maxMetadata int64
	// live are the allocations not freed, by address: none may overlap;
	// mallocs are the private ones, oldest first, which any rank may free;
	// counts are the values each counter handed out, each once.
	live    map[uint64]uint64
	mallocs []uint64
	counts  map[uint32]map[uint64]bool
	// allocations counts the allocation and counter calls answered.
	allocations int64
	// cachedLocks counts the Locks and Unlocks done in the cache,
	// takenAway the cached locks released in the application's place.
	cachedLocks, takenAway int64
	// loseCachedWritten breaks the lock cache for the mutation test: the
	// engine forgets the written pages the application left in the cache.
	loseCachedWritten bool
	err               error
}

type flight struct {
	from, to int
	body     []byte
}

type simRank struct {
	id  int
	eng *rank.Rank
	mem []byte
	mmu []perm
	// tracked are the pages the engine told to report written (the
	// AsyncWrites reports cover only those, as the application's scans do).
	tracked []bool
	queue   []Op
	cur     *Op
	// waitDone: the current op waits for the engine's Done.
	waitDone bool
	// waitPage >= 0: the current op waits for that page to be mapped with
	// waitPerm; woken: an action on that page came since, so the op retries
	// its access (and faults again if it must), as a woken thread does.
	waitPage int
	waitPerm perm
	woken    bool
	// scanned: the current op, a call that may close the interval, has
	// read the pages written (written) and has yet to make the call.
	scanned bool
	written []protocol.PageRange
	// locks are the states of the rank's locks in its control area
	// (ctl.Lock*; with AsyncWrites): the application takes and releases a
	// lock the protocol holds for it without a call, as dsm.Node does.
	// cachedWritten are the pages it found written at those releases,
	// which the engine has yet to take.
	locks         map[uint32]uint32
	cachedWritten []bool
}

// Stats counts the messages of a run.
type Stats struct {
	Messages map[protocol.MsgType]int64
	Bytes    map[protocol.MsgType]int64
}

// Total is the number of messages and bytes of every type.
func (st Stats) Total() (msgs, bytes int64) {
	for _, typ := range protocol.MsgTypes {
		msgs += st.Messages[typ]
		bytes += st.Bytes[typ]
	}
	return msgs, bytes
}

// String is a table of messages and bytes by type.
func (st Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %8s %12s\n", "type", "messages", "bytes")
	for _, typ := range protocol.MsgTypes {
		if st.Messages[typ] != 0 {
			fmt.Fprintf(&b, "%-14s %8d %12d\n", typ, st.Messages[typ], st.Bytes[typ])
		}
	}
	msgs, bytes := st.Total()
	fmt.Fprintf(&b, "%-14s %8d %12d\n", "total", msgs, bytes)
	return b.String()
}

// maxMemory bounds the memory of a simulation: one region per rank and the
// reference.
const maxMemory = 8 << 30

// simBase is the region's address, as the ranks' allocations answer it.
const simBase = 1 << 20

// New returns a simulated job with every rank's memory zero.
func New(cfg Config) (*Sim, error) {
	if cfg.NProcs < 1 || cfg.Pages < 1 || cfg.PageSize < 1 {
		return nil, fmt.Errorf("sim: %d ranks, %d pages of %d bytes", cfg.NProcs, cfg.Pages, cfg.PageSize)
	}
	if total := int64(cfg.NProcs+1) * int64(cfg.Pages) * int64(cfg.PageSize); total > maxMemory {
		return nil, fmt.Errorf("sim: %d ranks with a %d-byte region need %d GiB, more than the %d GiB limit",
			cfg.NProcs, int64(cfg.Pages)*int64(cfg.PageSize), total>>30, maxMemory>>30)
	}
	s := &Sim{
		cfg:    cfg,
		rng:    rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		ref:    make([]byte, cfg.Pages*cfg.PageSize),
		stats:  Stats{Messages: map[protocol.MsgType]int64{}, Bytes: map[protocol.MsgType]int64{}},
		live:   make(map[uint64]uint64),
		counts: make(map[uint32]map[uint64]bool),
	}
	if cfg.Nodes != nil && len(cfg.Nodes) != cfg.NProcs {
		return nil, fmt.Errorf("sim: nodes given for %d ranks of %d", len(cfg.Nodes), cfg.NProcs)
	}
	for r := range cfg.NProcs {
		mem := make([]byte, cfg.Pages*cfg.PageSize)
		var colocated []bool
		if cfg.Nodes != nil {
			colocated = make([]bool, cfg.NProcs)
			for q, node := range cfg.Nodes {
				colocated[q] = node == cfg.Nodes[r]
			}
		}
		eng, err := rank.New(rank.Config{
			Rank: r, NProcs: cfg.NProcs, PageSize: cfg.PageSize, Pages: cfg.Pages,
			Locks: cfg.Locks, Barriers: cfg.Barriers, GCThreshold: cfg.GCThreshold, Prefetch: cfg.Prefetch,
			Homes: cfg.Homes, AsyncWrites: cfg.AsyncWrites, Funneled: !cfg.StrayFaults, ChunkSize: SimChunkSize, Base: simBase,
			Colocated: colocated,
		}, mem)
		if err != nil {
			return nil, err
		}
		s.ranks = append(s.ranks, &simRank{id: r, eng: eng, mem: mem, mmu: make([]perm, cfg.Pages), tracked: make([]bool, cfg.Pages), waitPage: -1,
			locks: make(map[uint32]uint32), cachedWritten: make([]bool, cfg.Pages)})
	}
	return s, nil
}

// Err returns the failure that stopped the simulation, if any.
func (s *Sim) Err() error { return s.err }

// Stats returns the message counts so far.
func (s *Sim) Stats() Stats { return s.stats }

// RankStats returns rank r's protocol counters.
func (s *Sim) RankStats(r int) rank.Stats { return s.ranks[r].eng.Stats() }

// Allocations returns how many allocation and counter calls were answered.
func (s *Sim) Allocations() int64 { return s.allocations }

// LockCache returns how many Locks and Unlocks the applications did without
// a call, and how many cached locks the engines released in their place.
func (s *Sim) LockCache() (inCache, takenAway int64) { return s.cachedLocks, s.takenAway }

// MaxMetadata returns the most protocol metadata, in bytes, that any rank
// held at any point of the run.
func (s *Sim) MaxMetadata() int64 { return s.maxMetadata }

// ResetStats zeroes the message counts (e.g. after a warm-up).
func (s *Sim) ResetStats() {
	clear(s.stats.Messages)
	clear(s.stats.Bytes)
}

// Enqueue appends ops to rank r's program.
func (s *Sim) Enqueue(r int, ops ...Op) { s.ranks[r].queue = append(s.ranks[r].queue, ops...) }

// Trace returns the recorded events.
func (s *Sim) Trace() []string { return s.trace }

func (s *Sim) logf(format string, args ...any) {
	s.events++
	line := fmt.Sprintf("%6d ", s.events) + fmt.Sprintf(format, args...)
	s.trace = append(s.trace, line)
	if !s.cfg.Trace && len(s.trace) > 2*traceTail {
		s.trace = slices.Clone(s.trace[len(s.trace)-traceTail:])
	}
}

func (s *Sim) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf(format, args...)
		s.logf("FAIL: %v", s.err)
	}
}

// Failure describes the failure with the end of the trace, for a test log.
func (s *Sim) Failure() string {
	if s.err == nil {
		return ""
	}
	var b strings.Builder
	protocol := "homeless"
	if s.cfg.Homes {
		protocol = "home-based"
	}
	fmt.Fprintf(&b, "seed %d (%d ranks, %s, async writes %v, prefetch %v, stray faults %v, nodes %v): %v\nlast events:\n",
		s.cfg.Seed, s.cfg.NProcs, protocol, s.cfg.AsyncWrites, s.cfg.Prefetch, s.cfg.StrayFaults, s.cfg.Nodes, s.err)
	tail := s.trace
	if len(tail) > traceTail {
		tail = tail[len(tail)-traceTail:]
	}
	for _, l := range tail {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// runnable reports whether rank r can take a step.
func (s *Sim) runnable(r *simRank) bool {
	switch {
	case r.cur == nil:
		return len(r.queue) > 0
	case r.waitDone:
		return false
	case r.waitPage >= 0:
		return r.woken || r.mmu[r.waitPage] >= r.waitPerm
	}
	return true
}

// Idle reports whether every program finished and no message is in flight.
func (s *Sim) Idle() bool {
	if len(s.flight) > 0 {
		return false
	}
	for _, r := range s.ranks {
		if r.cur != nil || len(r.queue) > 0 {
			return false
		}
	}
	return true
}

// Run runs the ranks' programs until they all finish, something fails or
// nothing can move. With random set, the next event is chosen by the seeded
// generator among every deliverable message and every runnable rank; without
// it, the oldest message goes first and ranks run in rank order.
func (s *Sim) Run(random bool) error {
	var ready, heads []int
	for s.err == nil {
		ready = ready[:0]
		for i, r := range s.ranks {
			if s.runnable(r) {
				ready = append(ready, i)
			}
		}
		heads = s.heads(heads[:0])
		choices := len(ready) + len(heads)
		if choices == 0 {
			break
		}
		if random && s.cfg.StrayFaults && s.rng.IntN(16) == 0 {
			s.strayFault()
			continue
		}
		var pick int
		if random {
			pick = s.rng.IntN(choices)
		} else if len(heads) > 0 {
			pick = len(ready)
		}
		if pick < len(ready) {
			s.step(s.ranks[ready[pick]])
		} else {
			s.deliver(heads[pick-len(ready)])
		}
	}
	if s.err == nil && !s.Idle() {
		var stuck []string
		for _, r := range s.ranks {
			if r.cur != nil {
				stuck = append(stuck, fmt.Sprintf("rank %d in %v", r.id, r.cur))
			}
		}
		s.fail("deadlock: nothing can move; %s", strings.Join(stuck, "; "))
	}
	return s.err
}

// heads appends to dst the index in flight of each message that is the
// oldest from its sender to its receiver: the ones a transport that keeps
// order could deliver next.
func (s *Sim) heads(dst []int) []int {
	n := len(s.ranks)
	if cap(s.seen) < n*n {
		s.seen = make([]bool, n*n)
	}
	seen := s.seen[:n*n]
	clear(seen)
	for i, f := range s.flight {
		if p := f.from*n + f.to; !seen[p] {
			seen[p] = true
			dst = append(dst, i)
		}
	}
	return dst
}

// report does what the engine does as a call that may close the interval
// comes: it reports the pages the application found written (AsyncWrites).
func (s *Sim) report(r *simRank) {
	if !s.cfg.AsyncWrites {
		return
	}
	written := r.written
	if !r.scanned {
		written = s.written(r)
	}
	r.written, r.scanned = nil, false
	if err := r.eng.Written(written); err != nil {
		s.fail("rank %d: written pages: %v", r.id, err)
	}
}

// takeCachedWritten hands rank r's engine the pages its application found
// written when it released locks into the cache, as the engine does at
// every call and before it releases a cached lock.
func (s *Sim) takeCachedWritten(r *simRank) {
	var pages []uint32
	for p, w := range r.cachedWritten {
		if w {
			pages = append(pages, uint32(p))
			r.cachedWritten[p] = false
		}
	}
	if len(pages) == 0 || s.loseCachedWritten {
		return
	}
	s.logf("rank %d: takes written pages %v from the cache", r.id, pages)
	if err := r.eng.Written(protocol.Ranges(pages)); err != nil {
		s.fail("rank %d: written pages from the cache: %v", r.id, err)
	}
}

// cachedLock completes rank r's current op, a Lock or an Unlock, without a
// call when the lock's state in the control area allows it, as dsm.Node
// does; it reports whether it did.
func (s *Sim) cachedLock(r *simRank) bool {
	op := r.cur
	if !s.cfg.AsyncWrites {
		return false
	}
	switch {
	case op.Kind == OpLock && r.locks[op.ID] == ctl.LockCached:
		r.locks[op.ID] = ctl.LockHeld
	case op.Kind == OpUnlock && r.locks[op.ID] == ctl.LockHeld:
		for p := range protocol.Pages(s.written(r)) {
			r.cachedWritten[p] = true
		}
		r.locks[op.ID] = ctl.LockCached
	default:
		return false
	}
	s.logf("rank %d: %v in the cache", r.id, op)
	s.cachedLocks++
	r.cur = nil
	return true
}

// wanted answers another rank's wish for locks rank r holds for the
// protocol, as the engine does: a cached lock it takes away and releases in
// the application's place, a held one it marks for the application's
// release to come to it.
func (s *Sim) wanted(r *simRank, ids []uint32) {
	if !s.cfg.AsyncWrites {
		return
	}
	for _, id := range ids {
		switch r.locks[id] {
		case ctl.LockHeld:
			r.locks[id] = ctl.LockWanted
		case ctl.LockCached:
			r.locks[id] = ctl.LockAway
			s.takenAway++
			s.logf("rank %d: lock %d taken from the cache", r.id, id)
			s.takeCachedWritten(r)
			// The application may be writing: protected first, as for
			// an application with other threads.
			r.eng.ProtectDirty()
			s.collect(r)
			if s.err != nil {
				return
			}
			if err := r.eng.ReleaseCached(id); err != nil {
				s.fail("rank %d: release of cached lock %d: %v", r.id, id, err)
				return
			}
			s.collect(r)
		}
	}
}

// protectDirty does what the engine does before a call, or a message, that
// may close the interval of a rank whose other threads may write shared
// memory (stray faults: not funneled): write-protect the dirty pages first.
// In random runs it is skipped half the time, so that closes that protect
// pages themselves are exercised too.
func (s *Sim) protectDirty(r *simRank) {
	if !s.cfg.StrayFaults || s.rng.IntN(2) == 0 {
		return
	}
	r.eng.ProtectDirty()
	s.collect(r)
}

// strayFault faults a random page of a random rank for reading or writing,
// unless the rank's MMU already allows the access.
func (s *Sim) strayFault() {
	r := s.ranks[s.rng.IntN(len(s.ranks))]
	p := s.rng.IntN(s.cfg.Pages)
	need := permRead + perm(s.rng.IntN(2))
	if r.mmu[p] >= need {
		return
	}
	if s.cfg.AsyncWrites && r.mmu[p] == permRead {
		r.mmu[p] = permWrite // no fault: the kernel records the write
		return
	}
	s.logf("rank %d: stray %s fault on page %d", r.id, need, p)
	if err := r.eng.Fault(uint32(p), need == permWrite); err != nil {
		s.fail("rank %d: stray fault on page %d: %v", r.id, p, err)
		return
	}
	s.collect(r)
}

func (s *Sim) deliver(i int) {
	f := s.flight[i]
	s.flight = slices.Delete(s.flight, i, i+1)
	m, err := protocol.Decode(f.body)
	if err != nil {
		s.fail("decoding a message %d→%d: %v", f.from, f.to, err)
		return
	}
	if s.cfg.Mutate != nil {
		if m = s.cfg.Mutate(s.rng, f.from, f.to, m); m == nil {
			s.logf("dropped %d→%d", f.from, f.to)
			return
		}
	}
	s.logf("deliver %d→%d %s", f.from, f.to, describe(m))
	r := s.ranks[f.to]
	switch m.(type) {
	case *protocol.LockGrant, *protocol.BarrierArrive, *protocol.BarrierDepart:
		s.protectDirty(r) // these may close the rank's interval
	}
	if err := r.eng.Step(protocol.Envelope{From: f.from, To: f.to, Msg: m}); err != nil {
		s.fail("%v", err)
		return
	}
	s.collect(r)
}

// collect carries out what rank r's engine produced: page actions on its MMU,
// messages into flight, and the end of a waiting call.
func (s *Sim) collect(r *simRank) bool {
	rd := r.eng.Ready()
	s.maxMetadata = max(s.maxMetadata, r.eng.Metadata())
	for _, a := range rd.Actions {
		if s.cfg.Trace {
			s.logf("rank %d: %v page %d", r.id, a.Kind, a.Page)
		}
		s.act(r, a)
	}
	for _, env := range rd.Messages {
		if env.From != r.id || env.To == r.id || env.To < 0 || env.To >= len(s.ranks) {
			s.fail("rank %d sent %v from %d to %d", r.id, env.Msg.Type(), env.From, env.To)
			return false
		}
		body, err := protocol.Encode(env.Msg)
		if err != nil {
			s.fail("encoding %v: %v", env.Msg.Type(), err)
			return false
		}
		s.stats.Messages[env.Msg.Type()]++
		s.stats.Bytes[env.Msg.Type()] += int64(len(body))
		s.flight = append(s.flight, flight{from: env.From, to: env.To, body: body})
	}
	if rd.Done {
		// The application drops the stale pages as the call returns.
		for _, p := range rd.Zap {
			if s.cfg.Trace {
				s.logf("rank %d: zap page %d", r.id, p)
			}
			r.mmu[p] = permNone
		}
		if !r.waitDone && r.cur == nil {
			s.fail("rank %d: engine reported a call done, but none was waiting", r.id)
			return false
		}
		if r.waitDone {
			s.allocated(r, rd)
			if r.cur.Kind == OpLock && s.cfg.AsyncWrites {
				r.locks[r.cur.ID] = ctl.LockHeld
				if r.eng.LockWanted(r.cur.ID) {
					r.locks[r.cur.ID] = ctl.LockWanted
				}
			}
			if s.cfg.Trace && s.cfg.Homes && r.cur.Kind == OpBarrier && r.cur.Members == nil {
				var homes []string
				for p := range s.cfg.Pages {
					homes = append(homes, fmt.Sprint(r.eng.Home(uint32(p))))
				}
				s.logf("rank %d: homes %s", r.id, strings.Join(homes, " "))
			}
			s.logf("rank %d: %v done", r.id, r.cur)
			r.waitDone = false
			r.cur = nil
		}
	}
	s.wanted(r, rd.Wanted)
	return rd.Done
}

// allocated checks what an allocation or counter call answered: a new
// allocation overlaps no live one and fits the region; a collective one is
// where the program expects it; a counter's values are handed out once each.
func (s *Sim) allocated(r *simRank, rd rank.Ready) {
	op := r.cur
	switch op.Kind {
	case OpAlloc, OpMalloc, OpFree, OpFetchAdd, OpWaitCounter:
		s.allocations++
	}
	switch op.Kind {
	case OpAlloc, OpMalloc:
		if rd.Err != nil {
			s.fail("rank %d: %v: %v", r.id, op, rd.Err)
			return
		}
		addr, size := rd.Value, uint64(op.Len)
		if addr < simBase || addr-simBase+size > uint64(s.cfg.Pages*s.cfg.PageSize) || addr%16 != 0 {
			s.fail("rank %d: %v answered %#x, outside the region or unaligned", r.id, op, addr)
			return
		}
		if op.Kind == OpAlloc {
			if addr != simBase+uint64(op.Addr) {
				s.fail("rank %d: %v answered %#x, want %#x", r.id, op, addr, simBase+uint64(op.Addr))
			}
			if _, ok := s.live[addr]; ok {
				return // another rank's share of the same allocation
			}
		}
		for a, sz := range s.live {
			if addr < a+sz && a < addr+size {
				s.fail("rank %d: %v answered [%#x,+%d), which overlaps [%#x,+%d)", r.id, op, addr, size, a, sz)
				return
			}
		}
		s.live[addr] = size
		if op.Kind == OpMalloc {
			s.mallocs = append(s.mallocs, addr)
		}
	case OpFree:
		if rd.Err != nil {
			s.fail("rank %d: %v: %v", r.id, op, rd.Err)
		}
	case OpFetchAdd:
		seen := s.counts[op.ID]
		if seen == nil {
			seen = make(map[uint64]bool)
			s.counts[op.ID] = seen
		}
		if seen[rd.Value] {
			s.fail("rank %d: %v answered %d twice", r.id, op, rd.Value)
		}
		seen[rd.Value] = true
	case OpWaitCounter:
		if int64(rd.Value) < int64(op.Len) {
			s.fail("rank %d: %v answered %d", r.id, op, rd.Value)
		}
	}
}

// misdeliver delivers m from rank from to rank to, which it was not sent to
// (a test breaking the protocol on purpose).
func (s *Sim) misdeliver(from, to int, m protocol.Message) {
	s.logf("misdeliver %d→%d %s", from, to, describe(m))
	if err := s.ranks[to].eng.Step(protocol.Envelope{From: from, To: to, Msg: m}); err != nil {
		s.fail("%v", err)
		return
	}
	s.collect(s.ranks[to])
}

func (s *Sim) act(r *simRank, a lrc.Action) {
	p := a.Page
	if int(p) >= len(r.mmu) {
		s.fail("rank %d: action %v on page %d beyond the region", r.id, a.Kind, p)
		return
	}
	was := r.mmu[p]
	if int(p) == r.waitPage {
		r.woken = true
	}
	switch a.Kind {
	case lrc.ActTrack, lrc.ActUntrack:
		r.tracked[p] = a.Kind == lrc.ActTrack
		return
	case lrc.ActWriteProtect:
		if was != permWrite && !(s.cfg.AsyncWrites && was == permRead) {
			s.fail("rank %d: write-protect of page %d, which is not writable", r.id, p)
		}
		r.mmu[p] = permRead
	case lrc.ActMapReadOnly:
		if was == permWrite {
			s.fail("rank %d: page %d mapped read-only while writable, without a write-protect", r.id, p)
		}
		r.mmu[p] = permRead
	case lrc.ActMapReadWrite:
		// From read-only too: a page invalidated by the call under way is
		// still mapped until the call returns.
		r.mmu[p] = permWrite
	case lrc.ActUnprotect:
		// With AsyncWrites a write may have lifted the protection already.
		if was != permRead && !(s.cfg.AsyncWrites && was == permWrite) {
			s.fail("rank %d: unprotect of page %d, which is not mapped read-only", r.id, p)
		}
		r.mmu[p] = permWrite
	default:
		s.fail("rank %d: unknown action %v", r.id, a.Kind)
	}
}

// step advances rank r's program by one op, or as far as it can.
func (s *Sim) step(r *simRank) {
	switch {
	case r.cur == nil:
		op := r.queue[0]
		r.queue = r.queue[1:]
		r.cur = &op
		if s.cachedLock(r) {
			return
		}
		if s.cfg.AsyncWrites && (op.Kind == OpLock || op.Kind == OpUnlock || op.Kind == OpBarrier) {
			// As the application does, the rank reads which pages it
			// wrote before it calls; its engine may act on other ranks'
			// messages in between.
			r.written, r.scanned = s.written(r), true
			s.logf("rank %d: %v: written pages %v", r.id, r.cur, r.written)
			return
		}
		if !s.start(r) {
			return
		}
	case r.scanned:
		if !s.start(r) {
			return
		}
	}
	s.access(r)
}

// written lists the tracked pages rank r's MMU has mapped writable: written
// since they were last protected, or never protected; and protects them
// again, as the application's scan of its page tables does.
func (s *Sim) written(r *simRank) []protocol.PageRange {
	var written []uint32
	for p, m := range r.mmu {
		if m == permWrite && r.tracked[p] {
			written = append(written, uint32(p))
			r.mmu[p] = permRead
		}
	}
	return protocol.Ranges(written)
}

// start begins a synchronization op; it reports whether the op is an access
// that still has to run.
func (s *Sim) start(r *simRank) bool {
	op := r.cur
	s.logf("rank %d: %v", r.id, op)
	s.takeCachedWritten(r) // the engine takes them at every call
	if op.Kind == OpUnlock {
		r.locks[op.ID] = ctl.LockAway
	}
	if op.Kind == OpLock || op.Kind == OpUnlock || op.Kind == OpBarrier {
		s.report(r)
		s.protectDirty(r)
		if s.err != nil {
			return false
		}
	}
	var err error
	switch op.Kind {
	case OpSetHome:
		err = r.eng.SetHome(uint32(op.Addr), uint32(op.Len), int(op.ID))
		if err == nil {
			r.cur = nil
		}
		if err != nil {
			s.fail("rank %d: %v: %v", r.id, op, err)
		}
		return false
	case OpLock:
		err = r.eng.Acquire(op.ID)
	case OpUnlock:
		err = r.eng.Release(op.ID)
	case OpBarrier:
		err = r.eng.Barrier(op.ID, op.Members)
	case OpValidate:
		err = r.eng.Validate(uint32(op.Addr), uint32(op.Len), op.Write)
	case OpAlloc:
		err = r.eng.Alloc(uint64(op.Len))
	case OpMalloc:
		err = r.eng.Malloc(uint64(op.Len))
	case OpFree:
		if len(s.mallocs) == 0 {
			r.cur = nil
			return false
		}
		i := op.Addr % len(s.mallocs)
		addr := s.mallocs[i]
		s.mallocs = slices.Delete(s.mallocs, i, i+1)
		delete(s.live, addr)
		err = r.eng.Free(addr)
	case OpFetchAdd:
		err = r.eng.FetchAdd(op.ID, 1)
	case OpWaitCounter:
		err = r.eng.WaitCounter(op.ID, int64(op.Len))
	default:
		return true
	}
	if err != nil {
		s.fail("rank %d: %v: %v", r.id, op, err)
		return false
	}
	if op.Kind == OpUnlock {
		s.collect(r)
		r.cur = nil
		return false
	}
	r.waitDone = true
	s.collect(r)
	return false
}

// access faults in every page the current op touches and then performs it.
func (s *Sim) access(r *simRank) {
	op := r.cur
	r.waitPage = -1
	for _, need := range op.pages(s.cfg.PageSize) {
		p := need.page
		if r.mmu[p] >= need.perm {
			continue
		}
		if s.cfg.AsyncWrites && need.perm == permWrite && r.mmu[p] == permRead {
			r.mmu[p] = permWrite // no fault: the kernel records the write
			continue
		}
		if err := r.eng.Fault(uint32(p), need.perm == permWrite); err != nil {
			s.fail("rank %d: fault on page %d: %v", r.id, p, err)
			return
		}
		s.logf("rank %d: %s fault on page %d", r.id, need.perm, p)
		s.collect(r)
		if s.err != nil {
			return
		}
		if r.mmu[p] < need.perm {
			r.waitPage, r.waitPerm, r.woken = p, need.perm, false
			return
		}
	}
	m := &Mem{s: s, r: r}
	op.run(m)
	r.cur = nil
}

func (p perm) String() string { return [...]string{"none", "read", "write"}[p] }

// Mem is a rank's view of shared memory while an op runs: loads are checked
// against the reference memory, stores go to both.
type Mem struct {
	s *Sim
	r *simRank
}

// Load returns n bytes at addr, failing the run if they differ from the
// reference.
func (m *Mem) Load(addr, n int) []byte {
	got := m.r.mem[addr : addr+n]
	if want := m.s.ref[addr : addr+n]; !bytes.Equal(got, want) {
		i := 0
		for got[i] == want[i] {
			i++
		}
		at := addr + i
		m.s.fail("rank %d read [%#x,+%d): byte %#x (page %d) is %#x, want %#x", m.r.id, addr, n, at, at/m.s.cfg.PageSize, got[i], want[i])
	}
	return got
}

// Store writes data at addr.
func (m *Mem) Store(addr int, data []byte) {
	copy(m.r.mem[addr:], data)
	copy(m.s.ref[addr:], data)
}

func short(b []byte) string {
	if len(b) > 32 {
		return fmt.Sprintf("%x…(%d bytes)", b[:32], len(b))
	}
	return fmt.Sprintf("%x", b)
}

// Memory returns rank r's copy of shared memory (for scripts and checks).
func (s *Sim) Memory(r int) []byte { return s.ranks[r].mem }

// Reference returns the reference memory.
func (s *Sim) Reference() []byte { return s.ref }

// homes describes home placements: " homes=[first+count@rank ...]", a
// soft one marked ~.
func homes(hs []protocol.HomeRange) string {
	if len(hs) == 0 {
		return ""
	}
	parts := make([]string, len(hs))
	for i, h := range hs {
		soft := ""
		if h.Soft {
			soft = "~"
		}
		parts[i] = fmt.Sprintf("%d+%d@%s%d", h.First, h.Count, soft, h.Rank)
	}
	return " homes=[" + strings.Join(parts, " ") + "]"
}

func describe(m protocol.Message) string {
	switch m := m.(type) {
	case *protocol.LockRequest:
		return fmt.Sprintf("%v lock=%d requester=%d vt=%v", m.Type(), m.Lock, m.Requester, m.VT)
	case *protocol.LockGrant:
		return fmt.Sprintf("%v lock=%d intervals=%s", m.Type(), m.Lock, intervals(m.Intervals))
	case *protocol.BarrierArrive:
		members := "all"
		if len(m.Members) != 0 {
			members = fmt.Sprint(m.Members)
		}
		return fmt.Sprintf("%v barrier=%d members=%s vt=%v intervals=%s%s", m.Type(), m.Barrier, members, m.VT, intervals(m.Intervals), homes(m.Homes))
	case *protocol.BarrierDepart:
		return fmt.Sprintf("%v barrier=%d intervals=%s gc=%v%s", m.Type(), m.Barrier, intervals(m.Intervals), m.GC, homes(m.Homes))
	case *protocol.DiffRequest:
		var parts []string
		for _, p := range m.Pages {
			parts = append(parts, fmt.Sprintf("%d:%v", p.Page, p.Intervals))
		}
		return fmt.Sprintf("%v id=%d pages=[%s]", m.Type(), m.ID, strings.Join(parts, " "))
	case *protocol.DiffResponse:
		var parts []string
		for _, p := range m.Pages {
			for _, d := range p.Diffs {
				parts = append(parts, fmt.Sprintf("%d:%v/%dB", p.Page, d.Interval, len(d.Diff)))
			}
		}
		return fmt.Sprintf("%v id=%d diffs=[%s]", m.Type(), m.ID, strings.Join(parts, " "))
	case *protocol.PageRequest:
		var parts []string
		for _, p := range m.Pages {
			parts = append(parts, fmt.Sprintf("%d:%v", p.Page, p.Need))
		}
		return fmt.Sprintf("%v id=%d epoch=%d pages=[%s]", m.Type(), m.ID, m.Epoch, strings.Join(parts, " "))
	case *protocol.PageResponse:
		var parts []string
		for _, p := range m.Pages {
			parts = append(parts, fmt.Sprint(p.Page))
		}
		return fmt.Sprintf("%v id=%d pages=[%s]", m.Type(), m.ID, strings.Join(parts, " "))
	case *protocol.HomeDiffs:
		var parts []string
		for _, p := range m.Pages {
			parts = append(parts, fmt.Sprintf("%d/%dB", p.Page, len(p.Diff)))
		}
		return fmt.Sprintf("%v interval=%v epoch=%d diffs=[%s]", m.Type(), m.Interval, m.Epoch, strings.Join(parts, " "))
	case *protocol.PagePush:
		var parts []string
		for _, p := range m.Pages {
			parts = append(parts, fmt.Sprintf("%d:%v", p.Page, p.Holds))
		}
		return fmt.Sprintf("%v epoch=%d pages=[%s]", m.Type(), m.Epoch, strings.Join(parts, " "))
	case *protocol.PushStop:
		return fmt.Sprintf("%v pages=%v", m.Type(), m.Pages)
	}
	return m.Type().String()
}

func intervals(ivs []protocol.Interval) string {
	var parts []string
	for _, iv := range ivs {
		parts = append(parts, fmt.Sprintf("%v%v", iv.ID, iv.Pages))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
