package lrc

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/protocol"
)

// TestPageStateSize: a rank's state of every page it uses is a page value;
// its size is paid at a job's start (see homelessPage). The homeless
// protocol's parts and the rare fetch of a moved home live elsewhere.
func TestPageStateSize(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(page{}), uintptr(136), "bytes a page state")
	assert.LessOrEqual(t, unsafe.Sizeof(homePage{}), uintptr(72), "bytes of it for the home-based protocol")
}

// randomRanges returns n ranges of pages below pages, overlapping and in any
// order, some of one page, some empty.
func randomRanges(rng *rand.Rand, n, pages int) []protocol.PageRange {
	rs := make([]protocol.PageRange, n)
	for i := range rs {
		first := rng.IntN(pages)
		rs[i] = protocol.PageRange{First: uint32(first), Count: uint32(rng.IntN(min(pages-first, 12) + 1))}
	}
	return rs
}

func TestPageSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		const pages = 200
		runs := randomRanges(rng, rng.IntN(12), pages)
		want := make(map[uint32]bool)
		for p := range protocol.Pages(runs) {
			want[p] = true
		}
		set := newPageSet(append([]protocol.PageRange(nil), runs...))
		for i, r := range set {
			require.Positive(t, r.Count, "round %d: empty run in %v", round, set)
			if i > 0 {
				require.Less(t, set[i-1].End(), uint64(r.First), "round %d: runs %v out of order or touching", round, set)
			}
		}
		for p := range uint32(pages + 2) {
			require.Equal(t, want[p], set.has(p), "round %d: page %d in %v (from %v)", round, p, set, runs)
		}
	}
	assert.False(t, pageSet(nil).has(0))
}

func TestPageSetAtTheRegionsEnd(t *testing.T) {
	top := uint32(math.MaxUint32 - 1)
	set := newPageSet([]protocol.PageRange{{First: top, Count: 1}, {First: 0, Count: 2}})
	assert.Equal(t, pageSet{{First: 0, Count: 2}, {First: top, Count: 1}}, set)
	assert.True(t, set.has(top))
	assert.True(t, set.has(1))
	assert.False(t, set.has(2))
	assert.False(t, set.has(top-1))
}

// TestWriters compares the sweep with the page-by-page definition: each page
// some range names has the rank of all that name it, or -1 if ranks differ.
func TestWriters(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 3000 {
		const pages = 120
		nprocs := 1 + rng.IntN(4)
		var ranges []rankRange
		for range rng.IntN(10) {
			r := int32(rng.IntN(nprocs))
			for _, pr := range randomRanges(rng, 1+rng.IntN(3), pages) {
				ranges = append(ranges, rankRange{pr, r})
			}
		}
		want := make(map[uint32]int32)
		for _, rr := range ranges {
			for p := range protocol.Pages([]protocol.PageRange{rr.PageRange}) {
				if w, seen := want[p]; !seen {
					want[p] = rr.rank
				} else if w != rr.rank {
					want[p] = -1
				}
			}
		}
		got := make(map[uint32]int32)
		runs := writers(ranges, nprocs)
		for i, run := range runs {
			require.Less(t, run.first, run.end, "round %d: empty run in %v", round, runs)
			if i > 0 {
				prev := runs[i-1]
				require.LessOrEqual(t, prev.end, run.first, "round %d: runs %v overlap or are out of order", round, runs)
				require.False(t, prev.end == run.first && prev.writer == run.writer, "round %d: runs %v not merged", round, runs)
			}
			for p := run.first; p < run.end; p++ {
				got[uint32(p)] = run.writer
			}
		}
		require.Equal(t, want, got, "round %d: ranges %v", round, ranges)
	}
}

func TestWritersAtTheRegionsEnd(t *testing.T) {
	top := uint32(math.MaxUint32)
	runs := writers([]rankRange{{protocol.PageRange{First: top - 1, Count: 2}, 1}, {protocol.PageRange{First: top, Count: 1}, 0}}, 2)
	assert.Equal(t, []writtenRun{{uint64(top) - 1, uint64(top), 1}, {uint64(top), uint64(top) + 1, -1}}, runs)
}
