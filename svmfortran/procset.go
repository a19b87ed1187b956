package svmfortran

import "fmt"

// ProcSet is a processor set: the job ranks working together on a part of
// the program, in set order (a rank's position is its index in Members).
// Sets form a tree through Parent; Level 0 is the root, all ranks of the job.
// A set is treated as immutable once built.
type ProcSet struct {
	Members []int
	Parent  *ProcSet
	Level   int
}

// Size is the number of processors in the set.
func (s *ProcSet) Size() int { return len(s.Members) }

// Position is rank's 0-based position in the set (its MYPROCSET()), or -1
// when rank is not a member.
func (s *ProcSet) Position(rank int) int {
	for i, r := range s.Members {
		if r == rank {
			return i
		}
	}
	return -1
}

// Master is the rank at position 0, the one that executes exclusive-mode
// code; -1 for an empty set.
func (s *ProcSet) Master() int {
	if len(s.Members) == 0 {
		return -1
	}
	return s.Members[0]
}

// validate checks what Distribute relies on: a non-empty set of distinct,
// non-negative ranks.
func (s *ProcSet) validate() error {
	if len(s.Members) == 0 {
		return fmt.Errorf("processor set is empty")
	}
	seen := make(map[int]bool, len(s.Members))
	for i, r := range s.Members {
		if r < 0 {
			return fmt.Errorf("processor set: rank %d at position %d is negative", r, i)
		}
		if seen[r] {
			return fmt.Errorf("processor set: rank %d appears twice", r)
		}
		seen[r] = true
	}
	return nil
}

// Tree is one rank's local view of the processor-set tree. The paper keeps
// processor sets locally on every processor so that generating and deleting
// them needs no synchronisation: every rank of the active set computes the
// same split and enters the part it belongs to. Tree holds only the path
// from the root to the active set, which is all a rank can be inside.
type Tree struct {
	self   int
	active *ProcSet
}

// NewTree starts the tree of rank self in a job of nprocs ranks: the active
// set is the root, all ranks in rank order.
func NewTree(nprocs, self int) (*Tree, error) {
	if nprocs < 1 {
		return nil, fmt.Errorf("processor tree: %d processors, need at least 1", nprocs)
	}
	if self < 0 || self >= nprocs {
		return nil, fmt.Errorf("processor tree: rank %d, allowed 0..%d", self, nprocs-1)
	}
	root := &ProcSet{Members: make([]int, nprocs)}
	for r := range root.Members {
		root.Members[r] = r
	}
	return &Tree{self: self, active: root}, nil
}

// Active is the active processor set (a leaf of the tree).
func (t *Tree) Active() *ProcSet { return t.active }

// Self is this rank.
func (t *Tree) Self() int { return t.self }

// MyProcSet is self's position in the active set, what MYPROCSET() returns;
// 0 means self is the set's master.
func (t *Tree) MyProcSet() int { return t.active.Position(t.self) }

// Enter derives a processor set from the active one and makes it active,
// suspending the old one (entering a parallel section or loop task). The new
// set holds the ranks at the given positions of the active set, in the order
// given, so positions[0] becomes its master. Self must be one of them: a rank
// only ever enters the derived set it works in.
func (t *Tree) Enter(positions []int) error {
	if err := t.CheckPositions(positions); err != nil {
		return err
	}
	members := make([]int, len(positions))
	in := false
	for i, p := range positions {
		members[i] = t.active.Members[p]
		in = in || members[i] == t.self
	}
	if !in {
		return fmt.Errorf("enter processor set: rank %d (position %d) is not among positions %v", t.self, t.MyProcSet(), positions)
	}
	t.active = &ProcSet{Members: members, Parent: t.active, Level: t.active.Level + 1}
	return nil
}

// CheckPositions reports what is wrong with positions as a subset of the
// active set: none, one out of range, or one given twice. Ranks outside the
// subset check it too, so that every rank refuses a bad one.
func (t *Tree) CheckPositions(positions []int) error {
	n := t.active.Size()
	if len(positions) == 0 {
		return fmt.Errorf("enter processor set: no positions given")
	}
	seen := make(map[int]bool, len(positions))
	for _, p := range positions {
		if p < 0 || p >= n {
			return fmt.Errorf("enter processor set: position %d, allowed 0..%d (active set of size %d)", p, n-1, n)
		}
		if seen[p] {
			return fmt.Errorf("enter processor set: position %d given twice", p)
		}
		seen[p] = true
	}
	return nil
}

// Leave deletes the active set and re-activates its parent (the end of a
// parallel section or loop task).
func (t *Tree) Leave() error {
	if t.active.Parent == nil {
		return fmt.Errorf("leave processor set: already at the root set")
	}
	t.active = t.active.Parent
	return nil
}

// SectionPositions places n parallel sections on an active set of size P and
// returns each section's positions. With n <= P every section gets a block of
// consecutive positions, sizes differing by at most one with the earlier
// sections the larger, so all processors work. With n > P section s runs on
// the single position s mod P; a processor then executes its sections one
// after the other.
func SectionPositions(n, P int) ([][]int, error) {
	if P < 1 {
		return nil, fmt.Errorf("parallel sections: processor set of size %d, need at least 1", P)
	}
	if n < 0 {
		return nil, fmt.Errorf("parallel sections: %d sections, must be >= 0", n)
	}
	out := make([][]int, n)
	if n > P {
		for s := range out {
			out[s] = []int{s % P}
		}
		return out, nil
	}
	base, extra := 0, 0
	if n > 0 {
		base, extra = P/n, P%n
	}
	next := 0
	for s := range out {
		size := base
		if s < extra {
			size++
		}
		out[s] = make([]int, size)
		for i := range out[s] {
			out[s][i] = next
			next++
		}
	}
	return out, nil
}
