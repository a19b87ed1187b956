package rank

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/barrier"
	"github.com/svmcluster/svm/protocol"
)

func newRanks(t *testing.T, n int) []*Rank {
	var rs []*Rank
	for r := range n {
		rk, err := New(Config{Rank: r, NProcs: n, PageSize: 64, Pages: 4, Locks: 8, Barriers: 4, GCThreshold: 1 << 20}, make([]byte, 4*64))
		require.NoError(t, err)
		rs = append(rs, rk)
	}
	return rs
}

// pump delivers every message between the ranks, oldest first, and reports
// which ranks finished their outstanding call.
func pump(t *testing.T, rs []*Rank, first ...protocol.Envelope) map[int]bool {
	done := map[int]bool{}
	queue := first
	for i, r := range rs {
		rd := r.Ready()
		queue = append(queue, rd.Messages...)
		done[i] = done[i] || rd.Done
	}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		require.NoError(t, rs[e.To].Step(e))
		rd := rs[e.To].Ready()
		queue = append(queue, rd.Messages...)
		done[e.To] = done[e.To] || rd.Done
	}
	return done
}

func TestLockAndBarrierFlow(t *testing.T) {
	rs := newRanks(t, 3)
	require.NoError(t, rs[1].Acquire(1)) // rank 1 manages lock 1: local
	assert.True(t, rs[1].Ready().Done)
	require.NoError(t, rs[1].Release(1))

	require.NoError(t, rs[0].Acquire(1))
	assert.True(t, rs[0].Busy())
	done := pump(t, rs)
	assert.True(t, done[0])
	assert.False(t, rs[0].Busy())
	require.NoError(t, rs[0].Release(1))

	for _, r := range rs {
		require.NoError(t, r.Barrier(2, nil))
	}
	done = pump(t, rs)
	for i, r := range rs {
		assert.True(t, done[i], "rank %d left the barrier", i)
		assert.Equal(t, int64(1), r.Stats().Barriers)
	}
	assert.Equal(t, int64(1), rs[1].Stats().LockAcquiresLocal)
	assert.Equal(t, int64(1), rs[0].Stats().LockAcquiresRemote)
}

func TestMisuse(t *testing.T) {
	rs := newRanks(t, 2)
	r := rs[0]
	assert.ErrorContains(t, r.Release(3), "unlock of lock 3, which rank 0 does not hold")
	assert.ErrorContains(t, r.Acquire(8), "lock 8 out of range [0,8)")
	assert.False(t, r.Busy(), "a refused call leaves no operation behind")
	assert.ErrorContains(t, r.Barrier(4, nil), "barrier 4 out of range [0,4)")
	assert.False(t, r.Busy())
	assert.ErrorContains(t, r.Barrier(0, []int{0, 5}), "outside [0,2)")
	assert.ErrorContains(t, r.Validate(3, 2, false), "beyond the region")
	assert.False(t, r.Busy())

	require.NoError(t, r.Acquire(1)) // remote: rank 1 manages it
	assert.ErrorContains(t, r.Acquire(2), "lock acquire called while a lock acquire is in progress")
	assert.ErrorContains(t, r.Barrier(0, nil), "in progress")
	assert.ErrorContains(t, r.Release(1), "in progress")

	for _, e := range []struct {
		env  protocol.Envelope
		want string
	}{
		{protocol.Envelope{From: 1, To: 1, Msg: &protocol.LockGrant{Lock: 1}}, "addressed to rank 1"},
		{protocol.Envelope{From: 0, To: 0, Msg: &protocol.LockGrant{Lock: 1}}, "from rank 0"},
		{protocol.Envelope{From: 1, To: 0, Msg: &protocol.LockGrant{Lock: 9}}, "lock 9 out of range"},
		{protocol.Envelope{From: 1, To: 0, Msg: &protocol.LockGrant{Lock: 2}}, "unexpected grant"},
		{protocol.Envelope{From: 1, To: 0, Msg: &protocol.BarrierDepart{Barrier: 1}}, "not waiting at it"},
		{protocol.Envelope{From: 1, To: 0, Msg: &protocol.DiffResponse{ID: 7}}, "answers no outstanding request"},
	} {
		assert.ErrorContains(t, r.Step(e.env), e.want)
	}

	_, err := New(Config{Rank: 0, NProcs: 1, PageSize: 64, Pages: 1, Locks: 1, Barriers: 1}, make([]byte, 64))
	assert.ErrorContains(t, err, "garbage collection threshold")
	_, err = New(Config{Rank: 0, NProcs: 1, PageSize: 64, Pages: 1, Barriers: 1, GCThreshold: 1}, make([]byte, 64))
	assert.ErrorContains(t, err, "no locks")
}

