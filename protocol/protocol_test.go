package protocol

import (
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randMessage builds a random valid message for a job of n ranks and pages
// pages. Empty lists are nil, as decoding produces them.
func randMessage(rng *rand.Rand, n int, pages uint32) Message {
	vt := func() VectorTime {
		v := make(VectorTime, n)
		for i := range v {
			v[i] = rng.Uint32N(1000)
		}
		return v
	}
	id := func() IntervalID { return IntervalID{Rank: rng.IntN(n), Index: 1 + rng.Uint32N(1<<20)} }
	ranges := func() []PageRange {
		var ps []uint32
		for p := uint32(0); p < pages; p++ {
			if rng.IntN(4) == 0 {
				ps = append(ps, p)
			}
		}
		return Ranges(ps)
	}
	intervals := func() []Interval {
		var ivs []Interval
		for range rng.IntN(4) {
			iv := Interval{ID: id(), VT: vt(), Pages: ranges()}
			iv.VT[iv.ID.Rank] = iv.ID.Index
			ivs = append(ivs, iv)
		}
		return ivs
	}
	homes := func() []HomeRange {
		var hs []HomeRange
		for range rng.IntN(3) {
			first := rng.Uint32N(pages)
			hs = append(hs, HomeRange{First: first, Count: 1 + rng.Uint32N(pages-first), Rank: rng.IntN(n)})
		}
		return hs
	}
	need := func() []IntervalID {
		var ids []IntervalID
		for r := range n {
			if rng.IntN(3) == 0 {
				ids = append(ids, IntervalID{Rank: r, Index: 1 + rng.Uint32N(1<<20)})
			}
		}
		return ids
	}
	bytes := func() []byte {
		b := make([]byte, 1+rng.IntN(64))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	switch rng.IntN(16) {
	case 14:
		m := &PagePush{Epoch: rng.Uint32()}
		for p := uint32(0); p < pages; p++ {
			if rng.IntN(3) == 0 || p == pages-1 && m.Pages == nil {
				m.Pages = append(m.Pages, PushedPage{Page: p, Holds: vt(), Data: bytes()})
			}
		}
		return m
	case 15:
		m := &PushStop{}
		for p := uint32(0); p < pages; p++ {
			if rng.IntN(3) == 0 || p == pages-1 && m.Pages == nil {
				m.Pages = append(m.Pages, p)
			}
		}
		return m
	case 11:
		m := &PageRequest{ID: rng.Uint32(), Epoch: rng.Uint32()}
		for p := uint32(0); p < pages; p++ {
			if rng.IntN(3) == 0 || p == pages-1 && m.Pages == nil {
				m.Pages = append(m.Pages, PageNeed{Page: p, Need: need()})
			}
		}
		return m
	case 12:
		m := &PageResponse{ID: rng.Uint32()}
		for p := uint32(0); p < pages; p++ {
			if rng.IntN(3) == 0 {
				m.Pages = append(m.Pages, PageCopy{Page: p, Data: bytes()})
			}
		}
		return m
	case 13:
		m := &HomeDiffs{Interval: id(), Epoch: rng.Uint32()}
		for p := uint32(0); p < pages; p++ {
			if rng.IntN(3) == 0 || p == pages-1 && m.Pages == nil {
				m.Pages = append(m.Pages, PageDiff{Page: p, Diff: bytes()})
			}
		}
		return m
	case 9:
		if rng.IntN(2) == 0 {
			return &CounterRequest{ID: rng.Uint32(), Counter: rng.Uint32(), Wait: true, Until: rng.Int64() - rng.Int64()}
		}
		return &CounterRequest{ID: rng.Uint32(), Counter: rng.Uint32(), Delta: rng.Int64() - rng.Int64()}
	case 10:
		return &CounterReply{ID: rng.Uint32(), Value: rng.Int64() - rng.Int64()}
	case 7:
		return &AllocRequest{ID: rng.Uint32(), Op: AllocOp(1 + rng.IntN(4)), Size: rng.Uint64(), Addr: rng.Uint64()}
	case 8:
		r := &AllocReply{ID: rng.Uint32(), Addr: rng.Uint64()}
		if rng.IntN(2) == 0 {
			r.Err = "no room"
		}
		for range rng.IntN(3) {
			r.Objects = append(r.Objects, rng.Uint64())
		}
		return r
	case 0:
		return &LockRequest{Lock: rng.Uint32N(1024), Requester: rng.IntN(n), VT: vt()}
	case 1:
		return &LockRequest{Forwarded: true, Lock: rng.Uint32N(1024), Requester: rng.IntN(n), VT: vt()}
	case 2:
		return &LockGrant{Lock: rng.Uint32N(1024), Intervals: intervals()}
	case 3:
		m := &BarrierArrive{Barrier: rng.Uint32N(64), Episode: rng.Uint32(), VT: vt(), Intervals: intervals(), Metadata: rng.Uint64(),
			Shares: rng.IntN(2) == 0, Value: rng.Uint64(), Homes: homes()}
		for r := range n {
			if rng.IntN(2) == 0 {
				m.Members = append(m.Members, r)
			}
		}
		return m
	case 4:
		return &BarrierDepart{Barrier: rng.Uint32N(64), Episode: rng.Uint32(), Intervals: intervals(), GC: rng.IntN(2) == 0,
			Shared: rng.IntN(2) == 0, Value: rng.Uint64(), Homes: homes()}
	case 5:
		m := &DiffRequest{ID: rng.Uint32()}
		for p := uint32(0); p < pages; p++ {
			if rng.IntN(3) == 0 {
				pi := PageIntervals{Page: p, Base: rng.IntN(4) == 0}
				for range 1 + rng.IntN(3) {
					pi.Intervals = append(pi.Intervals, id())
				}
				m.Pages = append(m.Pages, pi)
			}
		}
		if m.Pages == nil {
			m.Pages = []PageIntervals{{Page: 0, Intervals: []IntervalID{id()}}}
		}
		return m
	default:
		m := &DiffResponse{ID: rng.Uint32()}
		for p := uint32(0); p < pages; p++ {
			if rng.IntN(3) == 0 {
				pd := PageDiffs{Page: p}
				if rng.IntN(4) == 0 {
					pd.Base = make([]byte, 16)
					pd.Base[3] = byte(rng.Uint32())
				}
				for range rng.IntN(3) {
					d := make([]byte, 1+rng.IntN(64))
					for i := range d {
						d[i] = byte(rng.Uint32())
					}
					pd.Diffs = append(pd.Diffs, IntervalDiff{Interval: id(), Diff: d})
				}
				m.Pages = append(m.Pages, pd)
			}
		}
		return m
	}
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[MsgType]bool{}
	for i := range 5000 {
		n := 1 + rng.IntN(16)
		pages := 1 + rng.Uint32N(40)
		m := randMessage(rng, n, pages)
		seen[m.Type()] = true
		lim := Limits{NProcs: n, Pages: pages, Locks: 1024, Barriers: 64}
		require.NoError(t, lim.Check(m), "message %d: %#v", i, m)
		b, err := Encode(m)
		require.NoError(t, err)
		require.Equal(t, byte(m.Type()), b[0])
		got, err := Decode(b)
		require.NoError(t, err, "message %d: %x", i, b)
		require.Equal(t, m, got, "message %d", i)
		again, err := AppendEncode([]byte{0xff}, got)
		require.NoError(t, err)
		require.Equal(t, b, again[1:], "re-encoding differs")
	}
	for _, typ := range MsgTypes {
		assert.True(t, seen[typ], "no %v generated", typ)
	}
}

// TestWireFormat pins the encoding: message type values and field order are
// part of the wire format (only append).
func TestWireFormat(t *testing.T) {
	cases := []struct {
		m   Message
		hex string
	}{
		{&LockRequest{Lock: 3, Requester: 1, VT: VectorTime{0, 2}}, "0193030192" + "0002"},
		{&LockRequest{Forwarded: true, Lock: 3, Requester: 1, VT: VectorTime{0, 2}}, "0293030192" + "0002"},
		{&LockGrant{Lock: 3, Intervals: []Interval{{ID: IntervalID{Rank: 1, Index: 2}, VT: VectorTime{0, 2}, Pages: []PageRange{{First: 7, Count: 2}}}}}, "03920391939201029200029192" + "0702"},
		{&BarrierDepart{Barrier: 1, Episode: 4, GC: true}, "05970104c0c3c200c0"},
		{&BarrierDepart{Barrier: 1, Episode: 4, Shared: true, Value: 0x1000}, "05970104c0c2c3cd1000c0"},
		{&BarrierDepart{Barrier: 1, Episode: 4, Homes: []HomeRange{{First: 8, Count: 2, Rank: 1}}}, "05970104c0c2c200" + "91940802" + "01c2"},
		{&BarrierDepart{Barrier: 1, Episode: 4, Homes: []HomeRange{{First: 8, Count: 2, Rank: 1, Soft: true}}}, "05970104c0c2c200" + "91940802" + "01c3"},
		{&DiffRequest{ID: 9, Pages: []PageIntervals{{Page: 5, Intervals: []IntervalID{{Rank: 0, Index: 1}}}}}, "0692099193059192" + "0001c2"},
		{&DiffResponse{ID: 9, Pages: []PageDiffs{{Page: 5, Diffs: []IntervalDiff{{Interval: IntervalID{Rank: 0, Index: 1}, Diff: []byte{0, 0, 0xaa}}}}}}, "0792099193059192920001c403" + "0000aac0"},
		{&CounterRequest{ID: 2, Counter: 7, Delta: -1}, "0a950207ffc200"},
		{&CounterRequest{ID: 2, Counter: 7, Wait: true, Until: 3}, "0a95020700c303"},
		{&CounterReply{ID: 2, Value: 300}, "0b9202cd012c"},
		{&PageRequest{ID: 3, Pages: []PageNeed{{Page: 5, Need: []IntervalID{{Rank: 1, Index: 4}}}}, Epoch: 2}, "0c930391920591920104" + "02"},
		{&PageResponse{ID: 3, Pages: []PageCopy{{Page: 5, Data: []byte{1, 2}}}}, "0d9203919205c4020102"},
		{&HomeDiffs{Interval: IntervalID{Rank: 1, Index: 4}, Pages: []PageDiff{{Page: 5, Diff: []byte{0, 0, 0xaa}}}, Epoch: 1}, "0e939201049192" + "05c4030000aa01"},
		{&PagePush{Epoch: 2, Pages: []PushedPage{{Page: 5, Holds: VectorTime{0, 3}, Data: []byte{1, 2}}}}, "0f920291930592" + "0003c4020102"},
		{&PushStop{Pages: []uint32{5, 9}}, "1091920509"},
	}
	for _, c := range cases {
		b, err := Encode(c.m)
		require.NoError(t, err)
		assert.Equal(t, c.hex, hex.EncodeToString(b), "%v", c.m.Type())
	}
	assert.Equal(t, []MsgType{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, MsgTypes)
}

func TestDecodeErrors(t *testing.T) {
	good, err := Encode(&LockRequest{Lock: 1, Requester: 0, VT: VectorTime{1}})
	require.NoError(t, err)
	for name, b := range map[string][]byte{
		"empty":         nil,
		"unknown type":  {0x7f, 0x90},
		"zero type":     {0x00},
		"truncated":     good[:len(good)-1],
		"trailing":      append(slices.Clone(good), 0x00),
		"wrong shape":   {byte(MsgLockGrant), 0xa3, 'a', 'b', 'c'},
		"type only":     {byte(MsgDiffResponse)},
		"huge array":    {byte(MsgDiffRequest), 0x92, 0x01, 0xdd, 0xff, 0xff, 0xff, 0xff},
		"huge bin":      {byte(MsgDiffResponse), 0x92, 0x01, 0x91, 0x92, 0x00, 0x91, 0x92, 0x92, 0x00, 0x01, 0xc6, 0xff, 0xff, 0xff, 0xff},
		"negative rank": {byte(MsgLockRequest), 0x93, 0x01, 0xff, 0x90},
	} {
		m, err := Decode(b)
		if name == "negative rank" {
			// Well formed, but not for any job: Check rejects it.
			require.NoError(t, err)
			assert.ErrorContains(t, Limits{NProcs: 2, Pages: 1, Locks: 4, Barriers: 1}.Check(m), "requester rank -1")
			continue
		}
		assert.Error(t, err, name)
	}
}

func TestCheck(t *testing.T) {
	lim := Limits{NProcs: 4, Pages: 10, Locks: 8, Barriers: 2}
	vt := VectorTime{0, 0, 0, 0}
	iv := func(rank int, index uint32, pages ...PageRange) Interval {
		v := vt.Clone()
		v[rank] = index
		return Interval{ID: IntervalID{Rank: rank, Index: index}, VT: v, Pages: pages}
	}
	cases := []struct {
		m    Message
		want string // "" when valid
	}{
		{&LockRequest{Lock: 7, Requester: 3, VT: vt}, ""},
		{&LockRequest{Lock: 8, Requester: 3, VT: vt}, "lock 8 out of range"},
		{&LockRequest{Lock: 1, Requester: 4, VT: vt}, "requester rank 4 out of range"},
		{&LockRequest{Lock: 1, Requester: 0, VT: VectorTime{1}}, "vector time has 1 entries, want 4"},
		{&LockGrant{Lock: 1, Intervals: []Interval{iv(1, 2, PageRange{First: 0, Count: 10})}}, ""},
		{&LockGrant{Lock: 1, Intervals: []Interval{iv(1, 2, PageRange{First: 5, Count: 6})}}, "beyond 10 pages"},
		{&LockGrant{Lock: 1, Intervals: []Interval{iv(1, 2, PageRange{First: 5, Count: 0})}}, "empty page range"},
		{&LockGrant{Lock: 1, Intervals: []Interval{iv(1, 2, PageRange{First: 5, Count: 1}, PageRange{First: 6, Count: 1})}}, "not sorted, disjoint and apart"},
		{&LockGrant{Lock: 1, Intervals: []Interval{iv(1, 0)}}, "index 0"},
		{&LockGrant{Lock: 1, Intervals: []Interval{{ID: IntervalID{Rank: 1, Index: 2}, VT: vt}}}, "vector time names index 0"},
		{&BarrierArrive{Barrier: 1, Members: []int{0, 2}, VT: vt}, ""},
		{&BarrierArrive{Barrier: 2, VT: vt}, "barrier 2 out of range"},
		{&BarrierArrive{Barrier: 0, Members: []int{2, 0}, VT: vt}, "members not sorted"},
		{&BarrierArrive{Barrier: 0, Members: []int{0, 9}, VT: vt}, "member rank 9 out of range"},
		{&BarrierDepart{Barrier: 1}, ""},
		{&DiffRequest{ID: 1}, "no pages"},
		{&DiffRequest{ID: 1, Pages: []PageIntervals{{Page: 3}}}, "page 3: neither intervals nor the page asked"},
		{&DiffRequest{ID: 1, Pages: []PageIntervals{{Page: 3, Base: true}}}, ""},
		{&DiffRequest{ID: 1, Pages: []PageIntervals{{Page: 10, Intervals: []IntervalID{{Rank: 0, Index: 1}}}}}, "page 10 out of range"},
		{&DiffRequest{ID: 1, Pages: []PageIntervals{{Page: 3, Intervals: []IntervalID{{Rank: 0, Index: 1}}}, {Page: 3, Intervals: []IntervalID{{Rank: 0, Index: 1}}}}}, "pages not sorted and distinct"},
		{&DiffResponse{ID: 1, Pages: []PageDiffs{{Page: 2, Diffs: []IntervalDiff{{Interval: IntervalID{Rank: 5, Index: 1}}}}}}, "interval rank 5 out of range"},
		{&DiffResponse{ID: 1}, ""},
		{&BarrierDepart{Barrier: 1, Homes: []HomeRange{{First: 2, Count: 8, Rank: 3}}}, ""},
		{&BarrierDepart{Barrier: 1, Homes: []HomeRange{{First: 2, Count: 9, Rank: 3}}}, "outside the region's 10"},
		{&BarrierArrive{Barrier: 1, VT: vt, Homes: []HomeRange{{First: 2, Count: 1, Rank: 4}}}, "home rank 4 out of range"},
		{&PageRequest{ID: 1}, "no pages"},
		{&PageRequest{ID: 1, Pages: []PageNeed{{Page: 9, Need: []IntervalID{{Rank: 0, Index: 1}, {Rank: 2, Index: 1}}}}}, ""},
		{&PageRequest{ID: 1, Pages: []PageNeed{{Page: 9, Need: []IntervalID{{Rank: 2, Index: 1}, {Rank: 2, Index: 3}}}}}, "not one per rank"},
		{&PageRequest{ID: 1, Pages: []PageNeed{{Page: 2}, {Page: 1}}}, "pages not sorted"},
		{&PageResponse{ID: 1, Pages: []PageCopy{{Page: 10}}}, "page 10 out of range"},
		{&HomeDiffs{Interval: IntervalID{Rank: 1, Index: 1}}, "no pages"},
		{&HomeDiffs{Interval: IntervalID{Rank: 1, Index: 0}, Pages: []PageDiff{{Page: 1}}}, "index 0"},
		{&HomeDiffs{Interval: IntervalID{Rank: 1, Index: 2}, Pages: []PageDiff{{Page: 1}}}, ""},
		{&PagePush{Epoch: 1}, "no pages"},
		{&PagePush{Epoch: 1, Pages: []PushedPage{{Page: 1, Holds: vt}, {Page: 4, Holds: vt}}}, ""},
		{&PagePush{Epoch: 1, Pages: []PushedPage{{Page: 4, Holds: vt}, {Page: 1, Holds: vt}}}, "pages not sorted"},
		{&PagePush{Epoch: 1, Pages: []PushedPage{{Page: 1, Holds: VectorTime{1}}}}, "page 1: vector time has 1 entries, want 4"},
		{&PushStop{}, "no pages"},
		{&PushStop{Pages: []uint32{2, 7}}, ""},
		{&PushStop{Pages: []uint32{7, 7}}, "pages not sorted and distinct"},
		{&PushStop{Pages: []uint32{12}}, "page 12 out of range"},
		{&AllocRequest{ID: 1, Op: AllocFree}, ""},
		{&AllocRequest{ID: 1, Op: AllocObjects, Size: 32}, ""},
		{&AllocRequest{ID: 1, Op: 9}, "unknown allocation op 9"},
		{nil, "nil message"},
	}
	for _, c := range cases {
		err := lim.Check(c.m)
		if c.want == "" {
			assert.NoError(t, err)
		} else {
			assert.ErrorContains(t, err, c.want)
		}
	}
}

func TestRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		var pages []uint32
		for p := uint32(0); p < 64; p++ {
			if rng.IntN(3) == 0 {
				pages = append(pages, p)
			}
		}
		rs := Ranges(pages)
		assert.Equal(t, pages, slices.Collect(Pages(rs)))
		assert.Equal(t, len(pages), PageCount(rs))
		require.NoError(t, Limits{NProcs: 1, Pages: 64}.checkRanges(rs))
	}
	assert.Equal(t, "7-9", PageRange{First: 7, Count: 3}.String())
}

func TestVectorTime(t *testing.T) {
	a := VectorTime{1, 5, 0}
	b := VectorTime{2, 3, 0}
	assert.False(t, a.Dominates(b))
	assert.False(t, b.Dominates(a))
	c := a.Clone()
	c.Merge(b)
	assert.Equal(t, VectorTime{2, 5, 0}, c)
	assert.Equal(t, VectorTime{1, 5, 0}, a, "Clone must copy")
	assert.True(t, c.Dominates(a) && c.Dominates(b))
	assert.True(t, a.Covers(IntervalID{Rank: 1, Index: 5}))
	assert.False(t, a.Covers(IntervalID{Rank: 1, Index: 6}))
	assert.False(t, a.Covers(IntervalID{Rank: 3, Index: 1}))
	assert.Equal(t, uint64(6), a.Sum())
}
