package svmfortran

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlockSchedule(t *testing.T) {
	for _, lo := range []int{1, 0, -13, 1000} {
		for N := 0; N <= 45; N++ {
			loop := Block{Lo: lo, Hi: lo + N - 1}
			for P := 1; P <= 9; P++ {
				ref := refBlock(N, P)
				seen := make([]int, N)
				for pos := range P {
					b := BlockSchedule(loop, pos, P)
					in := make([]bool, N)
					for e := range N {
						in[e] = ref[e] == pos
					}
					want := runs(in, lo)
					if len(want) == 0 {
						require.True(t, b.Empty(), "N=%d P=%d pos=%d: %v", N, P, pos, b)
						continue
					}
					require.Equal(t, want, []Block{b}, "N=%d P=%d pos=%d", N, P, pos)
					for i := b.Lo; i <= b.Hi; i++ {
						seen[i-lo]++
					}
				}
				for e, n := range seen {
					require.Equal(t, 1, n, "N=%d P=%d iteration %d", N, P, lo+e)
				}
			}
		}
	}
	// Bad arguments give nothing to do.
	for _, c := range []struct{ pos, P int }{{0, 0}, {-1, 3}, {3, 3}} {
		assert.True(t, BlockSchedule(Block{1, 10}, c.pos, c.P).Empty())
	}
	assert.True(t, BlockSchedule(Block{math.MinInt, math.MaxInt}, 0, 2).Empty())
	// Near the end of the int range.
	assert.Equal(t, Block{math.MaxInt - 1, math.MaxInt}, BlockSchedule(Block{math.MaxInt - 4, math.MaxInt}, 1, 2))
}

func TestCyclicSchedule(t *testing.T) {
	for _, lo := range []int{1, -5} {
		for N := 0; N <= 40; N++ {
			loop := Block{Lo: lo, Hi: lo + N - 1}
			for P := 1; P <= 9; P++ {
				for chunk := 0; chunk <= 6; chunk++ {
					ref := refCyclic(N, P, max(chunk, 1))
					seen := make([]int, N)
					for pos := range P {
						in := make([]bool, N)
						for e := range N {
							in[e] = ref[e] == pos
						}
						got := CyclicSchedule(loop, chunk, pos, P)
						require.Equal(t, runs(in, lo), got, "N=%d P=%d chunk=%d pos=%d", N, P, chunk, pos)
						for _, b := range got {
							for i := b.Lo; i <= b.Hi; i++ {
								seen[i-lo]++
							}
						}
					}
					for e, n := range seen {
						require.Equal(t, 1, n, "N=%d P=%d chunk=%d iteration %d", N, P, chunk, lo+e)
					}
				}
			}
		}
	}
	assert.Nil(t, CyclicSchedule(Block{1, 10}, 2, 3, 3))
	assert.Nil(t, CyclicSchedule(Block{1, 10}, 2, 0, 0))
	assert.Equal(t, []Block{{3, 4}, {9, 10}}, CyclicSchedule(Block{1, 10}, 2, 1, 3))
}

func TestDynamicChunks(t *testing.T) {
	for _, lo := range []int{1, -7} {
		for N := 0; N <= 40; N++ {
			loop := Block{Lo: lo, Hi: lo + N - 1}
			for chunk := -1; chunk <= 7; chunk++ {
				n := NumChunks(loop, chunk)
				require.Equal(t, (N+max(chunk, 1)-1)/max(chunk, 1), n)
				next := lo
				for k := range n {
					b, ok := Chunk(loop, chunk, k)
					require.True(t, ok)
					require.Equal(t, next, b.Lo, "chunks are consecutive")
					require.False(t, b.Empty())
					require.LessOrEqual(t, b.Len(), max(chunk, 1))
					if k < n-1 {
						require.Equal(t, max(chunk, 1), b.Len())
					}
					next = b.Hi + 1
				}
				require.Equal(t, lo+N, next, "the chunks cover the loop")
				_, ok := Chunk(loop, chunk, n)
				require.False(t, ok)
				_, ok = Chunk(loop, chunk, -1)
				require.False(t, ok)
			}
		}
	}
	assert.Equal(t, 0, NumChunks(Block{math.MinInt, math.MaxInt}, 4))
	b, ok := Chunk(Block{math.MaxInt - 4, math.MaxInt}, 2, 2)
	assert.True(t, ok)
	assert.Equal(t, Block{math.MaxInt, math.MaxInt}, b)
}

// onHomeCase is a template distribution to schedule loops over.
type onHomeCase struct {
	name   string
	bounds []Block
	onto   *Arrangement
	dims   []Dist
}

