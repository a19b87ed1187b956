package lrc

import (
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/protocol"
)

const pageSize = 64

// cluster is n lrc states whose diff messages are delivered by hand; sync is
// modelled by passing intervals with IntervalsFor and Acquire.
type cluster struct {
	t   testing.TB
	st  []*State
	mem [][]byte
	// msgs and acts hold each rank's output since it was last taken.
	msgs []protocol.Envelope
	acts [][]Action
	// sent logs every message taken.
	sent []protocol.Envelope
}

func newCluster(t testing.TB, n, pages int, prefetch bool) *cluster {
	c := &cluster{t: t, acts: make([][]Action, n)}
	for r := range n {
		mem := make([]byte, pages*pageSize)
		s, err := New(Config{Rank: r, NProcs: n, PageSize: pageSize, Pages: pages, Prefetch: prefetch}, mem)
		require.NoError(t, err)
		c.st = append(c.st, s)
		c.mem = append(c.mem, mem)
	}
	return c
}

func (c *cluster) take(r int) {
	out := c.st[r].TakeOutput()
	c.msgs = append(c.msgs, out.Messages...)
	c.sent = append(c.sent, out.Messages...)
	c.acts[r] = append(c.acts[r], out.Actions...)
}

func (c *cluster) actions(r int) []Action {
	c.take(r)
	a := c.acts[r]
	c.acts[r] = nil
	return a
}

// deliverAll delivers every diff message until none is left and returns how
// many were delivered.
func (c *cluster) deliverAll() int {
	n := 0
	for r := range c.st {
		c.take(r)
	}
	for len(c.msgs) > 0 {
		e := c.msgs[0]
		c.msgs = c.msgs[1:]
		n++
		var err error
		switch m := e.Msg.(type) {
		case *protocol.DiffRequest:
			err = c.st[e.To].HandleDiffRequest(e.From, m)
		case *protocol.DiffResponse:
			err = c.st[e.To].HandleDiffResponse(e.From, m)
		case *protocol.PageRequest:
			err = c.st[e.To].HandlePageRequest(e.From, m)
		case *protocol.PageResponse:
			err = c.st[e.To].HandlePageResponse(e.From, m)
		case *protocol.HomeDiffs:
			err = c.st[e.To].HandleHomeDiffs(e.From, m)
		case *protocol.PagePush:
			err = c.st[e.To].HandlePagePush(e.From, m)
		case *protocol.PushStop:
			err = c.st[e.To].HandlePushStop(e.From, m)
		}
		require.NoError(c.t, err)
		c.take(e.To)
	}
	return n
}

// write faults page p at rank r for writing if needed and stores b at off.
func (c *cluster) write(r int, p uint32, off int, b ...byte) {
	if c.st[r].PageState(p) != ReadWrite {
		require.NoError(c.t, c.st[r].Fault(p, true))
		c.deliverAll()
		require.Equal(c.t, ReadWrite, c.st[r].PageState(p))
	}
	copy(c.mem[r][int(p)*pageSize+off:], b)
}

// read faults page p at rank r if needed and returns n bytes at off.
func (c *cluster) read(r int, p uint32, off, n int) []byte {
	if st := c.st[r].PageState(p); st != ReadOnly && st != ReadWrite {
		require.NoError(c.t, c.st[r].Fault(p, false))
		c.deliverAll()
		require.Contains(c.t, []PageState{ReadOnly, ReadWrite}, c.st[r].PageState(p))
	}
	return slices.Clone(c.mem[r][int(p)*pageSize+off : int(p)*pageSize+off+n])
}

// sync makes from's release visible to to (a lock handed from → to), and
// returns the pages to's application drops as the acquire returns.
func (c *cluster) sync(from, to int) []uint32 {
	c.st[from].CloseInterval()
	ivs, err := c.st[from].IntervalsFor(c.st[to].VT())
	require.NoError(c.t, err)
	require.NoError(c.t, c.st[to].Acquire(ivs))
	c.st[to].StartRefresh()
	c.deliverAll()
	c.take(from)
	c.take(to)
	return c.st[to].TakeZap()
}

func TestLocalFaultsAndIntervals(t *testing.T) {
	c := newCluster(t, 2, 4, false)
	s := c.st[0]
	require.NoError(t, s.Fault(1, false))
	assert.Equal(t, []Action{{ActMapReadOnly, 1}}, c.actions(0))
	assert.Equal(t, ReadOnly, s.PageState(1))

	require.NoError(t, s.Fault(1, true)) // write-protect fault
	require.NoError(t, s.Fault(2, true)) // first touch is a write
	assert.Equal(t, []Action{{ActUnprotect, 1}, {ActMapReadWrite, 2}}, c.actions(0))
	assert.Equal(t, int64(2*pageSize), s.Metadata(), "two twins")
	c.mem[0][1*pageSize+3] = 7 // page 2 stays as it was: a silent write

	s.CloseInterval()
	assert.Empty(t, c.actions(0), "both pages stay hot")
	assert.Equal(t, ReadWrite, s.PageState(1))
	assert.Equal(t, ReadWrite, s.PageState(2))
	assert.Equal(t, protocol.VectorTime{1, 0}, s.VT())
	ivs, err := s.IntervalsFor(protocol.VectorTime{0, 0})
	require.NoError(t, err)
	require.Len(t, ivs, 1)
	assert.Equal(t, []protocol.PageRange{{First: 1, Count: 1}}, ivs[0].Pages, "the unchanged page has no write notice")
	st := s.Stats()
	assert.Equal(t, int64(1), st.SilentPages)
	assert.Equal(t, int64(2), st.Twins)
	assert.Equal(t, int64(2), st.WriteFaults)
	assert.Equal(t, int64(1), st.ReadFaults)
	assert.Empty(t, c.msgs)

	for range coldAfter - 1 {
		s.CloseInterval() // nothing written: no interval
	}
	assert.Equal(t, protocol.VectorTime{1, 0}, s.VT())
	assert.Equal(t, []Action{{ActWriteProtect, 2}}, c.actions(0), "page 2 was unchanged in coldAfter intervals: cold")
	s.CloseInterval()
	assert.Equal(t, []Action{{ActWriteProtect, 1}}, c.actions(0), "and then page 1")
	assert.Equal(t, ReadOnly, s.PageState(1))
	assert.Equal(t, int64(0), s.Metadata()-intervalSize(&ivs[0])-int64(len(s.homeless.at(1).diffs[0].d)), "no twin left")
}

// TestHotPages: a page changed in every interval stays writable; its writes
// need no fault, the closes find them; a close that only waited keeps it
// hot; an acquire that invalidates it turns it cold first.
func TestHotPages(t *testing.T) {
	c := newCluster(t, 2, 2, false)
	s := c.st[0]
	c.write(0, 0, 0, 1)
	s.CloseInterval()
	for i := range 3 {
		c.mem[0][1] = byte(10 + i) // no fault: the page is still writable
		s.ProtectDirty()
		s.CloseInterval()
	}
	assert.Equal(t, int64(1), s.Stats().WriteFaults)
	assert.Equal(t, protocol.VectorTime{4, 0}, s.VT())
	acts := c.actions(0)
	assert.Equal(t, []Action{{ActWriteProtect, 0}, {ActUnprotect, 0}}, acts[len(acts)-2:])
	require.NoError(t, s.Acquire(nil)) // waited only: stays hot
	assert.Equal(t, ReadWrite, s.PageState(0))
	c.sync(0, 1)
	assert.Equal(t, []byte{1, 12}, c.read(1, 0, 0, 2), "rank 1 sees every interval's writes")

	c.write(1, 0, 8, 5)
	c.write(0, 0, 2, 3) // the page went cold at the last close: a fault
	s.ProtectDirty()
	c.sync(1, 0) // rank 0 acquires: page 0 is invalidated, so it turns cold
	assert.Equal(t, Invalid, s.PageState(0))
	assert.Equal(t, []byte{1, 12, 3, 0, 0, 0, 0, 0, 5}, c.read(0, 0, 0, 9))
	c.sync(0, 1)
	assert.Equal(t, []byte{1, 12, 3, 0, 0, 0, 0, 0, 5}, c.read(1, 0, 0, 9), "the write before the acquire was kept")
}

// TestProtectDirty: pages protected ahead of the close are not protected
// again; a write fault in between (another thread) makes the close protect
// the page once more.
func TestProtectDirty(t *testing.T) {
	c := newCluster(t, 2, 3, false)
	s := c.st[0]
	for p := range uint32(3) {
		require.NoError(t, s.Fault(p, true))
		c.mem[0][int(p)*pageSize] = 1
	}
	c.actions(0)
	s.ProtectDirty()
	assert.Equal(t, []Action{{ActWriteProtect, 0}, {ActWriteProtect, 1}, {ActWriteProtect, 2}}, c.actions(0))
	s.ProtectDirty()
	assert.Empty(t, c.actions(0), "already protected")
	require.NoError(t, s.Fault(1, true)) // a thread writes page 1 before the close
	assert.Equal(t, []Action{{ActUnprotect, 1}}, c.actions(0))
	s.CloseInterval()
	assert.Equal(t, []Action{{ActUnprotect, 0}, {ActUnprotect, 2}}, c.actions(0), "changed pages stay hot; page 1 was unprotected already")
	ivs, err := s.IntervalsFor(protocol.VectorTime{0, 0})
	require.NoError(t, err)
	assert.Equal(t, []protocol.PageRange{{First: 0, Count: 3}}, ivs[0].Pages)
}

