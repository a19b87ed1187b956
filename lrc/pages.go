package lrc

import "iter"

// chunkShift sets how many pages' states are allocated together, at the
// first use of any of them: 4096 pages (16 MiB of region, about 850 KB of
// state). A region is mostly untouched: its pages' states, allocated and
// cleared up front, took longer than the rest of a job's start, and the
// runtime's collector read them all at its first cycle.
const chunkShift = 12

// pageTable holds the states of a region's pages in chunks allocated on
// first use. A page never used has the zero state: current (all zeros) and
// unmapped.
type pageTable struct {
	chunks [][]page
	n      int // pages in the region
}

func newPageTable(n int) pageTable {
	return pageTable{chunks: make([][]page, (n+1<<chunkShift-1)>>chunkShift), n: n}
}

// at returns page p's state; p must be below the region's pages.
func (t *pageTable) at(p uint32) *page {
	c := t.chunks[p>>chunkShift]
	if c == nil {
		first := int(p) &^ (1<<chunkShift - 1)
		c = make([]page, min(1<<chunkShift, t.n-first))
		t.chunks[p>>chunkShift] = c
	}
	return &c[p&(1<<chunkShift-1)]
}

// used yields, in page order, the pages whose chunk has been allocated: the
// others all have the zero state.
func (t *pageTable) used() iter.Seq2[uint32, *page] {
	return func(yield func(uint32, *page) bool) {
		for i, c := range t.chunks {
			for j := range c {
				if !yield(uint32(i<<chunkShift+j), &c[j]) {
					return
				}
			}
		}
	}
}
