package rank

import (
	"fmt"
	"slices"
)

// allocator hands out ranges of the shared region: first fit over a sorted
// free list, coalescing neighbours on release, except that a large block
// is not placed where it would alias another (below). Offsets are from the
// region base.
type allocator struct {
	size uint64
	free []span // sorted, disjoint, never adjacent
	used map[uint64]uint64
	// large holds the starts of the allocated blocks of at least
	// largeBlock bytes.
	large map[uint64]bool
}

// Two arrays a kernel streams through together run slower when their
// starts are (nearly) a multiple of aliasPeriod apart: measured on this
// project's machines (AMD EPYC, virtualised), a Jacobi sweep reading one
// array and writing another took 17-18 % longer with the arrays 32 MiB or
// 64 MiB apart than 16, 24 or 48 MiB, or 32 MiB and 32 pages; 32 MiB and 8
// pages, 9 % longer. Allocated back to back, two arrays of a power-of-two
// size land exactly there (the C Jacobi kernel's 2048 x 2048 doubles),
// and shared arrays of one size land near it every few (SVM-Fortran's
// shallow water, 1025 x 1025 doubles: every fourth, 20 pages off). So a
// block of at least largeBlock bytes starts at least aliasGuard away, modulo
// aliasPeriod, from every other large block, when the free space allows.
const (
	aliasPeriod = 32 << 20
	aliasGuard  = 256 << 10
	largeBlock  = 1 << 20
)

type span struct{ off, len uint64 }

func (s span) end() uint64 { return s.off + s.len }

func newAllocator(size uint64) *allocator {
	return &allocator{size: size, free: []span{{0, size}}, used: make(map[uint64]uint64), large: make(map[uint64]bool)}
}

// alloc returns the offset of size bytes aligned to align (a power of two).
// A large block takes the first place that aliases no other large block;
// where there is none, the first that fits.
func (a *allocator) alloc(size, align uint64) (uint64, error) {
	if size == 0 {
		return 0, fmt.Errorf("allocation of 0 bytes")
	}
	i, start, ok := a.place(size, align, size >= largeBlock)
	if !ok && size >= largeBlock {
		i, start, ok = a.place(size, align, false)
	}
	if !ok {
		return 0, fmt.Errorf("no %d free bytes (aligned to %d) left in the %d-byte shared region", size, align, a.size)
	}
	s := a.free[i]
	var pieces []span
	if start > s.off {
		pieces = append(pieces, span{s.off, start - s.off})
	}
	if end := start + size; end < s.end() {
		pieces = append(pieces, span{end, s.end() - end})
	}
	a.free = slices.Replace(a.free, i, i+1, pieces...)
	a.used[start] = size
	if size >= largeBlock {
		a.large[start] = true
	}
	return start, nil
}

// place finds where size bytes aligned to align go: the free span (its
// index) and the start, the first that fits; with apart, the first that
// also aliases no large block. Within a span the starts tried step by
// aliasGuard, through one period at most: further ones repeat them.
func (a *allocator) place(size, align uint64, apart bool) (int, uint64, bool) {
	for i, s := range a.free {
		start := alignUp(s.off, align)
		for step := 0; start >= s.off && start <= s.end() && s.end()-start >= size; step++ {
			if !apart || !a.aliases(start) {
				return i, start, true
			}
			if step == aliasPeriod/aliasGuard {
				break
			}
			start = alignUp(start+aliasGuard, align)
		}
	}
	return 0, 0, false
}

// aliases reports whether a large block starting at off would start within
// aliasGuard, modulo aliasPeriod, of a large block already allocated.
func (a *allocator) aliases(off uint64) bool {
	for start := range a.large {
		d := (off - start) % aliasPeriod // wraps for off < start: the period divides 2^64
		if d < aliasGuard || aliasPeriod-d < aliasGuard {
			return true
		}
	}
	return false
}

// alignUp rounds off up to a multiple of align (a power of two); it wraps
// past the top of the address space, which the callers' checks catch.
func alignUp(off, align uint64) uint64 { return (off + align - 1) &^ (align - 1) }

// release returns the allocation that starts at off.
func (a *allocator) release(off uint64) error {
	size, ok := a.used[off]
	if !ok {
		return fmt.Errorf("offset %#x is not the start of an allocation", off)
	}
	delete(a.used, off)
	delete(a.large, off)
	i, _ := slices.BinarySearchFunc(a.free, off, func(s span, off uint64) int {
		switch {
		case s.off < off:
			return -1
		case s.off > off:
			return 1
		}
		return 0
	})
	s := span{off, size}
	if i < len(a.free) && s.end() == a.free[i].off {
		s.len += a.free[i].len
		a.free = slices.Delete(a.free, i, i+1)
	}
	if i > 0 && a.free[i-1].end() == s.off {
		a.free[i-1].len += s.len
		return nil
	}
	a.free = slices.Insert(a.free, i, s)
	return nil
}
