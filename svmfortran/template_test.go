package svmfortran

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inState builds template T(1:10) in the given state, distributed (when
// defined) BLOCK onto onto over set for rank 0.
func inState(t *testing.T, s State, onto *Arrangement, set *ProcSet) *Template {
	t.Helper()
	tm, err := NewTemplate("T", 1)
	require.NoError(t, err)
	if s >= Declared {
		require.NoError(t, tm.Create([]Block{{1, 10}}))
	}
	if s == Defined {
		require.NoError(t, tm.Distribute(onto, set, 0, []Dist{{Format: BlockFormat}}))
	}
	require.Equal(t, s, tm.State())
	return tm
}

// TestStateMachine applies every operation in every state.
func TestStateMachine(t *testing.T) {
	onto := mustArrangement(t, "P", 2)
	set := &ProcSet{Members: []int{0, 1}}
	block := []Dist{{Format: BlockFormat}}
	ops := []struct {
		name string
		do   func(*Template) error
		// want[s] is the state after applying the op in state s; errs[s]
		// whether it fails (the state must then be unchanged).
		want [3]State
		errs [3]string
	}{
		{"create", func(tm *Template) error { return tm.Create([]Block{{0, 4}}) },
			[3]State{Declared, Declared, Defined},
			[3]string{"", "template T is declared: create needs an empty template (destroy it first)", "template T is defined: create needs an empty template (destroy it first)"}},
		{"define", func(tm *Template) error { return tm.Define([]Block{{0, 4}}) },
			[3]State{Declared, Declared, Defined},
			[3]string{"", "", "template T is defined: undef it before defining it again"}},
		{"undef", func(tm *Template) error { return tm.Undef() },
			[3]State{Empty, Declared, Declared},
			[3]string{"template T is empty: only a defined template can be undefined", "template T is declared: only a defined template can be undefined", ""}},
		{"destroy", func(tm *Template) error { return tm.Destroy() },
			[3]State{Empty, Empty, Empty},
			[3]string{"", "", ""}},
		{"distribute", func(tm *Template) error { return tm.Distribute(onto, set, 1, block) },
			[3]State{Empty, Defined, Defined},
			[3]string{"template T is empty: create or define it before distributing", "", ""}},
		{"redistribute", func(tm *Template) error { return tm.Redistribute(onto, set, 1, block) },
			[3]State{Empty, Declared, Defined},
			[3]string{"template T is empty: only a defined template can be redistributed (distribute it first)", "template T is declared: only a defined template can be redistributed (distribute it first)", ""}},
		{"owns", func(tm *Template) error { _, err := tm.Owns([]int{1}); return err },
			[3]State{Empty, Declared, Defined},
			[3]string{"template T is empty: distribute it first", "template T is declared: distribute it first", ""}},
		{"owner", func(tm *Template) error { _, err := tm.Owner([]int{1}); return err },
			[3]State{Empty, Declared, Defined},
			[3]string{"template T is empty: distribute it first", "template T is declared: distribute it first", ""}},
		{"local blocks", func(tm *Template) error { _, err := tm.LocalBlocks(0); return err },
			[3]State{Empty, Declared, Defined},
			[3]string{"template T is empty: distribute it first", "template T is declared: distribute it first", ""}},
		{"on home", func(tm *Template) error { _, err := tm.OnHome([]Block{{1, 3}}, nil); return err },
			[3]State{Empty, Declared, Defined},
			[3]string{"schedule over template T, which is empty: distribute it first", "schedule over template T, which is declared: distribute it first", ""}},
	}
	for _, op := range ops {
		for s := Empty; s <= Defined; s++ {
			t.Run(op.name+" from "+s.String(), func(t *testing.T) {
				tm := inState(t, s, onto, set)
				err := op.do(tm)
				if op.errs[s] != "" {
					require.EqualError(t, err, op.errs[s])
				} else {
					require.NoError(t, err)
				}
				assert.Equal(t, op.want[s], tm.State())
				assert.Equal(t, 1, tm.Rank(), "the rank survives every operation")
				switch tm.State() {
				case Empty:
					assert.Nil(t, tm.Bounds())
					assert.Nil(t, tm.ProcSet())
					assert.Nil(t, tm.Onto())
				case Declared:
					assert.NotNil(t, tm.Bounds())
					assert.Nil(t, tm.ProcSet())
				case Defined:
					assert.Same(t, set, tm.ProcSet(), "the processor set is stored in the descriptor")
					assert.Equal(t, onto, tm.Onto())
				}
			})
		}
	}
}

func TestTemplateLifecycle(t *testing.T) {
	tm, err := NewTemplate("T", 2)
	require.NoError(t, err)
	assert.Equal(t, "T", tm.Name())
	assert.Equal(t, Empty, tm.State())
	require.NoError(t, tm.Define([]Block{{1, 4}, {0, 2}}))
	assert.Equal(t, []Block{{1, 4}, {0, 2}}, tm.Bounds())
	// Define again from Declared changes the bounds.
	require.NoError(t, tm.Define([]Block{{1, 8}, {0, 2}}))
	assert.Equal(t, []Block{{1, 8}, {0, 2}}, tm.Bounds())

	onto := mustArrangement(t, "P", 2)
	set := &ProcSet{Members: []int{3, 4}}
	require.NoError(t, tm.Distribute(onto, set, 4, []Dist{{Format: BlockFormat}, {Format: Collapsed}}))
	b, err := tm.LocalBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, []Block{{5, 8}}, b)
	// Distribute again from Defined is allowed, like redistribute.
	require.NoError(t, tm.Distribute(onto, set, 4, []Dist{{Format: Cyclic, Segment: 3}, {Format: Collapsed}}))
	b, err = tm.LocalBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, []Block{{4, 6}}, b)

	// Bounds and the descriptor are copies.
	bounds := tm.Bounds()
	bounds[0].Hi = 100
	assert.Equal(t, Block{1, 8}, tm.Bounds()[0])
	onto.Extents[0] = 1
	assert.Equal(t, []int{2}, tm.Onto().Extents)
	b, err = tm.LocalBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, []Block{{4, 6}}, b)

	require.NoError(t, tm.Undef())
	require.NoError(t, tm.Define([]Block{{1, 2}, {1, 2}}))
	require.NoError(t, tm.Destroy())
	require.NoError(t, tm.Create([]Block{{-3, -1}, {5, 5}}))
	assert.Equal(t, Declared, tm.State())
}

