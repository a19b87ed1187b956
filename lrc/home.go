package lrc

import (
	"fmt"
	"maps"
	"slices"

	"github.com/svmcluster/svm/diff"
	"github.com/svmcluster/svm/protocol"
)

// The home-based protocol.
//
// A page's copy at its home is the master. The home writes it in place; a
// rank that is not home makes a twin before it writes, and sends the diff
// home as it closes the interval (HomeDiffs, one message per home, sent
// before any message that could make the interval known; transports keep
// one sender's messages to one receiver in order). Each copy a rank is or was
// home of carries a version: what it holds of each writer's intervals. A
// faulting rank asks the home for the whole page, naming for each writer the
// newest notice it has not applied; the home answers when its version holds
// them all, queueing the request until the diffs arrive.
//
// Tracking the home's own writes: a page another rank may hold a copy of is
// exported; the home's writes to it are caught (faults on the write-protected
// page, or the kernel's record with AsyncWrites) and become write notices.
// Once such a notice is out, every copy taken before it will be invalidated
// by it, so the page goes untracked — the home writes it at full speed, no
// notice — until another rank fetches it again, which exports it first: the
// page is write-protected before it is copied, so no write falls between.
// With AsyncWrites a page fetched since its last notice stays exported
// after the next one: a neighbour's boundary, fetched after every notice,
// then costs no change of protection at all (the application's scan
// protects what it reports), where going private cost one at each fetch.
// Every page starts exported: every rank starts with a (zero) copy of it.
//
// Homes: page p starts at rank p mod N. At each barrier of every rank, where
// every rank knows the same intervals, each rank moves, in the same way, the
// home of every page that one rank alone wrote since the last such barrier
// to that rank, unless the page was placed (SetHome in package rank): that
// rank's copy is current, so nothing moves but the role. It moves so at the
// first such barrier that finds a lone writer (first touch); after that,
// only to a rank that alone wrote it in two such spans in a row that wrote
// it: a page whose lone writers take turns (shallow water's periodic
// copies: one rank's loop writes it, then another's) moved at every
// barrier, each move a fetch of the page and a change of its protection.
// The placements asked for since the last such barrier take effect at it;
// a rank placed as the home of a page its copy lacks fetches it from the
// previous home first.
// A soft placement (an allocation's guess: its pages in one block per rank,
// the layout of banded and block-distributed arrays) moves the home the
// same way but does not pin it: a page one rank alone writes later still
// moves to that rank.
// There too the interval history goes: home-based, nothing needs it once
// every rank has it.
//
// Pushes: a home notes each rank it sends a page to. As it arrives at a
// barrier of every rank, it pushes the pages it wrote since the last one to
// the ranks it noted (PagePush, before its arrival, so on one node the push
// is there before the departure). A rank leaving the barrier takes a pushed
// copy in place of the request that would bring the page in use up to date,
// if the copy holds every write notice it has of the page and its own diffs
// sent home; otherwise it asks as before, so a push that comes late or
// lacks a diff costs only its bytes. A rank that no longer keeps a pushed
// page mapped tells the home to stop (PushStop); its next fetch of the page
// asks for pushes again.

// A page in use is brought up to date in place at up to maxRefreshes
// acquires in a row while the application does not fault on it (no access
// but a fault tells the engine it is still read); then it is dropped, and
// kept up to date again only if a fault shows it is still used. Each such
// fault doubles the page's allowance, up to maxRefreshLimit: a page read in
// every phase (a boundary row) soon faults once every 128 acquires instead
// of every 9, while one no longer used costs at most its allowance.
const (
	maxRefreshes    = 8
	maxRefreshLimit = 128
)

// homes is the home-based state of a rank.
type homes struct {
	// of holds what every rank knows alike of each page's home, for the
	// pages whose home has moved or been written alone: at -region 1T a
	// value per page of the region, up front, took 2.4 GB a rank.
	of chunked[pageHome]
	// epoch is the vector time at the last barrier of every rank: every rank
	// knows every interval up to it, and the log holds none of them.
	epoch protocol.VectorTime
	// epochs counts the barriers of every rank this rank has left.
	epochs uint32
	// early are messages from ranks that have left more barriers of every
	// rank than this one, held until it has left as many.
	early []early
	// queued are page requests waiting for diffs to reach this rank's copy.
	queued []queuedRequest
	// refreshing counts the pages StartRefresh still waits for.
	refreshing int
	// pushed lists the pages holding a push not yet taken or dropped.
	pushed []uint32
	// empty is the shared version of the pages homed here from the start;
	// atEpoch, of those whose home moved here at the last barrier of every
	// rank, nil until one did.
	empty, atEpoch *version
}

// pageHome is what every rank knows alike of a page's home. The zero value
// is a page's start: at its first home, written by no one alone yet.
type pageHome struct {
	// to is 1 + the page's home; 0 while it is at its first home
	// (firstHome).
	to int32
	// alone is 0 while no barrier of every rank has found one rank alone
	// writing the page since the last one; else 1 + the rank that alone
	// wrote it in the last such span that wrote it, or -1 if several did.
	alone int32
	// placed: the home was placed by SetHome and never moves.
	placed bool
}

type queuedRequest struct {
	from int
	m    *protocol.PageRequest
}

