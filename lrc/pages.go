package lrc

import "iter"

// chunkShift sets how many pages' values are allocated together, at the
// first use of any of them: 4096 pages (16 MiB of region, about 850 KB of
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
