package rt

import (
	"fmt"

	"github.com/svmcluster/svm/svmfortran"
)

// Processor arrangements and templates are named by handles: 1, 2, ... in
// the order this rank declared them (every rank runs the same declarations,
// so handles agree across ranks).

// Processors declares PROCESSORS P(extents) and returns its handle.
func (r *Runtime) Processors(name string, extents []int) (int, error) {
	a, err := svmfortran.NewArrangement(name, extents...)
	if err != nil {
		return 0, err
	}
	return r.arrangements.add(a), nil
}

func (r *Runtime) arrangement(h int) (*svmfortran.Arrangement, error) { return r.arrangements.get(h) }

// ReleaseProcessors gives up arrangement h (its unit returns).
func (r *Runtime) ReleaseProcessors(h int) error { return r.arrangements.release(h) }

// ArrangementOf returns processor arrangement p.
func (r *Runtime) ArrangementOf(p int) (*svmfortran.Arrangement, error) { return r.arrangement(p) }

// Template declares TEMPLATE name(:) of the given rank, empty, and returns
// its handle.
func (r *Runtime) Template(name string, rank int) (int, error) {
	t, err := svmfortran.NewTemplate(name, rank)
	if err != nil {
		return 0, err
	}
	return r.templates.add(t), nil
}

// ReleaseTemplate gives up template h (its unit returns).
func (r *Runtime) ReleaseTemplate(h int) error {
	t, err := r.templates.get(h)
	if err != nil {
		return err
	}
	delete(r.recorded, t)
	return r.templates.release(h)
}

func (r *Runtime) template(h int) (*svmfortran.Template, error) { return r.templates.get(h) }

// TemplateOf returns the descriptor of template h.
func (r *Runtime) TemplateOf(h int) (*svmfortran.Template, error) { return r.template(h) }

// Create gives empty template h its bounds (CREATE).
func (r *Runtime) Create(h int, bounds []svmfortran.Block) error {
	t, err := r.template(h)
	if err != nil {
		return err
	}
	return t.Create(bounds)
}

// Define gives template h (empty or declared) new bounds.
func (r *Runtime) Define(h int, bounds []svmfortran.Block) error {
	t, err := r.template(h)
	if err != nil {
		return err
	}
	return t.Define(bounds)
}

// Undef drops template h's distribution (UNDEF).
func (r *Runtime) Undef(h int) error {
	t, err := r.template(h)
	if err != nil {
		return err
	}
	delete(r.recorded, t)
	return t.Undef()
}

// Destroy makes template h empty (DESTROY).
func (r *Runtime) Destroy(h int) error {
	t, err := r.template(h)
	if err != nil {
		return err
	}
	delete(r.recorded, t)
	return t.Destroy()
}

// Distribute distributes template h onto arrangement p (0 for a LINKED
// distribution, which takes its processors from its Home template) over the
// active processor set (DISTRIBUTE; REDISTRIBUTE when redistribute, which
// needs a defined template).
func (r *Runtime) Distribute(h, p int, dims []svmfortran.Dist, redistribute bool) error {
	t, err := r.template(h)
	if err != nil {
		return err
	}
	var onto *svmfortran.Arrangement
	if p != 0 || !linked(dims) {
		if onto, err = r.arrangement(p); err != nil {
			return fmt.Errorf("distributing template %s: %w", t.Name(), err)
		}
	}
	for _, d := range dims {
		if d.Format == svmfortran.Recorded {
			return fmt.Errorf("distributing template %s: a recorded distribution comes only from a semi-dynamic loop", t.Name())
		}
	}
	if redistribute {
		err = t.Redistribute(onto, r.Active(), r.comm.Rank(), dims)
	} else {
		err = t.Distribute(onto, r.Active(), r.comm.Rank(), dims)
	}
	if err == nil {
		delete(r.recorded, t)
	}
	return err
}

func linked(dims []svmfortran.Dist) bool {
	return len(dims) == 1 && dims[0].Format == svmfortran.Linked
}

// Owner returns the rank owning element coords of template h.
func (r *Runtime) Owner(h int, coords []int) (int, error) {
	t, err := r.template(h)
	if err != nil {
		return 0, err
	}
	return t.Owner(coords)
}

// Owns reports whether this rank owns element coords of template h.
func (r *Runtime) Owns(h int, coords []int) (bool, error) {
	t, err := r.template(h)
	if err != nil {
		return false, err
	}
	return t.Owns(coords)
}
