package svmfortran

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlock(t *testing.T) {
	assert.Equal(t, 10, Block{1, 10}.Len())
	assert.Equal(t, 1, Block{-3, -3}.Len())
	assert.Equal(t, 0, Block{1, 0}.Len())
	assert.Equal(t, 0, Block{5, -5}.Len())
	assert.Equal(t, math.MaxInt, Block{math.MinInt, math.MaxInt}.Len(), "saturates")
	assert.Equal(t, math.MaxInt, Block{0, math.MaxInt - 1}.Len())
	assert.True(t, Block{2, 1}.Empty())
	assert.False(t, Block{2, 2}.Empty())
	assert.True(t, Block{2, 4}.Contains(4))
	assert.False(t, Block{2, 4}.Contains(5))
	assert.Equal(t, "-1:4", Block{-1, 4}.String())
	assert.Equal(t, 12, Box{{1, 3}, {0, 3}}.Size())
	assert.Equal(t, 0, Box{{1, 3}, {1, 0}}.Size())
}

func TestNormalizeBlocks(t *testing.T) {
	got, err := normalizeBlocks([]Block{{7, 9}, {1, 2}, {5, 4}, {3, 3}, {11, 12}})
	require.NoError(t, err)
	assert.Equal(t, []Block{{1, 3}, {7, 9}, {11, 12}}, got)
	_, err = normalizeBlocks([]Block{{1, 5}, {5, 5}})
	assert.EqualError(t, err, "blocks 1:5 and 5:5 overlap")
	got, err = normalizeBlocks(nil)
	require.NoError(t, err)
	assert.Empty(t, got)

	list := []Block{{1, 2}, {4, 4}, {6, 9}}
	for i, want := range []bool{false, true, true, false, true, false, true, true, true, true, false} {
		assert.Equal(t, want, inBlocks(list, i), "index %d", i)
	}
}

func TestStrings(t *testing.T) {
	names := map[Format]string{
		Collapsed: "*", BlockFormat: "BLOCK", Cyclic: "CYCLIC", GeneralBlock: "GENERAL_BLOCK",
		Indirect: "INDIRECT", Linked: "LINKED", Recorded: "RECORDED", Format(-1): "Format(-1)",
	}
	for f, want := range names {
		assert.Equal(t, want, f.String())
	}
	assert.Equal(t, "empty", Empty.String())
	assert.Equal(t, "declared", Declared.String())
	assert.Equal(t, "defined", Defined.String())
	assert.Equal(t, "State(9)", State(9).String())
}
