package ctl

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/protocol"
)

// TestTrackedRuns: the runs read from a read-only mapping are the pages the
// writable one tracked, joined across short gaps, checked against a plain
// reference for random sets.
func TestTrackedRuns(t *testing.T) {
	const pages = 1000
	a, fd, err := Create(pages, 16)
	require.NoError(t, err)
	defer unix.Close(fd)
	defer a.Close()
	r, err := Map(fd, pages, 16)
	require.NoError(t, err)
	defer r.Close()
	_, err = Map(fd, pages*100, 16)
	assert.ErrorContains(t, err, "control area of")
	_, err = Map(fd, pages, 5000)
	assert.ErrorContains(t, err, "5000 locks")

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

// pair is an engine's and an application's mapping of one control area.
func pair(t *testing.T, pages, locks int) (engine, app *Area) {
	engine, fd, err := Create(pages, locks)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd); engine.Close() })
	app, err = Map(fd, pages, locks)
	require.NoError(t, err)
	t.Cleanup(app.Close)
	return engine, app
}

// TestLockCache walks a lock through its states from both sides: taken
// and released without a call only between the engine's grant and its
// taking the lock away; a wish of another rank during a hold sends the
// release to the engine; misused unlocks are named.
func TestLockCache(t *testing.T) {
	engine, app := pair(t, 64, 4)
	assert.False(t, app.TryLock(1), "never granted: the lock is away")
	assert.False(t, app.TryUnlock(1))
	assert.ErrorContains(t, engine.Unlocking(1), "does not hold")
	assert.False(t, app.TryLock(4), "out of range")
	assert.ErrorContains(t, engine.Unlocking(4), "out of range")

	engine.SetHeld(1, false) // granted through a call
	assert.False(t, app.TryLock(1), "held already")
	assert.True(t, app.TryUnlock(1))
	assert.ErrorContains(t, engine.Unlocking(1), "released already")
	assert.True(t, app.TryLock(1))
	assert.True(t, app.TryUnlock(1))
	assert.True(t, app.TryLock(1))
	assert.EqualValues(t, 2, engine.CachedLocks(), "locks taken from the cache")

	assert.False(t, app.Wanted(1))
	assert.False(t, engine.TakeAway(1), "held: only marked wanted")
	assert.True(t, app.Wanted(1))
	assert.False(t, app.TryUnlock(1), "wanted: the release goes to the engine")
	assert.NoError(t, engine.Unlocking(1))
	assert.False(t, app.TryLock(1), "away after the release")

	engine.SetHeld(2, false)
	assert.True(t, app.TryUnlock(2))
	assert.True(t, engine.TakeAway(2), "cached: taken away")
	assert.False(t, app.TryLock(2))
	assert.False(t, engine.TakeAway(2), "away already")

	engine.SetHeld(3, true) // granted with a request queued behind
	assert.True(t, app.Wanted(3))
	assert.False(t, app.Wanted(4), "out of range")
	assert.False(t, app.TryUnlock(3))
	assert.NoError(t, engine.Unlocking(3))
}

// TestLockCacheRace: an application taking and releasing a lock as fast as
// it can while the engine takes it away: each release into the cache is
// either taken away by the engine or comes to it as an Unlock call, never
// both, never neither.
func TestLockCacheRace(t *testing.T) {
	engine, app := pair(t, 64, 1)
	const rounds = 20000
	var viaCall, takenAway int
	done := make(chan int)
	granted := make(chan bool)
	go func() {
		calls := 0
		for range rounds {
			<-granted
			for {
				if !app.TryUnlock(0) {
					calls++ // wanted: the application calls Unlock
					break
				}
				if !app.TryLock(0) {
					break // taken away while cached
				}
			}
			granted <- false
		}
		done <- calls
	}()
	for range rounds {
		engine.SetHeld(0, false)
		granted <- true
		if engine.TakeAway(0) {
			takenAway++
		}
		if !<-granted {
			if err := engine.Unlocking(0); err == nil {
				viaCall++
			}
		}
	}
	calls := <-done
	assert.Equal(t, calls, viaCall)
	assert.Equal(t, rounds, viaCall+takenAway)
}

// TestWrittenPages: pages the application records come out once, as runs,
// in order, within the tracked pages' bound; an empty area costs one load.
func TestWrittenPages(t *testing.T) {
	const pages = 1000
	engine, app := pair(t, pages, 1)
	assert.Empty(t, engine.TakeWritten(nil))
	engine.Track(pages - 1) // the bound: the highest page tracked
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		want := make([]bool, pages)
		for range 1 + rng.IntN(4) {
			var rs []protocol.PageRange
			for range rng.IntN(5) {
				first := uint32(rng.IntN(pages))
				r := protocol.PageRange{First: first, Count: 1 + uint32(rng.IntN(min(100, pages-int(first))))}
				rs = append(rs, r)
				for p := r.First; p < r.First+r.Count; p++ {
					want[p] = true
				}
			}
			app.AddWritten(rs)
		}
		var wantRuns []protocol.PageRange
		for p := range uint32(pages) {
			if !want[p] {
				continue
			}
			if n := len(wantRuns); n > 0 && wantRuns[n-1].End() == uint64(p) {
				wantRuns[n-1].Count++
			} else {
				wantRuns = append(wantRuns, protocol.PageRange{First: p, Count: 1})
			}
		}
		got := engine.TakeWritten(nil)
		if len(wantRuns) == 0 {
			assert.Empty(t, got)
		} else {
			require.Equal(t, wantRuns, got)
		}
		assert.Empty(t, engine.TakeWritten(nil), "taken once")
	}
}