// TestAlone: a job of one rank needs no write caught: every fault maps the
// page writable and nothing is twinned or diffed.
func TestAlone(t *testing.T) {
	c := newCluster(t, 1, 2, false)
	s := c.st[0]
	require.NoError(t, s.Fault(0, false))
	require.NoError(t, s.Fault(1, true))
	assert.Equal(t, []Action{{ActMapReadWrite, 0}, {ActMapReadWrite, 1}}, c.actions(0))
	c.mem[0][0] = 1
	s.ProtectDirty()
	s.CloseInterval()
	assert.Empty(t, c.actions(0))
	assert.Zero(t, s.Metadata())
	assert.Zero(t, s.Stats().Twins)
}

func TestFetchAppliesDiffsAndMaps(t *testing.T) {
	c := newCluster(t, 2, 2, false)
	c.write(0, 0, 5, 0xaa, 0xbb)
	require.NoError(t, c.st[1].Fault(0, false)) // rank 1 maps the old page
	c.actions(1)
	assert.Equal(t, []uint32{0}, c.sync(0, 1), "the application drops the stale page")
	assert.Empty(t, c.actions(1))
	assert.Empty(t, c.st[1].TakeZap())
	assert.Equal(t, Invalid, c.st[1].PageState(0))
	assert.Equal(t, 1, c.st[1].Invalid())

	require.NoError(t, c.st[1].Fault(0, true))
	c.take(1)
	require.Len(t, c.msgs, 1)
	req := c.msgs[0].Msg.(*protocol.DiffRequest)
	assert.Equal(t, 0, c.msgs[0].To)
	assert.Equal(t, []protocol.PageIntervals{{Page: 0, Intervals: []protocol.IntervalID{{Rank: 0, Index: 1}}}}, req.Pages)
	assert.Equal(t, 2, c.deliverAll())
	assert.Equal(t, []Action{{ActMapReadWrite, 0}}, c.actions(1), "the write fault gets the page writable")
	assert.Equal(t, []byte{0xaa, 0xbb}, c.mem[1][5:7])
	assert.Equal(t, int64(1), c.st[0].Stats().DiffsCreated, "the diff was made when asked for")
	assert.Equal(t, int64(1), c.st[1].Stats().DiffsApplied)
}

// TestDominatedWriterNotAsked: rank 1 wrote page 0 after applying rank 0's
// diff, so a third rank that lacks both asks rank 1 alone, for both.
func TestDominatedWriterNotAsked(t *testing.T) {
	c := newCluster(t, 3, 1, false)
	c.write(0, 0, 0, 1)
	c.sync(0, 1)
	c.write(1, 0, 1, 2)
	c.sync(1, 2)
	require.NoError(t, c.st[2].Fault(0, false))
	c.take(2)
	require.Len(t, c.msgs, 1)
	assert.Equal(t, 1, c.msgs[0].To)
	req := c.msgs[0].Msg.(*protocol.DiffRequest)
	assert.Equal(t, []protocol.IntervalID{{Rank: 0, Index: 1}, {Rank: 1, Index: 1}}, req.Pages[0].Intervals)
	c.deliverAll()
	assert.Equal(t, []byte{1, 2}, c.read(2, 0, 0, 2))
}

// TestConcurrentWritersAskedBoth: two ranks wrote one page concurrently
// (false sharing); a rank that learns both asks both, one request each.
func TestConcurrentWritersAskedBoth(t *testing.T) {
	c := newCluster(t, 3, 1, false)
	c.write(0, 0, 0, 1)
	c.write(1, 0, 8, 2)
	c.sync(0, 2)
	c.sync(1, 2)
	require.NoError(t, c.st[2].Fault(0, false))
	c.take(2)
	require.Len(t, c.msgs, 2)
	assert.ElementsMatch(t, []int{0, 1}, []int{c.msgs[0].To, c.msgs[1].To})
	assert.Equal(t, 4, c.deliverAll())
	got := c.read(2, 0, 0, 9)
	assert.Equal(t, byte(1), got[0])
	assert.Equal(t, byte(2), got[8])
}

// TestOverwritesApplyInOrder: migratory data written by three ranks in turn;
// the diffs are applied in happens-before order whatever order they arrive in.
func TestOverwritesApplyInOrder(t *testing.T) {
	c := newCluster(t, 4, 1, false)
	c.write(0, 0, 0, 1, 1)
	c.sync(0, 1)
	c.write(1, 0, 0, 2)
	c.sync(1, 2)
	c.write(2, 0, 1, 3)
	c.sync(2, 3)
	assert.Equal(t, []byte{2, 3}, c.read(3, 0, 0, 2))
	assert.Equal(t, int64(3), c.st[3].Stats().DiffsApplied)
}

// TestSquash: diffs of a chain whose bytes later diffs write again go
// empty; concurrent ones, or partly covered ones, go whole.
func TestSquash(t *testing.T) {
	c := newCluster(t, 4, 1, false)
	c.write(0, 0, 0, 1, 1, 1) // bytes 0-2
	c.sync(0, 1)
	c.write(1, 0, 0, 2, 2) // bytes 0-1: 0.1 not covered (byte 2)
	c.sync(1, 2)
	c.write(2, 0, 0, 3, 3, 3) // bytes 0-2: covers 0.1 and 1.1
	c.sync(2, 3)
	require.NoError(t, c.st[3].Fault(0, false))
	c.take(3)
	c.deliverAll()
	assert.Equal(t, []byte{3, 3, 3}, c.read(3, 0, 0, 3))
	assert.Equal(t, int64(2), c.st[2].Stats().DiffsSquashed)

	// Concurrent intervals do not cover each other: nothing is squashed.
	c2 := newCluster(t, 3, 1, false)
	c2.write(0, 0, 0, 1)
	c2.write(1, 0, 0, 2) // a race in a real program, but the protocol must not guess
	c2.sync(0, 2)
	c2.sync(1, 2)
	require.NoError(t, c2.st[2].Fault(0, false))
	c2.deliverAll()
	assert.Zero(t, c2.st[0].Stats().DiffsSquashed+c2.st[1].Stats().DiffsSquashed)
}

// responseDiffs returns the diff lengths of the first DiffResponse from
// rank from among the messages sent since mark, by interval.
func responseDiffs(t *testing.T, c *cluster, mark, from int) map[protocol.IntervalID]int {
	for _, e := range c.sent[mark:] {
		if m, ok := e.Msg.(*protocol.DiffResponse); ok && e.From == from {
			lens := make(map[protocol.IntervalID]int)
			for _, pd := range m.Pages {
				for _, d := range pd.Diffs {
					lens[d.Interval] = len(d.Diff)
				}
			}
			return lens
		}
	}
	t.Fatalf("no diff response from rank %d", from)
	return nil
}

// TestJoinedDiffs: a rank's diffs of a page in intervals one after another
// join the first while it has gone to nobody; a rank asking for both gets
// the writes once, in the first interval's diff.
func TestJoinedDiffs(t *testing.T) {
	c := newCluster(t, 2, 1, false)
	c.write(0, 0, 0, 1)
	c.st[0].CloseInterval()
	c.write(0, 0, 1, 2)
	c.sync(0, 1)
	assert.Equal(t, int64(1), c.st[0].Stats().DiffsJoined)
	mark := len(c.sent)
	assert.Equal(t, []byte{1, 2}, c.read(1, 0, 0, 2))
	assert.Equal(t, map[protocol.IntervalID]int{{Rank: 0, Index: 1}: 3, {Rank: 0, Index: 2}: 0}, responseDiffs(t, c, mark, 0),
		"interval 0.1's diff holds both writes (a header byte and two), 0.2's is empty")

	// Once sent, the diff takes no more: rank 1 has 0.1 and must find the
	// next writes in the next intervals' diffs (which join each other).
	c.write(0, 0, 2, 3)
	c.st[0].CloseInterval()
	c.write(0, 0, 3, 4)
	c.sync(0, 1)
	assert.Equal(t, int64(2), c.st[0].Stats().DiffsJoined)
	assert.Equal(t, []byte{1, 2, 3, 4}, c.read(1, 0, 0, 4))
}

// TestNoJoinAcrossANotice: rank 0 writes byte 0, rank 1 concurrently byte 8
// of the same page; rank 0 learns rank 1's write and writes byte 8 again. A
// rank that learns all three applies rank 1's diff after rank 0's first
// (concurrent, ordered by rank), so rank 0's second diff must not join its
// first: byte 8 would come out as rank 1's.
func TestNoJoinAcrossANotice(t *testing.T) {
	c := newCluster(t, 3, 1, false)
	c.write(0, 0, 0, 1)
	c.st[0].CloseInterval()
	c.write(1, 0, 8, 2)
	c.sync(1, 0)
	c.write(0, 0, 8, 3)
	c.sync(0, 2)
	assert.Zero(t, c.st[0].Stats().DiffsJoined)
	got := c.read(2, 0, 0, 9)
	assert.Equal(t, byte(1), got[0])
	assert.Equal(t, byte(3), got[8])
}