type early struct {
	from int
	m    protocol.Message
}

// homePage is the home-based state of one page.
type homePage struct {
	// ver is what this rank's copy holds, kept for pages it is or was home
	// of; nil for others. Read it with homeVersion: the pages homed here
	// from the start get theirs at first use.
	ver *version
	// private: no copy is at another rank; writes here go untracked. The
	// zero value, a page that may have copies elsewhere, is every page's
	// start: the region's page states are left untouched until used.
	private bool
	// fetched: with AsyncWrites, the page, homed and written in place
	// here, was exported since its last notice; it stays tracked, and
	// exported after its next one (closeHome).
	fetched bool
	// refresh: the acquire under way waits for the page, still mapped, to
	// be brought up to date in place.
	refresh bool
	// ahead: brought by a prefetch and not faulted on since; unwanted: a
	// prefetch brought it and it was invalidated again untouched, so
	// prefetches pass it over until the application faults on it.
	ahead, unwanted bool
	// refreshes counts in-place refreshes since the application last faulted
	// the page in; limit is how many it may have in a row (0: maxRefreshes),
	// atLimit is set when it was dropped there.
	refreshes, limit uint8
	atLimit          bool
	// sentUpTo is the index of this rank's last interval whose diff of the
	// page went home: a pushed copy must hold it.
	sentUpTo uint32
	// moved, while set, is where this rank, home of the page now without a
	// current copy, fetches it from.
	moved *homeMove
	// late are the diffs applied while a fetch of the page was out: the
	// copy that comes may lack them, so they go on top of it again.
	late []diff.Diff
	// pushTo: bit r is set while this rank, the page's home, pushes its
	// copy to rank r at its barrier arrivals (ranks below maxPushRanks).
	pushTo uint64
	// pushed is a copy the home pushed, for this rank to take as it leaves
	// the next barrier of every rank.
	pushed *pushedCopy
}

// homeMove is the fetch a new home without a current copy makes of its
// page: from is the previous home, upTo the barrier at which the home
// moved; the previous home's copy holds the intervals up to it, and the
// diffs of later ones come here. Rare, it is kept out of homePage, which
// every page state holds.
type homeMove struct {
	from int32
	upTo protocol.VectorTime
}

// pushedCopy is a page a home pushed: its contents, what it holds, and the
// barriers of every rank the home had left when it pushed.
type pushedCopy struct {
	from  int
	epoch uint32
	holds protocol.VectorTime
	data  []byte
}

// maxPushRanks bounds the ranks a home pushes to: one bit each.
const maxPushRanks = 64

// version is what a copy holds: every interval up to base, each writer's
// intervals up to the index in applied, and its own rank's writes.
//
// A shared version is one value for many pages, never changed: the empty
// one of the pages homed here from the start, and one per barrier of every
// rank for the pages whose home moved here at it (homes.empty, atEpoch). A
// page's own is made as it first holds an interval more (noteHolds).
// Shallow water's allocations moved 13 000 homes a rank, each a version
// of its own before.
type version struct {
	base    protocol.VectorTime // shared between pages; nil: none
	applied []protocol.IntervalID
	shared  bool
}

func (v *version) holds(id protocol.IntervalID, self int) bool {
	if id.Rank == self || v.base != nil && id.Index <= v.base[id.Rank] {
		return true
	}
	for _, a := range v.applied {
		if a.Rank == id.Rank {
			return id.Index <= a.Index
		}
	}
	return false
}

// note records that the copy holds id and every earlier interval of its rank.
func (v *version) note(id protocol.IntervalID) {
	for i := range v.applied {
		if v.applied[i].Rank == id.Rank {
			v.applied[i].Index = max(v.applied[i].Index, id.Index)
			return
		}
	}
	v.applied = append(v.applied, id)
}

func (s *State) initHomes() {
	s.homes.of = newChunked[pageHome](s.cfg.Pages)
	s.homes.epoch = make(protocol.VectorTime, s.cfg.NProcs)
	s.homes.empty = &version{shared: true}
}

// noteHolds records that page p's copy, at a version (homeVersion), holds
// intervals ids and every earlier interval of their ranks; a shared version
// gives way to the page's own first.
func (s *State) noteHolds(p uint32, ids ...protocol.IntervalID) {
	if len(ids) == 0 {
		return
	}
	pg := s.pages.at(p)
	v := s.homeVersion(p)
	if v.shared {
		v = &version{base: v.base}
		pg.home.ver = v
	}
	for _, id := range ids {
		v.note(id)
	}
}

// Home returns the home of page p (-1 without the home-based protocol).
func (s *State) Home(p uint32) int {
	if !s.cfg.Homes {
		return -1
	}
	return s.homeOf(p)
}

func (s *State) homeOf(p uint32) int {
	if h := s.homes.of.peek(p); h != nil && h.to != 0 {
		return int(h.to - 1)
	}
	return s.firstHome(p)
}

// firstHome is page p's home until one is placed or moves it.
func (s *State) firstHome(p uint32) int { return int(p) % s.cfg.NProcs }

