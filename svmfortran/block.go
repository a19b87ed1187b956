package svmfortran

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Block is an inclusive index range lo:hi; empty when Lo > Hi.
type Block struct{ Lo, Hi int }

// Len is the number of indices in b: 0 when b is empty. It saturates at
// math.MaxInt for a block spanning (nearly) the whole int range.
func (b Block) Len() int {
	n, ok := length(b)
	if !ok {
		return math.MaxInt
	}
	return n
}

// Empty reports whether b holds no index.
func (b Block) Empty() bool { return b.Lo > b.Hi }

// Contains reports whether i lies in b.
func (b Block) Contains(i int) bool { return b.Lo <= i && i <= b.Hi }

// String prints b as Fortran writes a range, lo:hi.
func (b Block) String() string { return fmt.Sprintf("%d:%d", b.Lo, b.Hi) }

// Box is a rectangle of a loop nest's iterations: one Block per loop
// dimension (dimension 0 is the innermost, Fortran's first index).
type Box []Block

// Size is the number of iterations in the box (0 if any dimension is empty).
func (x Box) Size() int {
	n := 1
	for _, b := range x {
		n *= b.Len()
	}
	return n
}

// emptyBlock is what the schedules return for "nothing to do"; any Lo > Hi
// would do, a fixed one makes results comparable.
func emptyBlock() Block { return Block{Lo: 1, Hi: 0} }

// length returns the number of indices in b, and false when that number does
// not fit in an int. Hi-Lo is computed in unsigned arithmetic, which is exact
// for Hi >= Lo even when the signed difference would overflow.
func length(b Block) (int, bool) {
	if b.Lo > b.Hi {
		return 0, true
	}
	d := uint(b.Hi) - uint(b.Lo)
	if d >= math.MaxInt {
		return 0, false
	}
	return int(d) + 1, true
}

// ceilDiv is ceil(a/b) for a >= 0, b > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// part returns the k-th (0-based) piece when n consecutive elements are cut
// into pieces of size: its offset from the first element and its length; the
// length is 0 when the piece lies beyond the end. It avoids computing
// size*k when that would pass n, so it cannot overflow.
func part(n, size, k int) (off, cnt int) {
	if n <= 0 || size <= 0 || k < 0 || k >= ceilDiv(n, size) {
		return 0, 0
	}
	off = size * k // < n here
	return off, min(size, n-off)
}

// intersect is the common part of a and b (possibly empty).
func intersect(a, b Block) Block {
	return Block{Lo: max(a.Lo, b.Lo), Hi: min(a.Hi, b.Hi)}
}

// appendIndex adds index i to a block list built in increasing index order,
// as the paper builds inverted distributions: extend the last block when i
// follows it directly, otherwise open a new block i:i.
func appendIndex(list []Block, i int) []Block {
	if n := len(list); n > 0 && list[n-1].Hi+1 == i {
		list[n-1].Hi = i
		return list
	}
	return append(list, Block{Lo: i, Hi: i})
}

// appendBlock adds a non-empty block that starts after the last one,
// merging it with the last block when they touch, so lists stay maximal.
func appendBlock(list []Block, b Block) []Block {
	if b.Empty() {
		return list
	}
	if n := len(list); n > 0 && list[n-1].Hi+1 == b.Lo {
		list[n-1].Hi = b.Hi
		return list
	}
	return append(list, b)
}

// inBlocks reports whether e lies in a sorted, disjoint block list; a binary
// search, since lists of indirect distributions can be long.
func inBlocks(list []Block, e int) bool {
	k := sort.Search(len(list), func(k int) bool { return list[k].Hi >= e })
	return k < len(list) && list[k].Lo <= e
}

// normalizeBlocks sorts a block list, drops empty blocks, merges touching
// ones, and rejects overlaps: an overlap in recorded blocks means an
// iteration was executed twice, which a schedule must never do.
func normalizeBlocks(in []Block) ([]Block, error) {
	list := make([]Block, 0, len(in))
	for _, b := range in {
		if !b.Empty() {
			list = append(list, b)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Lo < list[j].Lo })
	out := list[:0]
	for _, b := range list {
		if n := len(out); n > 0 && b.Lo <= out[n-1].Hi {
			return nil, fmt.Errorf("blocks %v and %v overlap", out[n-1], b)
		}
		out = appendBlock(out, b)
	}
	return out, nil
}

// cloneBlocks copies a list so callers cannot change a descriptor's.
func cloneBlocks(list []Block) []Block {
	if len(list) == 0 {
		return nil
	}
	return append([]Block(nil), list...)
}

// element prints an element reference the way Fortran writes it: T(3, -1).
func element(name string, coords []int) string {
	parts := make([]string, len(coords))
	for i, c := range coords {
		parts[i] = fmt.Sprint(c)
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

// boundsString prints a bounds list as in a declaration: 1:10, 0:4.
func boundsString(bounds []Block) string {
	parts := make([]string, len(bounds))
	for i, b := range bounds {
		parts[i] = b.String()
	}
	return strings.Join(parts, ", ")
}
