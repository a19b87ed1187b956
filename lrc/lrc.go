// Package lrc is the lazy release consistency engine of one rank, as a state
// machine: the homeless multiple-writer protocol of TreadMarks.
//
// Execution is divided into intervals, closed at every release and acquire.
// A closed interval that modified pages becomes a record with a vector time
// and write notices (the pages it changed). An acquirer merges the intervals
// it lacks and invalidates the pages they name; a fault on an invalid page
// asks the smallest set of writers whose intervals are not dominated by
// another's for the missing diffs — one request per writer, naming every page
// it must supply — and applies them in happens-before order. Writes are caught
// with twins; diffs are made lazily, byte-exact, when requested or before the
// page changes again.
//
// Garbage collection (StartCollection, Collect) bounds the history: every
// rank keeps the pages it uses and the pages it keeps for the others (the
// last writer of each page keeps it), brings them up to date, and drops its
// copies of the rest; a dropped page is fetched whole from its keeper on its
// next use.
//
// Inputs are plain calls (Fault, CloseInterval, Acquire, HandleDiffRequest,
// HandleDiffResponse, ...); outputs are protocol messages and page actions,
// collected until TakeOutput. The page bytes are handed in at New as a slice
// (the engine's view of the rank's memory, or plain memory in a simulator):
// the package reads and writes them but never maps memory, does no I/O, keeps
// no clock and starts no goroutine.
package lrc

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/svmcluster/svm/diff"
	"github.com/svmcluster/svm/protocol"
)

// Config describes one rank's view of a job's shared region.
type Config struct {
	Rank, NProcs int
	PageSize     int
	Pages        int
	// Prefetch makes a fault also fetch the other invalid pages that were
	// mapped when they were invalidated (so probably in use) and whose diffs
	// the writers already being asked can supply: more pages per request,
	// never more requests.
	Prefetch bool
	// PrefetchLimit caps the extra pages one fault fetches (0: 64).
	PrefetchLimit int
}

const (
	defaultPrefetchLimit = 64
	// maxPooledTwins bounds the twin buffers kept for reuse.
	maxPooledTwins = 256
	// coldAfter is how many active intervals in a row a hot page may go
	// unchanged before it turns cold. Programs often write a page every
	// other phase (red-black SOR), or once in a time step of several
	// parallel loops (shallow water: 8 barriers a step): an unchanged
	// interval is no sign. A hot page costs a comparison with its twin per
	// close; a page that turns cold and is written again costs a fault, a
	// twin and two protection changes. Shallow water on 2 ranks ran twice
	// as fast with 8 as with 3; SOR alike.
	coldAfter = 8
)

// PageState is a page's coherence state at this rank.
type PageState uint8

// The page states.
const (
	// Unmapped: the rank's copy is current but the application has no mapping;
	// the next access faults and is resolved locally.
	Unmapped PageState = iota
	// ReadOnly: current and mapped write-protected.
	ReadOnly
	// ReadWrite: current, mapped writable, with a twin for the open interval.
	ReadWrite
	// Invalid: write notices are not yet applied; unmapped; an access fetches diffs.
	Invalid
	// Absent: the copy was dropped at a garbage collection; unmapped; an
	// access fetches the page from its keeper, and the diffs of any write
	// notices that came since.
	Absent
)

func (s PageState) String() string {
	switch s {
	case Unmapped:
		return "unmapped"
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	case Invalid:
		return "invalid"
	case Absent:
		return "absent"
	}
	return fmt.Sprintf("PageState(%d)", uint8(s))
}

// ActionKind is what to do to the application's mapping of a page.
type ActionKind uint8

// The page actions.
const (
	// ActInvalidate drops the application's mapping: its copy is stale.
	ActInvalidate ActionKind = iota + 1
	// ActWriteProtect write-protects a page whose writing interval closed.
	ActWriteProtect
	// ActMapReadOnly maps a current page write-protected (and wakes faulters).
	ActMapReadOnly
	// ActMapReadWrite maps a current, unmapped page writable (and wakes
	// faulters).
	ActMapReadWrite
	// ActUnprotect lifts the write protection of a mapped page (and wakes
	// faulters).
	ActUnprotect
)