func TestShare(t *testing.T) {
	rs := newRanks(t, 3)
	require.NoError(t, rs[0].Barrier(1, nil))
	require.NoError(t, rs[1].ShareAt(1, nil, 0xabc))
	require.NoError(t, rs[2].Barrier(1, nil))
	pump(t, rs)
	for i, r := range rs {
		v, ok := r.Shared()
		assert.True(t, ok, "rank %d", i)
		assert.Equal(t, uint64(0xabc), v, "rank %d", i)
	}
	for _, r := range rs {
		require.NoError(t, r.Barrier(1, nil))
	}
	pump(t, rs)
	_, ok := rs[2].Shared()
	assert.False(t, ok, "a plain barrier shares nothing")

	require.NoError(t, rs[0].ShareAt(2, nil, 1))
	require.NoError(t, rs[1].ShareAt(2, nil, 2))
	require.NoError(t, rs[2].Barrier(2, nil))
	var err error
	queue := append(rs[0].Ready().Messages, rs[1].Ready().Messages...)
	queue = append(queue, rs[2].Ready().Messages...)
	for _, e := range queue {
		if err = rs[e.To].Step(e); err != nil {
			break
		}
	}
	assert.ErrorContains(t, err, "both share a value")
}

// allocRanks returns n ranks on a region of pages pages of 64 bytes at base
// 0x1000, with chunks of 256 bytes.
func allocRanks(t *testing.T, n, pages int) []*Rank {
	var rs []*Rank
	for r := range n {
		rk, err := New(Config{Rank: r, NProcs: n, PageSize: 64, Pages: pages, Base: 0x1000, ChunkSize: 256,
			Locks: 8, Barriers: 4, GCThreshold: 1 << 20}, make([]byte, pages*64))
		require.NoError(t, err)
		rs = append(rs, rk)
	}
	return rs
}

// call runs an allocation or counter call at rank r to its end and returns
// its answer and the messages it took.
func call(t *testing.T, rs []*Rank, r int, start func() error) (uint64, int, error) {
	t.Helper()
	require.NoError(t, start())
	msgs := 0
	value, done := uint64(0), false
	var callErr error
	queue := []protocol.Envelope{}
	take := func(i int) {
		rd := rs[i].Ready()
		queue = append(queue, rd.Messages...)
		if i == r && rd.Done {
			value, callErr, done = rd.Value, rd.Err, true
		}
	}
	take(r)
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		msgs++
		require.NoError(t, rs[e.To].Step(e))
		take(e.To)
	}
	require.True(t, done, "the call did not finish")
	return value, msgs, callErr
}

// TestSmallObjects: small private allocations come from the rank's own
// supply, a chunk from rank 0 at a time; a rank takes back what it frees
// itself, rank 0 collects what others free and hands it out again.
func TestSmallObjects(t *testing.T) {
	rs := allocRanks(t, 3, 64)
	seen := map[uint64]bool{}
	for i := range 8 {
		addr, msgs, err := call(t, rs, 1, func() error { return rs[1].Malloc(40) }) // class 64: 4 a chunk
		require.NoError(t, err)
		assert.Zero(t, addr%64, "aligned to the class")
		assert.False(t, seen[addr], "handed out twice")
		seen[addr] = true
		if i%4 == 0 {
			assert.Equal(t, 2, msgs, "a chunk from rank 0 (%d)", i)
		} else {
			assert.Zero(t, msgs, "from the rank's supply (%d)", i)
		}
	}
	a, _, _ := call(t, rs, 2, func() error { return rs[2].Malloc(16) })
	_, msgs, err := call(t, rs, 2, func() error { return rs[2].Free(a) })
	require.NoError(t, err)
	assert.Zero(t, msgs, "its own object: back to its supply")
	b, msgs, _ := call(t, rs, 2, func() error { return rs[2].Malloc(10) })
	assert.Equal(t, a, b)
	assert.Zero(t, msgs)

	_, msgs, err = call(t, rs, 0, func() error { return rs[0].Free(b) })
	require.NoError(t, err, "rank 0 frees rank 2's object")
	assert.Zero(t, msgs, "at rank 0: no message")
	c, _, _ := call(t, rs, 1, func() error { return rs[1].Malloc(16) })
	assert.Equal(t, b, c, "rank 1 gets the freed object from rank 0")

	big, msgs, err := call(t, rs, 1, func() error { return rs[1].Malloc(200) })
	require.NoError(t, err)
	assert.Equal(t, 2, msgs, "a large allocation is rank 0's")
	_, _, err = call(t, rs, 2, func() error { return rs[2].Free(big) })
	require.NoError(t, err)
	_, _, err = call(t, rs, 2, func() error { return rs[2].Free(big) })
	assert.ErrorContains(t, err, "not the start of an allocation")
	_, _, err = call(t, rs, 2, func() error { return rs[2].Free(0x10) })
	assert.ErrorContains(t, err, "below the shared region")
	_, _, err = call(t, rs, 1, func() error { return rs[1].Free(c + 8) })
	assert.ErrorContains(t, err, "not the start of an allocation")
	_, _, err = call(t, rs, 1, func() error { return rs[1].Malloc(1 << 20) })
	assert.ErrorContains(t, err, "no 1048576 free bytes")
}

