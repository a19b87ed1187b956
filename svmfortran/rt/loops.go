package rt

import (
	"errors"
	"fmt"
	"slices"

	"github.com/svmcluster/svm/svmfortran"
)

// A parallel loop (PDO) is run by every member of the active set: LoopBegin
// with the loop's bounds and strategy, then LoopNext until it reports no
// more boxes; the last LoopNext ends the loop with a barrier over the set,
// after which every iteration's writes are visible to every member.
//
// Direct and dynamic strategies split the outermost loop dimension (the
// last, as Fortran nests loops) and give each box the inner dimensions
// whole; ON_HOME follows the template's distribution in every dimension.

type loop struct {
	set   *svmfortran.ProcSet
	dims  []svmfortran.Block
	boxes []svmfortran.Box // static strategies: this rank's boxes
	next  int
	// Dynamic and semi-dynamic loops take chunks of the outermost dimension
	// from a counter; the member that fetches last resets it.
	dynamic  bool
	chunk    int
	nchunks  int
	counter  uint32
	executed []svmfortran.Block
	record   *svmfortran.Template // semi-dynamic: where to record them
}

// LoopBegin starts a parallel loop over dims (dimension 0 innermost) and
// returns its handle. chunk is CYCLIC's and the dynamic strategies' chunk
// (0: 1); template is ON_HOME's and SEMI_DYNAMIC's template handle; offsets
// are ON_HOME's (T(I1+o1, I2+o2, ...)), nil for none.
func (r *Runtime) LoopBegin(s Strategy, dims []svmfortran.Block, chunk, template int, offsets []int) (int, error) {
	l, err := r.newLoop(s, dims, chunk, template, offsets)
	if err != nil {
		return 0, fmt.Errorf("%v loop: %w", s, err)
	}
	r.loops = append(r.loops, l)
	return len(r.loops), nil
}

func (r *Runtime) newLoop(s Strategy, dims []svmfortran.Block, chunk, template int, offsets []int) (*loop, error) {
	if len(dims) == 0 || len(dims) > svmfortran.MaxRank {
		return nil, fmt.Errorf("%d loop dimensions, allowed 1..%d", len(dims), svmfortran.MaxRank)
	}
	if chunk < 0 {
		return nil, fmt.Errorf("chunk %d", chunk)
	}
	chunk = max(chunk, 1)
	set := r.Active()
	l := &loop{set: set, dims: slices.Clone(dims), chunk: chunk}
	outer := len(dims) - 1
	pos, p := r.MyProcSet(), set.Size()
	withOuter := func(b svmfortran.Block) svmfortran.Box {
		box := slices.Clone(l.dims)
		box[outer] = b
		return box
	}
	switch s {
	case Block:
		if b := svmfortran.BlockSchedule(dims[outer], pos, p); !b.Empty() {
			l.boxes = []svmfortran.Box{withOuter(b)}
		}
	case Cyclic:
		for _, b := range svmfortran.CyclicSchedule(dims[outer], chunk, pos, p) {
			l.boxes = append(l.boxes, withOuter(b))
		}
	case OnHome, SemiDynamic:
		t, err := r.template(template)
		if err != nil {
			return nil, err
		}
		if s == SemiDynamic && !r.recorded[t] {
			if len(dims) != 1 || offsets != nil {
				return nil, errors.New("a semi-dynamic loop has one dimension and no offset")
			}
			if t.State() == svmfortran.Empty {
				return nil, fmt.Errorf("template %s is empty: declare it with the loop's bounds to record the schedule in", t.Name())
			}
			if b := t.Bounds(); len(b) != 1 || !b[0].Contains(dims[0].Lo) || !b[0].Contains(dims[0].Hi) {
				return nil, fmt.Errorf("template %s has bounds %v, which do not hold the loop's %v", t.Name(), t.Bounds(), dims[0])
			}
			l.record = t
			return r.dynamicLoop(l)
		}
		if err := r.checkTemplateSet(t); err != nil {
			return nil, err
		}
		if offsets == nil {
			offsets = make([]int, len(dims))
		}
		boxes, err := t.OnHome(dims, offsets)
		if err != nil {
			return nil, err
		}
		l.boxes = boxes
	case Dynamic:
		return r.dynamicLoop(l)
	default:
		return nil, fmt.Errorf("unknown strategy %d", int(s))
	}
	return l, nil
}

// checkTemplateSet refuses an ON_HOME loop whose template is distributed
// over processors outside the active set: their iterations would never run.
func (r *Runtime) checkTemplateSet(t *svmfortran.Template) error {
	if t.State() != svmfortran.Defined {
		return nil // OnHome says what is wrong
	}
	active := r.Active()
	for _, m := range t.ProcSet().Members {
		if active.Position(m) < 0 {
			return fmt.Errorf("template %s is distributed over processor set %v, which is not within the active set %v", t.Name(), t.ProcSet().Members, active.Members)
		}
	}
	return nil
}

// dynamicLoop sets up self scheduling on the active set's counter: one per
// nesting level and master, kept by the master's engine.
func (r *Runtime) dynamicLoop(l *loop) (*loop, error) {
	l.dynamic = true
	l.nchunks = svmfortran.NumChunks(l.dims[len(l.dims)-1], l.chunk)
	l.counter = counterBase + uint32(l.set.Level*r.comm.NProcs()+l.set.Master())
	return l, nil
}

