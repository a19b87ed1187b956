package lrc

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/svmcluster/svm/diff"
	"github.com/svmcluster/svm/protocol"
)

// request is a diff request (pages) or a page request (needs) that is out.
type request struct {
	to    int
	pages []protocol.PageIntervals
	needs []protocol.PageNeed
}

// plan groups the diffs to fetch by the writer to ask.
type plan struct {
	byRank [][]protocol.PageIntervals
}

func (s *State) newPlan() *plan {
	return &plan{byRank: make([][]protocol.PageIntervals, s.cfg.NProcs)}
}

// sources assigns each pending write notice of page p to the rank to ask for
// its diff. Only writers whose newest pending interval no other writer's
// dominates are asked: a writer whose interval follows another's applied that
// one's diff before writing, and holds it.
func (s *State) sources(p uint32) [][]protocol.IntervalID {
	pg := s.pages.at(p)
	n := s.cfg.NProcs
	newest := make([]*protocol.Interval, n)
	for _, id := range pg.pending {
		if newest[id.Rank] == nil || newest[id.Rank].ID.Index < id.Index {
			newest[id.Rank] = s.interval(id)
		}
	}
	var asked []*protocol.Interval
	for w, iv := range newest {
		if iv == nil {
			continue
		}
		dominated := false
		for x, other := range newest {
			if x != w && other != nil && other.VT[w] >= iv.ID.Index {
				dominated = true
				break
			}
		}
		if !dominated {
			asked = append(asked, iv)
		}
	}
	byRank := make([][]protocol.IntervalID, n)
	for _, id := range pg.pending {
		for _, iv := range asked {
			if iv.VT.Covers(id) {
				byRank[iv.ID.Rank] = append(byRank[iv.ID.Rank], id)
				break
			}
		}
	}
	for _, ids := range byRank {
		slices.SortFunc(ids, compareID)
	}
	return byRank
}

func compareID(a, b protocol.IntervalID) int {
	return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Index, b.Index))
}

// planPage adds page p's missing diffs to a plan, and for a dropped page a
// request for the keeper's copy.
func (s *State) planPage(pl *plan, p uint32) {
	base := -1
	if s.pages.at(p).state == Absent {
		base = int(s.keeper[p])
	}
	for r, ids := range s.sources(p) {
		if len(ids) > 0 || r == base {
			pl.byRank[r] = append(pl.byRank[r], protocol.PageIntervals{Page: p, Intervals: ids, Base: r == base})
		}
	}
}

// A homeless prefetch adds to a fault's request the invalid pages that were
// in use and that the intervals the faulting page lacks wrote, no others:
// the rows of a neighbour's boundary, the blocks of a transpose, written
// together and read together. A page the same writer wrote at another time
// (quicksort's queue is written by every rank at every visit) says nothing
// of what the application reads next.
//
// Among those pages, some have moved on to another rank since this rank
// wrote them (a quicksort subarray handed over through the queue). Some
// programs read such pages again (integer sort's shared buckets, summed
// under a lock, then read by every rank), others do not (quicksort's workers
// go on to other subarrays, and the diffs cost a page each): they are
// prefetched on credit, by how many of them earlier prefetches brought for
// the application to fault on, and how many were invalidated again
// untouched.
const (
	// prefetchWindow: with many candidates, a fault considers those within
	// this many times PrefetchLimit pages of it first.
	prefetchWindow = 4
	// movedWindow: the counts are halved as they reach it, so that they
	// follow the rank's recent accesses.
	movedWindow = 256
	// movedProbe: without credit, one fault in this many of those that could
	// prefetch a page that moved on still prefetches one, to see whether
	// they are used again.
	movedProbe = 8
)

// movedOn reports whether page p's pending writes include one that followed
// a write of this rank's to it (homeless).
func (s *State) movedOn(p uint32) bool {
	own := uint32(0)
	for _, h := range s.homeless.at(p).diffs {
		if h.id.Rank == s.cfg.Rank {
			own = max(own, h.id.Index)
		}
	}
	if own == 0 {
		return false
	}
	for _, id := range s.pages.at(p).pending {
		if s.interval(id).VT[s.cfg.Rank] >= own {
			return true
		}
	}
	return false
}