// TestCollectiveAllocAndCounters: every rank gets the same address from a
// collective allocation, and a wrong size is refused; counters hand out
// each value once, kept by rank c mod N.
func TestCollectiveAllocAndCounters(t *testing.T) {
	rs := allocRanks(t, 3, 64)
	var addrs []uint64
	for r := range 3 {
		a, _, err := call(t, rs, r, func() error { return rs[r].Alloc(100) })
		require.NoError(t, err)
		addrs = append(addrs, a)
	}
	assert.Equal(t, []uint64{0x1000, 0x1000, 0x1000}, addrs)
	_, _, err := call(t, rs, 0, func() error { return rs[0].Alloc(64) })
	require.NoError(t, err)
	_, _, err = call(t, rs, 1, func() error { return rs[1].Alloc(65) })
	assert.ErrorContains(t, err, "collective allocation #2: rank 1 asks 65 bytes where another rank asked 64")

	got := map[uint64]bool{}
	for i := range 9 {
		r := i % 3
		v, msgs, err := call(t, rs, r, func() error { return rs[r].FetchAdd(4, 1) })
		require.NoError(t, err)
		assert.False(t, got[v])
		got[v] = true
		if r == 4%3 {
			assert.Zero(t, msgs, "rank 1 keeps counter 4")
		} else {
			assert.Equal(t, 2, msgs)
		}
	}
	assert.Len(t, got, 9)
	assert.ErrorContains(t, rs[2].Step(protocol.Envelope{From: 1, To: 2, Msg: &protocol.AllocRequest{ID: 1, Op: protocol.AllocMalloc, Size: 8}}), "rank 0 allocates")
	assert.ErrorContains(t, rs[2].Step(protocol.Envelope{From: 0, To: 2, Msg: &protocol.AllocReply{ID: 99}}), "answers no request")
	assert.ErrorContains(t, rs[0].Step(protocol.Envelope{From: 1, To: 0, Msg: &protocol.CounterRequest{ID: 1, Counter: 2}}), "rank 2 keeps it")
	_, err = New(Config{Rank: 0, NProcs: 1, PageSize: 64, Pages: 1, ChunkSize: 100, Locks: 1, Barriers: 1, GCThreshold: 1}, make([]byte, 64))
	assert.ErrorContains(t, err, "chunk size 100")
}