// TestPrefetchWrittenTogether: a fault prefetches the pages in use that the
// same intervals wrote, not those the same writer wrote in other intervals.
func TestPrefetchWrittenTogether(t *testing.T) {
	c := newCluster(t, 2, 3, true)
	for p := range uint32(3) {
		c.read(1, p, 0, 1)
	}
	c.write(0, 0, 0, 1)
	c.write(0, 1, 0, 1)
	c.st[0].CloseInterval()
	c.write(0, 2, 0, 1)
	c.sync(0, 1)
	mark := len(c.sent)
	require.NoError(t, c.st[1].Fault(0, false))
	c.deliverAll()
	var asked []uint32
	for _, e := range c.sent[mark:] {
		if m, ok := e.Msg.(*protocol.DiffRequest); ok {
			for _, pi := range m.Pages {
				asked = append(asked, pi.Page)
			}
		}
	}
	assert.Equal(t, []uint32{0, 1}, asked, "page 2 was written in another interval")
}

// TestPrefetchMovedOnByCredit: a page this rank wrote and another rank wrote
// after it is prefetched only on a probe at first (after movedProbe faults
// that could have); once such prefetches are used, it comes with every fault.
func TestPrefetchMovedOnByCredit(t *testing.T) {
	c := newCluster(t, 2, 2, true)
	c.write(1, 1, 0, 9) // rank 1's data, which moves on to rank 0
	c.sync(1, 0)
	first := -1
	for round := range 2 * movedProbe {
		c.read(1, 0, 0, 1)
		c.read(1, 1, 0, 1)
		c.write(0, 0, 0, byte(round))
		c.write(0, 1, 0, byte(round))
		c.sync(0, 1)
		require.True(t, c.st[1].movedOn(1))
		before := c.st[1].Stats().Prefetched
		require.NoError(t, c.st[1].Fault(0, false))
		c.deliverAll()
		switch prefetched := c.st[1].Stats().Prefetched > before; {
		case prefetched && first < 0:
			first = round
		case first >= 0:
			assert.True(t, prefetched, "round %d: used prefetches earn the next", round)
		}
		assert.Equal(t, []byte{byte(round)}, c.read(1, 1, 0, 1))
	}
	assert.GreaterOrEqual(t, first, movedProbe-1, "prefetched before the probe")
	assert.LessOrEqual(t, first, movedProbe, "no probe")
}

func TestPrefetchSameWriter(t *testing.T) {
	c := newCluster(t, 3, 4, true)
	// Rank 2 maps pages 0, 1 and 2 first, so they are in use when invalidated.
	for p := range uint32(3) {
		c.read(2, p, 0, 1)
	}
	c.write(0, 0, 0, 1)
	c.write(0, 1, 0, 1)
	c.write(1, 2, 0, 1)
	c.sync(0, 2)
	c.sync(1, 2)
	c.actions(2)
	require.NoError(t, c.st[2].Fault(0, false))
	c.take(2)
	require.Len(t, c.msgs, 1, "page 2 needs another writer: not prefetched")
	req := c.msgs[0].Msg.(*protocol.DiffRequest)
	assert.Equal(t, []uint32{0, 1}, []uint32{req.Pages[0].Page, req.Pages[1].Page})
	c.deliverAll()
	assert.Equal(t, []Action{{ActMapReadOnly, 0}}, c.actions(2), "the prefetched page is current but left unmapped")
	assert.Equal(t, Unmapped, c.st[2].PageState(1))
	assert.Equal(t, int64(1), c.st[2].Stats().Prefetched)
	assert.Equal(t, Invalid, c.st[2].PageState(2))

	// A prefetched page the rank never touched is not prefetched again.
	c.write(0, 0, 0, 2)
	c.write(0, 1, 0, 2)
	c.sync(0, 2)
	require.NoError(t, c.st[2].Fault(0, false))
	c.take(2)
	require.Len(t, c.msgs, 1)
	req = c.msgs[0].Msg.(*protocol.DiffRequest)
	assert.Len(t, req.Pages, 1, "page 1 was not used since its prefetch")
	c.deliverAll()
}

func TestValidateRange(t *testing.T) {
	c := newCluster(t, 3, 4, false)
	c.write(0, 0, 0, 1)
	c.write(0, 1, 0, 1)
	c.write(1, 2, 0, 2)
	c.sync(0, 2)
	c.sync(1, 2)
	require.NoError(t, c.st[2].Validate(0, 4, false))
	c.take(2)
	assert.Len(t, c.msgs, 2, "one request per writer for the whole range")
	assert.False(t, c.st[2].Ready(0, 4, false))
	c.deliverAll()
	assert.True(t, c.st[2].Ready(0, 4, false))
	assert.False(t, c.st[2].Ready(0, 4, true))
	require.NoError(t, c.st[2].Validate(0, 4, true))
	assert.True(t, c.st[2].Ready(0, 4, true))
	assert.ErrorContains(t, c.st[2].Validate(3, 2, false), "beyond the region's 4 pages")
}

// TestNoticesDuringFetch: new write notices that arrive while a fetch is out
// leave the page invalid and make the waiting fault fetch again.
func TestNoticesDuringFetch(t *testing.T) {
	c := newCluster(t, 3, 1, false)
	c.write(0, 0, 0, 1)
	c.sync(0, 2)
	require.NoError(t, c.st[2].Fault(0, false))
	c.take(2)
	c.write(1, 0, 1, 2)
	c.sync(1, 2) // arrives while the request to rank 0 is out
	c.deliverAll()
	assert.Equal(t, []byte{1, 2}, c.read(2, 0, 0, 2))
	assert.Equal(t, int64(2), c.st[2].Stats().DiffsApplied)
}

func TestOwnTwinDiffedBeforeInvalidation(t *testing.T) {
	c := newCluster(t, 2, 1, false)
	c.write(0, 0, 0, 1)
	c.write(1, 0, 8, 2)
	c.st[0].CloseInterval()
	c.sync(1, 0) // rank 0's closed interval has a twin; the page is invalidated
	assert.Equal(t, int64(1), c.st[0].Stats().DiffsCreated)
	got := c.read(0, 0, 0, 9)
	assert.Equal(t, byte(1), got[0])
	assert.Equal(t, byte(2), got[8])
	c.sync(0, 1)
	got = c.read(1, 0, 0, 9)
	assert.Equal(t, byte(1), got[0], "rank 0's diff holds only its own write")
}

func TestAcquireRejects(t *testing.T) {
	c := newCluster(t, 3, 2, false)
	iv := func(rank int, index uint32, vt protocol.VectorTime, pages ...protocol.PageRange) protocol.Interval {
		return protocol.Interval{ID: protocol.IntervalID{Rank: rank, Index: index}, VT: vt, Pages: pages}
	}
	p0 := protocol.PageRange{First: 0, Count: 1}
	s := c.st[0]
	assert.ErrorContains(t, s.Acquire([]protocol.Interval{iv(1, 2, protocol.VectorTime{0, 2, 0}, p0)}), "knows rank 1 only up to 0")
	assert.ErrorContains(t, s.Acquire([]protocol.Interval{iv(0, 1, protocol.VectorTime{1, 0, 0}, p0)}), "which has made only 0")
	assert.ErrorContains(t, s.Acquire([]protocol.Interval{iv(1, 1, protocol.VectorTime{0, 1, 1}, p0)}), "did not arrive")
	assert.ErrorContains(t, s.Acquire([]protocol.Interval{iv(1, 1, protocol.VectorTime{0, 1, 0}, protocol.PageRange{First: 1, Count: 2})}), "outside the region")
	assert.ErrorContains(t, s.Acquire([]protocol.Interval{iv(4, 1, protocol.VectorTime{0, 1, 0})}), "does not fit")
	assert.Equal(t, protocol.VectorTime{0, 0, 0}, s.VT(), "rejected intervals change nothing")
	require.NoError(t, s.Acquire([]protocol.Interval{iv(2, 1, protocol.VectorTime{0, 0, 1}, p0), iv(1, 1, protocol.VectorTime{0, 1, 1}, p0)}), "order within a message does not matter")
	assert.Equal(t, protocol.VectorTime{0, 1, 1}, s.VT())
	require.NoError(t, s.Acquire([]protocol.Interval{iv(1, 1, protocol.VectorTime{0, 1, 1}, p0)}), "known intervals are skipped")
}