// homeVersion returns what this rank's copy of page p holds if this rank is
// or was p's home, else nil. A page homed here from the start gets its
// version as it is first asked for: a version for each such page of the
// region, made up front, took longer than the rest of the engine's start.
func (s *State) homeVersion(p uint32) *version {
	pg := s.pages.at(p)
	if pg.home.ver == nil && s.cfg.Homes && s.firstHome(p) == s.cfg.Rank {
		pg.home.ver = s.homes.empty
	}
	return pg.home.ver
}

// homedHere reports whether this rank is page p's home.
func (s *State) homedHere(p uint32) bool {
	return s.cfg.Homes && s.homeOf(p) == s.cfg.Rank
}

// holds reports whether this rank's copy of page p has interval id's writes
// (only a copy with a version knows; others are stale at every notice).
func (s *State) holds(p uint32, id protocol.IntervalID) bool {
	v := s.homeVersion(p)
	return v != nil && s.pages.at(p).home.moved == nil && v.holds(id, s.cfg.Rank)
}

// accessHome maps current page p, homed here, for a read or a write.
func (s *State) accessHome(p uint32, write bool) {
	pg := s.pages.at(p)
	switch {
	case pg.home.private:
		s.mapWritable(p)
	case write:
		s.mapWritable(p)
		s.dirtyHome(p)
	default:
		pg.state = ReadOnly
		s.act(ActMapReadOnly, p)
	}
}

// dirtyHome records a write to exported page p, homed here, in the open
// interval: untracked from now to its close (see mustTrack).
func (s *State) dirtyHome(p uint32) {
	s.pages.at(p).state = ReadWrite
	s.touch(p)
	s.dirty = append(s.dirty, p)
}

// closeHome ends the open interval's tracked writes to page p, homed here:
// their notice is going out, so the page goes untracked and writable,
// unless it was fetched since its last notice.
func (s *State) closeHome(p uint32) {
	pg := s.pages.at(p)
	s.touch(p)
	if pg.home.fetched {
		// Exported since its last notice, and tracked since: the next
		// fetch likely follows this notice too. It stays exported, as the
		// application's scan before this call left it (protected, or
		// mapped writable if it was fetched after that scan, which the
		// next scan then reports).
		pg.home.fetched = false
		pg.state = ReadOnly
		pg.protected = false
		return
	}
	pg.home.private = true
	if pg.protected || pg.state == ReadOnly {
		// Protected ahead of the close, or exported again after the write:
		// unprotected now, since the notice about to go out invalidates
		// every copy taken before it. With AsyncWrites the protection can
		// stay: a write goes through it without a fault (and is not
		// reported, untracked), which costs less than lifting it here.
		if !s.cfg.AsyncWrites {
			s.act(ActUnprotect, p)
		}
		pg.state = ReadWrite
	}
	pg.protected = false
}

// sendHomeDiffs sends the diffs of interval id to their homes.
func (s *State) sendHomeDiffs(id protocol.IntervalID, toHomes map[int][]protocol.PageDiff) {
	for _, h := range slices.Sorted(maps.Keys(toHomes)) {
		s.sendMsg(h, &protocol.HomeDiffs{Interval: id, Pages: toHomes[h], Epoch: s.homes.epochs})
	}
}

// HandleHomeDiffs applies to this rank's copies the diffs that rank from's
// interval made to pages this rank is (or was, when from sent them) home of.
func (s *State) HandleHomeDiffs(from int, m *protocol.HomeDiffs) error {
	if !s.cfg.Homes {
		return fmt.Errorf("home diffs from rank %d without the home-based protocol", from)
	}
	if m.Interval.Rank != from {
		return fmt.Errorf("home diffs from rank %d for interval %v of another rank", from, m.Interval)
	}
	if m.Epoch > s.homes.epochs {
		s.homes.early = append(s.homes.early, early{from, m})
		return nil
	}
	for _, pd := range m.Pages {
		if err := s.checkPage(pd.Page); err != nil {
			return fmt.Errorf("home diffs of interval %v: %w", m.Interval, err)
		}
		if s.homeVersion(pd.Page) == nil {
			return fmt.Errorf("home diffs of interval %v for page %d, which rank %d is not home of", m.Interval, pd.Page, s.cfg.Rank)
		}
		if err := diff.Diff(pd.Diff).Validate(s.cfg.PageSize); err != nil {
			return fmt.Errorf("home diff of page %d, interval %v: %w", pd.Page, m.Interval, err)
		}
	}
	for _, pd := range m.Pages {
		pg := s.pages.at(pd.Page)
		d := diff.Diff(pd.Diff)
		_ = d.ApplyValidated(s.pageBytes(pd.Page)) // validated above
		if pg.twin != nil {
			// Not a write of this rank's open interval.
			_ = d.ApplyValidated(pg.twin)
		}
		s.noteHolds(pd.Page, m.Interval)
		if pg.fetching > 0 {
			pg.home.late = append(pg.home.late, d)
		}
		s.stats.DiffsApplied++
		s.stats.DiffBytesApplied += int64(len(d))
		s.dropHeld(pd.Page)
		if pg.state == Invalid && len(pg.pending) == 0 && pg.fetching == 0 && pg.home.moved == nil {
			s.validated(pd.Page)
		}
	}
	return s.serveQueued()
}

// dropHeld drops the pending notices of page p that its copy now holds.
func (s *State) dropHeld(p uint32) {
	pg := s.pages.at(p)
	kept := pg.pending[:0]
	for _, id := range pg.pending {
		if !s.holds(p, id) {
			kept = append(kept, id)
		}
	}
	pg.pending = kept
}