func (k ActionKind) String() string {
	switch k {
	case ActInvalidate:
		return "invalidate"
	case ActWriteProtect:
		return "write-protect"
	case ActMapReadOnly:
		return "map-ro"
	case ActMapReadWrite:
		return "map-rw"
	case ActUnprotect:
		return "unprotect"
	}
	return fmt.Sprintf("ActionKind(%d)", uint8(k))
}

// Action is one page action, to be carried out in order.
type Action struct {
	Kind ActionKind
	Page uint32
}

// Output is what the state machine produced since the last TakeOutput.
type Output struct {
	Messages []protocol.Envelope
	Actions  []Action
}

// Stats counts this rank's protocol events.
type Stats struct {
	ReadFaults, WriteFaults int64
	Twins                   int64
	// SilentPages counts pages written in an interval but unchanged at its
	// end: no write notice, no diff.
	SilentPages                    int64
	Intervals                      int64
	DiffsCreated, DiffBytesCreated int64
	DiffsApplied, DiffBytesApplied int64
	// DiffsSquashed counts the diffs sent empty because later ones in the
	// same answer write all their bytes again, and the bytes that saved.
	DiffsSquashed, DiffBytesSquashed int64
	Invalidations                    int64
	// Prefetched counts pages fetched along with a faulting page.
	Prefetched  int64
	Collections int64
	// Dropped counts pages whose copy a collection dropped; Refetched, the
	// whole pages fetched from their keepers since.
	Dropped, Refetched int64
}

type want uint8

const (
	wantNone want = iota
	wantRead
	wantWrite
)

type page struct {
	state PageState
	// want is the strongest access waiting for an invalid page.
	want want
	// used: the page was mapped when it was invalidated (in use: a prefetch
	// candidate, and kept at a collection); listed: it is in State.usedList.
	used, listed bool
	// protected: a writable page already write-protected by ProtectDirty
	// ahead of the close of its interval.
	protected bool
	// keep: a collection under way keeps the page and has yet to validate it.
	keep bool
	// idle counts the closes of active intervals in a row that found the
	// hot page unchanged.
	idle uint8
	// twin is the page as it was when the open interval began; only
	// writable pages have one.
	twin []byte
	// pending are the write notices whose diffs are not applied yet.
	pending []protocol.IntervalID
	// fetching counts outstanding diff requests that cover the page.
	fetching int
	// diffs are the diffs of this page this rank made or received.
	diffs []held
}

type held struct {
	id protocol.IntervalID
	d  diff.Diff
}

type request struct {
	to    int
	pages []protocol.PageIntervals
}

// State is the consistency state of one rank.
type State struct {
	cfg  Config
	mem  []byte
	vt   protocol.VectorTime
	base protocol.VectorTime // intervals up to base were collected
	// log[r][k] is interval base[r]+1+k of rank r.
	log   [][]*protocol.Interval
	pages []page
	dirty []uint32
	// usedList holds candidate pages for prefetch; entries whose page is no
	// longer used are dropped lazily.
	usedList  []uint32
	invalid   int
	requests  map[uint32]*request
	nextReqID uint32
	// keeper[p] is the rank that keeps page p for the ranks that dropped
	// it; nextKeeper, the keepers a collection under way elected, which take
	// over when it ends.
	keeper, nextKeeper []int32
	// keeping counts the pages a collection under way must still validate.
	keeping int
	// frozen: the rank has told the others it settled its collection, so it
	// asks for nothing until Collect; faults meanwhile wait.
	frozen   bool
	metadata int64
	twinPool [][]byte
	// diffBuf is scratch space for making diffs.
	diffBuf []byte
	stats   Stats
	out     Output
}

