package svmfortran

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// check1D compares templates distributed per position (tms[pos]) with a
// reference owner coordinate for every element: Owns, Owner and LocalBlocks
// agree with it, and every element has exactly one owner. Positions at or
// beyond arrSize must own nothing.
func check1D(t *testing.T, what string, tms []*Template, set *ProcSet, lo int, ref []int) {
	t.Helper()
	N := len(ref)
	owners := make([]int, N)
	for pos, tm := range tms {
		owned := make([]bool, N)
		for e := range N {
			owned[e] = ref[e] == pos
			got, err := tm.Owns([]int{lo + e})
			if err != nil || got != owned[e] {
				t.Fatalf("%s: position %d: Owns(%d) = %v, %v; want %v", what, pos, lo+e, got, err, owned[e])
			}
			if got {
				owners[e]++
			}
			rank, err := tm.Owner([]int{lo + e})
			if err != nil || rank != set.Members[ref[e]] {
				t.Fatalf("%s: position %d: Owner(%d) = %d, %v; want rank %d", what, pos, lo+e, rank, err, set.Members[ref[e]])
			}
		}
		blocks, err := tm.LocalBlocks(0)
		require.NoError(t, err)
		if want := runs(owned, lo); !slices.Equal(blocks, want) {
			t.Fatalf("%s: position %d: LocalBlocks = %v, want %v", what, pos, blocks, want)
		}
	}
	for e, n := range owners {
		if n != 1 {
			t.Fatalf("%s: element %d has %d owners", what, lo+e, n)
		}
	}
}

// TestFormats1D checks BLOCK, CYCLIC(l), GENERAL_BLOCK and INDIRECT against
// brute force for every N in 1..40 (and some larger), P in 1..9, several
// lower bounds, and processor sets larger than the arrangement.
func TestFormats1D(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var ns []int
	for n := 1; n <= 40; n++ {
		ns = append(ns, n)
	}
	ns = append(ns, 64, 101, 257)
	for _, N := range ns {
		for P := 1; P <= 9; P++ {
			los := []int{1, 0, -7}
			if N > 40 {
				los = []int{rng.IntN(2001) - 1000}
			}
			for _, lo := range los {
				set := randomSet(rng, P+rng.IntN(3))
				onto := mustArrangement(t, "P", P)
				bounds := []Block{{Lo: lo, Hi: lo + N - 1}}
				name := func(f string) string { return f }

				check1D(t, name("BLOCK"), perPosition(t, "T", bounds, onto, set, Dist{Format: BlockFormat}), set, lo, refBlock(N, P))
				for _, l := range []int{0, 1, 2, 3, 4, 5, 6, N + 3} {
					tms := perPosition(t, "T", bounds, onto, set, Dist{Format: Cyclic, Segment: l})
					check1D(t, "CYCLIC", tms, set, lo, refCyclic(N, P, max(l, 1)))
					checkCyclicDescriptor(t, tms, N, P, max(l, 1))
				}
				sizes := randomSizes(rng, N, P)
				check1D(t, "GENERAL_BLOCK", perPosition(t, "T", bounds, onto, set, Dist{Format: GeneralBlock, Sizes: sizes}), set, lo, refGeneral(sizes))
				m := make([]int, N)
				ref := make([]int, N)
				for e := range m {
					m[e] = 1 + rng.IntN(P)
					ref[e] = m[e] - 1
				}
				check1D(t, "INDIRECT", perPosition(t, "T", bounds, onto, set, Dist{Format: Indirect, Map: m}), set, lo, ref)
			}
		}
	}
}

// checkCyclicDescriptor checks the stored CYCLIC parameters against the
// paper's definitions counted by brute force: num_seg(p) is the number of
// segments processor p gets, A = (p-1)l+1 the first element of its first
// segment, and the stride P*l gives B = (i-1)Pl.
func checkCyclicDescriptor(t *testing.T, tms []*Template, N, P, l int) {
	t.Helper()
	for pos, tm := range tms {
		d := tm.dist.dims[0]
		if pos >= P {
			assert.Equal(t, 0, d.numSeg)
			continue
		}
		segs := 0
		for start := 0; start < N; start += l {
			if (start/l)%P == pos {
				segs++
			}
		}
		if d.numSeg != segs || d.a != pos*min(l, N)+1 || d.stride != P*min(l, N) {
			t.Fatalf("CYCLIC(%d) N=%d P=%d p=%d: num_seg, A, stride = %d, %d, %d; want %d, %d, %d",
				l, N, P, pos+1, d.numSeg, d.a, d.stride, segs, pos*l+1, P*l)
		}
	}
}