// homePlan groups the pages to fetch by the rank to ask.
type homePlan struct {
	byRank map[int][]protocol.PageNeed
}

func (s *State) newHomePlan() *homePlan {
	return &homePlan{byRank: make(map[int][]protocol.PageNeed)}
}

// source returns the rank to fetch invalid page p from, or -1 when the copy
// here is completed by diffs on their way (this rank is home).
func (s *State) source(p uint32) int {
	pg := s.pages.at(p)
	switch {
	case pg.home.moved != nil:
		return int(pg.home.moved.from)
	case s.homedHere(p):
		return -1
	}
	return s.homeOf(p)
}

// need returns the newest pending notice of each writer of page p, in rank
// order; from the previous home, only those up to the move.
func (s *State) need(p uint32) []protocol.IntervalID {
	var need []protocol.IntervalID
	pg := s.pages.at(p)
	for _, id := range pg.pending {
		if pg.home.moved != nil && id.Index > pg.home.moved.upTo[id.Rank] {
			continue
		}
		i, found := slices.BinarySearchFunc(need, id.Rank, func(a protocol.IntervalID, r int) int { return a.Rank - r })
		switch {
		case !found:
			need = slices.Insert(need, i, id)
		case need[i].Index < id.Index:
			need[i] = id
		}
	}
	return need
}

// planHomePage adds invalid page p to a plan, unless diffs on their way
// complete it.
func (s *State) planHomePage(pl *homePlan, p uint32) {
	if src := s.source(p); src >= 0 {
		pl.byRank[src] = append(pl.byRank[src], protocol.PageNeed{Page: p, Need: s.need(p)})
	}
}

// addHomePrefetch adds to a fault's plan the invalid pages after the faulting
// one that the same rank supplies, up to PrefetchLimit, stopping at the first
// that it does not, and passing over those an earlier prefetch brought for
// nothing (past a boundary column, say: each costs its home a copy and a
// write protection).
func (s *State) addHomePrefetch(pl *homePlan, primary uint32) {
	src := s.source(primary)
	if src < 0 {
		return
	}
	for q := primary + 1; uint64(q) < uint64(s.cfg.Pages) && q-primary <= uint32(s.cfg.PrefetchLimit); q++ {
		pg := s.pages.at(q)
		if pg.state != Invalid || pg.fetching > 0 || s.source(q) != src {
			break
		}
		if pg.want != wantNone || pg.home.refresh || pg.home.unwanted {
			continue
		}
		pg.home.ahead = true
		pl.byRank[src] = append(pl.byRank[src], protocol.PageNeed{Page: q, Need: s.need(q)})
		s.stats.Prefetched++
	}
}

// sendHomePlan turns a plan into one page request per rank asked (more only
// for more than maxRequestPages pages).
func (s *State) sendHomePlan(pl *homePlan) {
	for _, r := range slices.Sorted(maps.Keys(pl.byRank)) {
		pages := pl.byRank[r]
		slices.SortFunc(pages, func(a, b protocol.PageNeed) int { return int(a.Page) - int(b.Page) })
		for len(pages) > 0 {
			n := min(len(pages), maxRequestPages)
			chunk := pages[:n:n]
			pages = pages[n:]
			s.nextReqID++
			id := s.nextReqID
			s.requests[id] = &request{to: r, needs: chunk}
			for _, pn := range chunk {
				s.pages.at(pn.Page).fetching++
			}
			s.sendMsg(r, &protocol.PageRequest{ID: id, Pages: chunk, Epoch: s.homes.epochs})
		}
	}
}

// HandlePageRequest answers rank from's request for whole pages once this
// rank's copies hold what it needs, queueing it until then. Each page it
// sends is exported first: write-protected if the application here writes
// it untracked, so that a write after the copy becomes a notice. The
// response's page data is then this rank's memory itself: the caller sends
// it after carrying out the actions that came with it, which makes the copy
// taken after the protection. A page with a twin goes as its twin.
func (s *State) HandlePageRequest(from int, m *protocol.PageRequest) error {
	if !s.cfg.Homes {
		return fmt.Errorf("page request from rank %d without the home-based protocol", from)
	}
	if m.Epoch > s.homes.epochs {
		s.homes.early = append(s.homes.early, early{from, m})
		return nil
	}
	for _, pn := range m.Pages {
		if err := s.checkPage(pn.Page); err != nil {
			return fmt.Errorf("page request %d from rank %d: %w", m.ID, from, err)
		}
		if s.homeVersion(pn.Page) == nil {
			return fmt.Errorf("page request %d from rank %d: page %d, which rank %d is not home of", m.ID, from, pn.Page, s.cfg.Rank)
		}
	}
	if !s.canServe(m) {
		s.homes.queued = append(s.homes.queued, queuedRequest{from: from, m: m})
		return nil
	}
	s.serve(from, m)
	return nil
}

func (s *State) canServe(m *protocol.PageRequest) bool {
	for _, pn := range m.Pages {
		for _, id := range pn.Need {
			if !s.holds(pn.Page, id) {
				return false
			}
		}
	}
	return true
}