// movedLimit is how many pages that moved on the fault under way may
// prefetch: as many as the used outnumber the unused and those whose use is
// still unknown, or one on a probe.
func (s *State) movedLimit() int {
	if credit := s.movedUsed - s.movedUnused - s.movedUnknown; credit > 0 {
		return credit
	}
	if s.sinceMovedProbe++; s.sinceMovedProbe >= movedProbe {
		return 1
	}
	return 0
}

// prefetchOutcome counts a page that moved on and was prefetched as used
// (faulted on) or not (invalidated again untouched).
func (s *State) prefetchOutcome(used bool) {
	s.movedUnknown--
	if used {
		s.movedUsed++
	} else {
		s.movedUnused++
	}
	if s.movedUsed+s.movedUnused >= movedWindow {
		s.movedUsed /= 2
		s.movedUnused /= 2
	}
}

// writtenWith reports whether every write page q lacks is one that page p
// lacks too: the same intervals wrote both.
func (s *State) writtenWith(q, p uint32) bool {
	for _, id := range s.pages.at(q).pending {
		if !slices.Contains(s.pages.at(p).pending, id) {
			return false
		}
	}
	return true
}

// addPrefetch adds to a fault's plan up to PrefetchLimit invalid pages that
// were in use, that the intervals the faulting page lacks wrote and whose
// diffs only the writers already asked need to supply, the nearest to the
// faulting page first, those that moved on within movedLimit.
func (s *State) addPrefetch(pl *plan, primary uint32) {
	kept := s.usedList[:0]
	candidates := s.prefetchScratch[:0]
	for _, q := range s.usedList {
		pg := s.pages.at(q)
		if !pg.used {
			pg.listed = false
			continue
		}
		kept = append(kept, q)
		if q != primary && pg.state == Invalid && pg.fetching == 0 && s.writtenWith(q, primary) {
			candidates = append(candidates, q)
		}
	}
	clear(s.usedList[len(kept):])
	s.usedList = kept
	distance := func(q uint32) uint32 { return max(q, primary) - min(q, primary) }
	if window := uint32(prefetchWindow * s.cfg.PrefetchLimit); len(candidates) > 2*int(window) {
		// Many to choose from (a large array rewritten whole): if enough
		// lie near the fault, only those are sorted, so that each fault of
		// a sweep over the array costs a pass over the candidates, not a
		// sort of them all.
		near := 0
		for _, q := range candidates {
			if distance(q) <= window {
				near++
			}
		}
		if near >= s.cfg.PrefetchLimit {
			candidates = slices.DeleteFunc(candidates, func(q uint32) bool { return distance(q) > window })
		}
	}
	slices.SortFunc(candidates, func(a, b uint32) int { return cmp.Compare(distance(a), distance(b)) })
	added, moved, movedLimit := 0, 0, -1
	for _, q := range candidates {
		if added == s.cfg.PrefetchLimit {
			break
		}
		covered := true
		for r, ids := range s.sources(q) {
			if len(ids) > 0 && len(pl.byRank[r]) == 0 {
				covered = false
				break
			}
		}
		if !covered {
			continue
		}
		if s.movedOn(q) {
			if movedLimit < 0 {
				movedLimit = s.movedLimit()
			}
			if moved == movedLimit {
				continue
			}
			moved++
			s.homeless.at(q).movedAhead = true
			s.movedUnknown++
		}
		s.planPage(pl, q)
		added++
		s.stats.Prefetched++
	}
	s.prefetchScratch = candidates[:0]
	if moved > 0 {
		s.sinceMovedProbe = 0
	}
}

// maxRequestPages bounds the pages one diff request names, so that a
// response (at most a diff per page and interval) stays a few megabytes even
// when a rank validates its whole region.
const maxRequestPages = 256

// send turns a plan into one diff request per writer (more only for more
// than maxRequestPages pages).
func (s *State) send(pl *plan) {
	for r, pages := range pl.byRank {
		slices.SortFunc(pages, func(a, b protocol.PageIntervals) int { return cmp.Compare(a.Page, b.Page) })
		for len(pages) > 0 {
			chunk := pages[:min(len(pages), maxRequestPages):min(len(pages), maxRequestPages)]
			pages = pages[len(chunk):]
			s.nextReqID++
			id := s.nextReqID
			s.requests[id] = &request{to: r, pages: chunk}
			for _, pi := range chunk {
				s.pages.at(pi.Page).fetching++
			}
			s.out.Messages = append(s.out.Messages, protocol.Envelope{
				From: s.cfg.Rank, To: r,
				Msg: &protocol.DiffRequest{ID: id, Pages: chunk},
			})
		}
	}
}