func TestResponseRejects(t *testing.T) {
	c := newCluster(t, 2, 2, false)
	c.write(0, 0, 0, 1)
	c.sync(0, 1)
	require.NoError(t, c.st[1].Fault(0, false))
	c.take(1)
	req := c.msgs[0].Msg.(*protocol.DiffRequest)
	id := protocol.IntervalID{Rank: 0, Index: 1}
	s := c.st[1]
	cases := []struct {
		from int
		m    *protocol.DiffResponse
		want string
	}{
		{0, &protocol.DiffResponse{ID: req.ID + 1}, "answers no outstanding request"},
		{1, &protocol.DiffResponse{ID: req.ID}, "the request went to rank 0"},
		{0, &protocol.DiffResponse{ID: req.ID}, "0 pages answered, 1 asked"},
		{0, &protocol.DiffResponse{ID: req.ID, Pages: []protocol.PageDiffs{{Page: 1}}}, "page 1 answered where page 0"},
		{0, &protocol.DiffResponse{ID: req.ID, Pages: []protocol.PageDiffs{{Page: 0}}}, "0 diffs answered, 1 asked"},
		{0, &protocol.DiffResponse{ID: req.ID, Pages: []protocol.PageDiffs{{Page: 0, Diffs: []protocol.IntervalDiff{{Interval: protocol.IntervalID{Rank: 0, Index: 2}}}}}}, "where 0.1 was asked"},
		{0, &protocol.DiffResponse{ID: req.ID, Pages: []protocol.PageDiffs{{Page: 0, Diffs: []protocol.IntervalDiff{{Interval: id, Diff: []byte{0, 200, 1}}}}}}, "page 0, interval 0.1"},
	}
	for _, tc := range cases {
		assert.ErrorContains(t, s.HandleDiffResponse(tc.from, tc.m), tc.want)
	}
	assert.Equal(t, Invalid, s.PageState(0), "rejected responses change nothing")
	assert.ErrorContains(t, c.st[0].HandleDiffRequest(1, &protocol.DiffRequest{ID: 1, Pages: []protocol.PageIntervals{{Page: 1, Intervals: []protocol.IntervalID{id}}}}), "holds no diff of page 1")
	assert.ErrorContains(t, c.st[0].HandleDiffRequest(1, &protocol.DiffRequest{ID: 1, Pages: []protocol.PageIntervals{{Page: 9, Intervals: []protocol.IntervalID{id}}}}), "page 9 out of range")
	assert.ErrorContains(t, s.Fault(2, false), "page 2 out of range")
	homes := homeCluster(t, 2, 3, false)
	assert.ErrorContains(t, homes.st[0].HandleDiffRequest(1, &protocol.DiffRequest{ID: 1, Pages: []protocol.PageIntervals{{Page: 1, Intervals: []protocol.IntervalID{id}}}}),
		"with the home-based protocol", "a home-based rank makes no diffs for others")
}

// TestCollect: a collection keeps the pages a rank uses or keeps, drops the
// others, and drops the whole history; a dropped page comes back whole from
// its keeper, with the diffs of the intervals since on top.
func TestCollect(t *testing.T) {
	c := newCluster(t, 3, 3, false)
	c.read(2, 1, 0, 1) // rank 2 uses page 1
	c.write(0, 0, 0, 1)
	c.write(0, 1, 0, 1)
	c.sync(0, 1)
	c.sync(0, 2)
	c.write(1, 0, 1, 2) // page 0's newest writer: its keeper
	c.sync(1, 0)
	c.sync(1, 2)
	upto := c.st[0].VT()
	require.Equal(t, upto, c.st[1].VT())
	require.Equal(t, upto, c.st[2].VT())
	assert.ErrorContains(t, c.st[0].Collect(upto), "collect without a collection started")

	for r := range 3 {
		c.st[r].StartCollection()
	}
	assert.ErrorContains(t, c.st[2].Collect(upto), "kept pages and 1 diff requests are outstanding")
	c.deliverAll()
	for r := range 3 {
		require.True(t, c.st[r].Settled(), "rank %d validated what it keeps", r)
	}
	assert.Equal(t, Unmapped, c.st[0].PageState(0), "rank 0 used page 0: kept, current, mapped when touched")
	assert.Equal(t, Unmapped, c.st[2].PageState(1), "rank 2 used page 1: kept")
	assert.Equal(t, Invalid, c.st[1].PageState(1), "dropped only when the collection ends")
	for r := range 3 {
		require.NoError(t, c.st[r].Collect(upto))
		hot := 0
		for _, pg := range c.st[r].pages.used() {
			if pg.state == ReadWrite {
				hot++
			}
		}
		assert.Equal(t, int64(hot*pageSize), c.st[r].Metadata(), "rank %d: nothing of the history is left, only hot pages' twins", r)
		assert.Equal(t, int64(1), c.st[r].Stats().Collections)
	}
	assert.Equal(t, Absent, c.st[1].PageState(1), "rank 1 never used page 1 and rank 0 keeps it")
	assert.Equal(t, Absent, c.st[2].PageState(0), "rank 2 never used page 0 and rank 1 keeps it")
	_, err := c.st[0].IntervalsFor(protocol.VectorTime{0, 0, 0})
	assert.ErrorContains(t, err, "were collected")
	assert.ErrorContains(t, c.st[0].Collect(protocol.VectorTime{9, 9, 9}), "beyond what rank 0 knows")

	// A rank asked for a page it dropped refuses (it is not the keeper).
	err = c.st[1].HandleDiffRequest(2, &protocol.DiffRequest{ID: 1, Pages: []protocol.PageIntervals{{Page: 1, Base: true}}})
	assert.ErrorContains(t, err, "page 1 asked of rank 1, which dropped it")

	// A dropped page comes back from its keeper.
	assert.Equal(t, []byte{1, 2}, c.read(2, 0, 0, 2))
	assert.Equal(t, int64(1), c.st[2].Stats().Refetched)
	// A dropped page written after the collection: the keeper's copy and
	// the new diff, from two ranks.
	c.write(0, 1, 1, 7)
	c.sync(0, 1)
	require.NoError(t, c.st[1].Fault(1, false))
	c.take(1)
	assert.Len(t, c.msgs, 1, "rank 0 both keeps page 1 and wrote it: one request")
	c.deliverAll()
	assert.Equal(t, []byte{1, 7}, c.read(1, 1, 0, 2))
	c.write(0, 0, 2, 9)
	c.sync(0, 2)
	assert.Equal(t, []byte{1, 2, 9}, c.read(2, 0, 0, 3))
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		mem  int
		want string
	}{
		{Config{Rank: 2, NProcs: 2, PageSize: 8, Pages: 1}, 8, "rank 2 of 2"},
		{Config{Rank: 0, NProcs: 1, PageSize: 0, Pages: 1}, 8, "page size 0"},
		{Config{Rank: 0, NProcs: 1, PageSize: 8, Pages: 0}, 0, "0 pages"},
		{Config{Rank: 0, NProcs: 1, PageSize: 8, Pages: 2}, 8, "memory of 8 bytes for 2 pages"},
	} {
		_, err := New(tc.cfg, make([]byte, tc.mem))
		assert.ErrorContains(t, err, tc.want)
	}
}

func TestLargeValidateSplitsRequests(t *testing.T) {
	const pages = 2*maxRequestPages + 10
	c := newCluster(t, 2, pages, false)
	require.NoError(t, c.st[0].Validate(0, pages, true))
	for p := range pages {
		c.mem[0][p*pageSize] = byte(p%255 + 1)
	}
	c.sync(0, 1)
	require.NoError(t, c.st[1].Validate(0, pages, false))
	c.take(1)
	require.Len(t, c.msgs, 3)
	for i, n := range []int{maxRequestPages, maxRequestPages, 10} {
		assert.Len(t, c.msgs[i].Msg.(*protocol.DiffRequest).Pages, n)
	}
	c.deliverAll()
	assert.True(t, c.st[1].Ready(0, pages, false))
	for p := range pages {
		require.Equal(t, byte(p%255+1), c.mem[1][p*pageSize])
	}
}

// homeCluster is n lrc states on the home-based protocol, funneled, with
// faults to find writes unless async.
func homeCluster(t *testing.T, n, pages int, async bool) *cluster {
	c := &cluster{t: t, acts: make([][]Action, n)}
	for r := range n {
		mem := make([]byte, pages*pageSize)
		s, err := New(Config{Rank: r, NProcs: n, PageSize: pageSize, Pages: pages, Homes: true, AsyncWrites: async, Funneled: true}, mem)
		require.NoError(t, err)
		c.st = append(c.st, s)
		c.mem = append(c.mem, mem)
	}
	return c
}

// pages returns the pages a message of the home-based protocol names.
func msgPages(m protocol.Message) []uint32 {
	var ps []uint32
	switch m := m.(type) {
	case *protocol.PageRequest:
		for _, p := range m.Pages {
			ps = append(ps, p.Page)
		}
	case *protocol.PageResponse:
		for _, p := range m.Pages {
			ps = append(ps, p.Page)
		}
	case *protocol.HomeDiffs:
		for _, p := range m.Pages {
			ps = append(ps, p.Page)
		}
	case *protocol.PagePush:
		for _, p := range m.Pages {
			ps = append(ps, p.Page)
		}
	case *protocol.PushStop:
		ps = m.Pages
	}
	return ps
}