func (s *State) serve(from int, m *protocol.PageRequest) {
	resp := &protocol.PageResponse{ID: m.ID, Pages: make([]protocol.PageCopy, 0, len(m.Pages))}
	for _, pn := range m.Pages {
		if s.homedHere(pn.Page) && s.pushesTo(from) {
			s.pages.at(pn.Page).home.pushTo |= 1 << from
		}
		resp.Pages = append(resp.Pages, protocol.PageCopy{Page: pn.Page, Data: s.export(pn.Page)})
	}
	s.sendMsg(from, resp)
}

// refreshLimit is how many in-place refreshes in a row the page may have.
func (h *homePage) refreshLimit() uint8 {
	if h.limit == 0 {
		return maxRefreshes
	}
	return h.limit
}

// faultedIn notes that the application faulted the page in: it is in use.
// After a drop at its refresh limit, that doubles the limit.
func (h *homePage) faultedIn() {
	h.refreshes = 0
	if h.atLimit {
		h.atLimit = false
		h.limit = uint8(min(2*int(h.refreshLimit()), maxRefreshLimit))
	}
}

// pushesTo reports whether this rank, as a home, pushes pages to rank r.
func (s *State) pushesTo(r int) bool {
	return r < maxPushRanks && (s.cfg.Colocated == nil || !s.cfg.Colocated[r])
}

// export returns this rank's copy of page p to send to another rank,
// write-protecting the page first if the application here writes it
// untracked, so that a write after the copy becomes a notice. The copy is
// this rank's memory itself: it is taken as the message is sent, after the
// actions that came with it.
func (s *State) export(p uint32) []byte {
	pg := s.pages.at(p)
	if pg.home.private {
		pg.home.private = false
		s.touch(p)
		if s.inPlace(p) && pg.state == ReadWrite {
			s.act(ActWriteProtect, p)
			pg.state = ReadOnly
		}
	}
	if s.cfg.AsyncWrites && s.inPlace(p) && !pg.home.fetched {
		// Tracked from now on. A page written in the open interval may be
		// mapped writable: its close keeps it exported all the same, and
		// the application's next scan reports it, written or not.
		pg.home.fetched = true
		s.touch(p)
	}
	if pg.twin != nil {
		// Writes of the open interval are half done, and a close that
		// finds the page unchanged sends no notice: the copy is the page
		// as the last close left it, with others' diffs since.
		return slices.Clone(pg.twin)
	}
	return s.pageBytes(p)
}

// PushWritten runs as this rank arrives at a barrier of every rank, after
// closing its interval: it pushes each page it is home of and wrote since
// the last such barrier to the ranks it sent the page to, one PagePush per
// rank, but for the ranks colocated with it.
func (s *State) PushWritten() {
	if !s.cfg.Homes || s.cfg.Colocated != nil && !slices.Contains(s.cfg.Colocated, false) {
		return // every rank shares this one's engine: nobody to push to
	}
	self := s.cfg.Rank
	var written []uint32
	for _, iv := range s.log[self] {
		if iv.ID.Index <= s.homes.epoch[self] {
			continue
		}
		for p := range protocol.Pages(iv.Pages) {
			pg := s.pages.at(p)
			if pg.home.pushTo != 0 && s.homedHere(p) && s.homeVersion(p) != nil && pg.home.moved == nil {
				written = append(written, p)
			}
		}
	}
	if len(written) == 0 {
		return
	}
	slices.Sort(written)
	written = slices.Compact(written)
	to := make(map[int][]protocol.PushedPage)
	for _, p := range written {
		pg := s.pages.at(p)
		pp := protocol.PushedPage{Page: p, Holds: s.heldBy(s.homeVersion(p)), Data: s.export(p)}
		for r := range min(s.cfg.NProcs, maxPushRanks) {
			if pg.home.pushTo&(1<<r) != 0 {
				to[r] = append(to[r], pp)
			}
		}
	}
	for _, r := range slices.Sorted(maps.Keys(to)) {
		s.sendMsg(r, &protocol.PagePush{Epoch: s.homes.epochs, Pages: to[r]})
	}
}

// heldBy returns, for each rank, the newest interval up to which a copy at
// version v, at this rank, holds every interval of that rank.
func (s *State) heldBy(v *version) protocol.VectorTime {
	holds := make(protocol.VectorTime, s.cfg.NProcs)
	if v.base != nil {
		copy(holds, v.base)
	}
	for _, a := range v.applied {
		holds[a.Rank] = max(holds[a.Rank], a.Index)
	}
	holds[s.cfg.Rank] = s.vt[s.cfg.Rank]
	return holds
}

