package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

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

// TestNASClassS: 2^24 pairs give NAS class S's counts, pairs and sums, so
// the generator, the batches and the kernel are NAS's.
func TestNASClassS(t *testing.T) {
	if testing.Short() {
		t.Skip("class S takes half a second")
	}
	p := params{pairsLog2: 24}
	tl := compute(p, 0, p.batches())
	assert.Equal(t, "ok", verifyNAS(p, &tl))
	assert.Equal(t, *references[24].counts, tl.Counts)
}

// TestShares: the batches split among any number of ranks give the counts
// of the whole run exactly and its sums within the tolerance, including
// problems smaller than one batch.
func TestShares(t *testing.T) {
	for _, m := range []int{3, 12, 16, 19} {
		p := params{pairsLog2: m}
		nb := p.batches()
		whole := compute(p, 0, nb)
		require.Positive(t, whole.pairs())
		for _, np := range []int{2, 3, 8} {
			var sum tally
			for r := range np {
				part := compute(p, r*nb/np, (r+1)*nb/np)
				sum.add(&part)
			}
			assert.Equal(t, "ok", compare(&sum, &whole), "2^%d pairs on %d ranks", m, np)
		}
	}
}

func TestCompare(t *testing.T) {
	want := tally{Counts: [nq]int64{5, 4, 1}, SX: 1000, SY: -2}
	got := want
	got.SX *= 1 + 1e-12
	got.SY += 1e-12
	assert.Equal(t, "ok", compare(&got, &want))
	got.SX = 1000 * (1 + 1e-7)
	assert.Contains(t, compare(&got, &want), "sums")
	got = want
	got.Counts[2]++
	assert.Contains(t, compare(&got, &want), "counts")
}

// TestTallyLayout: the shared list is allocated as tallyBytes.
func TestTallyLayout(t *testing.T) {
	assert.Equal(t, uintptr(tallyBytes), unsafe.Sizeof(tally{}))
}

// TestJobs runs the program as jobs of real processes and reads rank 0's
// result line: its check compares with a sequential run, and at 2^24 pairs
// with NAS class S.
func TestJobs(t *testing.T) {
	for _, tc := range []struct {
		np   int
		args string
	}{
		{1, "-pairs-log2 10"},
		{2, "-pairs-log2 18"},
		{3, "-pairs-log2 19"},
		{4, "-pairs-log2 16"}, // one batch: three ranks have none
		{2, "-pairs-log2 24 -check=false"},
	} {
		t.Run(fmt.Sprintf("np%d %s", tc.np, tc.args), func(t *testing.T) {
			if strings.Contains(tc.args, "24") && testing.Short() {
				t.Skip("class S takes half a second")
			}
			out := dsmtest.Run(t, tc.np, tc.args, nil)
			assert.Contains(t, out, `"check":"ok"`)
			assert.Contains(t, out, fmt.Sprintf(`"ranks":%d`, tc.np))
		})
	}
}
