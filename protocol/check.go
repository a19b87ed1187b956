package protocol

import (
	"errors"
	"fmt"
)

// Limits describe one job, for validating what arrives from its peers.
type Limits struct {
	NProcs   int
	Pages    uint32 // pages in the shared region
	Locks    uint32 // lock ids are 0..Locks-1
	Barriers uint32 // barrier ids are 0..Barriers-1
}

// Check reports the first way m does not fit the job, so that a receiver
// never acts on a malformed message.
func (l Limits) Check(m Message) error {
	var err error
	switch m := m.(type) {
	case *LockRequest:
		err = errors.Join(l.checkLock(m.Lock), l.checkRank("requester", m.Requester), l.checkVT(m.VT))
	case *LockGrant:
		err = errors.Join(l.checkLock(m.Lock), l.checkIntervals(m.Intervals))
	case *BarrierArrive:
		err = errors.Join(l.checkBarrier(m.Barrier), l.checkMembers(m.Members), l.checkVT(m.VT), l.checkIntervals(m.Intervals), l.checkHomes(m.Homes))
	case *BarrierDepart:
		err = errors.Join(l.checkBarrier(m.Barrier), l.checkIntervals(m.Intervals), l.checkHomes(m.Homes))
	case *DiffRequest:
		err = l.checkDiffRequest(m)
	case *DiffResponse:
		err = l.checkDiffResponse(m)
	case *AllocRequest:
		if m.Op < AllocCollective || m.Op > AllocObjects {
			err = fmt.Errorf("unknown allocation op %d", m.Op)
		}
	case *PageRequest:
		err = l.checkPageRequest(m)
	case *PageResponse:
		err = l.checkPageResponse(m)
	case *HomeDiffs:
		err = l.checkHomeDiffs(m)
	case *PagePush:
		err = l.checkPagePush(m)
	case *PushStop:
		if len(m.Pages) == 0 {
			err = errors.New("no pages")
		} else {
			err = l.checkPageList(len(m.Pages), func(i int) uint32 { return m.Pages[i] })
		}
	case *CounterRequest:
		if m.Wait && m.Delta != 0 {
			err = fmt.Errorf("a counter wait adds %d: it must add nothing", m.Delta)
		}
	case *AllocReply, *CounterReply:
	case nil:
		return errors.New("nil message")
	default:
		return fmt.Errorf("unknown message %T", m)
	}
	if err != nil {
		return fmt.Errorf("%v: %w", m.Type(), err)
	}
	return nil
}

func (l Limits) checkRank(what string, r int) error {
	if r < 0 || r >= l.NProcs {
		return fmt.Errorf("%s rank %d out of range [0,%d)", what, r, l.NProcs)
	}
	return nil
}

func (l Limits) checkLock(id uint32) error {
	if id >= l.Locks {
		return fmt.Errorf("lock %d out of range [0,%d)", id, l.Locks)
	}
	return nil
}

func (l Limits) checkBarrier(id uint32) error {
	if id >= l.Barriers {
		return fmt.Errorf("barrier %d out of range [0,%d)", id, l.Barriers)
	}
	return nil
}

func (l Limits) checkPage(p uint32) error {
	if p >= l.Pages {
		return fmt.Errorf("page %d out of range [0,%d)", p, l.Pages)
	}
	return nil
}

// checkPageList checks that the n pages page(0), ..., page(n-1) are in the
// region, sorted and distinct.
func (l Limits) checkPageList(n int, page func(int) uint32) error {
	for i := range n {
		if err := l.checkPage(page(i)); err != nil {
			return err
		}
		if i > 0 && page(i) <= page(i-1) {
			return fmt.Errorf("pages not sorted and distinct at page %d", page(i))
		}
	}
	return nil
}

func (l Limits) checkVT(vt VectorTime) error {
	if len(vt) != l.NProcs {
		return fmt.Errorf("vector time has %d entries, want %d", len(vt), l.NProcs)
	}
	return nil
}

func (l Limits) checkID(id IntervalID) error {
	if err := l.checkRank("interval", id.Rank); err != nil {
		return err
	}
	if id.Index == 0 {
		return fmt.Errorf("interval %v: index 0", id)
	}
	return nil
}

func (l Limits) checkMembers(members []int) error {
	for i, r := range members {
		if err := l.checkRank("member", r); err != nil {
			return err
		}
		if i > 0 && r <= members[i-1] {
			return fmt.Errorf("members not sorted and distinct at %d", r)
		}
	}
	return nil
}