// HandlePagePush keeps the pages rank from pushed for this rank to take as
// it leaves the barrier the push was made for; a push that comes after
// that is dropped (the pages were asked for instead).
func (s *State) HandlePagePush(from int, m *protocol.PagePush) error {
	if !s.cfg.Homes {
		return fmt.Errorf("page push from rank %d without the home-based protocol", from)
	}
	for _, pp := range m.Pages {
		if err := s.checkPage(pp.Page); err != nil {
			return fmt.Errorf("page push from rank %d: %w", from, err)
		}
		if len(pp.Data) != s.cfg.PageSize || len(pp.Holds) != s.cfg.NProcs {
			return fmt.Errorf("page push from rank %d: page %d with %d bytes and %d ranks' versions, want %d and %d", from, pp.Page, len(pp.Data), len(pp.Holds), s.cfg.PageSize, s.cfg.NProcs)
		}
	}
	switch {
	case m.Epoch > s.homes.epochs:
		s.homes.early = append(s.homes.early, early{from, m})
		return nil
	case m.Epoch < s.homes.epochs:
		return nil
	}
	for _, pp := range m.Pages {
		pg := s.pages.at(pp.Page)
		if pg.home.pushed == nil {
			s.homes.pushed = append(s.homes.pushed, pp.Page)
		}
		pg.home.pushed = &pushedCopy{from: from, epoch: m.Epoch, holds: pp.Holds, data: pp.Data}
	}
	return nil
}

// HandlePushStop stops pushing pages to rank from.
func (s *State) HandlePushStop(from int, m *protocol.PushStop) error {
	if !s.cfg.Homes {
		return fmt.Errorf("push stop from rank %d without the home-based protocol", from)
	}
	for _, p := range m.Pages {
		if err := s.checkPage(p); err != nil {
			return fmt.Errorf("push stop from rank %d: %w", from, err)
		}
	}
	for _, p := range m.Pages {
		s.pages.at(p).home.pushTo &^= 1 << from
	}
	return nil
}

// pushCovers reports whether stale page p has a copy its home pushed for
// the barrier this rank is leaving that holds every notice the page waits
// for and this rank's own diffs sent home.
func (s *State) pushCovers(p uint32) bool {
	pg := s.pages.at(p)
	pp := pg.home.pushed
	if pp == nil || pp.epoch+1 != s.homes.epochs || s.homedHere(p) || pg.home.moved != nil || pg.fetching > 0 {
		return false
	}
	if pg.home.sentUpTo > pp.holds[s.cfg.Rank] {
		return false
	}
	for _, id := range pg.pending {
		if id.Index > pp.holds[id.Rank] {
			return false
		}
	}
	return true
}

// takePush makes page p current from the copy its home pushed (pushCovers
// said it may) and validates it: in place if it is being refreshed, else
// left unmapped (TakeZap drops it from the application), so that a fault
// that shows it still in use costs no fetch.
func (s *State) takePush(p uint32) {
	pg := s.pages.at(p)
	s.takeCopy(p, pg.home.pushed.data)
	if s.homeVersion(p) != nil {
		s.noteHolds(p, pg.pending...)
	}
	pg.pending = pg.pending[:0]
	pg.home.pushed = nil
	s.stats.Pushed++
	if pg.home.refresh {
		s.validated(p)
		return
	}
	// Validated as an unmapped page, then marked stale again: still mapped
	// in the application, it is dropped there by TakeZap.
	pg.stale = false
	s.validated(p)
	pg.stale = true
}

// dropPushes forgets the pushes made for a barrier this rank has left and
// did not take, telling each home to stop pushing the pages not kept in use
// here.
func (s *State) dropPushes() {
	if len(s.homes.pushed) == 0 {
		return
	}
	stop := make(map[int][]uint32)
	kept := s.homes.pushed[:0]
	for _, p := range s.homes.pushed {
		pg := s.pages.at(p)
		pp := pg.home.pushed
		switch {
		case pp == nil:
			continue // taken
		case pp.epoch >= s.homes.epochs:
			kept = append(kept, p) // for a barrier ahead
			continue
		}
		pg.home.pushed = nil
		mapped := pg.state == ReadOnly || pg.state == ReadWrite || pg.stale && pg.home.refresh
		if !mapped {
			stop[pp.from] = append(stop[pp.from], p)
		}
	}
	clear(s.homes.pushed[len(kept):])
	s.homes.pushed = kept
	for _, r := range slices.Sorted(maps.Keys(stop)) {
		pages := stop[r]
		slices.Sort(pages)
		s.sendMsg(r, &protocol.PushStop{Pages: pages})
	}
}

// takeCopy replaces this rank's copy of page p with data, keeping the writes
// of the open interval (those that differ from the twin).
func (s *State) takeCopy(p uint32, data []byte) {
	pg := s.pages.at(p)
	page := s.pageBytes(p)
	if pg.twin == nil {
		copy(page, data)
		return
	}
	// The twin takes the copy from the page, not from the data: read twice,
	// data that is the sender's memory could differ.
	local := s.createDiff(p)
	copy(page, data)
	copy(pg.twin, page)
	_ = local.ApplyValidated(page) // made from this page's twin
}

// serveQueued answers the queued requests this rank's copies now satisfy.
func (s *State) serveQueued() error {
	kept := s.homes.queued[:0]
	for _, q := range s.homes.queued {
		if s.canServe(q.m) {
			s.serve(q.from, q.m)
		} else {
			kept = append(kept, q)
		}
	}
	clear(s.homes.queued[len(kept):])
	s.homes.queued = kept
	return nil
}