// paperCyclicOwner is the owner test as printed in the paper, with 1-based
// e and p: p = MODULO(ceil((e-1)/l), P) + 1.
func paperCyclicOwner(e, l, P int) int {
	return ((e-1)+l-1)/l%P + 1
}

// TestPaperCyclicOwnerFormula documents that the paper's owner test is wrong
// for l > 1 and that the floor version used here is right.
func TestPaperCyclicOwnerFormula(t *testing.T) {
	// The counterexample: N=4, P=2, CYCLIC(2). Processor 1 holds 1:2,
	// processor 2 holds 3:4.
	ref := refCyclic(4, 2, 2)
	assert.Equal(t, []int{0, 0, 1, 1}, ref)
	assert.Equal(t, 2, paperCyclicOwner(2, 2, 2), "paper: element 2 on processor 2")
	assert.Equal(t, 1, paperCyclicOwner(4, 2, 2), "paper: element 4 on processor 1")
	assert.Equal(t, 0, cyclicOwner(2-1, 2, 2), "element 2 is on processor 1 (coordinate 0)")
	assert.Equal(t, 1, cyclicOwner(4-1, 2, 2), "element 4 is on processor 2 (coordinate 1)")

	for N := 1; N <= 60; N++ {
		for P := 1; P <= 9; P++ {
			for l := 1; l <= 6; l++ {
				ref := refCyclic(N, P, l)
				paperWrong := 0
				for e := 1; e <= N; e++ {
					want := ref[e-1] + 1
					require.Equal(t, want-1, cyclicOwner(e-1, l, P))
					if paperCyclicOwner(e, l, P) != want {
						paperWrong++
						// Wrong exactly on elements that do not start a
						// segment, and only when there are processors
						// to be wrong about.
						require.NotZero(t, (e-1)%l, "N=%d P=%d l=%d e=%d", N, P, l, e)
					} else if P > 1 {
						require.Zero(t, (e-1)%l, "N=%d P=%d l=%d e=%d", N, P, l, e)
					}
				}
				if l == 1 || P == 1 {
					require.Zero(t, paperWrong, "l=1 or P=1: ceil and floor agree modulo P")
				}
			}
		}
	}
}