// HandleDiffRequest answers rank from's request for diffs with the diffs this
// rank made or holds.
func (s *State) HandleDiffRequest(from int, m *protocol.DiffRequest) error {
	if s.cfg.Homes {
		return fmt.Errorf("diff request %d from rank %d with the home-based protocol", m.ID, from)
	}
	resp := &protocol.DiffResponse{ID: m.ID, Pages: make([]protocol.PageDiffs, 0, len(m.Pages))}
	for _, pr := range m.Pages {
		if err := s.checkPage(pr.Page); err != nil {
			return fmt.Errorf("diff request %d from rank %d: %w", m.ID, from, err)
		}
		pd := protocol.PageDiffs{Page: pr.Page, Diffs: make([]protocol.IntervalDiff, 0, len(pr.Intervals))}
		s.homeless.at(pr.Page).joinable = 0 // the asker has this rank's writes of the page so far
		if pr.Base {
			pg := s.pages.at(pr.Page)
			switch {
			case pg.state == Absent:
				return fmt.Errorf("diff request %d from rank %d: page %d asked of rank %d, which dropped it", m.ID, from, pr.Page, s.cfg.Rank)
			case pg.twin != nil:
				// The open interval's writes are half done: a byte written
				// and written back would be in the copy and in no diff.
				pd.Base = slices.Clone(pg.twin)
			default:
				pd.Base = slices.Clone(s.pageBytes(pr.Page))
			}
		}
		for _, id := range pr.Intervals {
			d, err := s.diffOf(pr.Page, id)
			if err != nil {
				return fmt.Errorf("diff request %d from rank %d: %w", m.ID, from, err)
			}
			pd.Diffs = append(pd.Diffs, protocol.IntervalDiff{Interval: id, Diff: d})
		}
		if err := s.squash(pd.Diffs); err != nil {
			return fmt.Errorf("diff request %d from rank %d: page %d: %w", m.ID, from, pr.Page, err)
		}
		resp.Pages = append(resp.Pages, pd)
	}
	s.out.Messages = append(s.out.Messages, protocol.Envelope{From: s.cfg.Rank, To: from, Msg: resp})
	return nil
}

// squash empties, among the diffs of one page answered together, each diff
// whose bytes the diffs of later intervals (those it happens before) all
// write again: the requester applies them in happens-before order, so it
// ends with the same page, and migratory data stops carrying every earlier
// holder's diff.
//
// The requester keeps the empty diff in place of the squashed one. That is
// safe: a rank that later asks it for that interval lacks the later ones
// too (whoever applied a later diff applied the earlier ones with it), and
// knows them (it asks because of an interval the requester wrote after
// applying them all), so it applies them on top as well.
func (s *State) squash(ds []protocol.IntervalDiff) error {
	if len(ds) < 2 {
		return nil
	}
	cov := diff.NewCoverage(s.cfg.PageSize)
	var squashed []int
	for i := range ds {
		if len(ds[i].Diff) == 0 {
			continue
		}
		vt := s.interval(ds[i].Interval).VT
		cov.Reset()
		later := false
		for j := range ds {
			if j != i && s.interval(ds[j].Interval).VT.Dominates(vt) {
				if err := cov.Add(ds[j].Diff); err != nil {
					return err
				}
				later = true
			}
		}
		if !later {
			continue
		}
		covered, err := cov.Covers(ds[i].Diff)
		if err != nil {
			return err
		}
		if covered {
			squashed = append(squashed, i)
		}
	}
	// Empty them only now: a squashed diff may still cover earlier ones.
	for _, i := range squashed {
		s.stats.DiffsSquashed++
		s.stats.DiffBytesSquashed += int64(len(ds[i].Diff))
		ds[i].Diff = nil
	}
	return nil
}