// HandlePageResponse takes whole pages that rank from sent for one of this
// rank's requests: each replaces this rank's copy, keeping the writes of the
// open interval (those that differ from the twin), and is mapped for the
// accesses waiting on it once no notice is missing.
func (s *State) HandlePageResponse(from int, m *protocol.PageResponse) error {
	req := s.requests[m.ID]
	if req == nil || req.needs == nil {
		return fmt.Errorf("page response %d from rank %d answers no outstanding request", m.ID, from)
	}
	if err := s.checkPageResponse(req, from, m); err != nil {
		return fmt.Errorf("page response %d from rank %d: %w", m.ID, from, err)
	}
	delete(s.requests, m.ID)
	for i, pc := range m.Pages {
		p := pc.Page
		pg := s.pages.at(p)
		page := s.pageBytes(p)
		s.takeCopy(p, pc.Data)
		// A push that came before this copy, from the same home, is older:
		// taking it later would lose writes this copy has.
		pg.home.pushed = nil
		for _, d := range pg.home.late {
			_ = d.ApplyValidated(page) // validated as it came
			if pg.twin != nil {
				_ = d.ApplyValidated(pg.twin)
			}
		}
		s.stats.PagesFetched++
		kept := pg.pending[:0]
		for _, id := range pg.pending {
			if !covered(req.needs[i].Need, id) {
				kept = append(kept, id)
			}
		}
		pg.pending = kept
		if s.homeVersion(p) != nil {
			s.noteHolds(p, req.needs[i].Need...)
			if pg.home.moved != nil && !slices.ContainsFunc(pg.pending, func(id protocol.IntervalID) bool {
				return id.Index <= pg.home.moved.upTo[id.Rank]
			}) {
				// Home here since: the copy holds all the previous home
				// had to give; later diffs come here, and those that came
				// while the copy was on its way are on it again.
				pg.home.moved = nil
				s.dropHeld(p)
			}
		}
		pg.fetching--
		if pg.fetching > 0 {
			continue
		}
		pg.home.late = nil
		if len(pg.pending) == 0 {
			s.validated(p)
		} else if pg.want != wantNone || pg.home.refresh || pg.home.moved != nil {
			// Notices came while the request was out.
			pl := s.newHomePlan()
			s.planHomePage(pl, p)
			s.sendHomePlan(pl)
		}
	}
	return s.serveQueued()
}

// covered reports whether need, one interval per writer, reaches id.
func covered(need []protocol.IntervalID, id protocol.IntervalID) bool {
	for _, n := range need {
		if n.Rank == id.Rank {
			return id.Index <= n.Index
		}
	}
	return false
}

func (s *State) checkPageResponse(req *request, from int, m *protocol.PageResponse) error {
	if req.to != from {
		return fmt.Errorf("the request went to rank %d", req.to)
	}
	if len(m.Pages) != len(req.needs) {
		return fmt.Errorf("%d pages answered, %d asked", len(m.Pages), len(req.needs))
	}
	for i, pc := range m.Pages {
		if pc.Page != req.needs[i].Page {
			return fmt.Errorf("page %d answered where page %d was asked", pc.Page, req.needs[i].Page)
		}
		if len(pc.Data) != s.cfg.PageSize {
			return fmt.Errorf("page %d: %d bytes answered for a %d-byte page", pc.Page, len(pc.Data), s.cfg.PageSize)
		}
	}
	return nil
}

// StartRefresh begins bringing up to date, in place, the pages the acquire
// just made invalid that the application has mapped and keeps using: from
// the copies their homes pushed, leaving a barrier of every rank, or one
// request per rank that supplies them (the diffs home here come by
// themselves). Refreshing reports when they are done; the others are
// dropped (TakeZap).
func (s *State) StartRefresh() {
	if !s.cfg.Homes {
		return
	}
	pl := s.newHomePlan()
	for _, p := range s.staleList {
		pg := s.pages.at(p)
		if !pg.stale || pg.home.refresh {
			continue
		}
		if pg.home.refreshes >= pg.home.refreshLimit() {
			pg.home.atLimit = true
			// Dropped until a fault shows it still in use. A funneled
			// application cannot touch it before it is dropped, so a
			// push at hand can make it current, unmapped.
			if s.cfg.Funneled && !pg.staleRW && s.pushCovers(p) {
				s.takePush(p)
			}
			continue
		}
		pg.home.refresh = true
		pg.home.refreshes++
		s.homes.refreshing++
		switch {
		case pg.fetching > 0:
		case s.pushCovers(p):
			s.takePush(p)
		default:
			s.planHomePage(pl, p)
		}
	}
	s.sendHomePlan(pl)
	s.dropPushes()
}

// Refreshing reports whether pages StartRefresh began are still on their way.
func (s *State) Refreshing() bool { return s.homes.refreshing > 0 }

