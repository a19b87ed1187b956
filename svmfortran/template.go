package svmfortran

import "fmt"

// State is a template's internal state, kept in its descriptor.
type State int

const (
	// Empty: only the rank is known (TEMPLATE T(:)), or it was destroyed.
	Empty State = iota
	// Declared: rank and bounds are known (TEMPLATE T(N), CREATE, DEFINE).
	Declared
	// Defined: declared and distributed.
	Defined
)

// String gives the state's name as the paper spells it.
func (s State) String() string {
	switch s {
	case Empty:
		return "empty"
	case Declared:
		return "declared"
	case Defined:
		return "defined"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// MaxExtent bounds the number of elements in one template dimension. It is
// far above any real template and keeps index arithmetic (offsets, block
// bounds) clear of int overflow.
const MaxExtent = 1 << 40

// Template is one rank's run-time descriptor of a template: a rectangular
// index domain describing the iteration space of parallel loops, with its
// state and, once defined, its distribution as seen from one rank.
//
// Define, create, undef and destroy are local operations. Distribute and
// redistribute are too, given their arguments; the one exception the paper
// notes, a linked distribution, reads the Home template's descriptor on the
// same rank, so ranks need exchange nothing as long as each has distributed
// Home itself.
type Template struct {
	name   string
	rank   int
	state  State
	bounds []Block       // nil when Empty
	dist   *distribution // nil unless Defined
}

// distribution is what a template's descriptor holds once it is defined.
type distribution struct {
	// onto is a copy of the arrangement; nil for a LINKED or RECORDED
	// distribution given without one.
	onto *Arrangement
	// set is the processor set current at distribution time, which the
	// paper stores in the descriptor; ranks is a copy of its members, so
	// owner lookups cannot change behind the descriptor's back.
	set   *ProcSet
	ranks []int
	self  int
	pos   int // self's position in set
	// inside reports whether self can own anything: its position is within
	// the arrangement, or the format does not depend on the arrangement
	// (LINKED and RECORDED take their owners from Home or from what was
	// executed).
	inside bool
	dims   []dimDesc
}

// NewTemplate declares TEMPLATE name(:) with the given rank, 1..7. The
// template starts empty; Create or Define gives it bounds.
func NewTemplate(name string, rank int) (*Template, error) {
	if rank < 1 || rank > MaxRank {
		return nil, fmt.Errorf("template %s: rank %d, allowed 1..%d", name, rank, MaxRank)
	}
	return &Template{name: name, rank: rank}, nil
}

// Name is the template's name.
func (t *Template) Name() string { return t.name }

// Rank is the number of dimensions.
func (t *Template) Rank() int { return t.rank }

// State is the template's current state.
func (t *Template) State() State { return t.state }

// Bounds are the index ranges of the dimensions; nil when empty.
func (t *Template) Bounds() []Block { return cloneBlocks(t.bounds) }

// Onto is a copy of the arrangement the template is distributed onto; nil
// unless defined (and for a LINKED or RECORDED distribution given none).
func (t *Template) Onto() *Arrangement {
	if t.dist == nil || t.dist.onto == nil {
		return nil
	}
	return t.dist.onto.clone()
}

// ProcSet is the processor set stored at distribution time; nil unless
// defined.
func (t *Template) ProcSet() *ProcSet {
	if t.dist == nil {
		return nil
	}
	return t.dist.set
}

// Create gives an empty template its bounds (CREATE): Empty -> Declared.
func (t *Template) Create(bounds []Block) error {
	if t.state != Empty {
		return fmt.Errorf("template %s is %s: create needs an empty template (destroy it first)", t.name, t.state)
	}
	if err := t.checkBounds(bounds); err != nil {
		return err
	}
	t.bounds, t.state = cloneBlocks(bounds), Declared
	return nil
}

// Define sets the template's bounds (DEFINE): Empty or Declared -> Declared.
// A defined template keeps its distribution until Undef, so it must be
// undefined first.
func (t *Template) Define(bounds []Block) error {
	if t.state == Defined {
		return fmt.Errorf("template %s is defined: undef it before defining it again", t.name)
	}
	if err := t.checkBounds(bounds); err != nil {
		return err
	}
	t.bounds, t.state = cloneBlocks(bounds), Declared
	return nil
}

// Undef drops the distribution (UNDEF): Defined -> Declared.
func (t *Template) Undef() error {
	if t.state != Defined {
		return fmt.Errorf("template %s is %s: only a defined template can be undefined", t.name, t.state)
	}
	t.dist, t.state = nil, Declared
	return nil
}

// Destroy drops bounds and distribution (DESTROY): any state -> Empty. The
// rank stays, as in the declaration TEMPLATE T(:).
func (t *Template) Destroy() error {
	t.bounds, t.dist, t.state = nil, nil, Empty
	return nil
}

func (t *Template) checkBounds(bounds []Block) error {
	if len(bounds) != t.rank {
		return fmt.Errorf("template %s has rank %d, got %d bounds", t.name, t.rank, len(bounds))
	}
	for d, b := range bounds {
		if b.Empty() {
			return fmt.Errorf("template %s: bounds %v of dimension %d are empty", t.name, b, d)
		}
		if n, ok := length(b); !ok || n > MaxExtent {
			return fmt.Errorf("template %s: bounds %v of dimension %d hold more than %d elements", t.name, b, d, MaxExtent)
		}
	}
	return nil
}

// Distribute distributes a declared or defined template onto an arrangement
// (DISTRIBUTE): -> Defined. set is the current processor set, stored in the
// descriptor, and self the rank this descriptor belongs to, which must be a
// member of set. Arrangement index i is position i of set; positions beyond
// the arrangement own nothing.
//
// dims gives one Dist per template dimension. The non-collapsed dimensions
// map in order onto the arrangement's dimensions, so their number must be the
// arrangement's rank. INDIRECT, LINKED and RECORDED are only for rank-1
// templates onto rank-1 arrangements; for LINKED and RECORDED the owners come
// from Home and from what was executed, so onto may be nil and, if given, is
// only checked and recorded.
//
// On error the template is unchanged.
func (t *Template) Distribute(onto *Arrangement, set *ProcSet, self int, dims []Dist) error {
	if t.state == Empty {
		return fmt.Errorf("template %s is empty: create or define it before distributing", t.name)
	}
	return t.distribute(onto, set, self, dims)
}

// Redistribute distributes a defined template anew (REDISTRIBUTE); the
// arguments are those of Distribute. A template linked to this one earlier
// does not move with it.
func (t *Template) Redistribute(onto *Arrangement, set *ProcSet, self int, dims []Dist) error {
	if t.state != Defined {
		return fmt.Errorf("template %s is %s: only a defined template can be redistributed (distribute it first)", t.name, t.state)
	}
	return t.distribute(onto, set, self, dims)
}

func (t *Template) distribute(onto *Arrangement, set *ProcSet, self int, dims []Dist) error {
	if len(dims) != t.rank {
		return fmt.Errorf("template %s has rank %d, got %d distribution formats", t.name, t.rank, len(dims))
	}
	if set == nil {
		return fmt.Errorf("distribute template %s: no processor set", t.name)
	}
	if err := set.validate(); err != nil {
		return fmt.Errorf("distribute template %s: %v", t.name, err)
	}
	pos := set.Position(self)
	if pos < 0 {
		return fmt.Errorf("distribute template %s: rank %d is not a member of the processor set %v", t.name, self, set.Members)
	}

	distributed := 0
	arrangementFree := false // LINKED or RECORDED: owners do not come from onto
	for d, ds := range dims {
		switch ds.Format {
		case Collapsed:
			continue
		case BlockFormat, GeneralBlock:
		case Cyclic:
			if ds.Segment < 0 {
				return fmt.Errorf("template %s: CYCLIC(%d) in dimension %d, the segment length must be >= 1", t.name, ds.Segment, d)
			}
		case Indirect, Linked, Recorded:
			if t.rank != 1 || (onto != nil && onto.Rank() != 1) {
				return fmt.Errorf("template %s: %v distribution needs a rank-1 template onto a rank-1 arrangement, got rank %d onto rank %d", t.name, ds.Format, t.rank, arrangementRank(onto))
			}
			arrangementFree = ds.Format != Indirect
		default:
			return fmt.Errorf("template %s: unknown distribution format %v in dimension %d", t.name, ds.Format, d)
		}
		distributed++
	}

	if onto == nil && !arrangementFree {
		return fmt.Errorf("distribute template %s: no processor arrangement", t.name)
	}
	var selfCoords []int // 0-based, nil when self is outside the arrangement
	inside := arrangementFree
	if onto != nil {
		if err := onto.validate(); err != nil {
			return fmt.Errorf("distribute template %s: %v", t.name, err)
		}
		if distributed != onto.Rank() {
			return fmt.Errorf("distribute template %s onto %s: mismatched ranks: %d distributed dimensions, arrangement rank %d", t.name, onto.Name, distributed, onto.Rank())
		}
		if onto.Size() > set.Size() {
			return fmt.Errorf("distribute template %s onto %s: the arrangement has %d processors, the processor set only %d", t.name, onto.Name, onto.Size(), set.Size())
		}
		if pos < onto.Size() {
			c, err := onto.Coords(pos)
			if err != nil {
				return err
			}
			for k := range c {
				c[k]--
			}
			selfCoords = c
			inside = true
		}
	}

	descs := make([]dimDesc, t.rank)
	axis := 0
	for d, ds := range dims {
		b := t.bounds[d]
		n, _ := length(b) // checked by checkBounds
		desc := dimDesc{format: ds.Format, lo: b.Lo, n: n, coord: -1}
		if ds.Format != Collapsed && onto != nil {
			desc.procs = onto.Extents[axis]
			if selfCoords != nil {
				desc.coord = selfCoords[axis]
			}
			axis++
		}
		var err error
		switch ds.Format {
		case BlockFormat:
			desc.buildBlock()
		case Cyclic:
			desc.buildCyclic(max(ds.Segment, 1))
		case GeneralBlock:
			err = desc.buildGeneralBlock(t.name, d, ds.Sizes)
		case Indirect:
			err = desc.buildIndirect(t.name, ds.Map)
		case Linked:
			err = desc.buildLinked(t.name, self, ds.Home, ds.Targets)
		case Recorded:
			err = desc.buildRecorded(t.name, ds.Blocks)
		}
		if err != nil {
			return err
		}
		descs[d] = desc
	}

	var stored *Arrangement
	if onto != nil {
		stored = onto.clone()
	}
	// Assign only now: a linked distribution may name this template as its
	// own Home and must read the old distribution while building the new.
	t.dist = &distribution{
		onto:   stored,
		set:    set,
		ranks:  append([]int(nil), set.Members...),
		self:   self,
		pos:    pos,
		inside: inside,
		dims:   descs,
	}
	t.state = Defined
	return nil
}

func arrangementRank(a *Arrangement) int {
	if a == nil {
		return 0
	}
	return a.Rank()
}

// checkElement checks that the template is defined and coords name one of
// its elements.
func (t *Template) checkElement(coords []int) error {
	if t.state != Defined {
		return fmt.Errorf("template %s is %s: distribute it first", t.name, t.state)
	}
	if len(coords) != t.rank {
		return fmt.Errorf("template %s has rank %d, got %d coordinates", t.name, t.rank, len(coords))
	}
	if !t.inBounds(coords) {
		return fmt.Errorf("element %s is outside the template's bounds %s", element(t.name, coords), boundsString(t.bounds))
	}
	return nil
}

// inBounds reports whether coords name an element of the template.
func (t *Template) inBounds(coords []int) bool {
	if len(coords) != len(t.bounds) {
		return false
	}
	for d, c := range coords {
		if !t.bounds[d].Contains(c) {
			return false
		}
	}
	return true
}

// Owns reports whether the element is assigned to self: the formulas for
// BLOCK, CYCLIC and GENERAL_BLOCK, a search of self's block list for the
// inverted forms.
func (t *Template) Owns(coords []int) (bool, error) {
	if err := t.checkElement(coords); err != nil {
		return false, err
	}
	return t.owns(coords), nil
}

// owns is Owns for a defined template and an element within its bounds.
func (t *Template) owns(coords []int) bool {
	if !t.dist.inside {
		return false
	}
	for d := range t.dist.dims {
		if !t.dist.dims[d].owns(coords[d]) {
			return false
		}
	}
	return true
}

// Owner is the job rank that owns the element. For BLOCK, CYCLIC,
// GENERAL_BLOCK and INDIRECT (whose MAP the descriptor keeps) any element's
// owner is known locally. LINKED and RECORDED descriptors keep only self's
// block list, as the paper stores them: Owner returns self for an element
// self owns and an error for any other.
func (t *Template) Owner(coords []int) (int, error) {
	if err := t.checkElement(coords); err != nil {
		return 0, err
	}
	dist := t.dist
	if f := dist.dims[0].format; t.rank == 1 && (f == Linked || f == Recorded) {
		if t.owns(coords) {
			return dist.self, nil
		}
		return 0, fmt.Errorf("template %s has a %v distribution, which keeps only rank %d's own blocks: the owner of %s is not known locally", t.name, f, dist.self, element(t.name, coords))
	}
	// Arrangement index, column-major over the distributed dimensions.
	index, stride, axis := 0, 1, 0
	for d := range dist.dims {
		desc := &dist.dims[d]
		if desc.format == Collapsed {
			continue
		}
		q, _ := desc.ownerCoord(coords[d])
		index += q * stride
		stride *= dist.onto.Extents[axis]
		axis++
	}
	return dist.ranks[index], nil
}

// LocalBlocks is self's block list for template dimension dim (0-based):
// sorted, disjoint blocks of absolute indices, adjacent blocks merged
// (Table 1 of the paper). The elements self owns are the product of its
// lists over all dimensions; every list is empty when self owns nothing.
func (t *Template) LocalBlocks(dim int) ([]Block, error) {
	if t.state != Defined {
		return nil, fmt.Errorf("template %s is %s: distribute it first", t.name, t.state)
	}
	if dim < 0 || dim >= t.rank {
		return nil, fmt.Errorf("template %s has rank %d: dimension %d, allowed 0..%d", t.name, t.rank, dim, t.rank-1)
	}
	if !t.dist.inside {
		return nil, nil
	}
	return t.dist.dims[dim].local(), nil
}
