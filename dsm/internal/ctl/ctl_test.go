package ctl

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestTrackedRuns: the runs read from a read-only mapping are the pages the
// writable one tracked, joined across short gaps, checked against a plain
// reference for random sets.
func TestTrackedRuns(t *testing.T) {
	const pages = 1000
	a, fd, err := Create(pages)
	require.NoError(t, err)
	defer unix.Close(fd)
	defer a.Close()
	r, err := Map(fd, pages)
	require.NoError(t, err)
	defer r.Close()
	_, err = Map(fd, pages*100)
	assert.ErrorContains(t, err, "control area of")

	rng := rand.New(rand.NewPCG(1, 2))
	tracked := make([]bool, pages)
	for round := range 200 {
		for range 1 + rng.IntN(40) {
			p := uint32(rng.IntN(pages))
			if rng.IntN(3) == 0 {
				// a run
				for q := p; q < min(pages, p+uint32(rng.IntN(130))); q++ {
					tracked[q] = true
					a.Track(q)
				}
				continue
			}
			tracked[p] = !tracked[p]
			if tracked[p] {
				a.Track(p)
			} else {
				a.Untrack(p)
			}
		}
		gap := uint32(round % 5)
		var want []Run
		for p := range uint32(pages) {
			if !tracked[p] {
				continue
			}
			if n := len(want); n > 0 && p <= want[n-1].First+want[n-1].Count+gap {
				want[n-1].Count = p + 1 - want[n-1].First
			} else {
				want = append(want, Run{First: p, Count: 1})
			}
		}
		got := r.Tracked(nil, gap)
		require.True(t, slices.Equal(want, got), "round %d gap %d: got %v, want %v", round, gap, got, want)
	}
}