// TestFailedDistributeLeavesTemplate checks that an error leaves the
// template's state and distribution as they were.
func TestFailedDistributeLeavesTemplate(t *testing.T) {
	onto := mustArrangement(t, "P", 3)
	set := &ProcSet{Members: []int{0, 1, 2}}
	tm := defined(t, "T", []Block{{1, 9}}, onto, set, 1, Dist{Format: BlockFormat})
	err := tm.Redistribute(onto, set, 1, []Dist{{Format: Indirect, Map: []int{1, 2, 3, 1, 2, 3, 1, 2, 4}}})
	require.EqualError(t, err, "template T: MAP(9) = 4 names no processor, allowed 1..3")
	assert.Equal(t, Defined, tm.State())
	b, err := tm.LocalBlocks(0)
	require.NoError(t, err)
	assert.Equal(t, []Block{{4, 6}}, b)

	tm2 := declared(t, "T2", Block{1, 9})
	require.Error(t, tm2.Distribute(onto, set, 1, []Dist{{Format: GeneralBlock, Sizes: []int{1, 2}}}))
	assert.Equal(t, Declared, tm2.State())
}

func TestTemplateErrors(t *testing.T) {
	onto1 := mustArrangement(t, "P", 3)
	onto2 := mustArrangement(t, "Q", 2, 2)
	set := &ProcSet{Members: []int{0, 1, 2, 3}}
	home := declared(t, "H", Block{1, 10})
	emptyHome, err := NewTemplate("E", 1)
	require.NoError(t, err)
	otherRankHome := defined(t, "H", []Block{{1, 10}}, onto1, set, 2, Dist{Format: BlockFormat})
	okHome := defined(t, "H", []Block{{1, 10}}, onto1, set, 1, Dist{Format: BlockFormat})

	one := []Block{{1, 4}}
	two := []Block{{1, 4}, {1, 4}}
	cases := []struct {
		name   string
		bounds []Block
		onto   *Arrangement
		set    *ProcSet
		self   int
		dims   []Dist
		want   string
	}{
		{"too few formats", two, onto2, set, 1, []Dist{{Format: BlockFormat}},
			"template T has rank 2, got 1 distribution formats"},
		{"mismatched ranks 2 onto 1", two, onto1, set, 1, []Dist{{Format: BlockFormat}, {Format: Cyclic}},
			"distribute template T onto P: mismatched ranks: 2 distributed dimensions, arrangement rank 1"},
		{"mismatched ranks 1 onto 2", one, onto2, set, 1, []Dist{{Format: BlockFormat}},
			"distribute template T onto Q: mismatched ranks: 1 distributed dimensions, arrangement rank 2"},
		{"all collapsed", two, onto1, set, 1, []Dist{{Format: Collapsed}, {Format: Collapsed}},
			"distribute template T onto P: mismatched ranks: 0 distributed dimensions, arrangement rank 1"},
		{"arrangement larger than set", one, mustArrangement(t, "P", 5), set, 1, []Dist{{Format: BlockFormat}},
			"distribute template T onto P: the arrangement has 5 processors, the processor set only 4"},
		{"self not in set", one, onto1, set, 9, []Dist{{Format: BlockFormat}},
			"distribute template T: rank 9 is not a member of the processor set [0 1 2 3]"},
		{"nil set", one, onto1, nil, 1, []Dist{{Format: BlockFormat}},
			"distribute template T: no processor set"},
		{"empty set", one, onto1, &ProcSet{}, 1, []Dist{{Format: BlockFormat}},
			"distribute template T: processor set is empty"},
		{"duplicate rank", one, onto1, &ProcSet{Members: []int{0, 1, 1}}, 1, []Dist{{Format: BlockFormat}},
			"distribute template T: processor set: rank 1 appears twice"},
		{"negative rank", one, onto1, &ProcSet{Members: []int{0, -1, 1}}, 1, []Dist{{Format: BlockFormat}},
			"distribute template T: processor set: rank -1 at position 1 is negative"},
		{"nil arrangement", one, nil, set, 1, []Dist{{Format: BlockFormat}},
			"distribute template T: no processor arrangement"},
		{"bad arrangement", one, &Arrangement{Name: "Z", Extents: []int{0}}, set, 1, []Dist{{Format: BlockFormat}},
			"distribute template T: processor arrangement Z: extent of dimension 0 is 0, must be >= 1"},
		{"negative segment", one, onto1, set, 1, []Dist{{Format: Cyclic, Segment: -2}},
			"template T: CYCLIC(-2) in dimension 0, the segment length must be >= 1"},
		{"unknown format", one, onto1, set, 1, []Dist{{Format: Format(42)}},
			"template T: unknown distribution format Format(42) in dimension 0"},
		{"general block count", one, onto1, set, 1, []Dist{{Format: GeneralBlock, Sizes: []int{4}}},
			"template T: GENERAL_BLOCK of dimension 0 has 1 block sizes, the arrangement dimension has 3 processors"},
		{"general block negative", one, onto1, set, 1, []Dist{{Format: GeneralBlock, Sizes: []int{3, -1, 2}}},
			"template T: GENERAL_BLOCK of dimension 0: size for processor coordinate 2 is -1, must be >= 0"},
		{"general block sum small", one, onto1, set, 1, []Dist{{Format: GeneralBlock, Sizes: []int{1, 1, 1}}},
			"template T: GENERAL_BLOCK of dimension 0: block sizes [1 1 1] add up to 3, the extent is 4"},
		{"general block sum large", one, onto1, set, 1, []Dist{{Format: GeneralBlock, Sizes: []int{2, 2, 2}}},
			"template T: GENERAL_BLOCK of dimension 0: block sizes [2 2 2] add up to more than the extent 4"},
		{"indirect on 2-D template", two, onto1, set, 1, []Dist{{Format: Indirect}, {Format: Collapsed}},
			"template T: INDIRECT distribution needs a rank-1 template onto a rank-1 arrangement, got rank 2 onto rank 1"},
		{"indirect onto 2-D arrangement", one, onto2, set, 1, []Dist{{Format: Indirect, Map: []int{1, 1, 1, 1}}},
			"template T: INDIRECT distribution needs a rank-1 template onto a rank-1 arrangement, got rank 1 onto rank 2"},
		{"indirect without arrangement", one, nil, set, 1, []Dist{{Format: Indirect, Map: []int{1, 1, 1, 1}}},
			"distribute template T: no processor arrangement"},
		{"map length", one, onto1, set, 1, []Dist{{Format: Indirect, Map: []int{1, 2}}},
			"template T: MAP has 2 values, the template has 4 elements"},
		{"map value high", one, onto1, set, 1, []Dist{{Format: Indirect, Map: []int{1, 2, 3, 4}}},
			"template T: MAP(4) = 4 names no processor, allowed 1..3"},
		{"map value zero", []Block{{-1, 2}}, onto1, set, 1, []Dist{{Format: Indirect, Map: []int{1, 0, 3, 3}}},
			"template T: MAP(0) = 0 names no processor, allowed 1..3"},
		{"linked onto 2-D", one, onto2, set, 1, []Dist{{Format: Linked, Home: okHome}},
			"template T: LINKED distribution needs a rank-1 template onto a rank-1 arrangement, got rank 1 onto rank 2"},
		{"linked no home", one, onto1, set, 1, []Dist{{Format: Linked}},
			"template T: LINKED distribution without a HOME template"},
		{"linked home declared", one, onto1, set, 1, []Dist{{Format: Linked, Home: home}},
			"template T: HOME template H is declared: distribute it before linking T to it"},
		{"linked home empty", one, onto1, set, 1, []Dist{{Format: Linked, Home: emptyHome}},
			"template T: HOME template E is empty: distribute it before linking T to it"},
		{"linked home other rank", one, onto1, set, 1, []Dist{{Format: Linked, Home: otherRankHome}},
			"template T: HOME template H was distributed for rank 2, not rank 1"},
		{"linked target count", one, onto1, set, 1, []Dist{{Format: Linked, Home: okHome, Targets: [][]int{{1}}}},
			"template T: HOME clause has 1 targets, the template has 4 elements"},
		{"linked target outside", one, onto1, set, 1, []Dist{{Format: Linked, Home: okHome, Targets: [][]int{{1}, {2}, {11}, {3}}}},
			"template T: HOME of element T(3) is H(11), outside H's bounds 1:10"},
		{"linked target rank", one, onto1, set, 1, []Dist{{Format: Linked, Home: okHome, Targets: [][]int{{1}, {2, 2}, {3}, {3}}}},
			"template T: HOME of element T(2) is H(2, 2), outside H's bounds 1:10"},
		{"recorded overlap", one, onto1, set, 1, []Dist{{Format: Recorded, Blocks: []Block{{1, 2}, {2, 3}}}},
			"template T: recorded schedule: blocks 1:2 and 2:3 overlap"},
		{"recorded outside", one, onto1, set, 1, []Dist{{Format: Recorded, Blocks: []Block{{3, 5}}}},
			"template T: recorded blocks [3:5] reach outside the template's bounds 1:4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm := declared(t, "T", c.bounds...)
			err := tm.Distribute(c.onto, c.set, c.self, c.dims)
			require.EqualError(t, err, c.want)
			assert.Equal(t, Declared, tm.State())
		})
	}
}