// New returns the state of rank cfg.Rank over mem, which holds cfg.Pages
// pages of cfg.PageSize bytes and starts identical at every rank.
func New(cfg Config, mem []byte) (*State, error) {
	switch {
	case cfg.NProcs <= 0 || cfg.Rank < 0 || cfg.Rank >= cfg.NProcs:
		return nil, fmt.Errorf("lrc: rank %d of %d processes", cfg.Rank, cfg.NProcs)
	case cfg.PageSize <= 0:
		return nil, fmt.Errorf("lrc: page size %d", cfg.PageSize)
	case cfg.Pages <= 0 || uint64(cfg.Pages) >= 1<<32:
		return nil, fmt.Errorf("lrc: %d pages", cfg.Pages)
	case len(mem) != cfg.Pages*cfg.PageSize:
		return nil, fmt.Errorf("lrc: memory of %d bytes for %d pages of %d bytes", len(mem), cfg.Pages, cfg.PageSize)
	}
	if cfg.PrefetchLimit == 0 {
		cfg.PrefetchLimit = defaultPrefetchLimit
	}
	return &State{
		cfg:      cfg,
		mem:      mem,
		vt:       make(protocol.VectorTime, cfg.NProcs),
		base:     make(protocol.VectorTime, cfg.NProcs),
		log:      make([][]*protocol.Interval, cfg.NProcs),
		pages:    make([]page, cfg.Pages),
		requests: make(map[uint32]*request),
		keeper:   make([]int32, cfg.Pages),
	}, nil
}

// VT returns a copy of the rank's vector time.
func (s *State) VT() protocol.VectorTime { return s.vt.Clone() }

// PageState returns the state of page p.
func (s *State) PageState(p uint32) PageState { return s.pages[p].state }

// Invalid returns how many pages are invalid.
func (s *State) Invalid() int { return s.invalid }

// Settled reports whether the collection under way has validated every page
// this rank keeps and no diff request is out.
func (s *State) Settled() bool { return s.keeping == 0 && len(s.requests) == 0 }

// Stats returns the event counters.
func (s *State) Stats() Stats { return s.stats }

// Metadata returns the bytes held for the protocol: twins, diffs and
// interval records.
func (s *State) Metadata() int64 { return s.metadata }

// TakeOutput returns and clears the messages and actions produced so far.
func (s *State) TakeOutput() Output {
	out := s.out
	s.out = Output{}
	return out
}

func (s *State) act(k ActionKind, p uint32) {
	s.out.Actions = append(s.out.Actions, Action{Kind: k, Page: p})
}

func (s *State) pageBytes(p uint32) []byte {
	off := int(p) * s.cfg.PageSize
	return s.mem[off : off+s.cfg.PageSize]
}

func (s *State) checkPage(p uint32) error {
	if uint64(p) >= uint64(s.cfg.Pages) {
		return fmt.Errorf("page %d out of range [0,%d)", p, s.cfg.Pages)
	}
	return nil
}

func (s *State) interval(id protocol.IntervalID) *protocol.Interval {
	return s.log[id.Rank][id.Index-s.base[id.Rank]-1]
}

// Fault handles an access to page p that trapped. It maps the page at once if
// the rank's copy is current; otherwise it asks for the missing diffs and maps
// the page when they have been applied.
func (s *State) Fault(p uint32, write bool) error {
	if err := s.checkPage(p); err != nil {
		return err
	}
	if write {
		s.stats.WriteFaults++
	} else {
		s.stats.ReadFaults++
	}
	pg := &s.pages[p]
	switch pg.state {
	case Invalid, Absent:
		pg.want = max(pg.want, wantOf(write))
		if pg.fetching > 0 || s.frozen {
			return nil
		}
		pl := s.newPlan()
		s.planPage(pl, p)
		if s.cfg.Prefetch {
			s.addPrefetch(pl, p)
		}
		s.send(pl)
	case ReadWrite:
		if pg.protected {
			// Protected ahead of a close that has not come yet: the close
			// must protect it again.
			pg.protected = false
			s.act(ActUnprotect, p)
		} else {
			// Another thread's fault on this page was resolved first.
			s.act(ActMapReadWrite, p)
		}
	default:
		switch {
		case s.cfg.NProcs == 1:
			// Alone, no write needs catching: map the page writable, no twin.
			if pg.state == ReadOnly {
				s.act(ActUnprotect, p)
			} else {
				s.act(ActMapReadWrite, p)
			}
			pg.state = ReadWrite
		case write:
			s.beginWrite(p)
		default:
			pg.state = ReadOnly
			s.act(ActMapReadOnly, p)
		}
	}
	return nil
}

func wantOf(write bool) want {
	if write {
		return wantWrite
	}
	return wantRead
}

