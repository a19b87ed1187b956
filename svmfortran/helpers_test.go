package svmfortran

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// Brute-force references and small builders shared by the tests. The
// references deal elements out one by one, the way the distribution is
// described in words, so they share no arithmetic with the formulas under
// test.

// refBlock deals N elements to P processors, ceil(N/P) to each in turn.
func refBlock(N, P int) []int {
	size := (N + P - 1) / P
	owner := make([]int, N)
	p, cnt := 0, 0
	for e := range owner {
		if cnt == size {
			p, cnt = p+1, 0
		}
		owner[e] = p
		cnt++
	}
	return owner
}

// refCyclic deals segments of l elements round robin.
func refCyclic(N, P, l int) []int {
	owner := make([]int, N)
	p, cnt := 0, 0
	for e := range owner {
		owner[e] = p
		cnt++
		if cnt == l {
			p, cnt = (p+1)%P, 0
		}
	}
	return owner
}

// refGeneral concatenates blocks of the given sizes.
func refGeneral(sizes []int) []int {
	var owner []int
	for p, s := range sizes {
		for range s {
			owner = append(owner, p)
		}
	}
	return owner
}

// runs is the maximal blocks of the indices lo+e with in[e] true.
func runs(in []bool, lo int) []Block {
	var list []Block
	for e, ok := range in {
		if !ok {
			continue
		}
		if n := len(list); n > 0 && list[n-1].Hi == lo+e-1 {
			list[n-1].Hi++
		} else {
			list = append(list, Block{Lo: lo + e, Hi: lo + e})
		}
	}
	return list
}

// randomSizes splits N into P random non-negative sizes.
func randomSizes(rng *rand.Rand, N, P int) []int {
	sizes := make([]int, P)
	for range N {
		sizes[rng.IntN(P)]++
	}
	return sizes
}

// randomSet is a processor set of the given size whose members are distinct
// ranks drawn from 0..size+2, in random order, so positions and ranks differ.
func randomSet(rng *rand.Rand, size int) *ProcSet {
	ranks := rng.Perm(size + 3)[:size]
	return &ProcSet{Members: ranks}
}

func mustArrangement(t testing.TB, name string, extents ...int) *Arrangement {
	t.Helper()
	a, err := NewArrangement(name, extents...)
	require.NoError(t, err)
	return a
}

// declared is a template in state Declared with the given bounds.
func declared(t testing.TB, name string, bounds ...Block) *Template {
	t.Helper()
	tm, err := NewTemplate(name, len(bounds))
	require.NoError(t, err)
	require.NoError(t, tm.Create(bounds))
	return tm
}

// defined is a template distributed for rank self.
func defined(t testing.TB, name string, bounds []Block, onto *Arrangement, set *ProcSet, self int, dims ...Dist) *Template {
	t.Helper()
	tm := declared(t, name, bounds...)
	require.NoError(t, tm.Distribute(onto, set, self, dims))
	return tm
}

// perPosition distributes one template per position of set, as every rank
// of the set would on its own.
func perPosition(t testing.TB, name string, bounds []Block, onto *Arrangement, set *ProcSet, dims ...Dist) []*Template {
	t.Helper()
	out := make([]*Template, set.Size())
	for pos, rank := range set.Members {
		out[pos] = defined(t, name, bounds, onto, set, rank, dims...)
	}
	return out
}

// iterations expands boxes into their iterations, dimension 0 fastest.
func iterations(boxes []Box) [][]int {
	var out [][]int
	for _, box := range boxes {
		idx := make([]int, len(box))
		for k, b := range box {
			if b.Empty() {
				goto next
			}
			idx[k] = b.Lo
		}
		for {
			out = append(out, slices.Clone(idx))
			k := 0
			for ; k < len(box); k++ {
				if idx[k] < box[k].Hi {
					idx[k]++
					break
				}
				idx[k] = box[k].Lo
			}
			if k == len(box) {
				break
			}
		}
	next:
	}
	return out
}

// forEach calls f with every element of a box (dimension 0 fastest).
func forEach(bounds []Block, f func(coords []int)) {
	for _, it := range iterations([]Box{bounds}) {
		f(it)
	}
}

// key makes coordinates usable as a map key.
func key(coords []int) [MaxRank]int {
	var k [MaxRank]int
	copy(k[:], coords)
	return k
}
