package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/dsm/dsmtest"
)

func TestMain(m *testing.M) {
	if args, ok := dsmtest.Child(); ok {
		os.Exit(run(strings.Fields(args), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestNAS runs the sequential sort at NAS's class S, W and A sizes and
// checks NAS's partial verification: the ranks of five keys in every
// iteration. Equal ranks mean the keys are NAS's.
func TestNAS(t *testing.T) {
	for _, tc := range []struct {
		class             string
		keysLog2, maxLog2 int
		index, rank       [5]int32
		// shift is how NAS shifts test key i's rank in iteration it.
		shift func(i, it int) int32
	}{
		{"S", 16, 11, [5]int32{48427, 17148, 23627, 62548, 4431}, [5]int32{0, 18, 346, 64917, 65463},
			func(i, it int) int32 {
				if i <= 2 {
					return int32(it)
				}
				return int32(-it)
			}},
		{"W", 20, 16, [5]int32{357773, 934767, 875723, 898999, 404505}, [5]int32{1249, 11698, 1039987, 1043896, 1048018},
			func(i, it int) int32 {
				if i < 2 {
					return int32(it - 2)
				}
				return int32(-it)
			}},
		{"A", 23, 19, [5]int32{2112377, 662041, 5336171, 3642833, 4250760}, [5]int32{104, 17523, 123928, 8288932, 8388264},
			func(i, it int) int32 {
				if i <= 2 {
					return int32(it - 1)
				}
				return int32(1 - it)
			}},
	} {
		t.Run(tc.class, func(t *testing.T) {
			if tc.class == "A" && testing.Short() {
				t.Skip("class A takes a second")
			}
			p := params{keysLog2: tc.keysLog2, rangeLog2: tc.maxLog2, iters: 10}
			s := newSequential(p)
			checked := 0
			s.run(p, func(it int) {
				for i, idx := range tc.index {
					k := s.keys[idx]
					if k <= 0 || int(k) >= p.keys() {
						continue // NAS skips these too
					}
					assert.Equal(t, tc.rank[i]+tc.shift(i, it), s.less[k], "iteration %d, test key %d (index %d, key %d)", it, i, idx, k)
					checked++
				}
			})
			assert.Equal(t, 50, checked, "NAS checks 5 keys in each of 10 iterations")
			assert.Equal(t, "ok", s.verify())
		})
	}
}

// TestGenerateJumpsAhead: a share generated from its first index is the
// same as that part of the whole sequence.
func TestGenerateJumpsAhead(t *testing.T) {
	for _, r := range []int{2, 7, 15, 28} {
		p := params{keysLog2: 12, rangeLog2: r, iters: 1}
		all := make([]int32, p.keys())
		generate(p, all, 0)
		for _, first := range []int{1, 7, 1000, p.keys() - 3} {
			part := make([]int32, p.keys()-first)
			generate(p, part, first)
			require.Equal(t, all[first:], part, "range 2^%d from key %d", r, first)
		}
		for _, k := range all {
			require.True(t, k >= 0 && int(k) < p.maxKey(), "key %d outside [0, 2^%d)", k, r)
		}
	}
}

func TestParams(t *testing.T) {
	for _, tc := range []struct {
		p       params
		variant string
		err     string
	}{
		{params{23, 7, 10}, "small", ""},
		{params{23, 15, 10}, "large", ""},
		{params{23, 10, 10}, "range2^10", ""},
		{params{1, 7, 10}, "", "-keys-log2 1"},
		{params{23, 1, 10}, "", "-range-log2 1"},
		{params{23, 7, 0}, "", "-iter 0"},
		{params{4, 7, 8}, "", "-iter 8"},
		{params{10, 3, 8}, "", "-iter 8"},
	} {
		err := tc.p.validate()
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%+v", tc.p)
			continue
		}
		assert.NoError(t, err)
		assert.Equal(t, tc.variant, tc.p.variant())
	}
}

// TestJobs runs the program as jobs of real processes and reads rank 0's
// result line: its check compares with the sequential sort. Uneven shares,
// more buckets than keys, a key range of a few pages and more ranks than
// cores are all covered.
func TestJobs(t *testing.T) {
	for _, tc := range []struct {
		np   int
		args string
	}{
		{1, "-keys-log2 12 -range-log2 7 -iter 3"},
		{2, "-keys-log2 16 -range-log2 7"},
		{3, "-keys-log2 16 -range-log2 15 -iter 4"},
		{4, "-keys-log2 10 -range-log2 12 -iter 5"},
		{5, "-keys-log2 5 -range-log2 3 -iter 3"},
	} {
		t.Run(fmt.Sprintf("np%d %s", tc.np, tc.args), func(t *testing.T) {
			out := dsmtest.Run(t, tc.np, tc.args, nil)
			assert.Contains(t, out, `"check":"ok"`)
			assert.Contains(t, out, fmt.Sprintf(`"ranks":%d`, tc.np))
		})
	}
}