// TestOnHome schedules random loop nests with offsets over 1-D, 2-D and 3-D
// templates and checks that every iteration runs exactly once, on the owner
// of the template element it maps to, and that the boxes come in Fortran
// nest order.
func TestOnHome(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	m := make([]int, 20)
	for i := range m {
		m[i] = 1 + rng.IntN(4)
	}
	cases := []onHomeCase{
		{"1-D BLOCK", []Block{{1, 20}}, mustArrangement(t, "P", 4), []Dist{{Format: BlockFormat}}},
		{"1-D CYCLIC(3)", []Block{{-5, 14}}, mustArrangement(t, "P", 3), []Dist{{Format: Cyclic, Segment: 3}}},
		{"1-D INDIRECT", []Block{{0, 19}}, mustArrangement(t, "P", 4), []Dist{{Format: Indirect, Map: m}}},
		{"2-D BLOCK,CYCLIC", []Block{{1, 9}, {0, 7}}, mustArrangement(t, "P", 2, 3), []Dist{{Format: BlockFormat}, {Format: Cyclic}}},
		{"2-D *,CYCLIC(2)", []Block{{1, 5}, {1, 11}}, mustArrangement(t, "P", 3), []Dist{{}, {Format: Cyclic, Segment: 2}}},
		{"3-D BLOCK,*,GENERAL_BLOCK", []Block{{1, 6}, {-2, 2}, {1, 7}}, mustArrangement(t, "P", 2, 2), []Dist{{Format: BlockFormat}, {}, {Format: GeneralBlock, Sizes: []int{3, 4}}}},
		{"3-D CYCLIC,CYCLIC(2),BLOCK", []Block{{1, 5}, {1, 6}, {0, 4}}, mustArrangement(t, "P", 2, 2, 2), []Dist{{Format: Cyclic}, {Format: Cyclic, Segment: 2}, {Format: BlockFormat}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := randomSet(rng, c.onto.Size()+1)
			tms := perPosition(t, "T", c.bounds, c.onto, set, c.dims...)
			for trial := range 40 {
				rank := len(c.bounds)
				loops := make([]Block, rank)
				offsets := make([]int, rank)
				for k, b := range c.bounds {
					// A random sub-range of the template, shifted.
					lo := b.Lo + rng.IntN(b.Len())
					hi := lo + rng.IntN(b.Hi-lo+1)
					offsets[k] = rng.IntN(11) - 5
					loops[k] = Block{Lo: lo - offsets[k], Hi: hi - offsets[k]}
				}
				seen := map[[MaxRank]int]int{}
				for pos, tm := range tms {
					boxes, err := tm.OnHome(loops, offsets)
					require.NoError(t, err)
					checkNestOrder(t, boxes)
					for _, it := range iterations(boxes) {
						seen[key(it)]++
						e := make([]int, rank)
						for k := range it {
							e[k] = it[k] + offsets[k]
						}
						owner, err := tm.Owner(e)
						require.NoError(t, err)
						require.Equal(t, set.Members[pos], owner, "trial %d: iteration %v on position %d", trial, it, pos)
					}
				}
				forEach(loops, func(it []int) {
					require.Equal(t, 1, seen[key(it)], "trial %d: iteration %v", trial, it)
				})
				require.Len(t, seen, Box(loops).Size())
			}
		})
	}
}

// checkNestOrder checks that boxes are in increasing order with the last
// dimension most significant, as a Fortran nest with the last index
// outermost runs them.
func checkNestOrder(t *testing.T, boxes []Box) {
	t.Helper()
	for i := 1; i < len(boxes); i++ {
		a, b := boxes[i-1], boxes[i]
		cmp := 0
		for k := len(a) - 1; k >= 0 && cmp == 0; k-- {
			cmp = a[k].Lo - b[k].Lo
		}
		require.Negative(t, cmp, "box %v before %v", a, b)
	}
}

