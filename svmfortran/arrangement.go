package svmfortran

import "fmt"

// MaxRank is Fortran 77's limit on the rank of an array, which SVM-Fortran
// also applies to processor arrangements and templates.
const MaxRank = 7

// MaxProcessors bounds the size of a processor arrangement. It is far above
// any machine the runtime targets and keeps index arithmetic (such as the
// P*l stride of a CYCLIC distribution) clear of int overflow.
const MaxProcessors = 1 << 24

// Arrangement is a processor arrangement, PROCESSORS P(e1,...,ek): a
// rectangular index space naming abstract processors. Coordinates are
// 1-based; Index linearises them column-major to the 0-based arrangement
// index, which is the position in the processor set the arrangement is used
// with.
type Arrangement struct {
	Name    string
	Extents []int
}

// NewArrangement declares PROCESSORS name(extents...): rank 1..7, every
// extent >= 1.
func NewArrangement(name string, extents ...int) (*Arrangement, error) {
	a := &Arrangement{Name: name, Extents: append([]int(nil), extents...)}
	if err := a.validate(); err != nil {
		return nil, err
	}
	return a, nil
}

// validate checks the declaration rules; Arrangement's fields are exported,
// so Distribute re-checks arrangements it did not build itself.
func (a *Arrangement) validate() error {
	if k := len(a.Extents); k < 1 || k > MaxRank {
		return fmt.Errorf("processor arrangement %s: rank %d, allowed 1..%d", a.Name, k, MaxRank)
	}
	size := 1
	for d, e := range a.Extents {
		if e < 1 {
			return fmt.Errorf("processor arrangement %s: extent of dimension %d is %d, must be >= 1", a.Name, d, e)
		}
		if e > MaxProcessors/size {
			return fmt.Errorf("processor arrangement %s: more than %d processors", a.Name, MaxProcessors)
		}
		size *= e
	}
	return nil
}

// Rank is the number of dimensions.
func (a *Arrangement) Rank() int { return len(a.Extents) }

// Size is the number of processors, the product of the extents.
func (a *Arrangement) Size() int {
	n := 1
	for _, e := range a.Extents {
		n *= e
	}
	return n
}

// Index converts 1-based coordinates to the 0-based arrangement index,
// column-major (first coordinate fastest), as Fortran lays out arrays.
func (a *Arrangement) Index(coords []int) (int, error) {
	if err := a.validate(); err != nil {
		return 0, err
	}
	if len(coords) != len(a.Extents) {
		return 0, fmt.Errorf("processor arrangement %s has rank %d, got %d coordinates", a.Name, len(a.Extents), len(coords))
	}
	index, stride := 0, 1
	for d, c := range coords {
		e := a.Extents[d]
		if c < 1 || c > e {
			return 0, fmt.Errorf("%s: coordinate %d is %d, allowed 1..%d", element(a.Name, coords), d, c, e)
		}
		index += (c - 1) * stride
		stride *= e
	}
	return index, nil
}

// Coords converts a 0-based arrangement index back to 1-based coordinates.
func (a *Arrangement) Coords(index int) ([]int, error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	size := a.Size()
	if index < 0 || index >= size {
		return nil, fmt.Errorf("processor arrangement %s: index %d, allowed 0..%d", a.Name, index, size-1)
	}
	coords := make([]int, len(a.Extents))
	for d, e := range a.Extents {
		coords[d] = index%e + 1
		index /= e
	}
	return coords, nil
}

// clone copies a so a template's descriptor does not change when the
// caller's Extents slice does.
func (a *Arrangement) clone() *Arrangement {
	return &Arrangement{Name: a.Name, Extents: append([]int(nil), a.Extents...)}
}