// EndEpoch runs as this rank leaves a barrier of every rank, after merging
// its intervals, when every rank knows the history up to epoch, the vector
// time the barrier gathered (this rank may have closed one more interval
// since: writes of other threads during the wait): it applies the placements
// (merged, in order) and moves the home of each page that one rank alone
// wrote since the last such barrier to it (the first time, or the second
// time in a row: see pageHome.alone), then drops the interval history up to
// epoch.
func (s *State) EndEpoch(placements []protocol.HomeRange, epoch protocol.VectorTime) error {
	if !s.cfg.Homes {
		return nil
	}
	if len(epoch) != s.cfg.NProcs || !s.vt.Dominates(epoch) || !epoch.Dominates(s.homes.epoch) {
		return fmt.Errorf("barrier at vector time %v, but rank %d is at %v and left the last one at %v", epoch, s.cfg.Rank, s.vt, s.homes.epoch)
	}
	if err := checkPlacements(placements, s.cfg); err != nil {
		return err
	}
	epoch = epoch.Clone()
	s.homes.atEpoch = nil
	var written []rankRange
	for r := range s.cfg.NProcs {
		for _, iv := range s.log[r] {
			if iv.ID.Index <= s.homes.epoch[r] || iv.ID.Index > epoch[r] {
				continue
			}
			for _, pr := range iv.Pages {
				written = append(written, rankRange{pr, int32(r)})
			}
		}
	}
	// A page this rank is home of now without a current copy comes from
	// the previous home at once: requests for it wait here meanwhile.
	pl := s.newHomePlan()
	for _, h := range placements {
		for p := h.First; p < h.First+h.Count; p++ {
			if ph := s.homes.of.peek(p); h.Soft && ph != nil && ph.placed {
				continue // a first guess yields to a placement made before
			}
			if !h.Soft {
				s.homes.of.at(p).placed = true
			}
			s.moveHome(pl, p, int32(h.Rank), epoch)
		}
	}
	for _, run := range writers(written, s.cfg.NProcs) {
		w, alone := run.writer, int32(-1)
		if w >= 0 {
			alone = w + 1
		}
		for q := run.first; q < run.end; q++ {
			p := uint32(q)
			h := s.homes.of.at(p)
			if w >= 0 && !h.placed && (h.alone == 0 || h.alone == alone) {
				s.moveHome(pl, p, w, epoch)
			}
			h.alone = alone
		}
	}
	s.sendHomePlan(pl)
	s.homes.epoch = epoch
	s.homes.epochs++
	for r := range s.cfg.NProcs {
		k := int(epoch[r] - s.base[r])
		for _, iv := range s.log[r][:k] {
			s.metadata -= intervalSize(iv)
		}
		s.log[r] = slices.Clone(s.log[r][k:])
		s.base[r] = epoch[r]
	}
	return s.handleEarly()
}

// handleEarly handles the held messages whose senders this rank has caught up
// with.
func (s *State) handleEarly() error {
	held := s.homes.early
	s.homes.early = nil
	for _, e := range held {
		var err error
		switch m := e.m.(type) {
		case *protocol.PageRequest:
			err = s.HandlePageRequest(e.from, m)
		case *protocol.HomeDiffs:
			err = s.HandleHomeDiffs(e.from, m)
		case *protocol.PagePush:
			err = s.HandlePagePush(e.from, m)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func checkPlacements(placements []protocol.HomeRange, cfg Config) error {
	for _, h := range placements {
		if h.Count == 0 || uint64(h.First)+uint64(h.Count) > uint64(cfg.Pages) || h.Rank < 0 || h.Rank >= cfg.NProcs {
			return fmt.Errorf("home placement of pages [%d,+%d) at rank %d does not fit the job", h.First, h.Count, h.Rank)
		}
	}
	return nil
}

// moveHome makes rank to the home of page p; a copy this rank must fetch
// goes into pl.
func (s *State) moveHome(pl *homePlan, p uint32, to int32, epoch protocol.VectorTime) {
	from := int32(s.homeOf(p))
	if from == to {
		return
	}
	s.homes.of.at(p).to = to + 1
	pg := s.pages.at(p)
	pg.home.pushTo = 0
	s.touch(p)
	self := int32(s.cfg.Rank)
	switch self {
	case to:
		s.stats.HomeMigrations++
		// A copy with no notice missing holds every interval up to this
		// barrier: it is the master now. One that lacks some fetches them
		// from the previous home, which holds them or will.
		if v := s.homeVersion(p); v != nil && !v.shared {
			v.base = epoch
		} else {
			if s.homes.atEpoch == nil {
				s.homes.atEpoch = &version{base: epoch, shared: true}
			}
			pg.home.ver = s.homes.atEpoch
		}
		if pg.state == Invalid {
			pg.home.moved = &homeMove{from: from, upTo: epoch}
			if pg.fetching == 0 {
				s.planHomePage(pl, p)
			}
		}
		pg.home.private = false
		if !s.cfg.Funneled {
			return // twinned and compared as before; only its diffs stay here
		}
		// Written in place from now on, tracked while a copy may be
		// elsewhere. A funneled rank has no writes of the open interval
		// here: hot pages were unchanged in the interval the barrier closed.
		if pg.state == ReadWrite && !pg.protected {
			s.act(ActWriteProtect, p)
		}
		if pg.state == ReadWrite {
			pg.state = ReadOnly
		}
		pg.protected = false
		pg.idle = 0
		s.dirty = slices.DeleteFunc(s.dirty, func(q uint32) bool { return q == p })
		s.dropTwin(pg)
	case from:
		// No longer the master: a copy like any other. Its version stays,
		// for requests and diffs still on their way.
		pg.home.private = true
		if !s.cfg.Funneled {
			return // twinned already
		}
		switch pg.state {
		case ReadWrite:
			s.act(ActWriteProtect, p)
			pg.state = ReadOnly
			fallthrough
		case ReadOnly:
			if s.cfg.AsyncWrites {
				s.takeTwin(p)
			}
		}
	}
}
