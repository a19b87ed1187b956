package diff

import "math/bits"

// Coverage is a set of page bytes: those that some diffs write. A diff whose
// bytes later diffs all write again can be left out when they are applied
// after it (squashing: the remedy for diff accumulation on migratory data).
type Coverage struct {
	size int
	bits []uint64
}

// NewCoverage returns an empty set for pages of pageSize bytes.
func NewCoverage(pageSize int) *Coverage {
	return &Coverage{size: pageSize, bits: make([]uint64, (pageSize+63)/64)}
}

// Reset empties the set.
func (c *Coverage) Reset() { clear(c.bits) }

// Add adds the bytes d writes.
func (c *Coverage) Add(d Diff) error {
	dec := decoder{d: d, size: c.size}
	for dec.next() {
		c.span(dec.start, dec.end(), true)
	}
	return dec.err
}

// Covers reports whether every byte d writes is in the set.
func (c *Coverage) Covers(d Diff) (bool, error) {
	dec := decoder{d: d, size: c.size}
	for dec.next() {
		if !c.span(dec.start, dec.end(), false) {
			return false, nil
		}
	}
	return dec.err == nil, dec.err
}

// span sets the bits of bytes [lo, hi) if set, or reports whether they are
// all set.
func (c *Coverage) span(lo, hi int, set bool) bool {
	for lo < hi {
		w, b := lo/64, lo%64
		n := min(64-b, hi-lo)
		mask := (^uint64(0) >> (64 - n)) << b
		if n == 64 {
			mask = ^uint64(0)
		}
		if set {
			c.bits[w] |= mask
		} else if c.bits[w]&mask != mask {
			return false
		}
		lo += n
	}
	return true
}

// Len is the number of bytes in the set.
func (c *Coverage) Len() int {
	n := 0
	for _, w := range c.bits {
		n += bits.OnesCount64(w)
	}
	return n
}