func TestMergePlacements(t *testing.T) {
	hr := func(first, count uint32, rank int, soft bool) protocol.HomeRange {
		return protocol.HomeRange{First: first, Count: count, Rank: rank, Soft: soft}
	}
	complete := func(homes ...[]protocol.HomeRange) *barrier.Complete {
		c := &barrier.Complete{Barrier: 3}
		for r, h := range homes {
			c.Arrivals = append(c.Arrivals, barrier.Arrival{From: r, BarrierArrive: &protocol.BarrierArrive{Homes: h}})
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		homes [][]protocol.HomeRange
		want  []protocol.HomeRange
		err   string
	}{
		{"none", [][]protocol.HomeRange{nil, nil}, nil, ""},
		{"agreeing", [][]protocol.HomeRange{{hr(0, 4, 1, false)}, {hr(2, 4, 1, false)}},
			[]protocol.HomeRange{hr(0, 6, 1, false)}, ""},
		{"conflicting", [][]protocol.HomeRange{{hr(0, 4, 0, false)}, {hr(3, 1, 1, false)}},
			nil, "barrier 3: ranks 0 and 1 place page 3 at different homes (ranks 0 and 1)"},
		{"later overrides earlier within a rank", [][]protocol.HomeRange{{hr(0, 4, 0, false), hr(1, 2, 1, false)}},
			[]protocol.HomeRange{hr(0, 1, 0, false), hr(1, 2, 1, false), hr(3, 1, 0, false)}, ""},
		{"hard beats soft, whoever comes first", [][]protocol.HomeRange{{hr(0, 4, 0, true)}, {hr(2, 4, 1, false)}, {hr(0, 1, 2, false), hr(0, 4, 2, true)}},
			[]protocol.HomeRange{hr(0, 1, 2, false), hr(1, 1, 0, true), hr(2, 4, 1, false)}, ""},
		{"soft conflicts go to the lowest rank", [][]protocol.HomeRange{{hr(0, 2, 0, true)}, {hr(0, 4, 1, true)}},
			[]protocol.HomeRange{hr(0, 2, 0, true), hr(2, 2, 1, true)}, ""},
		{"a soft guess does not undo a rank's own hard one", [][]protocol.HomeRange{{hr(0, 2, 1, false), hr(0, 4, 0, true)}},
			[]protocol.HomeRange{hr(0, 2, 1, false), hr(2, 2, 0, true)}, ""},
		{"far apart", [][]protocol.HomeRange{{hr(60, 4, 1, false)}, {hr(0, 1, 0, true)}},
			[]protocol.HomeRange{hr(0, 1, 0, true), hr(60, 4, 1, false)}, ""},
		{"beyond the region", [][]protocol.HomeRange{{hr(0, 1, 0, false)}, {hr(62, 3, 1, false)}},
			nil, "barrier 3: rank 1 places pages [62,+3), beyond the region's 64 pages"},
		{"empty ranges", [][]protocol.HomeRange{{hr(5, 0, 0, false)}, {hr(9, 0, 1, true)}}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mergePlacements(complete(tc.homes...), 64)
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestMergePlacementsRandom compares the merge with its rules written page
// by page, on random placements: overlapping, hard and soft, in any order.
func TestMergePlacementsRandom(t *testing.T) {
	type placed struct {
		home, by int
		soft     bool
	}
	// reference applies the rules of mergePlacements' comment to each page;
	// conflicting reports whether two ranks place a page at different homes.
	reference := func(c *barrier.Complete, pages int) (out []protocol.HomeRange, conflicting bool) {
		merged := map[uint32]placed{}
		for _, a := range c.Arrivals {
			own := map[uint32]placed{}
			for _, h := range a.Homes {
				for p := h.First; p < h.First+h.Count; p++ {
					if prev, ok := own[p]; !ok || prev.soft || !h.Soft {
						own[p] = placed{h.Rank, a.From, h.Soft}
					}
				}
			}
			for p, pl := range own {
				prev, ok := merged[p]
				switch {
				case !ok, prev.soft && !pl.soft, prev.soft && pl.soft && pl.by < prev.by:
					merged[p] = pl
				case !pl.soft && !prev.soft && prev.home != pl.home:
					conflicting = true
				}
			}
		}
		for p := range uint32(pages) {
			pl, ok := merged[p]
			if !ok {
				continue
			}
			if n := len(out); n > 0 && out[n-1].Rank == pl.home && out[n-1].Soft == pl.soft && out[n-1].First+out[n-1].Count == p {
				out[n-1].Count++
				continue
			}
			out = append(out, protocol.HomeRange{First: p, Count: 1, Rank: pl.home, Soft: pl.soft})
		}
		return out, conflicting
	}
	const pages, ranks = 40, 3
	conflicts, merges := 0, 0
	for seed := range uint64(3000) {
		rng := rand.New(rand.NewPCG(seed, 7))
		c := &barrier.Complete{Barrier: 1}
		for r := range ranks {
			var homes []protocol.HomeRange
			for range rng.IntN(4) {
				first := rng.IntN(pages)
				homes = append(homes, protocol.HomeRange{First: uint32(first), Count: uint32(rng.IntN(pages - first + 1)),
					Rank: rng.IntN(ranks), Soft: rng.IntN(3) > 0})
			}
			c.Arrivals = append(c.Arrivals, barrier.Arrival{From: r, BarrierArrive: &protocol.BarrierArrive{Homes: homes}})
		}
		want, conflicting := reference(c, pages)
		got, err := mergePlacements(c, pages)
		if conflicting {
			conflicts++
			require.ErrorContains(t, err, "at different homes", "seed %d", seed)
			continue
		}
		merges++
		require.NoError(t, err, "seed %d", seed)
		require.Equal(t, want, got, "seed %d", seed)
	}
	assert.Greater(t, conflicts, 100)
	assert.Greater(t, merges, 1000)
}

// TestMergePlacementsFarApart: placements at the two ends of a large region
// cost the merge what they are, not the pages between them.
func TestMergePlacementsFarApart(t *testing.T) {
	const pages = 1 << 20
	c := &barrier.Complete{Barrier: 1, Arrivals: []barrier.Arrival{
		{From: 0, BarrierArrive: &protocol.BarrierArrive{Homes: []protocol.HomeRange{{First: 0, Count: 2, Rank: 0}}}},
		{From: 1, BarrierArrive: &protocol.BarrierArrive{Homes: []protocol.HomeRange{{First: pages - 3, Count: 3, Rank: 1, Soft: true}}}},
	}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := mergePlacements(c, pages)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, []protocol.HomeRange{{First: 0, Count: 2, Rank: 0}, {First: pages - 3, Count: 3, Rank: 1, Soft: true}}, got)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "bytes allocated by the merge")
}

// TestAllocationPlacesHomes: with homes, a large allocation's whole pages
// are guessed split in rank order, and a chunk of small objects is guessed
// homed at the rank that cuts it; all guesses soft.
func TestAllocationPlacesHomes(t *testing.T) {
	const pages = 64
	var rs []*Rank
	for r := range 3 {
		rk, err := New(Config{Rank: r, NProcs: 3, PageSize: 64, Pages: pages, Base: 0x1000, ChunkSize: 256, Homes: true,
			Locks: 8, Barriers: 4, GCThreshold: 1 << 20}, make([]byte, pages*64))
		require.NoError(t, err)
		rs = append(rs, rk)
	}
	for r := range 3 {
		a, _, err := call(t, rs, r, func() error { return rs[r].Alloc(10*64 + 8) })
		require.NoError(t, err)
		require.Equal(t, uint64(0x1000), a)
		assert.Equal(t, []protocol.HomeRange{
			{First: 0, Count: 3, Rank: 0, Soft: true},
			{First: 3, Count: 3, Rank: 1, Soft: true},
			{First: 6, Count: 4, Rank: 2, Soft: true},
		}, rs[r].placements, "rank %d", r)
	}
	rs[2].placements = nil
	a, _, err := call(t, rs, 2, func() error { return rs[2].Malloc(16) })
	require.NoError(t, err)
	chunk := (a - 0x1000) / 64
	assert.Equal(t, []protocol.HomeRange{{First: uint32(chunk), Count: 4, Rank: 2, Soft: true}}, rs[2].placements)
}

// TestArrivalsCarryOwnIntervals: after a lock passed through every rank, a
// barrier of every rank receives each interval once: each arrival carries
// the intervals its sender made, not those it learned from the others, who
// bring their own; the departures still give every rank all of them.
func TestArrivalsCarryOwnIntervals(t *testing.T) {
	const n = 3
	var rs []*Rank
	var mems [][]byte
	for r := range n {
		mem := make([]byte, 4*64)
		rk, err := New(Config{Rank: r, NProcs: n, PageSize: 64, Pages: 4, Locks: 8, Barriers: 4, GCThreshold: 1 << 20}, mem)
		require.NoError(t, err)
		rs, mems = append(rs, rk), append(mems, mem)
	}
	for r := range n {
		require.NoError(t, rs[r].Acquire(0))
		pump(t, rs)
		require.NoError(t, rs[r].Fault(uint32(r), true))
		pump(t, rs)
		mems[r][r*64] = byte(r + 1)
		require.NoError(t, rs[r].Release(0))
		pump(t, rs)
	}
	var queue []protocol.Envelope
	for _, r := range rs {
		require.NoError(t, r.Barrier(1, nil))
		queue = append(queue, r.Ready().Messages...)
	}
	arrivals := 0
	for _, e := range queue {
		a, ok := e.Msg.(*protocol.BarrierArrive)
		if !ok {
			continue
		}
		arrivals++
		for _, iv := range a.Intervals {
			assert.Equal(t, e.From, iv.ID.Rank, "rank %d's arrival carries interval %v", e.From, iv.ID)
		}
	}
	assert.Equal(t, n-1, arrivals)
	done := pump(t, rs, queue...)
	for r := range n {
		assert.True(t, done[r], "rank %d left the barrier", r)
		assert.Equal(t, protocol.VectorTime{1, 1, 1}, rs[r].VT(), "rank %d", r)
	}
}
