// Package lrc is the lazy release consistency engine of one rank, as a state
// machine: the home-based protocol (the default) or TreadMarks' homeless one,
// both with multiple writers.
//
// Execution is divided into intervals, closed at every release and acquire.
// A closed interval that modified pages becomes a record with a vector time
// and write notices (the pages it changed). An acquirer merges the intervals
// it lacks and invalidates the pages they name. Writes to pages a rank is
// not home of are caught with twins, and diffs are byte-exact.
//
// Home-based (Config.Homes, home.go): every page has a home rank whose copy
// is kept current. The home writes its pages in place; other writers send
// their diffs home as they close an interval, one message per home; a fault
// fetches the whole page from the home, which answers once its copy holds
// every write the faulting rank has a notice of. Pages in use that an
// acquire invalidates are brought up to date in place before it returns, so
// a program's steady state takes no read faults. A home writes a page no
// other rank holds a copy of without any tracking at all. Homes start spread
// over the ranks, move at a barrier of every rank to a rank that alone wrote
// the page since the last one, and can be placed (SetHome in package rank).
//
// Homeless (fetch.go): a fault asks the smallest set of writers whose
// intervals are not dominated by another's for the missing diffs — one
// request per writer, naming every page it must supply — and applies them in
// happens-before order; diffs are made when a close finds a page changed and
// kept by their writer. Garbage collection (StartCollection, Collect) bounds
// the history: every rank keeps the pages it uses and the pages it keeps for
// the others (the last writer of each page keeps it), brings them up to date,
// and drops its copies of the rest; a dropped page is fetched whole from its
// keeper on its next use.
//
// Writes are found by faults on write-protected pages, or, with
// Config.AsyncWrites, reported by the engine (Written) from the kernel's
// record of written pages, with no fault at all.
//
// Inputs are plain calls (Fault, Written, CloseInterval, Acquire, the Handle
// methods, ...); outputs are protocol messages and page actions, collected
// until TakeOutput, and the pages the application must drop (TakeZap). The
// page bytes are handed in at New as a slice (the engine's view of the rank's
// memory, or plain memory in a simulator): the package reads and writes them
// but never maps memory, does no I/O, keeps no clock and starts no goroutine.
package lrc

import (
	"bytes"
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
	// Homes selects the home-based protocol; without it the protocol is
	// TreadMarks' homeless one.
	Homes bool
	// AsyncWrites: writes to write-protected pages do not fault; Written
	// reports them before every close. Every mapped page that needs a twin
	// to be written (see Funneled) then has one from the moment it is mapped.
	AsyncWrites bool
	// Funneled: the application writes shared memory only while no call is
	// under way (SetFunneled). Home-based, a funneled rank writes the pages
	// it is home of in place, untracked when no copy is elsewhere; the pages
	// of any other rank are twinned and compared like pages homed elsewhere
	// (only their diffs stay here), so that writes of other threads made
	// during a call are never lost, even if the page's home moves then.
	Funneled bool
	// Prefetch makes a fault also fetch other invalid pages: homeless, those
	// that were mapped when they were invalidated (so probably in use) and
	// whose diffs the writers already being asked can supply; home-based, the
	// pages after the faulting one that the same home supplies. More pages per
	// request, never more requests.
	Prefetch bool
	// PrefetchLimit caps the extra pages one fault fetches (0: 64 homeless,
	// 15 home-based).
	PrefetchLimit int
	// Colocated marks the ranks served by the same engine as this one (nil:
	// none). Home-based, a home pushes pages only to the others (see
	// PushWritten): across nodes a push saves a round trip after the
	// barrier; within an engine it saves only a message handed over in
	// memory, and costs the home its copy at its arrival (red-black SOR on
	// 2 ranks of one engine ran 4 % slower with pushes).
	Colocated []bool
}