// TestHomeWritesInPlace: a home writes its pages in place. Every page starts
// with a (zero) copy at every rank, so the first write is tracked and
// becomes a notice; after it the page goes untracked and writable. A rank
// that fetches the page exports it: the home's next write is caught again.
func TestHomeWritesInPlace(t *testing.T) {
	c := homeCluster(t, 2, 2, false)
	require.Equal(t, 0, c.st[0].Home(0))
	require.Equal(t, 1, c.st[0].Home(1))
	c.write(0, 0, 0, 1)
	assert.Equal(t, []Action{{ActMapReadWrite, 0}}, c.actions(0), "exported: the write is tracked, so mapped on the write fault")
	c.st[0].CloseInterval()
	assert.Empty(t, c.actions(0), "stays writable: untracked now")
	assert.Zero(t, c.st[0].Stats().Twins, "a home needs no twin")
	ivs, err := c.st[0].IntervalsFor(protocol.VectorTime{0, 0})
	require.NoError(t, err)
	require.Len(t, ivs, 1)
	assert.Equal(t, []protocol.PageRange{{First: 0, Count: 1}}, ivs[0].Pages)

	c.mem[0][1] = 2 // untracked: no fault
	c.st[0].CloseInterval()
	assert.Equal(t, protocol.VectorTime{1, 0}, c.st[0].VT(), "an untracked write makes no notice")

	// Rank 1 learns the notice and fetches the page: its copy has both
	// writes, and the page is exported again, write-protected first.
	c.sync(0, 1)
	assert.Equal(t, []byte{1, 2}, c.read(1, 0, 0, 2))
	assert.Equal(t, []Action{{ActWriteProtect, 0}}, c.actions(0))
	assert.Equal(t, ReadOnly, c.st[0].PageState(0))
	c.write(0, 0, 2, 3)
	assert.Equal(t, []Action{{ActUnprotect, 0}}, c.actions(0), "the write after the fetch faults")
	c.sync(0, 1)
	assert.Equal(t, []byte{1, 2, 3}, c.read(1, 0, 0, 3))
}

// TestDiffsGoHome: a rank that is not home twins the page, and its close
// sends the diff home, one message per home; a reader fetches the whole
// page from the home, which holds both writers' bytes.
func TestDiffsGoHome(t *testing.T) {
	c := homeCluster(t, 3, 3, false)
	c.write(1, 0, 8, 0xaa) // page 0 is homed at rank 0
	c.write(1, 2, 0, 0xbb) // page 2 at rank 2
	c.write(0, 0, 0, 0x11) // the home writes another byte in place
	c.st[1].CloseInterval()
	c.take(1)
	require.Len(t, c.msgs, 2, "one message per home")
	for _, e := range c.msgs {
		m := e.Msg.(*protocol.HomeDiffs)
		assert.Equal(t, protocol.IntervalID{Rank: 1, Index: 1}, m.Interval)
		assert.Equal(t, []uint32{uint32(e.To)}, msgPages(m), "pages 0 and 2 are homed at ranks 0 and 2")
	}
	c.deliverAll()
	assert.Equal(t, byte(0xaa), c.mem[0][8], "applied at the home")
	c.sync(0, 2)
	c.sync(1, 2)
	got := c.read(2, 0, 0, 9)
	assert.Equal(t, byte(0x11), got[0])
	assert.Equal(t, byte(0xaa), got[8])
	assert.Equal(t, int64(1), c.st[2].Stats().PagesFetched, "page 0 came whole")
	assert.Equal(t, int64(1), c.st[2].Stats().DiffsApplied, "rank 1's diff of page 2, homed here")
}

// TestRequestWaitsForDiff: a request that reaches the home before the diff
// it needs waits there, and is answered once the diff is applied.
func TestRequestWaitsForDiff(t *testing.T) {
	c := homeCluster(t, 3, 1, false)
	c.write(1, 0, 3, 7)
	c.st[1].CloseInterval()
	diffs := c.st[1].TakeOutput().Messages // held back
	require.Len(t, diffs, 1)
	ivs, err := c.st[1].IntervalsFor(c.st[2].VT())
	require.NoError(t, err)
	require.NoError(t, c.st[2].Acquire(ivs))
	require.NoError(t, c.st[2].Fault(0, false))
	c.take(2)
	require.Len(t, c.msgs, 1)
	req := c.msgs[0]
	c.msgs = nil
	require.NoError(t, c.st[0].HandlePageRequest(req.From, req.Msg.(*protocol.PageRequest)))
	assert.Empty(t, c.st[0].TakeOutput().Messages, "queued: the diff has not come")
	require.NoError(t, c.st[0].HandleHomeDiffs(1, diffs[0].Msg.(*protocol.HomeDiffs)))
	c.take(0)
	c.deliverAll()
	assert.Equal(t, []byte{7}, c.read(2, 0, 3, 1))
}

// TestRefreshInPlace: a page in use that an acquire invalidates is brought
// up to date in place, still mapped, as the acquire returns: no zap, no
// fault. After maxRefreshes acquires with no fault it is dropped instead.
func TestRefreshInPlace(t *testing.T) {
	c := homeCluster(t, 2, 2, false)
	c.read(1, 0, 0, 1) // rank 1 maps rank 0's page
	for i := range maxRefreshes {
		c.write(0, 0, 0, byte(i+1))
		assert.Empty(t, c.sync(0, 1), "refreshed, not dropped")
		assert.Equal(t, ReadOnly, c.st[1].PageState(0))
		assert.Equal(t, byte(i+1), c.mem[1][0])
	}
	assert.Equal(t, int64(maxRefreshes), c.st[1].Stats().Refreshed)
	c.write(0, 0, 0, 99)
	assert.Equal(t, []uint32{0}, c.sync(0, 1), "unused for too long: dropped")
	assert.Equal(t, []byte{99}, c.read(1, 0, 0, 1), "a fault brings it back")
	// Each fault after a drop doubles the refreshes allowed in a row.
	for limit := 2 * maxRefreshes; limit <= 2*maxRefreshLimit; limit *= 2 {
		for i := range min(limit, maxRefreshLimit) {
			c.write(0, 0, 0, byte(i))
			require.Empty(t, c.sync(0, 1), "refresh %d of %d", i+1, limit)
		}
		c.write(0, 0, 0, 7)
		assert.Equal(t, []uint32{0}, c.sync(0, 1), "dropped after %d", min(limit, maxRefreshLimit))
		assert.Equal(t, []byte{7}, c.read(1, 0, 0, 1))
	}
}

// TestHomesMove: at a barrier of every rank, a page one rank alone wrote
// since the last one moves home to it; placements move pages where asked
// and stay; a rank placed as home without a current copy fetches it from
// the previous home before it answers anyone.
func TestHomesMove(t *testing.T) {
	c := homeCluster(t, 3, 3, false)
	c.write(1, 0, 0, 5) // page 0 (home 0) written by rank 1 alone
	c.write(2, 2, 0, 6) // page 2 (home 2) written by its home
	c.write(1, 1, 0, 7) // page 1 (home 1) ...
	c.write(2, 1, 1, 8) // ... and rank 2: no single writer
	barrier(c, nil)
	for r := range 3 {
		assert.Equal(t, 1, c.st[r].Home(0), "rank %d: page 0 moved to its writer", r)
		assert.Equal(t, 1, c.st[r].Home(1), "rank %d: two writers, page 1 stays", r)
		assert.Equal(t, 2, c.st[r].Home(2))
	}
	assert.Equal(t, int64(1), c.st[1].Stats().HomeMigrations)
	assert.Equal(t, []byte{5}, c.read(2, 0, 0, 1), "rank 2 fetches from the new home")

	// Placing page 0 at rank 2, which holds it, and page 2 at rank 0, which
	// does not: rank 0 fetches page 2 from rank 2 as the barrier ends.
	barrier(c, []protocol.HomeRange{{First: 0, Count: 1, Rank: 2}, {First: 2, Count: 1, Rank: 0}})
	for r := range 3 {
		assert.Equal(t, 2, c.st[r].Home(0))
		assert.Equal(t, 0, c.st[r].Home(2))
	}
	assert.Equal(t, []byte{6}, c.read(0, 2, 0, 1))
	c.write(0, 0, 0, 9) // rank 0 alone writes page 0, placed at rank 2: it stays
	barrier(c, nil)
	assert.Equal(t, 2, c.st[1].Home(0), "placed pages do not move")
	assert.Equal(t, []byte{9}, c.read(1, 0, 0, 1))
}

// TestHomesStopTakingTurns: after its first move a page moves home only to
// a rank that alone wrote it in two spans between barriers of every rank in
// a row that wrote it; lone writers taking turns leave it where it is.
func TestHomesStopTakingTurns(t *testing.T) {
	c := homeCluster(t, 3, 3, false)
	c.write(1, 0, 0, 1) // page 0 (home 0): rank 1 alone, the first time
	barrier(c, nil)
	assert.Equal(t, 1, c.st[0].Home(0), "the first lone writer takes the home")
	for i := range 3 {
		w := 2 - i%2 // ranks 2, 1 and 2 in turn
		c.write(w, 0, 0, byte(10+i))
		barrier(c, nil)
		for r := range 3 {
			assert.Equal(t, 1, c.st[r].Home(0), "turn %d: rank %d's view", i, r)
		}
	}
	barrier(c, nil) // nobody writes: rank 2 was the last lone writer...
	c.write(2, 0, 0, 20)
	barrier(c, nil) // ... and is again, in the next span that writes the page
	for r := range 3 {
		assert.Equal(t, 2, c.st[r].Home(0), "rank %d: moved to the rank that wrote it twice in a row", r)
	}
	c.write(0, 0, 0, 30) // rank 0 and ...
	c.write(1, 0, 1, 31) // ... rank 1: several writers
	barrier(c, nil)
	c.write(0, 0, 0, 32)
	barrier(c, nil)
	assert.Equal(t, 2, c.st[0].Home(0), "one lone span after a shared one does not move it")
	c.write(0, 0, 0, 33)
	barrier(c, nil)
	assert.Equal(t, 0, c.st[1].Home(0), "two do")
	assert.Equal(t, []byte{33, 31}, c.read(1, 0, 0, 2))
}