// TestFormatsMultiDim distributes 2-D and 3-D templates with collapsed
// dimensions onto 1-D, 2-D and 3-D arrangements and checks every element of
// every position against brute force.
func TestFormatsMultiDim(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for trial := range 300 {
		rank := 2 + rng.IntN(2)
		bounds := make([]Block, rank)
		for d := range bounds {
			lo := rng.IntN(11) - 5
			bounds[d] = Block{Lo: lo, Hi: lo + rng.IntN(7)}
		}
		// Choose which dimensions are distributed, at least one.
		var distributed []int
		for len(distributed) == 0 {
			distributed = distributed[:0]
			for d := range rank {
				if rng.IntN(3) > 0 {
					distributed = append(distributed, d)
				}
			}
		}
		extents := make([]int, len(distributed))
		for k := range extents {
			extents[k] = 1 + rng.IntN(3)
		}
		onto := mustArrangement(t, "P", extents...)
		set := randomSet(rng, onto.Size()+rng.IntN(3))

		dims := make([]Dist, rank)
		refs := make([][]int, rank) // per dimension: owner coordinate, nil if collapsed
		for k, d := range distributed {
			N, P := bounds[d].Len(), extents[k]
			switch rng.IntN(3) {
			case 0:
				dims[d] = Dist{Format: BlockFormat}
				refs[d] = refBlock(N, P)
			case 1:
				l := 1 + rng.IntN(3)
				dims[d] = Dist{Format: Cyclic, Segment: l}
				refs[d] = refCyclic(N, P, l)
			case 2:
				sizes := randomSizes(rng, N, P)
				dims[d] = Dist{Format: GeneralBlock, Sizes: sizes}
				refs[d] = refGeneral(sizes)
			}
		}
		tms := perPosition(t, "T", bounds, onto, set, dims...)

		// Reference owner position of an element: column-major over the
		// distributed dimensions.
		refPos := func(coords []int) int {
			pos, stride := 0, 1
			for k, d := range distributed {
				pos += refs[d][coords[d]-bounds[d].Lo] * stride
				stride *= extents[k]
			}
			return pos
		}
		owners := map[[MaxRank]int]int{}
		for pos, tm := range tms {
			lists := make([][]Block, rank)
			for d := range rank {
				var err error
				lists[d], err = tm.LocalBlocks(d)
				require.NoError(t, err)
			}
			// Per-dimension reference lists.
			var selfCoords []int
			if pos < onto.Size() {
				c, err := onto.Coords(pos)
				require.NoError(t, err)
				selfCoords = c
			}
			axis := 0
			for d := range rank {
				var want []Block
				switch {
				case selfCoords == nil:
				case refs[d] == nil:
					want = []Block{bounds[d]}
				default:
					in := make([]bool, len(refs[d]))
					for e, q := range refs[d] {
						in[e] = q == selfCoords[axis]-1
					}
					want = runs(in, bounds[d].Lo)
				}
				if refs[d] != nil {
					axis++
				}
				require.Equal(t, want, lists[d], "trial %d position %d dimension %d", trial, pos, d)
			}
			forEach(bounds, func(c []int) {
				want := refPos(c) == pos
				got, err := tm.Owns(c)
				if err != nil || got != want {
					t.Fatalf("trial %d: position %d: Owns(%v) = %v, %v; want %v", trial, pos, c, got, err, want)
				}
				inLists := true
				for d := range rank {
					inLists = inLists && inBlocks(lists[d], c[d])
				}
				if inLists != want {
					t.Fatalf("trial %d: position %d: %v in the product of LocalBlocks = %v, want %v", trial, pos, c, inLists, want)
				}
				rank, err := tm.Owner(c)
				if err != nil || rank != set.Members[refPos(c)] {
					t.Fatalf("trial %d: position %d: Owner(%v) = %d, %v; want %d", trial, pos, c, rank, err, set.Members[refPos(c)])
				}
				if got {
					owners[key(c)]++
				}
			})
		}
		forEach(bounds, func(c []int) {
			if owners[key(c)] != 1 {
				t.Fatalf("trial %d: element %v has %d owners", trial, c, owners[key(c)])
			}
		})
	}
}

// TestGeneralBlockZeroSizes checks GENERAL_BLOCK with empty blocks between
// and around non-empty ones.
func TestGeneralBlockZeroSizes(t *testing.T) {
	sizes := []int{0, 3, 0, 0, 2, 0}
	onto := mustArrangement(t, "P", 6)
	set := &ProcSet{Members: []int{0, 1, 2, 3, 4, 5}}
	tms := perPosition(t, "T", []Block{{Lo: 10, Hi: 14}}, onto, set, Dist{Format: GeneralBlock, Sizes: sizes})
	check1D(t, "GENERAL_BLOCK", tms, set, 10, refGeneral(sizes))
	b, err := tms[1].LocalBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, []Block{{10, 12}}, b)
	b, err = tms[4].LocalBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, []Block{{13, 14}}, b)
	b, err = tms[0].LocalBlocks(0)
	require.NoError(t, err)
	assert.Empty(t, b)
}

// TestBlockEmptyTrailingBlocks shows the paper's ceil-based BLOCK leaving
// trailing processors empty: N=5 on P=4 gives 2, 2, 1, 0 elements.
func TestBlockEmptyTrailingBlocks(t *testing.T) {
	onto := mustArrangement(t, "P", 4)
	set := &ProcSet{Members: []int{0, 1, 2, 3}}
	tms := perPosition(t, "T", []Block{{Lo: 1, Hi: 5}}, onto, set, Dist{Format: BlockFormat})
	want := [][]Block{{{1, 2}}, {{3, 4}}, {{5, 5}}, nil}
	for pos, tm := range tms {
		b, err := tm.LocalBlocks(0)
		require.NoError(t, err)
		assert.Equal(t, want[pos], b, "position %d", pos)
	}
}

// TestIndirectPaperInversion checks the inverted block list of a fixed MAP.
func TestIndirectPaperInversion(t *testing.T) {
	onto := mustArrangement(t, "P", 3)
	set := &ProcSet{Members: []int{5, 6, 7}}
	m := []int{1, 1, 2, 1, 3, 3, 1, 2, 2}
	tm := defined(t, "T", []Block{{Lo: 0, Hi: 8}}, onto, set, 5, Dist{Format: Indirect, Map: m})
	b, err := tm.LocalBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, []Block{{0, 1}, {3, 3}, {6, 6}}, b)
	owner, err := tm.Owner([]int{4})
	require.NoError(t, err)
	assert.Equal(t, 7, owner)
}