func (s *State) diffOf(p uint32, id protocol.IntervalID) (diff.Diff, error) {
	if h := s.homeless.at(p).find(id); h != nil {
		return h.d, nil
	}
	return nil, fmt.Errorf("rank %d holds no diff of page %d for interval %v", s.cfg.Rank, p, id)
}

// find returns the diff of interval id held for the page, nil if none.
func (hp *homelessPage) find(id protocol.IntervalID) *held {
	for i := range hp.diffs {
		if hp.diffs[i].id == id {
			return &hp.diffs[i]
		}
	}
	return nil
}

// HandleDiffResponse takes the diffs rank from sent for one of this rank's
// requests. A page whose requests have all been answered gets its diffs
// applied in happens-before order and is mapped for the accesses waiting.
func (s *State) HandleDiffResponse(from int, m *protocol.DiffResponse) error {
	req := s.requests[m.ID]
	if req == nil || req.needs != nil {
		return fmt.Errorf("diff response %d from rank %d answers no outstanding request", m.ID, from)
	}
	if err := s.checkResponse(req, from, m); err != nil {
		return fmt.Errorf("diff response %d from rank %d: %w", m.ID, from, err)
	}
	delete(s.requests, m.ID)
	for _, pd := range m.Pages {
		pg := s.pages.at(pd.Page)
		if pd.Base != nil {
			// The keeper's copy replaces the dropped one; the diffs that
			// came since go on top of it when the page settles.
			copy(s.pageBytes(pd.Page), pd.Base)
			if pg.twin != nil {
				copy(pg.twin, pd.Base)
			}
			pg.state = Invalid
			s.invalid++
			s.stats.Refetched++
		}
		hp := s.homeless.at(pd.Page)
		for _, d := range pd.Diffs {
			hp.diffs = append(hp.diffs, held{id: d.Interval, d: d.Diff})
			s.metadata += int64(len(d.Diff))
		}
		pg.fetching--
		if pg.fetching == 0 {
			if err := s.settle(pd.Page); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkResponse verifies that a response answers exactly what was asked, in
// the order asked, with well-formed diffs.
func (s *State) checkResponse(req *request, from int, m *protocol.DiffResponse) error {
	if req.to != from {
		return fmt.Errorf("the request went to rank %d", req.to)
	}
	if len(m.Pages) != len(req.pages) {
		return fmt.Errorf("%d pages answered, %d asked", len(m.Pages), len(req.pages))
	}
	for i, pd := range m.Pages {
		asked := req.pages[i]
		if pd.Page != asked.Page {
			return fmt.Errorf("page %d answered where page %d was asked", pd.Page, asked.Page)
		}
		if len(pd.Diffs) != len(asked.Intervals) {
			return fmt.Errorf("page %d: %d diffs answered, %d asked", pd.Page, len(pd.Diffs), len(asked.Intervals))
		}
		switch {
		case asked.Base && len(pd.Base) != s.cfg.PageSize:
			return fmt.Errorf("page %d: a copy of %d bytes answered for a %d-byte page", pd.Page, len(pd.Base), s.cfg.PageSize)
		case !asked.Base && pd.Base != nil:
			return fmt.Errorf("page %d: a copy answered, none asked", pd.Page)
		}
		for j, d := range pd.Diffs {
			if d.Interval != asked.Intervals[j] {
				return fmt.Errorf("page %d: diff of interval %v answered where %v was asked", pd.Page, d.Interval, asked.Intervals[j])
			}
			if err := diff.Diff(d.Diff).Validate(s.cfg.PageSize); err != nil {
				return fmt.Errorf("page %d, interval %v: %w", pd.Page, d.Interval, err)
			}
		}
	}
	return nil
}

// settle applies the diffs that arrived for page p in happens-before order.
// If write notices remain (they arrived while the fetch was out) and someone
// waits, it fetches again; otherwise the page is current and is mapped for
// the accesses waiting on it.
func (s *State) settle(p uint32) error {
	pg := s.pages.at(p)
	hp := s.homeless.at(p)
	var ready, still []protocol.IntervalID
	for _, id := range pg.pending {
		if hp.find(id) != nil {
			ready = append(ready, id)
		} else {
			still = append(still, id)
		}
	}
	slices.SortFunc(ready, s.happensBefore)
	page := s.pageBytes(p)
	for _, id := range ready {
		h := hp.find(id)
		if err := h.d.ApplyValidated(page); err != nil { // validated as it came
			return fmt.Errorf("applying the diff of interval %v to page %d: %w", id, p, err)
		}
		if pg.twin != nil {
			// Kept while invalid (AsyncWrites): others' writes are not this
			// rank's to diff.
			_ = h.d.ApplyValidated(pg.twin)
		}
		s.stats.DiffsApplied++
		s.stats.DiffBytesApplied += int64(len(h.d))
	}
	pg.pending = still
	if len(still) > 0 {
		if pg.want != wantNone || pg.keep {
			pl := s.newPlan()
			s.planPage(pl, p)
			s.send(pl)
		}
		return nil
	}
	// A page nobody waits for (prefetched, or kept by a collection) stays
	// unmapped: if the application uses it, a local fault maps it and marks
	// it in use again; if not, it stops being prefetched.
	s.validated(p)
	return nil
}

// happensBefore orders intervals by a linear extension of happens-before:
// the sum of a vector time grows along every happens-before chain.
func (s *State) happensBefore(a, b protocol.IntervalID) int {
	return cmp.Or(cmp.Compare(s.interval(a).VT.Sum(), s.interval(b).VT.Sum()), cmp.Compare(a.Rank, b.Rank))
}

// Collect ends a collection: it drops this rank's copies of the invalid
// pages it did not keep, hands the pages to their new keepers, and drops the
// history up to vector time upto — interval records, write notices, diffs
// and twins. Every rank must have settled its StartCollection (a barrier
// since proves it). Memory is then as if the history had been compacted
// into the kept pages.
func (s *State) Collect(upto protocol.VectorTime) error {
	switch {
	case len(upto) != s.cfg.NProcs:
		return fmt.Errorf("collect: vector time has %d entries, want %d", len(upto), s.cfg.NProcs)
	case !s.vt.Dominates(upto):
		return fmt.Errorf("collect up to %v, beyond what rank %d knows (%v)", upto, s.cfg.Rank, s.vt)
	case s.nextKeeper == nil:
		return errors.New("collect without a collection started")
	case !s.Settled():
		return fmt.Errorf("collect while %d kept pages and %d diff requests are outstanding", s.keeping, len(s.requests))
	}
	for p, pg := range s.pages.used() {
		for _, id := range pg.pending {
			if !upto.Covers(id) {
				return fmt.Errorf("collect up to %v, but page %d has a write notice of interval %v from after it", upto, p, id)
			}
		}
	}
	for _, pg := range s.pages.used() {
		switch pg.state {
		case Invalid:
			pg.state = Absent
			pg.used = false
			s.invalid--
			s.stats.Dropped++
			fallthrough
		case Absent:
			pg.pending = nil // the keeper's copy holds all of it
		}
	}
	s.keeper, s.nextKeeper = s.nextKeeper, nil
	for r := range s.cfg.NProcs {
		if upto[r] <= s.base[r] {
			continue
		}
		k := upto[r] - s.base[r]
		for _, iv := range s.log[r][:k] {
			s.metadata -= intervalSize(iv)
		}
		s.log[r] = slices.Clone(s.log[r][k:])
		s.base[r] = upto[r]
	}
	for _, hp := range s.homeless.used() {
		kept := hp.diffs[:0]
		for _, h := range hp.diffs {
			if upto.Covers(h.id) {
				s.metadata -= int64(len(h.d))
			} else {
				kept = append(kept, h)
			}
		}
		clear(hp.diffs[len(kept):])
		hp.diffs = kept
		hp.joinable = 0
		if len(kept) == 0 {
			hp.diffs = nil
		}
	}
	s.stats.Collections++
	// Faults that waited while the rank was frozen fetch now.
	s.frozen = false
	pl := s.newPlan()
	for p, pg := range s.pages.used() {
		if pg.want != wantNone && pg.fetching == 0 {
			s.planPage(pl, p)
		}
	}
	s.send(pl)
	return nil
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
	for p, pg := range s.pages.used() {
		if pg.state != Invalid || !(pg.used || s.nextKeeper[p] == int32(s.cfg.Rank)) {
			continue
		}
		pg.keep = true
		s.keeping++
		if pg.fetching == 0 { // a fetch in flight settles, and fetches again if stale
			s.planPage(pl, p)
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