// TestSharedVersions: the pages whose homes move to a rank at one barrier
// share a version until one of them holds an interval more; a diff applied
// to one leaves the others' versions as they were.
func TestSharedVersions(t *testing.T) {
	c := homeCluster(t, 2, 4, false)
	barrier(c, []protocol.HomeRange{{First: 0, Count: 4, Rank: 1, Soft: true}})
	home := c.st[1]
	assert.Same(t, home.homeVersion(0), home.homeVersion(2), "pages 0 and 2 moved to rank 1 at one barrier")
	assert.Same(t, home.homeVersion(1), home.homeVersion(3), "pages 1 and 3 were at rank 1 from the start")
	c.write(0, 0, 0, 7) // rank 0 writes pages 0 and 2, homed at rank 1
	c.write(0, 2, 0, 8)
	c.write(1, 1, 0, 9)
	c.st[0].CloseInterval()
	c.take(0)
	c.deliverAll() // the diffs go home
	id := protocol.IntervalID{Rank: 0, Index: c.st[0].VT()[0]}
	assert.True(t, home.holds(0, id))
	assert.True(t, home.holds(2, id))
	assert.NotSame(t, home.homeVersion(0), home.homeVersion(2), "each holds the diff on a version of its own")
	c.st[0].CloseInterval()
	c.write(0, 0, 1, 10) // a later interval of rank 0 writes page 0 alone
	c.st[0].CloseInterval()
	c.take(0)
	c.deliverAll()
	later := protocol.IntervalID{Rank: 0, Index: c.st[0].VT()[0]}
	assert.True(t, home.holds(0, later))
	assert.False(t, home.holds(2, later), "page 2's version did not take page 0's diff")
	assert.False(t, home.holds(1, id), "nor did the pages homed here from the start")
	assert.Equal(t, []byte{7, 10}, c.read(1, 0, 0, 2))
	assert.Equal(t, []byte{8}, c.read(1, 2, 0, 1))
}

// barrier runs a barrier of every rank of c by hand, rank 0 managing, with
// the placements given.
func barrier(c *cluster, placements []protocol.HomeRange) {
	c.t.Helper()
	n := len(c.st)
	vts := make([]protocol.VectorTime, n)
	var all []protocol.Interval
	for r := range n {
		c.st[r].CloseInterval()
		c.st[r].PushWritten()
		c.take(r)
		for _, e := range c.msgs {
			if push, ok := e.Msg.(*protocol.PagePush); ok && e.From == r {
				for i := range push.Pages {
					// Taken as the message is sent (the engine's copy).
					push.Pages[i].Data = slices.Clone(push.Pages[i].Data)
				}
			}
		}
		vts[r] = c.st[r].VT()
		ivs, err := c.st[r].IntervalsFor(c.st[r].homes.epoch)
		require.NoError(c.t, err)
		all = append(all, ivs...)
	}
	c.deliverAll() // the diffs the closes sent home
	require.NoError(c.t, c.st[0].Merge(all))
	var lacking [][]protocol.Interval
	for r := range n {
		l, err := c.st[0].IntervalsFor(vts[r])
		require.NoError(c.t, err)
		lacking = append(lacking, l)
	}
	for r := range n {
		if r > 0 {
			require.NoError(c.t, c.st[r].Merge(lacking[r]))
		}
		require.NoError(c.t, c.st[r].AcquireAtEpoch(placements))
		c.st[r].StartRefresh()
		c.take(r)
	}
	c.deliverAll()
	for r := range n {
		c.st[r].TakeZap()
		c.take(r)
	}
}

// TestEarlyRequestsHeld: a request from a rank that has left more barriers
// of every rank than this one (homes move there) waits until this rank has.
func TestEarlyRequestsHeld(t *testing.T) {
	c := homeCluster(t, 3, 2, false)
	c.read(2, 1, 0, 1)  // rank 2 uses page 1, homed at rank 1
	c.write(0, 1, 0, 4) // which rank 0 alone writes
	c.st[0].CloseInterval()
	c.deliverAll()
	ivs, err := c.st[0].IntervalsFor(c.st[2].VT())
	require.NoError(t, err)
	// Rank 2 leaves the barrier first: page 1 moves home to rank 0, and
	// rank 2 asks rank 0 for it as it brings the page up to date.
	require.NoError(t, c.st[2].Merge(ivs))
	require.NoError(t, c.st[2].AcquireAtEpoch(nil))
	assert.Equal(t, 0, c.st[2].Home(1))
	c.st[2].StartRefresh()
	out := c.st[2].TakeOutput().Messages
	require.Len(t, out, 1)
	req := out[0].Msg.(*protocol.PageRequest)
	assert.Equal(t, 0, out[0].To)
	assert.Equal(t, uint32(1), req.Epoch)
	require.NoError(t, c.st[0].HandlePageRequest(2, req))
	assert.Empty(t, c.st[0].TakeOutput().Messages, "held: rank 0 has not left the barrier")
	require.NoError(t, c.st[0].Merge(nil))
	require.NoError(t, c.st[0].AcquireAtEpoch(nil))
	out = c.st[0].TakeOutput().Messages
	require.Len(t, out, 1, "answered once rank 0 left it too")
	assert.Equal(t, byte(4), out[0].Msg.(*protocol.PageResponse).Pages[0].Data[0])
}

// TestAsyncWrites: with writes reported instead of faulting, every mapped
// page homed elsewhere has a twin from the moment it is mapped; reported
// pages are diffed at the close, which leaves them as the scan that
// reported them left them, protected: no action.
func TestAsyncWrites(t *testing.T) {
	c := homeCluster(t, 2, 2, true)
	s := c.st[0]
	require.NoError(t, s.Fault(1, false)) // page 1 is homed at rank 1
	assert.Equal(t, []Action{{ActTrack, 1}, {ActMapReadOnly, 1}}, c.actions(0), "mapped, so its writes are reported, tracked first")
	assert.Equal(t, int64(1), s.Stats().Twins, "twinned as it is mapped")
	c.mem[0][pageSize+4] = 9 // no fault
	require.NoError(t, s.Written([]protocol.PageRange{{First: 0, Count: 2}}), "page 0 is not mapped: passed over")
	s.CloseInterval()
	c.take(0)
	require.Len(t, c.msgs, 1)
	assert.Equal(t, 1, c.msgs[0].To)
	assert.Empty(t, c.acts[0], "protected by the scan")
	c.deliverAll()
	assert.Equal(t, byte(9), c.mem[1][pageSize+4])
	// A page written in place at its home needs no report while its notice
	// is due (it covers every write until the close), nor after it, while
	// no copy is elsewhere: untracked, its writes never fault again.
	require.NoError(t, c.st[1].Fault(1, true))
	assert.Equal(t, []Action{{ActMapReadWrite, 1}}, c.actions(1), "exported, but its notice is due: untracked")
	c.st[1].CloseInterval()
	assert.Empty(t, c.actions(1), "private")
	// Copied again, its writes are reported: tracked, and protected so that
	// the next one shows.
	ivs, err := c.st[1].IntervalsFor(s.VT())
	require.NoError(t, err)
	require.NoError(t, s.Acquire(ivs))
	require.NoError(t, s.Fault(1, false))
	c.take(0)
	c.deliverAll()
	assert.Equal(t, []Action{{ActTrack, 1}, {ActWriteProtect, 1}}, c.actions(1), "exported again")
	assert.ErrorContains(t, s.Written([]protocol.PageRange{{First: 1, Count: 2}}), "outside the region")
	sync := homeCluster(t, 2, 1, false)
	assert.ErrorContains(t, sync.st[0].Written(nil), "without asynchronous write tracking")
}

// TestFetchedHomePageStaysExported: with AsyncWrites, a page homed and
// written in place here that another rank fetched since its last notice
// stays tracked while written and exported after the close, so that the
// next fetch costs no change of protection; a span without a fetch makes it
// private again.
func TestFetchedHomePageStaysExported(t *testing.T) {
	c := homeCluster(t, 2, 2, true)
	home := c.st[1] // page 1 is homed at rank 1
	c.write(1, 1, 0, 1)
	home.CloseInterval()
	c.actions(1)
	c.sync(1, 0)
	assert.Equal(t, []byte{1}, c.read(0, 1, 0, 1))
	assert.Equal(t, []Action{{ActTrack, 1}, {ActWriteProtect, 1}}, c.actions(1), "a private page is protected as it is exported")
	for i := byte(2); i < 5; i++ {
		// The neighbour's boundary: written here, then brought up to date
		// there, span after span.
		c.mem[1][pageSize] = i // no fault: the kernel records it
		require.NoError(t, home.Written([]protocol.PageRange{{First: 1, Count: 1}}))
		assert.Empty(t, c.actions(1), "fetched since its last notice: stays tracked")
		c.sync(1, 0)
		assert.Equal(t, []byte{i}, c.read(0, 1, 0, 1), "span %d", i)
		assert.Empty(t, c.actions(1), "span %d: exported still, and protected by the scan that reported it", i)
		assert.Equal(t, ReadOnly, home.PageState(1))
	}
	// A span with no fetch after the last one's: the page stays exported
	// through its close; in the next, it goes untracked at its write and
	// private at the close, and its next fetch protects it again.
	c.mem[1][pageSize] = 5
	require.NoError(t, home.Written([]protocol.PageRange{{First: 1, Count: 1}}))
	home.CloseInterval()
	assert.Empty(t, c.actions(1))
	c.mem[1][pageSize] = 6
	require.NoError(t, home.Written([]protocol.PageRange{{First: 1, Count: 1}}))
	assert.Equal(t, []Action{{ActUntrack, 1}}, c.actions(1))
	home.CloseInterval()
	assert.Empty(t, c.actions(1))
	assert.Equal(t, ReadWrite, home.PageState(1), "private")
	c.mem[1][pageSize] = 7
	c.sync(1, 0)
	assert.Equal(t, []byte{7}, c.read(0, 1, 0, 1), "written untracked, and the fetch takes the page as it is")
	assert.Equal(t, []Action{{ActTrack, 1}, {ActWriteProtect, 1}}, c.actions(1))
}