// linkedCase is a home template distribution to link to.
type linkedCase struct {
	name   string
	bounds []Block
	onto   *Arrangement
	dims   []Dist
}

// TestLinked links 1-D templates to BLOCK, CYCLIC, INDIRECT, GENERAL_BLOCK
// and 2-D homes (with and without a collapsed dimension) and checks that
// every element goes to the owner of its Home element.
func TestLinked(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	homeMap := make([]int, 15)
	for i := range homeMap {
		homeMap[i] = 1 + rng.IntN(3)
	}
	cases := []linkedCase{
		{"BLOCK", []Block{{1, 15}}, mustArrangement(t, "P", 3), []Dist{{Format: BlockFormat}}},
		{"CYCLIC(2)", []Block{{-4, 10}}, mustArrangement(t, "P", 3), []Dist{{Format: Cyclic, Segment: 2}}},
		{"INDIRECT", []Block{{1, 15}}, mustArrangement(t, "P", 3), []Dist{{Format: Indirect, Map: homeMap}}},
		{"GENERAL_BLOCK", []Block{{1, 15}}, mustArrangement(t, "P", 3), []Dist{{Format: GeneralBlock, Sizes: []int{7, 0, 8}}}},
		{"2-D BLOCK,CYCLIC", []Block{{1, 6}, {0, 4}}, mustArrangement(t, "P", 2, 2), []Dist{{Format: BlockFormat}, {Format: Cyclic}}},
		{"2-D *,BLOCK", []Block{{1, 6}, {0, 4}}, mustArrangement(t, "P", 4), []Dist{{Format: Collapsed}, {Format: BlockFormat}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := randomSet(rng, c.onto.Size()+1)
			for _, linkedOnto := range []*Arrangement{nil, mustArrangement(t, "Q", c.onto.Size())} {
				lo := rng.IntN(7) - 3
				N := 1 + rng.IntN(30)
				targets := make([][]int, N)
				for i := range targets {
					targets[i] = make([]int, len(c.bounds))
					for d, b := range c.bounds {
						targets[i][d] = b.Lo + rng.IntN(b.Len())
					}
				}
				// The 3*I example of the paper, for a BLOCK home.
				if c.name == "BLOCK" {
					N, lo = 5, 1
					targets = [][]int{{3}, {6}, {9}, {12}, {15}}
				}
				owners := make([]int, N)
				for pos, rank := range set.Members {
					home := defined(t, "H", c.bounds, c.onto, set, rank, c.dims...)
					tm := defined(t, "T", []Block{{Lo: lo, Hi: lo + N - 1}}, linkedOnto, set, rank,
						Dist{Format: Linked, Home: home, Targets: targets})
					owned := make([]bool, N)
					for i := range N {
						want, err := home.Owns(targets[i])
						require.NoError(t, err)
						got, err := tm.Owns([]int{lo + i})
						require.NoError(t, err)
						require.Equal(t, want, got, "position %d element %d", pos, lo+i)
						owned[i] = got
						if got {
							owners[i]++
							r, err := tm.Owner([]int{lo + i})
							require.NoError(t, err)
							assert.Equal(t, rank, r)
						} else {
							_, err := tm.Owner([]int{lo + i})
							require.ErrorContains(t, err, "not known locally")
						}
						homeOwner, err := home.Owner(targets[i])
						require.NoError(t, err)
						assert.Equal(t, homeOwner == rank, got)
					}
					b, err := tm.LocalBlocks(0)
					require.NoError(t, err)
					require.Equal(t, runs(owned, lo), b)

					// The link is not permanent: moving Home leaves T alone.
					require.NoError(t, home.Redistribute(c.onto, set, rank, c.dims))
					require.NoError(t, home.Undef())
					b2, err := tm.LocalBlocks(0)
					require.NoError(t, err)
					assert.Equal(t, b, b2)
				}
				for i, n := range owners {
					require.Equal(t, 1, n, "element %d", lo+i)
				}
			}
		})
	}
}

