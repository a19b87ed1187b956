package svmfortran

import "fmt"

// Loop schedules give one rank its share of a parallel loop over the active
// processor set of size P, in which the rank has position pos. Direct
// strategies (BLOCK, CYCLIC) are pure formulas of the loop bounds; predefined
// scheduling (ON_HOME) reads the template's descriptor; dynamic strategies
// (self scheduling) hand out chunks at run time, and the chunks a rank took
// can be recorded as a template distribution (semi-dynamic scheduling).
//
// Functions without an error result treat bad arguments as "nothing to do":
// P < 1, pos outside 0..P-1, or a loop whose length does not fit in an int
// yield no iterations. A chunk size below 1 is taken as 1, as CYCLIC(0) is.

// BlockSchedule is position pos's block of the loop under BLOCK scheduling:
// blocks of ceil(N/P) iterations, as for BLOCK templates, so trailing
// positions may get an empty block.
func BlockSchedule(loop Block, pos, P int) Block {
	n, ok := length(loop)
	if !ok || P < 1 || pos < 0 || pos >= P {
		return emptyBlock()
	}
	off, cnt := part(n, ceilDiv(n, P), pos)
	if cnt == 0 {
		return emptyBlock()
	}
	return Block{Lo: loop.Lo + off, Hi: loop.Lo + off + cnt - 1}
}

// CyclicSchedule is position pos's share of the loop under CYCLIC(chunk)
// scheduling: chunks of chunk iterations dealt round robin, chunk k to
// position k mod P. The blocks are in increasing order, touching ones merged
// (which happens only for P = 1).
func CyclicSchedule(loop Block, chunk, pos, P int) []Block {
	n, ok := length(loop)
	if !ok || P < 1 || pos < 0 || pos >= P {
		return nil
	}
	chunk = max(chunk, 1)
	var list []Block
	for k := pos; k < ceilDiv(n, chunk); k += P {
		off, cnt := part(n, chunk, k)
		list = appendBlock(list, Block{Lo: loop.Lo + off, Hi: loop.Lo + off + cnt - 1})
	}
	return list
}

// NumChunks is the number of chunks of a dynamic (self-scheduled) loop.
func NumChunks(loop Block, chunk int) int {
	n, ok := length(loop)
	if !ok {
		return 0
	}
	return ceilDiv(n, max(chunk, 1))
}

// Chunk is the k-th (0-based) chunk of a dynamic loop: the iterations a
// processor executes after drawing ticket k from the loop's shared counter.
// It reports false, with an empty block, once k is past the last chunk.
func Chunk(loop Block, chunk, k int) (Block, bool) {
	n, ok := length(loop)
	if !ok {
		return emptyBlock(), false
	}
	off, cnt := part(n, max(chunk, 1), k)
	if cnt == 0 {
		return emptyBlock(), false
	}
	return Block{Lo: loop.Lo + off, Hi: loop.Lo + off + cnt - 1}, true
}

// OnHome is self's share of a loop nest scheduled ON_HOME(T(I1+o1, I2+o2,
// ...)): loop dimension k runs over loops[k] and maps to template dimension
// k with offset offsets[k] (nil offsets mean all 0). An iteration belongs to
// the owner of the template element it maps to, so the result is the product
// of the per-dimension local block lists intersected with the loop and
// shifted back by the offsets. The boxes are ordered for a Fortran nest: the
// last dimension outermost, dimension 0 varying fastest.
//
// Self is the rank the template was distributed for; with a RECORDED
// distribution this repeats the schedule the dynamic loop produced.
func (t *Template) OnHome(loops []Block, offsets []int) ([]Box, error) {
	if t.state != Defined {
		return nil, fmt.Errorf("schedule over template %s, which is %s: distribute it first", t.name, t.state)
	}
	if len(loops) != t.rank {
		return nil, fmt.Errorf("schedule over template %s of rank %d: got %d loop dimensions", t.name, t.rank, len(loops))
	}
	if offsets == nil {
		offsets = make([]int, t.rank)
	}
	if len(offsets) != t.rank {
		return nil, fmt.Errorf("schedule over template %s of rank %d: got %d offsets", t.name, t.rank, len(offsets))
	}

	// Check every dimension before scheduling any, so a nest with one
	// empty loop still reports a bad mapping in another.
	empty := false
	for k, loop := range loops {
		if loop.Empty() {
			empty = true
			continue
		}
		b := t.bounds[k]
		for _, i := range []int{loop.Lo, loop.Hi} {
			if e, ok := addInt(i, offsets[k]); !ok || !b.Contains(e) {
				return nil, fmt.Errorf("schedule over template %s: iteration %d of loop dimension %d maps to %s, outside the template's bounds %v", t.name, i, k, offsetString(i, offsets[k]), b)
			}
		}
	}
	if empty || !t.dist.inside {
		return nil, nil
	}

	// Per dimension: self's blocks of the template, cut to the loop's image
	// and shifted back to loop indices.
	lists := make([][]Block, t.rank)
	for k, loop := range loops {
		o := offsets[k]
		image := Block{Lo: loop.Lo + o, Hi: loop.Hi + o}
		for _, b := range t.dist.dims[k].local() {
			if c := intersect(b, image); !c.Empty() {
				lists[k] = append(lists[k], Block{Lo: c.Lo - o, Hi: c.Hi - o})
			}
		}
		if len(lists[k]) == 0 {
			return nil, nil
		}
	}

	// The product, odometer style with dimension 0 fastest, which puts the
	// last dimension outermost.
	var boxes []Box
	idx := make([]int, t.rank)
	for {
		box := make(Box, t.rank)
		for k := range box {
			box[k] = lists[k][idx[k]]
		}
		boxes = append(boxes, box)
		k := 0
		for k < t.rank {
			idx[k]++
			if idx[k] < len(lists[k]) {
				break
			}
			idx[k] = 0
			k++
		}
		if k == t.rank {
			return boxes, nil
		}
	}
}

// addInt is a+b, and false when the sum overflows.
func addInt(a, b int) (int, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// offsetString prints the template index i+o, or the sum itself when it
// does not fit in an int.
func offsetString(i, o int) string {
	if e, ok := addInt(i, o); ok {
		return fmt.Sprintf("index %d", e)
	}
	return fmt.Sprintf("index %d%+d (overflows)", i, o)
}