// TestHomeRejects: messages of the home-based protocol that do not fit are
// refused, naming what is wrong.
func TestHomeRejects(t *testing.T) {
	c := homeCluster(t, 2, 2, false)
	s := c.st[0]
	id := protocol.IntervalID{Rank: 1, Index: 1}
	assert.ErrorContains(t, s.HandlePageRequest(1, &protocol.PageRequest{ID: 1, Pages: []protocol.PageNeed{{Page: 1}}}), "page 1, which rank 0 is not home of")
	assert.ErrorContains(t, s.HandlePageRequest(1, &protocol.PageRequest{ID: 1, Pages: []protocol.PageNeed{{Page: 7}}}), "page 7 out of range")
	assert.ErrorContains(t, s.HandleHomeDiffs(1, &protocol.HomeDiffs{Interval: id, Pages: []protocol.PageDiff{{Page: 1}}}), "which rank 0 is not home of")
	assert.ErrorContains(t, s.HandleHomeDiffs(0, &protocol.HomeDiffs{Interval: id, Pages: []protocol.PageDiff{{Page: 0}}}), "of another rank")
	assert.ErrorContains(t, s.HandleHomeDiffs(1, &protocol.HomeDiffs{Interval: id, Pages: []protocol.PageDiff{{Page: 0, Diff: []byte{0, 200, 1}}}}), "home diff of page 0")
	assert.ErrorContains(t, s.HandlePageResponse(1, &protocol.PageResponse{ID: 5}), "answers no outstanding request")
	require.NoError(t, c.st[1].Acquire([]protocol.Interval{{ID: protocol.IntervalID{Rank: 0, Index: 1}, VT: protocol.VectorTime{1, 0}, Pages: []protocol.PageRange{{First: 0, Count: 1}}}}))
	require.NoError(t, c.st[1].Fault(0, false))
	req := c.st[1].TakeOutput().Messages[0].Msg.(*protocol.PageRequest)
	assert.ErrorContains(t, c.st[1].HandlePageResponse(0, &protocol.PageResponse{ID: req.ID, Pages: []protocol.PageCopy{{Page: 0, Data: []byte{1}}}}), "1 bytes answered for a 64-byte page")
	assert.ErrorContains(t, c.st[1].HandlePageResponse(0, &protocol.PageResponse{ID: req.ID}), "0 pages answered, 1 asked")
	assert.ErrorContains(t, c.st[1].HandlePageResponse(1, &protocol.PageResponse{ID: req.ID}), "the request went to rank 0")
	assert.ErrorContains(t, c.st[1].AcquireAtEpoch([]protocol.HomeRange{{First: 1, Count: 5, Rank: 0}}), "does not fit the job")
	homeless := newCluster(t, 2, 1, false)
	assert.ErrorContains(t, homeless.st[0].HandlePageRequest(1, req), "without the home-based protocol")
}

// TestFaultAround: a fault on a page this rank writes in place maps the
// unmapped pages after it that it also writes in place: faultAroundFirst
// of them when it starts a run, twice the run it extends after that, up to
// faultAround; a page homed elsewhere ends the run.
func TestFaultAround(t *testing.T) {
	const homed = 3*faultAround + 27 // pages homed at rank 0; 10 more at rank 1
	c := homeCluster(t, 2, homed+10, true)
	barrier(c, []protocol.HomeRange{{First: 0, Count: homed, Rank: 0}, {First: homed, Count: 10, Rank: 1}})
	c.actions(0)
	maps := func(r int) []Action {
		var out []Action
		for _, a := range c.actions(r) {
			if a.Kind == ActMapReadOnly || a.Kind == ActMapReadWrite {
				out = append(out, a)
			}
		}
		return out
	}
	next := uint32(0)
	for _, window := range []uint32{faultAroundFirst, 2 * (faultAroundFirst + 1), 2 * (3*faultAroundFirst + 4), faultAround} {
		c.read(0, next, 0, 1)
		acts := maps(0)
		require.Len(t, acts, int(1+window), "a fault on page %d", next)
		for i, a := range acts {
			assert.Equal(t, next+uint32(i), a.Page)
		}
		next += 1 + window
	}
	c.read(0, homed-20, 0, 1)
	acts := maps(0)
	require.Len(t, acts, 20, "the last 20 pages homed at rank 0: the next is rank 1's")
	assert.Equal(t, uint32(homed-1), acts[19].Page)
	assert.Equal(t, acts[0].Kind, acts[1].Kind, "mapped as the faulting read maps")
	c.read(0, next+5, 0, 1)
	assert.Len(t, maps(0), 1+faultAroundFirst, "a fault that does not extend a run starts one")
	c.read(0, next, 0, 1)
	assert.Len(t, maps(0), 5, "up to the pages mapped by the last read")
	c.read(1, 0, 0, 1)
	assert.Len(t, maps(1), 1, "a page fetched from its home maps alone")
}

// TestFaultAroundWrite: after a write fault the pages mapped around are
// mapped writable and count as written in the open interval, so the
// application fills them without a fault; after a read, read-only.
func TestFaultAroundWrite(t *testing.T) {
	const pages = faultAround + 37
	c := homeCluster(t, 2, pages, true)
	barrier(c, []protocol.HomeRange{{First: 0, Count: pages, Rank: 0}})
	c.actions(0)
	c.write(0, 10, 0, 1)
	var kinds []ActionKind
	for _, a := range c.actions(0) {
		if a.Kind == ActMapReadOnly || a.Kind == ActMapReadWrite {
			kinds = append(kinds, a.Kind)
		}
	}
	require.Len(t, kinds, 1+faultAroundFirst)
	for i, k := range kinds {
		assert.Equal(t, ActMapReadWrite, k, "page %d", 10+i)
	}
	assert.Len(t, c.st[0].dirty, 1+faultAroundFirst, "written in the open interval")
	c.read(0, 10+faultAroundFirst+1, 0, 1)
	for _, a := range c.actions(0) {
		if a.Page > 10+faultAroundFirst+1 && (a.Kind == ActMapReadOnly || a.Kind == ActMapReadWrite) {
			assert.Equal(t, ActMapReadOnly, a.Kind, "page %d mapped around a read", a.Page)
		}
	}
	// Rank 1 read page 20 before: the notice of the page mapped around
	// drops its copy, and the copy it fetches again is the same.
	c.read(1, 20, 0, 1)
	barrier(c, nil)
	assert.Equal(t, []byte{0}, c.read(1, 20, 0, 1))
	assert.Equal(t, []byte{1}, c.read(1, 10, 0, 1))
}

// TestPrefetchPassesOverUnwanted: a fault on a page homed elsewhere brings
// the invalid pages after it from the same home; those the application did
// not touch before they were invalidated again are passed over by the next
// fault's prefetch, until the application faults on them.
func TestPrefetchPassesOverUnwanted(t *testing.T) {
	const pages = 8
	c := &cluster{t: t, acts: make([][]Action, 2)}
	for r := range 2 {
		mem := make([]byte, pages*pageSize)
		s, err := New(Config{Rank: r, NProcs: 2, PageSize: pageSize, Pages: pages, Homes: true, Funneled: true, Prefetch: true}, mem)
		require.NoError(t, err)
		c.st, c.mem = append(c.st, s), append(c.mem, mem)
	}
	barrier(c, []protocol.HomeRange{{First: 0, Count: pages, Rank: 0}})
	// fault faults page p at rank 1 and returns the pages it asks rank 0 for.
	fault := func(p uint32) []uint32 {
		require.NoError(t, c.st[1].Fault(p, false))
		c.take(1)
		var ps []uint32
		for _, e := range c.msgs {
			if _, ok := e.Msg.(*protocol.PageRequest); ok && e.From == 1 {
				ps = append(ps, msgPages(e.Msg)...)
			}
		}
		c.deliverAll()
		return ps
	}
	writeAll := func() {
		for p := range uint32(pages) {
			c.write(0, p, 0, 1)
		}
		barrier(c, nil)
	}
	writeAll()
	assert.Equal(t, []uint32{0, 1, 2, 3, 4, 5, 6, 7}, fault(0), "pages 1 to 7 come with page 0's fault")
	c.read(1, 1, 0, 1) // prefetched, mapped by a fault that fetches nothing
	writeAll()         // pages 0 and 1 in use: refreshed; 2 to 7 came for nothing
	assert.Equal(t, []uint32{2}, fault(2), "pages 3 to 7 passed over")
	assert.Equal(t, []uint32{5}, fault(5), "a fault on a page passed over fetches it")
	assert.False(t, c.st[1].pages.at(5).home.unwanted, "faulted on: prefetched again")
	assert.True(t, c.st[1].pages.at(6).home.unwanted)
}