// TestLinkedPaperExample is the paper's example: T1(15) BLOCK onto P(3),
// T2(5) linked by HOME(T1(3*I)): T2(1:1) on processor 1, T2(2:3) on 2,
// T2(4:5) on 3.
func TestLinkedPaperExample(t *testing.T) {
	onto := mustArrangement(t, "P", 3)
	set := &ProcSet{Members: []int{0, 1, 2}}
	targets := [][]int{{3}, {6}, {9}, {12}, {15}}
	want := [][]Block{{{1, 1}}, {{2, 3}}, {{4, 5}}}
	for pos := range 3 {
		t1 := defined(t, "T1", []Block{{1, 15}}, onto, set, pos, Dist{Format: BlockFormat})
		t2 := defined(t, "T2", []Block{{1, 5}}, onto, set, pos, Dist{Format: Linked, Home: t1, Targets: targets})
		b, err := t2.LocalBlocks(0)
		require.NoError(t, err)
		assert.Equal(t, want[pos], b)
	}
}

// TestLinkedToItself redistributes a template linked to its own previous
// distribution: the link reads the old one.
func TestLinkedToItself(t *testing.T) {
	onto := mustArrangement(t, "P", 2)
	set := &ProcSet{Members: []int{0, 1}}
	tm := defined(t, "T", []Block{{1, 4}}, onto, set, 0, Dist{Format: BlockFormat}) // 1:2 on rank 0
	// Element I goes to the owner of T(5-I): reverses the blocks.
	targets := [][]int{{4}, {3}, {2}, {1}}
	require.NoError(t, tm.Redistribute(onto, set, 0, []Dist{{Format: Linked, Home: tm, Targets: targets}}))
	b, err := tm.LocalBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, []Block{{3, 4}}, b)
}

// TestRecorded records the chunks of a dynamic loop as a template
// distribution and checks that OnHome repeats the schedule exactly.
func TestRecorded(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := range 200 {
		P := 1 + rng.IntN(6)
		set := randomSet(rng, P)
		onto := mustArrangement(t, "P", P)
		lo := rng.IntN(21) - 10
		loop := Block{Lo: lo, Hi: lo + rng.IntN(50)}
		chunk := 1 + rng.IntN(5)

		// Self scheduling: chunks handed out in order to whoever asks.
		executed := make([][]Block, P)
		for k := 0; ; k++ {
			c, ok := Chunk(loop, chunk, k)
			if !ok {
				break
			}
			p := rng.IntN(P)
			executed[p] = append(executed[p], c)
		}
		seen := map[int]int{}
		for pos, rank := range set.Members {
			blocks := slices.Clone(executed[pos])
			rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
			tm := defined(t, "T", []Block{loop}, onto, set, rank, Dist{Format: Recorded, Blocks: blocks})

			want, err := normalizeBlocks(executed[pos])
			require.NoError(t, err)
			got, err := tm.LocalBlocks(0)
			require.NoError(t, err)
			require.Equal(t, cloneBlocks(want), got, "trial %d position %d", trial, pos)

			boxes, err := tm.OnHome([]Block{loop}, nil)
			require.NoError(t, err)
			var fromBoxes []Block
			for _, box := range boxes {
				fromBoxes = append(fromBoxes, box[0])
			}
			require.Equal(t, got, fromBoxes)
			for _, it := range iterations(boxes) {
				seen[it[0]]++
				owns, err := tm.Owns(it)
				require.NoError(t, err)
				require.True(t, owns)
			}
		}
		for i := loop.Lo; i <= loop.Hi; i++ {
			require.Equal(t, 1, seen[i], "trial %d iteration %d", trial, i)
		}
	}
}

// TestRecordedBeyondArrangement: a recorded schedule's owners are the ranks
// that executed, whatever their position; the arrangement may be omitted.
func TestRecordedBeyondArrangement(t *testing.T) {
	set := &ProcSet{Members: []int{0, 1, 2}}
	onto := mustArrangement(t, "P", 2)
	tm := defined(t, "T", []Block{{1, 9}}, onto, set, 2, Dist{Format: Recorded, Blocks: []Block{{4, 6}, {1, 2}, {3, 3}}})
	b, err := tm.LocalBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, []Block{{1, 6}}, b)
	tm2 := defined(t, "T", []Block{{1, 9}}, nil, set, 2, Dist{Format: Recorded, Blocks: []Block{{7, 9}}})
	b, err = tm2.LocalBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, []Block{{7, 9}}, b)
	r, err := tm2.Owner([]int{8})
	require.NoError(t, err)
	assert.Equal(t, 2, r)
	_, err = tm2.Owner([]int{1})
	assert.EqualError(t, err, "template T has a RECORDED distribution, which keeps only rank 2's own blocks: the owner of T(1) is not known locally")
}
