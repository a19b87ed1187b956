package svmfortran

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArrangement(t *testing.T) {
	a := mustArrangement(t, "P", 3, 2, 4)
	assert.Equal(t, 24, a.Size())
	assert.Equal(t, 3, a.Rank())
	// Column-major: the first coordinate is fastest.
	i, err := a.Index([]int{1, 1, 1})
	require.NoError(t, err)
	assert.Equal(t, 0, i)
	i, err = a.Index([]int{2, 1, 1})
	require.NoError(t, err)
	assert.Equal(t, 1, i)
	i, err = a.Index([]int{1, 2, 1})
	require.NoError(t, err)
	assert.Equal(t, 3, i)
	i, err = a.Index([]int{3, 2, 4})
	require.NoError(t, err)
	assert.Equal(t, 23, i)
	for index := range a.Size() {
		c, err := a.Coords(index)
		require.NoError(t, err)
		back, err := a.Index(c)
		require.NoError(t, err)
		require.Equal(t, index, back)
	}

	_, err = a.Index([]int{1, 3, 1})
	assert.EqualError(t, err, "P(1, 3, 1): coordinate 1 is 3, allowed 1..2")
	_, err = a.Index([]int{0, 1, 1})
	assert.EqualError(t, err, "P(0, 1, 1): coordinate 0 is 0, allowed 1..3")
	_, err = a.Index([]int{1, 1})
	assert.EqualError(t, err, "processor arrangement P has rank 3, got 2 coordinates")
	_, err = a.Coords(24)
	assert.EqualError(t, err, "processor arrangement P: index 24, allowed 0..23")
	_, err = a.Coords(-1)
	assert.EqualError(t, err, "processor arrangement P: index -1, allowed 0..23")

	_, err = NewArrangement("P")
	assert.EqualError(t, err, "processor arrangement P: rank 0, allowed 1..7")
	_, err = NewArrangement("P", 1, 1, 1, 1, 1, 1, 1, 1)
	assert.EqualError(t, err, "processor arrangement P: rank 8, allowed 1..7")
	_, err = NewArrangement("P", 2, 0)
	assert.EqualError(t, err, "processor arrangement P: extent of dimension 1 is 0, must be >= 1")
	_, err = NewArrangement("P", 1<<20, 1<<20)
	assert.EqualError(t, err, "processor arrangement P: more than 16777216 processors")

	// A hand-built bad arrangement gives errors, not a division by zero.
	bad := &Arrangement{Name: "B", Extents: []int{2, 0}}
	_, err = bad.Coords(0)
	assert.Error(t, err)
	_, err = bad.Index([]int{1, 1})
	assert.Error(t, err)

	// NewArrangement copies the extents.
	ext := []int{4}
	b, err := NewArrangement("P", ext...)
	require.NoError(t, err)
	ext[0] = 9
	assert.Equal(t, 4, b.Size())
}

func TestProcSet(t *testing.T) {
	s := &ProcSet{Members: []int{4, 2, 7}}
	assert.Equal(t, 3, s.Size())
	assert.Equal(t, 4, s.Master())
	assert.Equal(t, 1, s.Position(2))
	assert.Equal(t, -1, s.Position(3))
	assert.Equal(t, -1, (&ProcSet{}).Master())
}

func TestTree(t *testing.T) {
	_, err := NewTree(0, 0)
	assert.EqualError(t, err, "processor tree: 0 processors, need at least 1")
	_, err = NewTree(4, 4)
	assert.EqualError(t, err, "processor tree: rank 4, allowed 0..3")

	tr, err := NewTree(8, 5)
	require.NoError(t, err)
	root := tr.Active()
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, root.Members)
	assert.Equal(t, 0, root.Level)
	assert.Nil(t, root.Parent)
	assert.Equal(t, 5, tr.Self())
	assert.Equal(t, 5, tr.MyProcSet())
	assert.EqualError(t, tr.Leave(), "leave processor set: already at the root set")

	// Level 1: positions 7, 5, 3 -> ranks 7, 5, 3; rank 5 at position 1.
	require.NoError(t, tr.Enter([]int{7, 5, 3}))
	l1 := tr.Active()
	assert.Equal(t, []int{7, 5, 3}, l1.Members)
	assert.Equal(t, 1, l1.Level)
	assert.Same(t, root, l1.Parent)
	assert.Equal(t, 1, tr.MyProcSet())
	assert.Equal(t, 7, l1.Master())

	// Level 2: a set of self only, as for a non-coordinated call.
	require.NoError(t, tr.Enter([]int{tr.MyProcSet()}))
	assert.Equal(t, []int{5}, tr.Active().Members)
	assert.Equal(t, 0, tr.MyProcSet(), "self is the master of its own set")
	assert.Equal(t, 2, tr.Active().Level)

	// Errors leave the active set alone.
	assert.EqualError(t, tr.Enter([]int{1}), "enter processor set: position 1, allowed 0..0 (active set of size 1)")
	require.NoError(t, tr.Leave())
	assert.Same(t, l1, tr.Active())
	assert.EqualError(t, tr.Enter(nil), "enter processor set: no positions given")
	assert.EqualError(t, tr.Enter([]int{1, 1}), "enter processor set: position 1 given twice")
	assert.EqualError(t, tr.Enter([]int{-1}), "enter processor set: position -1, allowed 0..2 (active set of size 3)")
	assert.EqualError(t, tr.Enter([]int{0, 2}), "enter processor set: rank 5 (position 1) is not among positions [0 2]")
	assert.Same(t, l1, tr.Active())

	require.NoError(t, tr.Leave())
	assert.Same(t, root, tr.Active())
	assert.Equal(t, 5, tr.MyProcSet())
}