// LoopNext returns the loop's next box of iterations for this rank, or
// false when it has none left; then the loop has ended (with a barrier over
// its processor set) and its handle is gone.
func (r *Runtime) LoopNext(h int) (svmfortran.Box, bool, error) {
	if h < 1 || h != len(r.loops) {
		return nil, false, fmt.Errorf("loop handle %d is not the innermost running loop (%d running)", h, len(r.loops))
	}
	l := r.loops[h-1]
	if r.Active() != l.set {
		return nil, false, errors.New("the active processor set changed inside the loop")
	}
	if box, ok, err := r.nextBox(l); ok || err != nil {
		return box, ok, err
	}
	r.loops = r.loops[:h-1]
	if l.record != nil {
		if err := r.recordSchedule(l); err != nil {
			return nil, false, err
		}
	}
	return nil, false, r.Barrier()
}

func (r *Runtime) nextBox(l *loop) (svmfortran.Box, bool, error) {
	if !l.dynamic {
		if l.next == len(l.boxes) {
			return nil, false, nil
		}
		l.next++
		return l.boxes[l.next-1], true, nil
	}
	k := l.next
	if l.set.Size() > 1 {
		v, err := r.comm.FetchAdd(l.counter, 1)
		if err != nil {
			return nil, false, err
		}
		k = int(v)
		// Every member fetches once past the end, so the counter ends at
		// nchunks + P: whoever fetches last sets it back to 0 before the
		// loop's closing barrier, and the next loop finds it there.
		if k == l.nchunks+l.set.Size()-1 {
			if _, err := r.comm.FetchAdd(l.counter, -int64(k+1)); err != nil {
				return nil, false, err
			}
		}
	}
	l.next++
	b, ok := svmfortran.Chunk(l.dims[len(l.dims)-1], l.chunk, k)
	if !ok {
		return nil, false, nil
	}
	if l.record != nil {
		l.executed = append(l.executed, b)
	}
	box := slices.Clone(l.dims)
	box[len(box)-1] = b
	return box, true, nil
}

// recordSchedule stores the chunks this rank executed as the template's
// distribution (semi-dynamic scheduling): later SEMI_DYNAMIC and ON_HOME
// loops over it repeat the schedule.
func (r *Runtime) recordSchedule(l *loop) error {
	t := l.record
	dist := []svmfortran.Dist{{Format: svmfortran.Recorded, Blocks: l.executed}}
	var err error
	if t.State() == svmfortran.Defined {
		err = t.Redistribute(nil, l.set, r.comm.Rank(), dist)
	} else {
		err = t.Distribute(nil, l.set, r.comm.Rank(), dist)
	}
	if err != nil {
		return fmt.Errorf("recording the schedule in template %s: %w", t.Name(), err)
	}
	r.recorded[t] = true
	return nil
}

// Sections: a parallel section construct places its n sections on the
// active set (SectionPositions, or consecutive positions of the given
// sizes, as SECTION ON P does with P's size); each member runs the
// sections it is placed on, each in its own derived processor set, and the
// construct ends with a barrier over the set.

type sections struct {
	parts   [][]int
	mine    []int // the sections this rank runs
	next    int
	entered bool
}

// SectionsBegin starts a parallel section construct of n sections; sizes,
// if not nil, gives each section's number of processors (SECTION ON P: P's
// size). When the sizes add up to more processors than the active set has,
// the sections are placed as without sizes, so a program written for many
// processors still runs on few.
func (r *Runtime) SectionsBegin(n int, sizes []int) error {
	p := r.NumProc()
	if sizes != nil {
		if len(sizes) != n {
			return fmt.Errorf("%d sections with %d processor counts", n, len(sizes))
		}
		total := 0
		for s, size := range sizes {
			if size < 1 {
				return fmt.Errorf("section %d on %d processors", s+1, size)
			}
			total += size
		}
		if total > p {
			sizes = nil
		}
	}
	var parts [][]int
	if sizes == nil {
		var err error
		if parts, err = svmfortran.SectionPositions(n, p); err != nil {
			return err
		}
	} else {
		next := 0
		for _, size := range sizes {
			parts = append(parts, seq(next, size))
			next += size
		}
	}
	sec := &sections{parts: parts}
	for s, part := range parts {
		if slices.Contains(part, r.MyProcSet()) {
			sec.mine = append(sec.mine, s)
		}
	}
	r.sections = append(r.sections, sec)
	return nil
}

func seq(from, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = from + i
	}
	return s
}

// SectionNext ends the section this rank ran last, if any, and enters the
// next one it runs: its number (1..n), or 0 at the end of the construct
// (after the closing barrier).
func (r *Runtime) SectionNext() (int, error) {
	if len(r.sections) == 0 {
		return 0, errors.New("no parallel section construct is running")
	}
	sec := r.sections[len(r.sections)-1]
	if sec.entered {
		if err := r.Leave(); err != nil {
			return 0, err
		}
		sec.entered = false
	}
	if sec.next < len(sec.mine) {
		s := sec.mine[sec.next]
		sec.next++
		if _, err := r.Enter(sec.parts[s]); err != nil {
			return 0, err
		}
		sec.entered = true
		return s + 1, nil
	}
	r.sections = r.sections[:len(r.sections)-1]
	return 0, r.Barrier()
}