const (
	defaultPrefetchLimit     = 64
	defaultHomePrefetchLimit = 15
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
	// ReadWrite: current and mapped writable: with a twin for the open
	// interval, or a page this rank is home of.
	ReadWrite
	// Invalid: write notices are not yet applied; an access fetches what is
	// missing.
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

// The page actions. Dropping a mapping is not one of them: only the
// application can drop its own mappings, and it does so with the pages of
// TakeZap as a call returns.
const (
	// ActWriteProtect write-protects a mapped page: its next write is caught.
	ActWriteProtect ActionKind = iota + 2
	// ActMapReadOnly maps a current page write-protected (and wakes faulters).
	ActMapReadOnly
	// ActMapReadWrite maps a current, unmapped page writable (and wakes
	// faulters).
	ActMapReadWrite
	// ActUnprotect lifts the write protection of a mapped page (and wakes
	// faulters).
	ActUnprotect
	// ActTrack (AsyncWrites): the page's writes must be reported from now
	// on; ActUntrack: they need not be (not mapped, or written in place
	// with no copy elsewhere). Reports may list pages that are not
	// tracked: they cost only the time to look.
	ActTrack
	ActUntrack
)

func (k ActionKind) String() string {
	switch k {
	case ActWriteProtect:
		return "write-protect"
	case ActMapReadOnly:
		return "map-ro"
	case ActMapReadWrite:
		return "map-rw"
	case ActUnprotect:
		return "unprotect"
	case ActTrack:
		return "track"
	case ActUntrack:
		return "untrack"
	}
	return fmt.Sprintf("ActionKind(%d)", uint8(k))
}

// Action is one page action, to be carried out in order, before the messages
// that came with it are sent: a page sent whole to another rank is sent as it
// is once its actions are done (see PageCopy in HandlePageRequest).
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
	// DiffsJoined counts the diffs of this rank's intervals joined to the
	// diff of an earlier interval (homeless; see keepDiff).
	DiffsJoined   int64
	Invalidations int64
	// Prefetched counts pages fetched along with a faulting page.
	Prefetched int64
	// PagesFetched counts whole pages fetched from their homes, and
	// Refreshed those of them brought up to date in place at an acquire.
	PagesFetched, Refreshed int64
	// Pushed counts pages brought up to date at a barrier from the copy
	// their home pushed, without a request.
	Pushed int64
	// HomeMigrations counts pages whose home moved to this rank.
	HomeMigrations int64
	Collections    int64
	// Dropped counts pages whose copy a collection dropped; Refetched, the
	// whole pages fetched from their keepers since.
	Dropped, Refetched int64
}

// Add adds o's counts to s: the counts of several ranks, or of one rank
// over several runs.
func (s *Stats) Add(o Stats) {
	s.ReadFaults += o.ReadFaults
	s.WriteFaults += o.WriteFaults
	s.Twins += o.Twins
	s.SilentPages += o.SilentPages
	s.Intervals += o.Intervals
	s.DiffsCreated += o.DiffsCreated
	s.DiffBytesCreated += o.DiffBytesCreated
	s.DiffsApplied += o.DiffsApplied
	s.DiffBytesApplied += o.DiffBytesApplied
	s.DiffsSquashed += o.DiffsSquashed
	s.DiffBytesSquashed += o.DiffBytesSquashed
	s.DiffsJoined += o.DiffsJoined
	s.Invalidations += o.Invalidations
	s.Prefetched += o.Prefetched
	s.PagesFetched += o.PagesFetched
	s.Refreshed += o.Refreshed
	s.Pushed += o.Pushed
	s.HomeMigrations += o.HomeMigrations
	s.Collections += o.Collections
	s.Dropped += o.Dropped
	s.Refetched += o.Refetched
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
	// protected: a writable page already write-protected ahead of the
	// close of its interval: by ProtectDirty, or by the application's scan
	// that reported it written (Written). A write after that protection
	// goes through the kernel without a fault and is reported by the next
	// scan, so the close need not protect it again.
	protected bool
	// keep: a collection under way keeps the page and has yet to validate it.
	keep bool
	// stale: invalid, but still mapped in the application until the call
	// under way returns (TakeZap) or brings it up to date in place; staleRW,
	// mapped writable.
	stale, staleRW bool
	// tracked: the last ActTrack or ActUntrack of the page said track.
	tracked bool
	// idle counts the closes of active intervals in a row that found the
	// hot page unchanged.
	idle uint8
	// fetching counts outstanding requests that cover the page.
	fetching int32
	// twin is the page as the open interval's writes found it: writable
	// pages have one, and with AsyncWrites every mapped page not homed here.
	twin []byte
	// pending are the write notices not applied to this rank's copy.
	pending []protocol.IntervalID
	home    homePage
}

// homelessPage is the homeless protocol's own state of a page, kept apart
// from page (State.homeless), as the rare parts of homePage are: a page
// state is made for every page a rank uses, and its size is paid at a job's
// start (shallow water at N = 4, one step, 2 ranks: 72 bytes a page more,
// 24.5 -> 28.6 ms; 208 -> 136 bytes, 24.3 -> 22.3 ms).
type homelessPage struct {
	// diffs are the diffs of this page this rank made or received.
	diffs []held
	// joinable is 1 + the index in diffs of this rank's newest diff of the
	// page while the diffs of later intervals may still join it, 0 when
	// none may (see keepDiff).
	joinable int32
	// movedAhead: a prefetch brought the page though it had moved on, and
	// the application has not faulted on it since.
	movedAhead bool
}