func (l Limits) checkIntervals(ivs []Interval) error {
	for _, iv := range ivs {
		if err := l.checkID(iv.ID); err != nil {
			return err
		}
		if err := l.checkVT(iv.VT); err != nil {
			return fmt.Errorf("interval %v: %w", iv.ID, err)
		}
		if iv.VT[iv.ID.Rank] != iv.ID.Index {
			return fmt.Errorf("interval %v: vector time names index %d", iv.ID, iv.VT[iv.ID.Rank])
		}
		if err := l.checkRanges(iv.Pages); err != nil {
			return fmt.Errorf("interval %v: %w", iv.ID, err)
		}
	}
	return nil
}

func (l Limits) checkRanges(rs []PageRange) error {
	var next uint64 // the first page the next range may start at
	for i, r := range rs {
		if r.Count == 0 {
			return errors.New("empty page range")
		}
		if r.End() > uint64(l.Pages) {
			return fmt.Errorf("page range [%d,%d) beyond %d pages", r.First, r.End(), l.Pages)
		}
		if i > 0 && uint64(r.First) <= next {
			return fmt.Errorf("page ranges not sorted, disjoint and apart at page %d", r.First)
		}
		next = r.End()
	}
	return nil
}

func (l Limits) checkDiffRequest(m *DiffRequest) error {
	if len(m.Pages) == 0 {
		return errors.New("no pages")
	}
	if err := l.checkPageList(len(m.Pages), func(i int) uint32 { return m.Pages[i].Page }); err != nil {
		return err
	}
	for _, p := range m.Pages {
		if len(p.Intervals) == 0 && !p.Base {
			return fmt.Errorf("page %d: neither intervals nor the page asked", p.Page)
		}
		for _, id := range p.Intervals {
			if err := l.checkID(id); err != nil {
				return fmt.Errorf("page %d: %w", p.Page, err)
			}
		}
	}
	return nil
}

func (l Limits) checkDiffResponse(m *DiffResponse) error {
	if err := l.checkPageList(len(m.Pages), func(i int) uint32 { return m.Pages[i].Page }); err != nil {
		return err
	}
	for _, p := range m.Pages {
		for _, d := range p.Diffs {
			if err := l.checkID(d.Interval); err != nil {
				return fmt.Errorf("page %d: %w", p.Page, err)
			}
		}
	}
	return nil
}

func (l Limits) checkHomes(hs []HomeRange) error {
	for _, h := range hs {
		if h.Count == 0 || uint64(h.First)+uint64(h.Count) > uint64(l.Pages) {
			return fmt.Errorf("home placement of pages [%d,+%d) outside the region's %d", h.First, h.Count, l.Pages)
		}
		if err := l.checkRank("home", h.Rank); err != nil {
			return err
		}
	}
	return nil
}

func (l Limits) checkPageRequest(m *PageRequest) error {
	if len(m.Pages) == 0 {
		return errors.New("no pages")
	}
	if err := l.checkPageList(len(m.Pages), func(i int) uint32 { return m.Pages[i].Page }); err != nil {
		return err
	}
	for _, p := range m.Pages {
		for j, id := range p.Need {
			if err := l.checkID(id); err != nil {
				return fmt.Errorf("page %d: %w", p.Page, err)
			}
			if j > 0 && id.Rank <= p.Need[j-1].Rank {
				return fmt.Errorf("page %d: needed intervals not one per rank in rank order at %v", p.Page, id)
			}
		}
	}
	return nil
}

func (l Limits) checkPageResponse(m *PageResponse) error {
	return l.checkPageList(len(m.Pages), func(i int) uint32 { return m.Pages[i].Page })
}

func (l Limits) checkPagePush(m *PagePush) error {
	if len(m.Pages) == 0 {
		return errors.New("no pages")
	}
	if err := l.checkPageList(len(m.Pages), func(i int) uint32 { return m.Pages[i].Page }); err != nil {
		return err
	}
	for _, p := range m.Pages {
		if err := l.checkVT(p.Holds); err != nil {
			return fmt.Errorf("page %d: %w", p.Page, err)
		}
	}
	return nil
}

func (l Limits) checkHomeDiffs(m *HomeDiffs) error {
	if err := l.checkID(m.Interval); err != nil {
		return err
	}
	if len(m.Pages) == 0 {
		return errors.New("no pages")
	}
	return l.checkPageList(len(m.Pages), func(i int) uint32 { return m.Pages[i].Page })
}
