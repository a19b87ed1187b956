package rank

import (
	"fmt"
	"slices"
)

// allocator hands out ranges of the shared region: first fit over a sorted
// free list, coalescing neighbours on release. Offsets are from the region
// base.
type allocator struct {
	size uint64
	free []span // sorted, disjoint, never adjacent
	used map[uint64]uint64
}

type span struct{ off, len uint64 }

func (s span) end() uint64 { return s.off + s.len }

func newAllocator(size uint64) *allocator {
	return &allocator{size: size, free: []span{{0, size}}, used: make(map[uint64]uint64)}
}

// alloc returns the offset of size bytes aligned to align (a power of two).
func (a *allocator) alloc(size, align uint64) (uint64, error) {
	if size == 0 {
		return 0, fmt.Errorf("allocation of 0 bytes")
	}
	for i, s := range a.free {
		start := (s.off + align - 1) &^ (align - 1)
		if start < s.off || start > s.end() || s.end()-start < size {
			continue
		}
		var pieces []span
		if start > s.off {
			pieces = append(pieces, span{s.off, start - s.off})
		}
		if end := start + size; end < s.end() {
			pieces = append(pieces, span{end, s.end() - end})
		}
		a.free = slices.Replace(a.free, i, i+1, pieces...)
		a.used[start] = size
		return start, nil
	}
	return 0, fmt.Errorf("no %d free bytes (aligned to %d) left in the %d-byte shared region", size, align, a.size)
}

// release returns the allocation that starts at off.
func (a *allocator) release(off uint64) error {
	size, ok := a.used[off]
	if !ok {
		return fmt.Errorf("offset %#x is not the start of an allocation", off)
	}
	delete(a.used, off)
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
