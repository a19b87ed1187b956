package lrc

import (
	"cmp"
	"iter"
	"slices"

	"github.com/svmcluster/svm/protocol"
)

// chunkShift sets how many pages' values are allocated together, at the
// first use of any of them: 4096 pages (16 MiB of region, about 560 KB of
// page states). A region is mostly untouched: its pages' states, allocated
// and cleared up front, took longer than the rest of a job's start, and
// the runtime's collector read them all at its first cycle.
const chunkShift = 12

// ChunkPages is how many pages' protocol state is allocated together: an
// engine keeping its own values per page does the same (package engine).
const ChunkPages = 1 << chunkShift

// chunked holds a value per page of a region in chunks, each allocated when
// at first asks for one of its pages: a page never asked for has the zero
// value, and a region mostly untouched costs little. Page states (page; a
// page's zero state is current, all zeros, and unmapped) and what every
// rank knows of the pages' homes (pageHome) are kept so.
type chunked[T any] struct {
	chunks [][]T
	n      int // pages in the region
}

func newChunked[T any](n int) chunked[T] {
	return chunked[T]{chunks: make([][]T, (n+1<<chunkShift-1)>>chunkShift), n: n}
}

// at returns page p's value to read or write, allocating its chunk; p must
// be below the region's pages.
func (t *chunked[T]) at(p uint32) *T {
	c := t.chunks[p>>chunkShift]
	if c == nil {
		first := int(p) &^ (1<<chunkShift - 1)
		c = make([]T, min(1<<chunkShift, t.n-first))
		t.chunks[p>>chunkShift] = c
	}
	return &c[p&(1<<chunkShift-1)]
}

// peek returns page p's value to read, nil if its chunk was never written
// (the value is zero), without allocating.
func (t *chunked[T]) peek(p uint32) *T {
	if c := t.chunks[p>>chunkShift]; c != nil {
		return &c[p&(1<<chunkShift-1)]
	}
	if int(p) >= t.n {
		panic("lrc: a page beyond the region")
	}
	return nil
}

// used yields, in page order, the pages whose chunk has been allocated: the
// others all have the zero value.
func (t *chunked[T]) used() iter.Seq2[uint32, *T] {
	return func(yield func(uint32, *T) bool) {
		for i, c := range t.chunks {
			for j := range c {
				if !yield(uint32(i<<chunkShift+j), &c[j]) {
					return
				}
			}
		}
	}
}

// pageSet is a set of pages as ascending, disjoint runs that do not touch.
type pageSet []protocol.PageRange

// newPageSet returns the set of the pages of runs, which may overlap and
// come in any order; it sorts and reuses runs.
func newPageSet(runs []protocol.PageRange) pageSet {
	slices.SortFunc(runs, func(a, b protocol.PageRange) int { return cmp.Compare(a.First, b.First) })
	set := runs[:0]
	for _, r := range runs {
		if r.Count == 0 {
			continue
		}
		if n := len(set); n > 0 && uint64(r.First) <= set[n-1].End() {
			set[n-1].Count = uint32(max(set[n-1].End(), r.End()) - uint64(set[n-1].First))
			continue
		}
		set = append(set, r)
	}
	return set
}

func (ps pageSet) has(p uint32) bool {
	i, _ := slices.BinarySearchFunc(ps, p, func(r protocol.PageRange, p uint32) int {
		switch {
		case r.End() <= uint64(p):
			return -1
		case r.First > p:
			return 1
		}
		return 0
	})
	return i < len(ps) && ps[i].First <= p && uint64(p) < ps[i].End()
}

// writtenRun is the pages [first, end) that rank writer alone wrote, or
// more than one rank if writer is -1.
type writtenRun struct {
	first, end uint64
	writer     int32
}

// writers returns the pages that ranges of writes name, each range with the
// rank that wrote it, in ascending runs that do not overlap, each with its
// only writer or -1: a sweep over the ranges' ends, whose cost does not
// grow with the pages they span.
func writers(ranges []rankRange, nprocs int) []writtenRun {
	type edge struct {
		at    uint64
		rank  int32
		delta int32
	}
	edges := make([]edge, 0, 2*len(ranges))
	for _, r := range ranges {
		if r.Count > 0 {
			edges = append(edges, edge{uint64(r.First), r.rank, 1}, edge{r.End(), r.rank, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Compare(a.at, b.at) })
	cover := make([]int32, nprocs) // each rank's ranges over the sweep
	covering := 0                  // ranks with some
	var runs []writtenRun
	for i := 0; i < len(edges); {
		at := edges[i].at
		for ; i < len(edges) && edges[i].at == at; i++ {
			e := edges[i]
			before := cover[e.rank]
			cover[e.rank] += e.delta
			switch {
			case before == 0 && cover[e.rank] > 0:
				covering++
			case before > 0 && cover[e.rank] == 0:
				covering--
			}
		}
		if covering == 0 {
			continue
		}
		w := int32(-1)
		if covering == 1 {
			w = int32(slices.IndexFunc(cover, func(c int32) bool { return c > 0 }))
		}
		end := edges[i].at // covering > 0: an end is still to come
		if n := len(runs); n > 0 && runs[n-1].end == at && runs[n-1].writer == w {
			runs[n-1].end = end
		} else {
			runs = append(runs, writtenRun{at, end, w})
		}
	}
	return runs
}

// rankRange is a range of pages a rank wrote.
type rankRange struct {
	protocol.PageRange
	rank int32
}