// TestTreeSectionsAllRanks has every rank of a job split its active set for
// parallel sections on its own, with no messages, and checks that all ranks
// of a section agree on its set and that nesting unwinds.
func TestTreeSectionsAllRanks(t *testing.T) {
	const nprocs = 7
	trees := make([]*Tree, nprocs)
	for r := range trees {
		var err error
		trees[r], err = NewTree(nprocs, r)
		require.NoError(t, err)
	}
	// enterSection makes every rank enter the section it works in; with
	// more sections than processors a rank takes the first of its sections.
	enterSection := func(n int) {
		for _, tr := range trees {
			secs, err := SectionPositions(n, tr.Active().Size())
			require.NoError(t, err)
			for _, s := range secs {
				if slices.Contains(s, tr.MyProcSet()) {
					require.NoError(t, tr.Enter(s))
					break
				}
			}
		}
	}
	enterSection(3) // 7 processors: sections of 3, 2, 2
	enterSection(2) // within them: 2+1, 1+1, 1+1
	bySet := map[string][]int{}
	for r, tr := range trees {
		assert.Equal(t, 2, tr.Active().Level)
		// Every member of the set has the same set.
		for _, m := range tr.Active().Members {
			assert.Equal(t, tr.Active().Members, trees[m].Active().Members, "rank %d and member %d", r, m)
			assert.Equal(t, tr.Active().Parent.Members, trees[m].Active().Parent.Members)
		}
		bySet[string(rune('a'+tr.Active().Master()))] = tr.Active().Members
	}
	assert.Equal(t, map[string][]int{
		"a": {0, 1}, "c": {2}, "d": {3}, "e": {4}, "f": {5}, "g": {6},
	}, bySet)
	for _, tr := range trees {
		require.NoError(t, tr.Leave())
		require.NoError(t, tr.Leave())
		require.Error(t, tr.Leave())
	}
}

func TestSectionPositions(t *testing.T) {
	cases := []struct {
		n, P int
		want [][]int
	}{
		{0, 3, [][]int{}},
		{1, 3, [][]int{{0, 1, 2}}},
		{2, 5, [][]int{{0, 1, 2}, {3, 4}}},
		{3, 7, [][]int{{0, 1, 2}, {3, 4}, {5, 6}}},
		{3, 3, [][]int{{0}, {1}, {2}}},
		{5, 3, [][]int{{0}, {1}, {2}, {0}, {1}}},
		{4, 1, [][]int{{0}, {0}, {0}, {0}}},
	}
	for _, c := range cases {
		got, err := SectionPositions(c.n, c.P)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "n=%d P=%d", c.n, c.P)
	}
	_, err := SectionPositions(2, 0)
	assert.EqualError(t, err, "parallel sections: processor set of size 0, need at least 1")
	_, err = SectionPositions(-1, 2)
	assert.EqualError(t, err, "parallel sections: -1 sections, must be >= 0")

	for P := 1; P <= 12; P++ {
		for n := 1; n <= 15; n++ {
			secs, err := SectionPositions(n, P)
			require.NoError(t, err)
			require.Len(t, secs, n)
			if n > P {
				for s, ps := range secs {
					require.Equal(t, []int{s % P}, ps)
				}
				continue
			}
			// A partition of 0..P-1 into consecutive blocks, sizes
			// non-increasing and differing by at most one.
			var all []int
			for s, ps := range secs {
				require.NotEmpty(t, ps)
				all = append(all, ps...)
				require.LessOrEqual(t, len(ps)-len(secs[n-1]), 1)
				if s > 0 {
					require.LessOrEqual(t, len(ps), len(secs[s-1]))
				}
			}
			for i, p := range all {
				require.Equal(t, i, p)
			}
			require.Len(t, all, P)
		}
	}
}