// Validate makes pages [first, first+count) current and mapped, writable if
// write is set, fetching every missing diff with one request per writer.
// Ready reports when it is done.
func (s *State) Validate(first, count uint32, write bool) error {
	if count == 0 {
		return nil
	}
	if uint64(first)+uint64(count) > uint64(s.cfg.Pages) {
		return fmt.Errorf("pages [%d,%d) beyond the region's %d pages", first, uint64(first)+uint64(count), s.cfg.Pages)
	}
	pl := s.newPlan()
	for p := first; p < first+count; p++ {
		pg := &s.pages[p]
		switch {
		case pg.state == Invalid || pg.state == Absent:
			pg.want = max(pg.want, wantOf(write))
			if pg.fetching == 0 && !s.frozen {
				s.planPage(pl, p)
			}
		case write && pg.state != ReadWrite:
			s.beginWrite(p)
		case pg.state == Unmapped:
			pg.state = ReadOnly
			s.act(ActMapReadOnly, p)
		}
	}
	s.send(pl)
	return nil
}

// Ready reports whether pages [first, first+count) are mapped, and writable
// if write is set.
func (s *State) Ready(first, count uint32, write bool) bool {
	for p := first; p < first+count; p++ {
		switch s.pages[p].state {
		case ReadWrite:
		case ReadOnly:
			if write {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// StartCollection begins a garbage collection at a whole-job barrier, when
// every rank knows the same history. Each page written since the last
// collection gets a keeper, the writer of its newest interval (every rank
// picks the same one). The rank fetches the diffs of the invalid pages it
// uses or will keep; Settled reports when it is done. Once every rank is
// (a barrier proves it), Collect drops the copies of the other invalid
// pages and the history.
//
// Until then nothing is dropped and the old keepers stay in charge: a page
// dropped at an earlier collection and touched now comes whole from a keeper
// that validated it then, with every diff since, which all ranks still hold.
func (s *State) StartCollection() {
	s.nextKeeper = s.electKeepers()
	pl := s.newPlan()
	for p := range s.pages {
		pg := &s.pages[p]
		if pg.state != Invalid || !(pg.used || s.nextKeeper[p] == int32(s.cfg.Rank)) {
			continue
		}
		pg.keep = true
		s.keeping++
		if pg.fetching == 0 { // a fetch in flight settles, and fetches again if stale
			s.planPage(pl, uint32(p))
		}
	}
	s.send(pl)
}

// Freeze stops the rank asking for diffs until Collect: it has settled its
// collection and told the others, who may collect as soon as all have.
func (s *State) Freeze() { s.frozen = true }

// electKeepers returns the keepers after a collection: the writer of each
// page's newest interval since the last one, ties between concurrent
// intervals broken the same way at every rank (by vector time sum, then
// rank); unwritten pages keep their keeper.
func (s *State) electKeepers() []int32 {
	next := slices.Clone(s.keeper)
	sums := make(map[uint32]uint64)
	for r := range s.cfg.NProcs {
		for _, iv := range s.log[r] {
			sum := iv.VT.Sum()
			for p := range protocol.Pages(iv.Pages) {
				old, seen := sums[p]
				if !seen || sum > old || sum == old && int32(r) > next[p] {
					sums[p] = sum
					next[p] = int32(r)
				}
			}
		}
	}
	return next
}

// beginWrite makes a current page writable: the diff of the interval that
// last wrote it is made first, then a fresh twin.
func (s *State) beginWrite(p uint32) {
	pg := &s.pages[p]
	pg.twin = s.newTwin(s.pageBytes(p))
	if pg.state == ReadOnly {
		s.act(ActUnprotect, p)
	} else {
		s.act(ActMapReadWrite, p)
	}
	pg.state = ReadWrite
	pg.idle = 0
	s.dirty = append(s.dirty, p)
	s.metadata += int64(s.cfg.PageSize)
	s.stats.Twins++
}

// ProtectDirty write-protects the pages written in the open interval ahead
// of its close. An engine whose application runs other threads calls it, and
// carries out the actions, before any call that may close the interval: the
// close compares each page with its twin, and a write that slipped in after
// that comparison would be lost.
func (s *State) ProtectDirty() {
	for _, p := range s.dirty {
		if pg := &s.pages[p]; !pg.protected {
			pg.protected = true
			s.act(ActWriteProtect, p)
		}
	}
}

func (s *State) newTwin(page []byte) []byte {
	if n := len(s.twinPool); n > 0 {
		t := s.twinPool[n-1]
		s.twinPool = s.twinPool[:n-1]
		copy(t, page)
		return t
	}
	return diff.Twin(page)
}

func (s *State) dropTwin(pg *page) {
	if len(s.twinPool) < maxPooledTwins {
		s.twinPool = append(s.twinPool, pg.twin)
	}
	pg.twin = nil
	s.metadata -= int64(s.cfg.PageSize)
}

// createDiff returns the diff between page p's twin and the page, in a
// scratch buffer that the next call reuses.
func (s *State) createDiff(p uint32) diff.Diff {
	d, err := diff.AppendCreate(s.diffBuf[:0], s.pages[p].twin, s.pageBytes(p))
	if err != nil {
		panic(fmt.Sprintf("lrc: twin of page %d: %v", p, err)) // twin and page have the page size by construction
	}
	s.diffBuf = d[:0]
	return d
}

// keepDiff stores a copy of d, made by createDiff, as the diff of page p in
// this rank's interval idx.
func (s *State) keepDiff(p uint32, idx uint32, d diff.Diff) {
	pg := &s.pages[p]
	d = slices.Clip(slices.Clone(d))
	pg.diffs = append(pg.diffs, held{id: protocol.IntervalID{Rank: s.cfg.Rank, Index: idx}, d: d})
	s.metadata += int64(len(d))
	s.stats.DiffsCreated++
	s.stats.DiffBytesCreated += int64(len(d))
}

// CloseInterval ends the open interval after the application ran in it (at
// a release, or at the start of an acquire): the pages it changed become
// its write notices, with their diffs.
//
// The close scans every written page against its twin anyway, to leave
// pages written but unchanged without a notice; that scan is the diff, and
// a diff is no bigger than the twin it replaces, so the diff is made now
// rather than lazily. A changed page stays writable, hot, its twin
// refreshed, so that the next interval's writes need no fault (the next
// close finds them). A hot page left unchanged by coldAfter active
// intervals in a row turns cold: write-protected, its twin dropped, so that
// closes cost nothing for pages no longer written.
func (s *State) CloseInterval() { s.closeInterval(true, nil) }

// closeInterval ends the open interval. active: the application ran in it
// (otherwise it only waited for an acquire, and unchanged hot pages stay
// hot). The pages in invalidating are about to be invalidated: they turn
// cold whatever happened.
func (s *State) closeInterval(active bool, invalidating map[uint32]bool) {
	if len(s.dirty) == 0 {
		return
	}
	slices.Sort(s.dirty)
	idx := s.vt[s.cfg.Rank] + 1
	var changed, hot []uint32
	for _, p := range s.dirty {
		pg := &s.pages[p]
		if d := s.createDiff(p); len(d) > 0 {
			s.keepDiff(p, idx, d)
			changed = append(changed, p)
			pg.idle = 0
		} else if active {
			pg.idle++
			s.stats.SilentPages++
		}
		if pg.idle < coldAfter && !invalidating[p] {
			// Stays hot: writable, with a twin of the page as it is now.
			copy(pg.twin, s.pageBytes(p))
			if pg.protected {
				s.act(ActUnprotect, p)
				pg.protected = false
			}
			hot = append(hot, p)
			continue
		}
		pg.state = ReadOnly
		if !pg.protected {
			s.act(ActWriteProtect, p)
		}
		pg.protected = false
		s.dropTwin(pg)
	}
	s.dirty = append(s.dirty[:0], hot...)
	if len(changed) == 0 {
		return
	}
	s.vt[s.cfg.Rank] = idx
	iv := &protocol.Interval{
		ID:    protocol.IntervalID{Rank: s.cfg.Rank, Index: idx},
		VT:    s.vt.Clone(),
		Pages: protocol.Ranges(changed),
	}
	s.log[s.cfg.Rank] = append(s.log[s.cfg.Rank], iv)
	s.metadata += intervalSize(iv)
	s.stats.Intervals++
}

func intervalSize(iv *protocol.Interval) int64 {
	return int64(16 + 4*len(iv.VT) + 8*len(iv.Pages))
}

// IntervalsFor returns the intervals this rank knows and a rank at vector
// time vt does not, in (rank, index) order.
func (s *State) IntervalsFor(vt protocol.VectorTime) ([]protocol.Interval, error) {
	if len(vt) != s.cfg.NProcs {
		return nil, fmt.Errorf("vector time has %d entries, want %d", len(vt), s.cfg.NProcs)
	}
	var ivs []protocol.Interval
	for r := range s.cfg.NProcs {
		if vt[r] >= s.vt[r] {
			continue
		}
		if vt[r] < s.base[r] {
			return nil, fmt.Errorf("intervals %d..%d of rank %d were collected, but a rank at vector time %v lacks them", vt[r]+1, s.base[r], r, vt)
		}
		for _, iv := range s.log[r][vt[r]-s.base[r]:] {
			ivs = append(ivs, *iv)
		}
	}
	return ivs, nil
}

// Acquire closes the open interval and merges intervals learned at an
// acquire (a lock grant or a barrier departure): it records the new ones and
// invalidates the pages they name. Intervals already known are skipped; the
// new ones must extend what this rank knows without gaps.
func (s *State) Acquire(ivs []protocol.Interval) error {
	fresh, err := s.freshIntervals(ivs)
	if err != nil {
		return err
	}
	invalidating := make(map[uint32]bool)
	for _, iv := range fresh {
		for p := range protocol.Pages(iv.Pages) {
			invalidating[p] = true
		}
	}
	s.closeInterval(false, invalidating)
	for _, iv := range fresh {
		s.vt[iv.ID.Rank] = iv.ID.Index
		s.log[iv.ID.Rank] = append(s.log[iv.ID.Rank], iv)
		s.metadata += intervalSize(iv)
	}
	for _, iv := range fresh {
		for p := range protocol.Pages(iv.Pages) {
			s.invalidate(p, iv.ID)
		}
	}
	return nil
}

// freshIntervals checks ivs against what this rank knows, without changing
// anything, and returns copies of the unknown ones in (rank, index) order.
func (s *State) freshIntervals(ivs []protocol.Interval) ([]*protocol.Interval, error) {
	sorted := make([]*protocol.Interval, len(ivs))
	for i := range ivs {
		sorted[i] = &ivs[i]
	}
	slices.SortFunc(sorted, func(a, b *protocol.Interval) int {
		return cmp.Or(cmp.Compare(a.ID.Rank, b.ID.Rank), cmp.Compare(a.ID.Index, b.ID.Index))
	})
	vt := s.vt.Clone()
	var fresh []*protocol.Interval
	for _, iv := range sorted {
		r := iv.ID.Rank
		if r < 0 || r >= s.cfg.NProcs || len(iv.VT) != s.cfg.NProcs {
			return nil, fmt.Errorf("interval %v does not fit a job of %d ranks", iv.ID, s.cfg.NProcs)
		}
		if iv.ID.Index <= vt[r] {
			continue
		}
		if r == s.cfg.Rank {
			return nil, fmt.Errorf("interval %v of rank %d, which has made only %d", iv.ID, r, s.vt[r])
		}
		if iv.ID.Index != vt[r]+1 {
			return nil, fmt.Errorf("interval %v arrived, but rank %d knows rank %d only up to %d", iv.ID, s.cfg.Rank, r, vt[r])
		}
		for _, pr := range iv.Pages {
			if pr.Count == 0 || pr.End() > uint64(s.cfg.Pages) {
				return nil, fmt.Errorf("interval %v names pages [%d,%d) outside the region's %d", iv.ID, pr.First, pr.End(), s.cfg.Pages)
			}
		}
		vt[r] = iv.ID.Index
		c := *iv
		fresh = append(fresh, &c)
	}
	for _, iv := range fresh {
		if !vt.Dominates(iv.VT) {
			return nil, fmt.Errorf("interval %v depends on intervals (vector time %v) that did not arrive", iv.ID, iv.VT)
		}
	}
	return fresh, nil
}

func (s *State) invalidate(p uint32, id protocol.IntervalID) {
	pg := &s.pages[p]
	pg.pending = append(pg.pending, id)
	switch pg.state {
	case Invalid, Absent:
		return
	case ReadOnly:
		s.act(ActInvalidate, p)
		pg.used = true
		if s.cfg.Prefetch && !pg.listed {
			pg.listed = true
			s.usedList = append(s.usedList, p)
		}
	case ReadWrite:
		panic(fmt.Sprintf("lrc: page %d writable when invalidated", p)) // the close before turned it cold
	}
	pg.state = Invalid
	s.invalid++
	s.stats.Invalidations++
}
