package svmfortran

import (
	"fmt"
	"sort"
)

// Format is the distribution format of one template dimension.
type Format int

const (
	// Collapsed ('*'): the dimension is not distributed; every processor
	// that owns anything owns all of its indices.
	Collapsed Format = iota
	// BlockFormat: BLOCK, contiguous blocks of ceil(N/P) elements. (Named
	// so because Block is the index-range type.)
	BlockFormat
	// Cyclic: CYCLIC(l), segments of l elements dealt round robin.
	Cyclic
	// GeneralBlock: GENERAL_BLOCK, contiguous blocks of given sizes.
	GeneralBlock
	// Indirect: DISTRIBUTE (I) ONTO P(MAP(I)), a processor per element.
	Indirect
	// Linked: DISTRIBUTE (I) ONTO HOME(H(...)), element I goes to the owner
	// of an element of another template.
	Linked
	// Recorded: the schedule a dynamic loop produced (semi-dynamic
	// scheduling); each rank knows only the blocks it executed.
	Recorded
)

// String gives the directive's spelling of the format.
func (f Format) String() string {
	switch f {
	case Collapsed:
		return "*"
	case BlockFormat:
		return "BLOCK"
	case Cyclic:
		return "CYCLIC"
	case GeneralBlock:
		return "GENERAL_BLOCK"
	case Indirect:
		return "INDIRECT"
	case Linked:
		return "LINKED"
	case Recorded:
		return "RECORDED"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Dist is the distribution of one template dimension. Only the fields of the
// chosen Format are read.
type Dist struct {
	Format Format
	// Segment is CYCLIC(l)'s segment length l >= 1; 0 means 1.
	Segment int
	// Sizes are GENERAL_BLOCK's block sizes, one >= 0 per processor of the
	// arrangement dimension, summing to the template extent.
	Sizes []int
	// Map is Indirect's 1-based processor index in the (1-D) arrangement
	// for each template element, in index order.
	Map []int
	// Home and Targets describe a Linked distribution: element I goes to
	// the owner of Home element Targets[I-lo]. Home must be distributed
	// for the same rank; the link is evaluated once, at distribution time,
	// so redistributing Home later does not move this template.
	Home    *Template
	Targets [][]int
	// Blocks are the blocks self executed in a dynamic loop (Recorded),
	// self's list only, in any order: they are sorted and touching blocks
	// merged; overlapping blocks (an iteration run twice) are an error.
	Blocks []Block
}

// dimDesc is the descriptor of one distributed template dimension: the
// parameters the paper stores per format, fixed at distribution time so that
// ownership tests and loop scheduling need no further computation or
// communication.
type dimDesc struct {
	format Format
	lo, n  int // the template dimension's lower bound and extent N
	procs  int // P: extent of the arrangement dimension it maps onto (0 if collapsed)
	// coord is self's 0-based coordinate on that arrangement dimension,
	// -1 when self is outside the arrangement and owns nothing.
	coord int

	// BLOCK: ceil(N/P) and self's block in relative 1-based indices, as in
	// the paper (lower > upper when self's block is empty).
	size, lower, upper int

	// CYCLIC: the paper's l, num_seg(p), A = (p-1)l+1 and stride = P*l, so
	// that B = (i-1)*stride for segment i. Relative 1-based indices.
	seg, numSeg, a, stride int

	// GENERAL_BLOCK: starts[q] is the relative 0-based offset of the block
	// of coordinate q; starts[P] = N.
	starts []int

	// INDIRECT: the 0-based arrangement coordinate of every element, kept so
	// that Owner can answer for any element.
	coords []int

	// INDIRECT, LINKED, RECORDED: self's blocks in absolute indices, sorted
	// and maximal (Table 1 of the paper).
	blocks []Block
}

// buildBlock computes the paper's BLOCK bounds for self:
// lower = ceil(N/P)(p-1)+1, upper = min(lower+ceil(N/P)-1, N), p = coord+1.
// When ceil(N/P)(p-1) >= N the formula gives lower > upper: an empty block,
// which happens for trailing processors when P does not divide N well.
func (d *dimDesc) buildBlock() {
	d.size = ceilDiv(d.n, d.procs)
	if d.coord < 0 {
		d.lower, d.upper = 1, 0
		return
	}
	d.lower = d.size*d.coord + 1
	d.upper = min(d.lower+d.size-1, d.n)
}

// buildCyclic computes the paper's CYCLIC(l) parameters for self:
// num_seg(p) = ceil((N-(p-1)l)/(Pl)), clamped at 0 because the numerator is
// negative for processors that get no segment; A = (p-1)l+1; B = (i-1)Pl.
func (d *dimDesc) buildCyclic(l int) {
	// A segment longer than the template holds all of it, so CYCLIC(l) with
	// l > N is CYCLIC(N); using N keeps (p-1)l and Pl from overflowing.
	d.seg = min(l, d.n)
	d.stride = d.procs * d.seg
	if d.coord < 0 {
		return
	}
	d.a = d.coord*d.seg + 1
	if rest := d.n - d.coord*d.seg; rest > 0 {
		d.numSeg = ceilDiv(rest, d.stride)
	}
}

// buildGeneralBlock checks GENERAL_BLOCK sizes and stores their prefix sums.
func (d *dimDesc) buildGeneralBlock(name string, dim int, sizes []int) error {
	if len(sizes) != d.procs {
		return fmt.Errorf("template %s: GENERAL_BLOCK of dimension %d has %d block sizes, the arrangement dimension has %d processors", name, dim, len(sizes), d.procs)
	}
	d.starts = make([]int, d.procs+1)
	for q, s := range sizes {
		if s < 0 {
			return fmt.Errorf("template %s: GENERAL_BLOCK of dimension %d: size for processor coordinate %d is %d, must be >= 0", name, dim, q+1, s)
		}
		if s > d.n-d.starts[q] {
			return fmt.Errorf("template %s: GENERAL_BLOCK of dimension %d: block sizes %v add up to more than the extent %d", name, dim, sizes, d.n)
		}
		d.starts[q+1] = d.starts[q] + s
	}
	if d.starts[d.procs] != d.n {
		return fmt.Errorf("template %s: GENERAL_BLOCK of dimension %d: block sizes %v add up to %d, the extent is %d", name, dim, sizes, d.starts[d.procs], d.n)
	}
	return nil
}

// buildIndirect checks MAP and inverts it into self's block list the way the
// paper describes: loop over all I in increasing order and attach I to the
// local list when MAP(I) is the local processor.
func (d *dimDesc) buildIndirect(name string, m []int) error {
	if len(m) != d.n {
		return fmt.Errorf("template %s: MAP has %d values, the template has %d elements", name, len(m), d.n)
	}
	d.coords = make([]int, d.n)
	for k, v := range m {
		if v < 1 || v > d.procs {
			return fmt.Errorf("template %s: MAP(%d) = %d names no processor, allowed 1..%d", name, d.lo+k, v, d.procs)
		}
		d.coords[k] = v - 1
		if v-1 == d.coord {
			d.blocks = appendIndex(d.blocks, d.lo+k)
		}
	}
	return nil
}

// buildLinked checks the HOME clause and inverts it like an indirect
// distribution: I is attached to the local list when the Home element it
// names is in self's part of Home, which Home can answer locally.
func (d *dimDesc) buildLinked(name string, self int, home *Template, targets [][]int) error {
	if home == nil {
		return fmt.Errorf("template %s: LINKED distribution without a HOME template", name)
	}
	if home.state != Defined {
		return fmt.Errorf("template %s: HOME template %s is %s: distribute it before linking %s to it", name, home.name, home.state, name)
	}
	if home.dist.self != self {
		return fmt.Errorf("template %s: HOME template %s was distributed for rank %d, not rank %d", name, home.name, home.dist.self, self)
	}
	if len(targets) != d.n {
		return fmt.Errorf("template %s: HOME clause has %d targets, the template has %d elements", name, len(targets), d.n)
	}
	var blocks []Block
	for k, target := range targets {
		if !home.inBounds(target) {
			return fmt.Errorf("template %s: HOME of element %s is %s, outside %s's bounds %s", name, element(name, []int{d.lo + k}), element(home.name, target), home.name, boundsString(home.bounds))
		}
		if home.owns(target) {
			blocks = appendIndex(blocks, d.lo+k)
		}
	}
	d.blocks = blocks
	return nil
}

// buildRecorded turns the blocks self executed into its block list.
func (d *dimDesc) buildRecorded(name string, executed []Block) error {
	list, err := normalizeBlocks(executed)
	if err != nil {
		return fmt.Errorf("template %s: recorded schedule: %v", name, err)
	}
	if n := len(list); n > 0 && (list[0].Lo < d.lo || list[n-1].Hi > d.lo+d.n-1) {
		return fmt.Errorf("template %s: recorded blocks %v reach outside the template's bounds %v", name, list, Block{Lo: d.lo, Hi: d.lo + d.n - 1})
	}
	d.blocks = list
	return nil
}

// ownerCoord is the 0-based arrangement coordinate owning element e (an
// absolute index within the dimension's bounds); false when the format has
// no such coordinate.
func (d *dimDesc) ownerCoord(e int) (int, bool) {
	rel := e - d.lo // 0-based
	switch d.format {
	case BlockFormat:
		return rel / d.size, true
	case Cyclic:
		return cyclicOwner(rel, d.seg, d.procs), true
	case GeneralBlock:
		// The first coordinate whose block ends after rel; blocks of size
		// 0 end where they start and are skipped.
		return sort.Search(d.procs, func(q int) bool { return d.starts[q+1] > rel }), true
	case Indirect:
		return d.coords[rel], true
	}
	// Collapsed has no owner coordinate; LINKED and RECORDED keep only
	// self's blocks, and their owners are ranks, not coordinates.
	return -1, false
}

// cyclicOwner is the 0-based coordinate owning relative 0-based element rel
// under CYCLIC(l) on P processors: rel lies in segment floor(rel/l), and
// segments are dealt round robin.
//
// The paper writes the test with 1-based e and p as
// p = MODULO(ceil((e-1)/l), P) + 1. That is right only for l = 1 (where ceil
// and floor agree) and for the first element of each segment: every other
// element of a segment is attributed to the next processor. Counterexample:
// N = 4, P = 2, CYCLIC(2) gives processor 1 elements 1:2 and processor 2
// elements 3:4, but for e = 2 the formula yields MODULO(ceil(1/2), 2)+1 =
// MODULO(1, 2)+1 = 2, and for e = 4 it yields MODULO(ceil(3/2), 2)+1 = 1.
// The correct test uses floor: MODULO(floor((e-1)/l), P) + 1.
func cyclicOwner(rel, l, P int) int { return (rel / l) % P }

// owns reports whether self owns element e of this dimension; the caller has
// checked that self is inside the arrangement.
func (d *dimDesc) owns(e int) bool {
	switch d.format {
	case Collapsed:
		return true
	case BlockFormat:
		// The paper's test: e lies between self's lower and upper bound.
		rel := e - d.lo + 1
		return d.lower <= rel && rel <= d.upper
	case Cyclic:
		return cyclicOwner(e-d.lo, d.seg, d.procs) == d.coord
	case GeneralBlock:
		rel := e - d.lo
		return d.starts[d.coord] <= rel && rel < d.starts[d.coord+1]
	}
	// Inverted forms: search self's block list.
	return inBlocks(d.blocks, e)
}

// local is self's block list for the dimension in absolute indices, sorted
// and maximal; the caller has checked that self is inside the arrangement.
func (d *dimDesc) local() []Block {
	shift := d.lo - 1 // relative 1-based -> absolute
	switch d.format {
	case Collapsed:
		return []Block{{Lo: d.lo, Hi: d.lo + d.n - 1}}
	case BlockFormat:
		if d.lower > d.upper {
			return nil
		}
		return []Block{{Lo: d.lower + shift, Hi: d.upper + shift}}
	case Cyclic:
		// Segment i (1-based): lower = A + B with B = (i-1)Pl,
		// upper = min(lower+l-1, N).
		var list []Block
		for i := 1; i <= d.numSeg; i++ {
			lower := d.a + (i-1)*d.stride
			upper := min(lower+d.seg-1, d.n)
			list = appendBlock(list, Block{Lo: lower + shift, Hi: upper + shift})
		}
		return list
	case GeneralBlock:
		b := Block{Lo: d.lo + d.starts[d.coord], Hi: d.lo + d.starts[d.coord+1] - 1}
		if b.Empty() {
			return nil
		}
		return []Block{b}
	}
	return cloneBlocks(d.blocks)
}