func TestOnHomeExample(t *testing.T) {
	// Figure 3 of the paper: T(N) BLOCK onto P(NUMPROC()), loop
	// ON_HOME(T(I)); and a shifted loop ON_HOME(T(I+1)) for I = 0, N-1.
	onto := mustArrangement(t, "P", 3)
	set := &ProcSet{Members: []int{0, 1, 2}}
	tm := defined(t, "T", []Block{{1, 10}}, onto, set, 1, Dist{Format: BlockFormat})
	boxes, err := tm.OnHome([]Block{{1, 10}}, nil)
	require.NoError(t, err)
	assert.Equal(t, []Box{{{5, 8}}}, boxes)
	boxes, err = tm.OnHome([]Block{{0, 9}}, []int{1})
	require.NoError(t, err)
	assert.Equal(t, []Box{{{4, 7}}}, boxes)
	boxes, err = tm.OnHome([]Block{{1, 5}}, []int{0})
	require.NoError(t, err)
	assert.Equal(t, []Box{{{5, 5}}}, boxes)
	boxes, err = tm.OnHome([]Block{{1, 3}}, nil)
	require.NoError(t, err)
	assert.Empty(t, boxes)
	boxes, err = tm.OnHome([]Block{{3, 2}}, nil)
	require.NoError(t, err)
	assert.Empty(t, boxes)

	// 2-D: a CYCLIC first dimension gives several boxes per row block.
	onto2 := mustArrangement(t, "Q", 2, 2)
	set4 := &ProcSet{Members: []int{0, 1, 2, 3}}
	t2 := defined(t, "T2", []Block{{1, 4}, {1, 4}}, onto2, set4, 0, Dist{Format: Cyclic}, Dist{Format: Cyclic})
	boxes, err = t2.OnHome([]Block{{1, 4}, {1, 4}}, nil)
	require.NoError(t, err)
	assert.Equal(t, []Box{{{1, 1}, {1, 1}}, {{3, 3}, {1, 1}}, {{1, 1}, {3, 3}}, {{3, 3}, {3, 3}}}, boxes)

	// A processor beyond the arrangement gets nothing.
	set5 := &ProcSet{Members: []int{0, 1, 2, 3, 4}}
	t3 := defined(t, "T3", []Block{{1, 4}, {1, 4}}, onto2, set5, 4, Dist{Format: Cyclic}, Dist{Format: Cyclic})
	boxes, err = t3.OnHome([]Block{{1, 4}, {1, 4}}, nil)
	require.NoError(t, err)
	assert.Empty(t, boxes)
}

func TestOnHomeErrors(t *testing.T) {
	onto := mustArrangement(t, "P", 2)
	set := &ProcSet{Members: []int{0, 1}}
	tm := defined(t, "T", []Block{{1, 10}, {0, 4}}, onto, set, 0, Dist{Format: BlockFormat}, Dist{})
	_, err := tm.OnHome([]Block{{1, 10}}, nil)
	assert.EqualError(t, err, "schedule over template T of rank 2: got 1 loop dimensions")
	_, err = tm.OnHome([]Block{{1, 10}, {0, 4}}, []int{1})
	assert.EqualError(t, err, "schedule over template T of rank 2: got 1 offsets")
	_, err = tm.OnHome([]Block{{1, 10}, {0, 4}}, []int{1, 0})
	assert.EqualError(t, err, "schedule over template T: iteration 10 of loop dimension 0 maps to index 11, outside the template's bounds 1:10")
	_, err = tm.OnHome([]Block{{1, 10}, {0, 4}}, []int{0, -1})
	assert.EqualError(t, err, "schedule over template T: iteration 0 of loop dimension 1 maps to index -1, outside the template's bounds 0:4")
	_, err = tm.OnHome([]Block{{1, 10}, {3, 2}}, []int{5, 0})
	assert.EqualError(t, err, "schedule over template T: iteration 10 of loop dimension 0 maps to index 15, outside the template's bounds 1:10",
		"a bad mapping is reported even when another loop is empty")
	_, err = tm.OnHome([]Block{{1, math.MaxInt}, {0, 4}}, nil)
	assert.EqualError(t, err, "schedule over template T: iteration 9223372036854775807 of loop dimension 0 maps to index 9223372036854775807, outside the template's bounds 1:10")
	_, err = tm.OnHome([]Block{{math.MaxInt, math.MaxInt}, {0, 4}}, []int{1, 0})
	assert.EqualError(t, err, "schedule over template T: iteration 9223372036854775807 of loop dimension 0 maps to index 9223372036854775807+1 (overflows), outside the template's bounds 1:10")
}

// TestSemiDynamicRepeat is the semi-dynamic workflow end to end: a dynamic
// loop's chunks, recorded per rank, scheduled again with ON_HOME over a
// shifted loop.
func TestSemiDynamicRepeat(t *testing.T) {
	loop := Block{Lo: 1, Hi: 23}
	set := &ProcSet{Members: []int{0, 1, 2}}
	onto := mustArrangement(t, "P", 3)
	executed := [][]Block{nil, nil, nil}
	for k := 0; k < NumChunks(loop, 4); k++ {
		c, _ := Chunk(loop, 4, k)
		executed[(k*k)%3] = append(executed[(k*k)%3], c)
	}
	for pos := range 3 {
		tm := defined(t, "S", []Block{loop}, onto, set, pos, Dist{Format: Recorded, Blocks: executed[pos]})
		boxes, err := tm.OnHome([]Block{{0, 22}}, []int{1})
		require.NoError(t, err)
		var got []Block
		for _, b := range boxes {
			got = append(got, Block{b[0].Lo + 1, b[0].Hi + 1})
		}
		want, err := normalizeBlocks(executed[pos])
		require.NoError(t, err)
		assert.Equal(t, cloneBlocks(want), got)
	}
}