type held struct {
	id protocol.IntervalID
	d  diff.Diff
}

// State is the consistency state of one rank.
type State struct {
	cfg  Config
	mem  []byte
	vt   protocol.VectorTime
	base protocol.VectorTime // intervals up to base were collected
	// log[r][k] is interval base[r]+1+k of rank r.
	log   [][]*protocol.Interval
	pages chunked[page]
	// homeless is each page's homeless state (without the home-based
	// protocol).
	homeless chunked[homelessPage]
	dirty    []uint32
	// usedList holds candidate pages for prefetch; entries whose page is no
	// longer used are dropped lazily.
	usedList []uint32
	// movedUsed and movedUnused count, with decay, the pages that moved on
	// that homeless prefetches brought and the application faulted on, and
	// those invalidated again untouched; movedUnknown, those brought whose use
	// is not known yet; sinceMovedProbe, faults since the last probe (see
	// movedLimit).
	movedUsed, movedUnused, movedUnknown, sinceMovedProbe int
	prefetchScratch                                       []uint32
	// staleList holds the pages invalidated while mapped since TakeZap.
	staleList []uint32
	// touched are the pages whose mapping or tracking may have changed since
	// TakeOutput, which tells the engine which to track (AsyncWrites).
	touched   []uint32
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
	frozen bool
	homes  homes
	// merged are the intervals Merge recorded for AcquireAtEpoch.
	merged []*protocol.Interval
	// metadata counts the bytes held for the protocol.
	metadata int64
	twinPool [][]byte
	// diffBuf is scratch space for making diffs.
	diffBuf []byte
	// snapshot is createDiff's copy of the page it compares.
	snapshot []byte
	stats    Stats
	out      Output
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
	case cfg.Colocated != nil && len(cfg.Colocated) != cfg.NProcs:
		return nil, fmt.Errorf("lrc: colocation given for %d ranks of %d", len(cfg.Colocated), cfg.NProcs)
	}
	if cfg.PrefetchLimit == 0 {
		cfg.PrefetchLimit = defaultPrefetchLimit
		if cfg.Homes {
			cfg.PrefetchLimit = defaultHomePrefetchLimit
		}
	}
	s := &State{
		cfg:      cfg,
		mem:      mem,
		vt:       make(protocol.VectorTime, cfg.NProcs),
		base:     make(protocol.VectorTime, cfg.NProcs),
		log:      make([][]*protocol.Interval, cfg.NProcs),
		pages:    newChunked[page](cfg.Pages),
		requests: make(map[uint32]*request),
	}
	if cfg.Homes {
		s.initHomes()
	} else {
		s.keeper = make([]int32, cfg.Pages)
		s.homeless = newChunked[homelessPage](cfg.Pages)
	}
	return s, nil
}

// VT returns a copy of the rank's vector time.
func (s *State) VT() protocol.VectorTime { return s.vt.Clone() }

// homelessOf returns page p's homeless state, nil with the home-based
// protocol or if the page has none yet (all zero).
func (s *State) homelessOf(p uint32) *homelessPage {
	if s.cfg.Homes {
		return nil
	}
	return s.homeless.peek(p)
}

// PageState returns the state of page p.
func (s *State) PageState(p uint32) PageState { return s.pages.at(p).state }

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
// A page is tracked before the actions that map it, and untracked after
// them: mapping a page wakes the application's thread that faulted on it,
// which may write it and report its writes at once.
func (s *State) TakeOutput() Output {
	var track []Action
	for _, p := range s.touched {
		pg := s.pages.at(p)
		if t := s.mustTrack(p); t != pg.tracked {
			pg.tracked = t
			if t {
				track = append(track, Action{Kind: ActTrack, Page: p})
			} else {
				s.out.Actions = append(s.out.Actions, Action{Kind: ActUntrack, Page: p})
			}
		}
	}
	s.touched = s.touched[:0]
	out := s.out
	out.Actions = append(track, out.Actions...)
	s.out = Output{}
	return out
}

// mustTrack reports whether page p's writes must be reported: with
// AsyncWrites, a page the application has mapped, unless this rank writes it
// in place and has it mapped writable. Such a page is private (no copy
// elsewhere: export and a home's move protect it as they end that) or
// written in the open interval, whose close notices it whatever is written
// until then and makes it private; but one fetched since its last notice
// stays tracked, for its close to keep it exported (closeHome): a tracked
// page's writes are reported whatever its protection, since a page mapped
// writable shows as written to the scan. Tracked till the close, a page the
// application fills took a second write fault: its scan at the barrier
// protected it again.
func (s *State) mustTrack(p uint32) bool {
	pg := s.pages.at(p)
	switch {
	case !s.cfg.AsyncWrites:
		return false
	case pg.stale:
		return true
	case pg.state != ReadOnly && pg.state != ReadWrite:
		return false
	}
	return !s.inPlace(p) || pg.state == ReadOnly || pg.home.fetched
}