// TestPushesAtBarriers: a home pushes the pages it wrote to the ranks it
// sent them to as it arrives at a barrier of every rank; a rank leaving the
// barrier takes the push instead of asking, unless the push lacks a diff it
// sent home itself; a page it stopped using it leaves current but unmapped,
// and at the next push it tells the home to stop.
func TestPushesAtBarriers(t *testing.T) {
	c := homeCluster(t, 2, 2, false)
	// sent returns the pages rank from sent in messages of type typ
	// during f.
	sent := func(from int, typ protocol.MsgType, f func()) []uint32 {
		c.sent = nil
		f()
		var ps []uint32
		for _, e := range c.sent {
			if e.From == from && e.Msg.Type() == typ {
				ps = append(ps, msgPages(e.Msg)...)
			}
		}
		return ps
	}
	c.write(0, 0, 0, 100)
	barrier(c, nil)
	assert.Equal(t, []byte{100}, c.read(1, 0, 0, 1)) // rank 1 fetches page 0, homed at rank 0
	for i := range maxRefreshes {
		c.write(0, 0, 0, byte(i+1))
		assert.Equal(t, []uint32{0}, sent(0, protocol.MsgPagePush, func() { barrier(c, nil) }), "pushed at the arrival")
		assert.Equal(t, ReadOnly, c.st[1].PageState(0), "refreshed in place")
		assert.Equal(t, byte(i+1), c.mem[1][0])
	}
	assert.Equal(t, int64(maxRefreshes), c.st[1].Stats().Pushed)
	assert.Zero(t, c.st[1].Stats().PagesFetched-1, "no request since the first fetch")

	// Unused for too long: left current, unmapped; a fault maps it, asking
	// nothing, and the page is in use again.
	c.write(0, 0, 0, 50)
	assert.Empty(t, sent(1, protocol.MsgPageRequest, func() { barrier(c, nil) }))
	assert.Equal(t, Unmapped, c.st[1].PageState(0))
	assert.Empty(t, sent(1, protocol.MsgPageRequest, func() { assert.Equal(t, []byte{50}, c.read(1, 0, 0, 1)) }))
	c.write(0, 0, 0, 51)
	barrier(c, nil)
	assert.Equal(t, []byte{51}, c.read(1, 0, 0, 1))

	// A push that lacks rank 1's own diff, on its way home as rank 0
	// pushed: rank 1 asks instead.
	pushed := c.st[1].Stats().Pushed
	c.write(1, 0, 1, 7)
	c.write(0, 0, 0, 52)
	assert.Equal(t, []uint32{0}, sent(1, protocol.MsgPageRequest, func() { barrier(c, nil) }))
	assert.Equal(t, pushed, c.st[1].Stats().Pushed)
	assert.Equal(t, []byte{52, 7}, c.read(1, 0, 0, 2))

	// Rank 1 stops using the page: dropped (mapped writable, no push can
	// make it current unmapped), it tells rank 0 to stop, and rank 0
	// pushes it no more.
	stops := sent(1, protocol.MsgPushStop, func() {
		for range maxRefreshLimit + 2 {
			c.write(0, 0, 0, 60)
			barrier(c, nil)
		}
	})
	assert.Equal(t, []uint32{0}, stops)
	assert.Zero(t, c.st[0].pages.at(0).home.pushTo)
	c.write(0, 0, 0, 62)
	assert.Empty(t, sent(0, protocol.MsgPagePush, func() { barrier(c, nil) }))
	assert.Equal(t, []byte{62}, c.read(1, 0, 0, 1))
}

// TestNoPushesWithinAnEngine: ranks served by one engine ask for the pages
// in use as they leave a barrier; their homes push nothing.
func TestNoPushesWithinAnEngine(t *testing.T) {
	c := &cluster{t: t, acts: make([][]Action, 2)}
	for r := range 2 {
		mem := make([]byte, 2*pageSize)
		s, err := New(Config{Rank: r, NProcs: 2, PageSize: pageSize, Pages: 2, Homes: true, Funneled: true, Colocated: []bool{true, true}}, mem)
		require.NoError(t, err)
		c.st, c.mem = append(c.st, s), append(c.mem, mem)
	}
	c.write(0, 0, 0, 1)
	barrier(c, nil)
	assert.Equal(t, []byte{1}, c.read(1, 0, 0, 1))
	for i := range 3 {
		c.write(0, 0, 0, byte(i+2))
		c.sent = nil
		barrier(c, nil)
		for _, e := range c.sent {
			assert.NotEqual(t, protocol.MsgPagePush, e.Msg.Type())
		}
		assert.Equal(t, byte(i+2), c.mem[1][0], "refreshed on request")
	}
	assert.Zero(t, c.st[1].Stats().Pushed)
	_, err := New(Config{Rank: 0, NProcs: 2, PageSize: pageSize, Pages: 2, Colocated: []bool{true}}, make([]byte, 2*pageSize))
	assert.ErrorContains(t, err, "colocation given for 1 ranks of 2")
}

// TestStatsAdd: Add sums every counter, so a counter added to Stats
// without a line in Add fails here.
func TestStatsAdd(t *testing.T) {
	var a, b Stats
	av, bv := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := range av.NumField() {
		av.Field(i).SetInt(int64(i + 1))
		bv.Field(i).SetInt(100)
	}
	a.Add(b)
	for i := range av.NumField() {
		assert.Equal(t, int64(i+101), av.Field(i).Int(), "field %s", av.Type().Field(i).Name)
	}
}

// BenchmarkPrefetchSweep: a rank reads, page by page, an array of 16 384
// pages in use that another rank rewrote whole, as in a homeless sweep:
// each fault prefetches the next pages, choosing among all the others.
func BenchmarkPrefetchSweep(b *testing.B) {
	const pages = 16384
	for b.Loop() {
		b.StopTimer()
		c := newCluster(b, 2, pages, true)
		for p := range uint32(pages) {
			c.write(0, p, 0, 1)
		}
		c.sync(0, 1)
		for p := range uint32(pages) {
			c.read(1, p, 0, 1)
		}
		for p := range uint32(pages) {
			c.write(0, p, 0, 2)
		}
		c.sync(0, 1)
		b.StartTimer()
		for p := range uint32(pages) {
			c.read(1, p, 0, 1)
		}
	}
}

// TestPageTableChunks: page states come in chunks allocated at first use,
// the last one cut to the region; used yields the allocated ones in order.
func TestPageTableChunks(t *testing.T) {
	const n = 2<<chunkShift + 5
	tb := newChunked[page](n)
	for p := range tb.used() {
		t.Fatalf("page %d allocated before use", p)
	}
	tb.at(n - 1).state = ReadWrite
	tb.at(3).idle = 7
	assert.Equal(t, ReadWrite, tb.at(n-1).state, "a page keeps its state")
	assert.Equal(t, uint8(7), tb.at(3).idle)
	assert.Nil(t, tb.chunks[1], "the middle chunk, never used, is not allocated")
	assert.Len(t, tb.chunks[2], 5, "the last chunk is cut to the region")
	var seen []uint32
	for p, pg := range tb.used() {
		if pg.state == ReadWrite || pg.idle != 0 {
			seen = append(seen, p)
		}
	}
	assert.Equal(t, []uint32{3, n - 1}, seen)
	assert.Panics(t, func() { tb.at(n) }, "a page beyond the region")
}

// TestChunkedPeek: peek reads a page's value without allocating its chunk,
// nil for a chunk never written.
func TestChunkedPeek(t *testing.T) {
	const n = 3<<chunkShift + 1
	tb := newChunked[pageHome](n)
	tb.at(5).to = 2
	assert.Equal(t, &pageHome{to: 2}, tb.peek(5))
	assert.Equal(t, &pageHome{}, tb.peek(6), "a page of an allocated chunk, never written")
	assert.Nil(t, tb.peek(2<<chunkShift), "a page of a chunk never written")
	assert.Nil(t, tb.chunks[2], "peek allocates nothing")
	assert.Panics(t, func() { tb.peek(n) }, "a page beyond the region")
}

// TestHugeRegionCostsLittle: a State over a region of 2^24 pages (64 GiB of
// 4 KiB pages) keeps no value per page up front: its home-based protocol
// tells every page's first home without a table of them.
func TestHugeRegionCostsLittle(t *testing.T) {
	const pages = 1 << 24
	mem := make([]byte, pages) // pages of one byte
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := New(Config{Rank: 1, NProcs: 3, PageSize: 1, Pages: pages, Homes: true}, mem)
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by New")
	for _, p := range []uint32{0, 1, 2, pages/2 + 1, pages - 1} {
		assert.Equal(t, int(p)%3, s.Home(p), "page %d", p)
	}
	assert.True(t, s.homedHere(pages-3), "(2^24-3) mod 3 = 1")
	for p := range s.homes.of.used() {
		t.Fatalf("page %d's home value allocated by reading homes", p)
	}
}