func TestBoundsErrors(t *testing.T) {
	_, err := NewTemplate("T", 0)
	assert.EqualError(t, err, "template T: rank 0, allowed 1..7")
	_, err = NewTemplate("T", 8)
	assert.EqualError(t, err, "template T: rank 8, allowed 1..7")

	tm, err := NewTemplate("T", 2)
	require.NoError(t, err)
	assert.EqualError(t, tm.Create([]Block{{1, 2}}), "template T has rank 2, got 1 bounds")
	assert.EqualError(t, tm.Define([]Block{{1, 2}, {3, 2}}), "template T: bounds 3:2 of dimension 1 are empty")
	assert.EqualError(t, tm.Create([]Block{{1, 2}, {math.MinInt, math.MaxInt}}),
		"template T: bounds -9223372036854775808:9223372036854775807 of dimension 1 hold more than 1099511627776 elements")
	assert.EqualError(t, tm.Create([]Block{{0, MaxExtent}, {1, 1}}),
		"template T: bounds 0:1099511627776 of dimension 0 hold more than 1099511627776 elements")
	assert.Equal(t, Empty, tm.State())
	require.NoError(t, tm.Create([]Block{{1, MaxExtent}, {-MaxExtent, -1}}))

	// Owns, Owner and LocalBlocks reject elements and dimensions that do
	// not exist.
	onto := mustArrangement(t, "P", 2)
	d := defined(t, "T", []Block{{1, 4}, {-2, 2}}, onto, &ProcSet{Members: []int{0, 1}}, 0, Dist{Format: BlockFormat}, Dist{})
	_, err = d.Owns([]int{5, 0})
	assert.EqualError(t, err, "element T(5, 0) is outside the template's bounds 1:4, -2:2")
	_, err = d.Owner([]int{1})
	assert.EqualError(t, err, "template T has rank 2, got 1 coordinates")
	_, err = d.LocalBlocks(2)
	assert.EqualError(t, err, "template T has rank 2: dimension 2, allowed 0..1")
	_, err = d.LocalBlocks(-1)
	assert.EqualError(t, err, "template T has rank 2: dimension -1, allowed 0..1")
}

// TestHugeTemplate checks that formulas stay exact near MaxExtent and with
// huge segment lengths (no overflow).
func TestHugeTemplate(t *testing.T) {
	onto := mustArrangement(t, "P", 7)
	set := &ProcSet{Members: []int{0, 1, 2, 3, 4, 5, 6}}
	lo := math.MaxInt - MaxExtent + 1
	bounds := []Block{{lo, math.MaxInt}}
	for _, ds := range []Dist{{Format: BlockFormat}, {Format: Cyclic, Segment: math.MaxInt}, {Format: Cyclic, Segment: 1 << 37}} {
		owners := 0
		for pos := range 7 {
			tm := defined(t, "T", bounds, onto, set, pos, ds)
			blocks, err := tm.LocalBlocks(0)
			require.NoError(t, err)
			for _, e := range []int{lo, lo + 1, math.MaxInt - 1, math.MaxInt} {
				owns, err := tm.Owns([]int{e})
				require.NoError(t, err)
				assert.Equal(t, inBlocks(blocks, e), owns)
				if owns && e == math.MaxInt {
					owners++
				}
			}
		}
		assert.Equal(t, 1, owners, "%v", ds)
	}
}