// touch notes that page p's mapping or tracking may have changed.
func (s *State) touch(p uint32) {
	if s.cfg.AsyncWrites {
		s.touched = append(s.touched, p)
	}
}

// TakeZap returns, sorted, the pages that are invalid but still mapped in the
// application, which must drop them before it goes on; the state then holds
// them unmapped. Call it as a call that may have invalidated pages returns to
// the application, before TakeOutput. With AsyncWrites, a page mapped
// writable is write-protected first: dropped, it then leaves the kernel's
// record of it not written.
func (s *State) TakeZap() []uint32 {
	var zap []uint32
	for _, p := range s.staleList {
		pg := s.pages.at(p)
		if pg.stale && !pg.home.refresh {
			pg.stale = false
			zap = append(zap, p)
			s.touch(p)
			if s.cfg.AsyncWrites && pg.staleRW {
				s.act(ActWriteProtect, p)
			}
		}
	}
	s.staleList = s.staleList[:0]
	slices.Sort(zap)
	return slices.Compact(zap)
}

func (s *State) act(k ActionKind, p uint32) {
	s.out.Actions = append(s.out.Actions, Action{Kind: k, Page: p})
	if k != ActTrack && k != ActUntrack {
		s.touch(p)
	}
}

func (s *State) sendMsg(to int, m protocol.Message) {
	s.out.Messages = append(s.out.Messages, protocol.Envelope{From: s.cfg.Rank, To: to, Msg: m})
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
// the rank's copy is current; otherwise it asks for what is missing and maps
// the page when it has arrived.
func (s *State) Fault(p uint32, write bool) error {
	if err := s.checkPage(p); err != nil {
		return err
	}
	if write {
		s.stats.WriteFaults++
	} else {
		s.stats.ReadFaults++
	}
	pg := s.pages.at(p)
	if pg.state != ReadOnly && pg.state != ReadWrite {
		pg.home.faultedIn()
	}
	if hp := s.homelessOf(p); hp != nil && hp.movedAhead {
		hp.movedAhead = false
		s.prefetchOutcome(true)
	}
	pg.home.ahead, pg.home.unwanted = false, false
	switch pg.state {
	case Invalid, Absent:
		pg.want = max(pg.want, wantOf(write))
		if pg.fetching > 0 || s.frozen {
			return nil
		}
		if s.cfg.Homes {
			pl := s.newHomePlan()
			s.planHomePage(pl, p)
			if s.cfg.Prefetch {
				s.addHomePrefetch(pl, p)
			}
			s.sendHomePlan(pl)
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
		s.access(p, write)
		if pg.state != Unmapped && s.inPlace(p) {
			s.mapAround(p, write)
		}
	}
	return nil
}

// faultAround is the most pages after a faulting one a fault maps too: a
// run of 2 MiB of 4 KiB pages, a page table's worth, filled for one round
// trip to the engine.
const faultAround = 511

// faultAroundFirst is how many pages after it a fault maps when the pages
// before it are not mapped: a fault that starts a run. Each fault that
// extends a run maps twice as many as the run had, up to faultAround, as
// the kernel's readahead grows its window: an array filled in order takes
// two faults more than with faultAround from its first page, and arrays
// declared larger than the part a program uses (shallow water at N = 4 in
// arrays of 1025 x 1025) no longer fill and map 2 MiB for each, most of it
// never touched (44 ms at 2 ranks, against 1.3 ms for gfortran alone).
const faultAroundFirst = 31

// mapAround maps, with page p that a fault brought in, the unmapped pages
// after it that this rank writes in place, up to aroundWindow(p), stopping
// at the first that is not: an array homed here is filled in one fault per
// run of pages instead of one per page. Each is mapped as the fault's
// access would map it: after a write, writable and counted written in the
// open interval. Mapped read-only, each page of an array being filled took
// a write fault of its own in the kernel (shallow water's first step at 2
// ranks: 46 000 of them; 20 000 since), and a notice for a page mapped
// around but left unwritten costs at most a refetch of an unchanged copy.
func (s *State) mapAround(p uint32, write bool) {
	ahead := s.aroundWindow(p)
	for q := p + 1; uint64(q) < uint64(s.cfg.Pages) && q-p <= ahead; q++ {
		if s.pages.at(q).state != Unmapped || !s.inPlace(q) {
			return
		}
		s.accessHome(q, write)
	}
}

// aroundWindow is how many pages after page p a fault on it maps: twice
// the run of mapped pages written in place that p extends, at least
// faultAroundFirst, at most faultAround. Runs are told apart by the pages
// themselves, so arrays filled side by side (one loop writing U, V and P)
// each grow their own. The walk back stops once the run is long enough
// for the largest window: it runs on the fault's path.
func (s *State) aroundWindow(p uint32) uint32 {
	run := uint32(0)
	for q := p; q > 0 && 2*run < faultAround; q-- {
		pg := s.pages.peek(q - 1)
		if pg == nil || pg.state == Unmapped || !s.inPlace(q-1) {
			break
		}
		run++
	}
	return min(faultAround, max(faultAroundFirst, 2*run))
}

// SetFunneled sets Config.Funneled; call it before the application touches
// shared memory.
func (s *State) SetFunneled(funneled bool) { s.cfg.Funneled = funneled }

// inPlace reports whether page p is written in place, untracked when no copy
// is elsewhere: homed here, at a funneled rank.
func (s *State) inPlace(p uint32) bool { return s.cfg.Funneled && s.homedHere(p) }

// access maps current page p for a read or a write.
func (s *State) access(p uint32, write bool) {
	pg := s.pages.at(p)
	switch {
	case pg.state == ReadWrite:
		s.act(ActMapReadWrite, p) // wakes the faulting thread
	case s.cfg.NProcs == 1:
		// Alone, no write needs catching: map the page writable, no twin.
		s.mapWritable(p)
	case s.inPlace(p):
		s.accessHome(p, write)
	case write:
		s.beginWrite(p)
	default:
		// Mapped again if the state says it is: the application dropped
		// the mapping itself, or another thread's fault came first.
		if s.cfg.AsyncWrites {
			s.takeTwin(p)
		}
		pg.state = ReadOnly
		s.act(ActMapReadOnly, p)
	}
}

// mapWritable maps a current page writable, whatever its mapping now.
func (s *State) mapWritable(p uint32) {
	pg := s.pages.at(p)
	switch pg.state {
	case ReadOnly:
		s.act(ActUnprotect, p)
	case Unmapped:
		s.act(ActMapReadWrite, p)
	}
	pg.state = ReadWrite
}

func wantOf(write bool) want {
	if write {
		return wantWrite
	}
	return wantRead
}

// Validate makes pages [first, first+count) current and mapped, writable if
// write is set, fetching what is missing with one request per rank asked.
// Ready reports when it is done.
func (s *State) Validate(first, count uint32, write bool) error {
	if count == 0 {
		return nil
	}
	if uint64(first)+uint64(count) > uint64(s.cfg.Pages) {
		return fmt.Errorf("pages [%d,%d) beyond the region's %d pages", first, uint64(first)+uint64(count), s.cfg.Pages)
	}
	pl := s.newPlan()
	hpl := s.newHomePlan()
	for p := first; p < first+count; p++ {
		pg := s.pages.at(p)
		switch {
		case pg.state == Invalid || pg.state == Absent:
			pg.want = max(pg.want, wantOf(write))
			switch {
			case pg.fetching > 0 || s.frozen:
			case s.cfg.Homes:
				s.planHomePage(hpl, p)
			default:
				s.planPage(pl, p)
			}
		case write && pg.state != ReadWrite, pg.state == Unmapped:
			s.access(p, write)
		}
	}
	if s.cfg.Homes {
		s.sendHomePlan(hpl)
	} else {
		s.send(pl)
	}
	return nil
}

// Ready reports whether pages [first, first+count) are mapped, and writable
// if write is set.
func (s *State) Ready(first, count uint32, write bool) bool {
	for p := first; p < first+count; p++ {
		switch s.pages.at(p).state {
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

// beginWrite makes a current page this rank is not home of writable, with a
// twin of the page as it is now.
func (s *State) beginWrite(p uint32) {
	pg := s.pages.at(p)
	s.takeTwin(p)
	s.mapWritable(p)
	pg.idle = 0
	s.dirty = append(s.dirty, p)
}

// takeTwin gives page p a twin of its current contents, unless it has one.
func (s *State) takeTwin(p uint32) {
	pg := s.pages.at(p)
	if pg.twin != nil {
		return
	}
	pg.twin = s.newTwin(s.pageBytes(p))
	s.metadata += int64(s.cfg.PageSize)
	s.stats.Twins++
}

// Written reports, with AsyncWrites, every page the application has mapped
// and written since it was last write-protected: the pages found written in
// the kernel's record just before a call that may close the interval. Pages
// this rank writes untracked (homed here, with no copy elsewhere) may be
// among them and are passed over.
func (s *State) Written(rs []protocol.PageRange) error {
	if !s.cfg.AsyncWrites {
		return fmt.Errorf("written pages reported without asynchronous write tracking")
	}
	for _, r := range rs {
		if r.Count == 0 || r.End() > uint64(s.cfg.Pages) {
			return fmt.Errorf("written pages [%d,+%d) outside the region's %d", r.First, r.Count, s.cfg.Pages)
		}
	}
	for p := range protocol.Pages(rs) {
		pg := s.pages.at(p)
		switch pg.state {
		case ReadWrite:
			// Untracked, or already known written.
		case ReadOnly:
			if s.inPlace(p) {
				s.dirtyHome(p)
				continue
			}
			pg.state = ReadWrite
			pg.protected = true // by the scan that reported it
			pg.idle = 0
			s.dirty = append(s.dirty, p)
		default:
			// Not mapped (dropped unprotected, so it looks written to the
			// kernel), or invalid but still mapped and written by another
			// thread while the call that invalidated it is under way, when
			// the twin keeps the write (see validated).
		}
	}
	return nil
}

// ProtectDirty write-protects the pages written in the open interval ahead
// of its close. An engine whose application runs other threads calls it, and
// carries out the actions, before any call that may close the interval: the
// close compares each page with its twin, and a write that slipped in after
// that comparison would be lost.
func (s *State) ProtectDirty() {
	for _, p := range s.dirty {
		if pg := s.pages.at(p); !pg.protected && pg.state == ReadWrite {
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
	if pg.twin == nil {
		return
	}
	if len(s.twinPool) < maxPooledTwins {
		s.twinPool = append(s.twinPool, pg.twin)
	}
	pg.twin = nil
	s.metadata -= int64(s.cfg.PageSize)
}

// createDiff returns the diff between page p's twin and the page, in a
// scratch buffer that the next call reuses. It compares a copy of the page:
// the application may be writing it (another of its threads, or itself
// after releasing a lock without a call), and an encoder that read a byte
// twice could see two values.
func (s *State) createDiff(p uint32) diff.Diff {
	if s.snapshot == nil {
		s.snapshot = make([]byte, s.cfg.PageSize)
	}
	copy(s.snapshot, s.pageBytes(p))
	d, err := diff.AppendCreate(s.diffBuf[:0], s.pages.at(p).twin, s.snapshot)
	if err != nil {
		panic(fmt.Sprintf("lrc: twin of page %d: %v", p, err)) // twin and page have the page size by construction
	}
	s.diffBuf = d[:0]
	return d
}

// keepDiff stores a copy of d, made by createDiff, as the diff of page p in
// this rank's interval idx (homeless).
//
// While this rank's newest diff of the page has gone to nobody and no
// other rank's write notice of the page came since, d joins it instead, as
// TreadMarks' lazily made diffs join the writes of every interval since the
// twin: the earlier interval's diff becomes the two merged, this one's is
// empty, and a rank that asks for both gets the page's changes once. The
// joined diff is right wherever a rank applies it in happens-before order,
// at the earlier interval's place: an interval c of another rank that a
// rank applies between the two and that writes a byte of the later one
// either happens before the later one, so its notice came here before that
// interval and prevented the join, or is concurrent with it, a data race.
// A rank that knows only the earlier interval gets the later one's writes
// early; it cannot read them without a race either. The join stops when
// the diff is sent (keepers' copies included): whoever has it must find
// the later writes in the later intervals' diffs.
func (s *State) keepDiff(p uint32, idx uint32, d diff.Diff) {
	hp := s.homeless.at(p)
	id := protocol.IntervalID{Rank: s.cfg.Rank, Index: idx}
	if hp.joinable > 0 {
		h := &hp.diffs[hp.joinable-1]
		joined, err := diff.Merge(h.d, d)
		if err != nil {
			panic(fmt.Sprintf("lrc: join diffs of page %d: %v", p, err)) // both made here
		}
		s.metadata += int64(len(joined) - len(h.d))
		h.d = joined
		hp.diffs = append(hp.diffs, held{id: id})
		s.stats.DiffsJoined++
		return
	}
	d = slices.Clip(slices.Clone(d))
	hp.diffs = append(hp.diffs, held{id: id, d: d})
	hp.joinable = int32(len(hp.diffs))
	s.metadata += int64(len(d))
}

// CloseInterval ends the open interval after the application ran in it (at
// a release, or at the start of an acquire): the pages it changed become
// its write notices, and their diffs are made.
//
// The close scans every written page against its twin anyway, to leave
// pages written but unchanged without a notice; that scan is the diff, and
// a diff is no bigger than the twin it replaces, so the diff is made now
// rather than lazily, and, home-based, sent home at once. With faults to
// find writes, a changed page stays writable, hot, its twin brought up to
// date, so that the next interval's writes need no fault (the next close
// finds them); a hot page left unchanged by coldAfter active intervals in a
// row turns cold: write-protected, its twin dropped, so that closes cost
// nothing for pages no longer written. With AsyncWrites a written page is
// write-protected again at every close, which costs no fault.
func (s *State) CloseInterval() { s.closeInterval(true, nil) }

// closeInterval ends the open interval. active: the application ran in it
// (otherwise it only waited for an acquire, and unchanged hot pages stay
// hot). The pages in invalidating are about to be invalidated: they turn
// cold whatever happened.
func (s *State) closeInterval(active bool, invalidating pageSet) {
	if len(s.dirty) == 0 {
		return
	}
	slices.Sort(s.dirty)
	s.dirty = slices.Compact(s.dirty)
	idx := s.vt[s.cfg.Rank] + 1
	var changed, hot []uint32
	var toHomes map[int][]protocol.PageDiff
	for _, p := range s.dirty {
		pg := s.pages.at(p)
		if s.inPlace(p) {
			// A tracked write to a page homed here: its notice tells every
			// rank that may hold a copy, and it goes untracked until another
			// rank fetches the page again.
			changed = append(changed, p)
			s.closeHome(p)
			continue
		}
		if d := s.createDiff(p); len(d) > 0 {
			changed = append(changed, p)
			pg.idle = 0
			s.stats.DiffsCreated++
			s.stats.DiffBytesCreated += int64(len(d))
			switch {
			case !s.cfg.Homes:
				s.keepDiff(p, idx, d)
			case !s.homedHere(p):
				if toHomes == nil {
					toHomes = make(map[int][]protocol.PageDiff)
				}
				h := s.homeOf(p)
				toHomes[h] = append(toHomes[h], protocol.PageDiff{Page: p, Diff: slices.Clone(d)})
				pg.home.sentUpTo = idx
			}
			// The twin becomes the copy the diff was made from, not the
			// page: a write of another thread that lands after the copy
			// stays a difference, for the next close to find. The buffers
			// trade places rather than copy: nothing else holds either.
			pg.twin, s.snapshot = s.snapshot, pg.twin
		} else if active {
			pg.idle++
			s.stats.SilentPages++
		}
		if pg.state == Invalid {
			// Invalidated while it had writes of the open interval (another
			// thread's, during an acquire): diffed now, it keeps its twin,
			// as up to date as the page, until it is brought up to date.
			continue
		}
		if s.cfg.AsyncWrites && pg.state == ReadWrite && !invalidating.has(p) {
			// Protected again, for the next write to be recorded; the twin
			// stays, up to date.
			if !pg.protected {
				s.act(ActWriteProtect, p)
			}
			pg.protected = false
			pg.state = ReadOnly
			continue
		}
		if pg.idle < coldAfter && !invalidating.has(p) {
			// Stays hot: writable, with a twin of the page as it is now.
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
		if !s.cfg.AsyncWrites {
			s.dropTwin(pg)
		}
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
	s.sendHomeDiffs(iv.ID, toHomes)
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
// invalidates the pages they name that this rank's copy lacks. Intervals
// already known are skipped; the new ones must extend what this rank knows
// without gaps. Home-based, StartRefresh then brings the pages in use up to
// date in place.
func (s *State) Acquire(ivs []protocol.Interval) error {
	fresh, err := s.freshIntervals(ivs)
	if err != nil {
		return err
	}
	s.closeInterval(false, s.invalidating(fresh))
	s.record(fresh)
	s.invalidateAll(fresh)
	return nil
}

// Merge records intervals learned at a barrier of every rank, home-based,
// without acting on them yet: AcquireAtEpoch does, once the manager has
// computed the departures from what it knows.
func (s *State) Merge(ivs []protocol.Interval) error {
	fresh, err := s.freshIntervals(ivs)
	if err != nil {
		return err
	}
	s.record(fresh)
	s.merged = append(s.merged, fresh...)
	return nil
}

// AcquireAtEpoch finishes the acquire of a barrier of every rank whose
// intervals Merge recorded, home-based: it invalidates, applies the
// placements and moves homes (see EndEpoch), and only then closes the open
// interval (writes other threads made during the wait), so that its diffs go
// to the homes of the new epoch. StartRefresh then brings the pages in use
// up to date in place.
func (s *State) AcquireAtEpoch(placements []protocol.HomeRange) error {
	fresh := s.merged
	s.merged = nil
	if err := checkPlacements(placements, s.cfg); err != nil {
		return err
	}
	invalidating := s.invalidating(fresh)
	s.invalidateAll(fresh)
	if err := s.EndEpoch(placements, s.vt); err != nil {
		return err
	}
	s.closeInterval(false, invalidating)
	return nil
}

// invalidating returns the pages that fresh intervals will invalidate, as
// runs: the barrier after arrays are filled names every page of them, and
// maps of pages (this one, and EndEpoch's of their writers, then sorted)
// took half of the engine's time at such barriers.
func (s *State) invalidating(fresh []*protocol.Interval) pageSet {
	var runs []protocol.PageRange
	for _, iv := range fresh {
		for p := range protocol.Pages(iv.Pages) {
			if !s.holds(p, iv.ID) {
				runs = protocol.AppendPage(runs, p)
			}
		}
	}
	return newPageSet(runs)
}

func (s *State) record(fresh []*protocol.Interval) {
	for _, iv := range fresh {
		s.vt[iv.ID.Rank] = iv.ID.Index
		s.log[iv.ID.Rank] = append(s.log[iv.ID.Rank], iv)
		s.metadata += intervalSize(iv)
	}
}

func (s *State) invalidateAll(fresh []*protocol.Interval) {
	for _, iv := range fresh {
		for p := range protocol.Pages(iv.Pages) {
			s.invalidate(p, iv.ID)
		}
	}
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

// invalidate records write notice id of page p, unless this rank's copy
// holds it already (home-based: a diff that came before its notice).
func (s *State) invalidate(p uint32, id protocol.IntervalID) {
	pg := s.pages.at(p)
	hp := s.homelessOf(p)
	if hp != nil {
		hp.joinable = 0
	}
	if s.holds(p, id) {
		return
	}
	pg.pending = append(pg.pending, id)
	if pg.home.ahead {
		pg.home.ahead, pg.home.unwanted = false, true
	}
	if hp != nil && hp.movedAhead {
		hp.movedAhead = false
		s.prefetchOutcome(false)
	}
	switch pg.state {
	case Invalid, Absent:
		return
	case ReadOnly, ReadWrite:
		pg.stale, pg.staleRW = true, pg.state == ReadWrite && !pg.protected
		pg.protected = false
		s.staleList = append(s.staleList, p)
		pg.used = true
		if s.cfg.Prefetch && !s.cfg.Homes && !pg.listed {
			pg.listed = true
			s.usedList = append(s.usedList, p)
		}
	}
	pg.state = Invalid
	s.invalid++
	s.stats.Invalidations++
}

// validated makes invalid page p current once nothing it waits for is
// missing, and maps it for the accesses waiting on it.
func (s *State) validated(p uint32) {
	pg := s.pages.at(p)
	pg.state = Unmapped
	s.invalid--
	if pg.keep {
		pg.keep = false
		s.keeping--
	}
	w := pg.want
	pg.want, pg.used = wantNone, false
	if pg.stale {
		// Still mapped: brought up to date in place, and kept as the
		// application has it, but for what tracking writes needs now (its
		// home may have moved meanwhile).
		pg.stale = false
		switch {
		case pg.twin != nil && !bytes.Equal(pg.twin, s.pageBytes(p)):
			// Writes of another thread since the close, kept by the refresh:
			// writable, for the next close to find them with the twin.
			pg.state = ReadWrite
			if !pg.staleRW {
				s.act(ActUnprotect, p)
			}
			pg.idle = 0
			s.dirty = append(s.dirty, p)
		case pg.staleRW && s.inPlace(p) && pg.home.private:
			pg.state = ReadWrite
		default:
			pg.state = ReadOnly
			if pg.staleRW {
				s.act(ActWriteProtect, p)
			}
			if s.cfg.AsyncWrites && !s.inPlace(p) {
				s.takeTwin(p)
			} else {
				s.dropTwin(pg)
			}
		}
	}
	if pg.home.refresh {
		pg.home.refresh = false
		s.homes.refreshing--
		s.stats.Refreshed++
	}
	// A page nobody waits for (prefetched) stays unmapped: if the
	// application uses it, a fault here maps it and marks it in use; if not,
	// it is never kept up to date.
	switch w {
	case wantWrite:
		s.access(p, true)
	case wantRead:
		s.access(p, false)
	}
}
