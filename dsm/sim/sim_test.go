package sim

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/dsm/rank"
	"github.com/svmcluster/svm/protocol"
)

var (
	seeds     = flag.Int("sim.seeds", 2000, "random programs to simulate")
	firstSeed = flag.Uint64("sim.seed", 1, "first seed")
	phases    = flag.Int("sim.phases", 8, "barrier phases per program")
	traceFlag = flag.Bool("sim.trace", false, "print the whole trace of each seed (use with -sim.seeds=1 to replay one)")
)

// jobFor derives a job and a program from a seed: N = 2..8 ranks, small pages
// so that data shares pages densely, the home-based protocol for two seeds
// in three and the homeless one for the third, writes found by faults or
// reported without them, prefetching on or off, and for a third of the
// homeless seeds a garbage collection threshold of a few pages, so that
// collections happen often.
func jobFor(seed uint64, phases int) (Config, Program) {
	rng := rand.New(rand.NewPCG(seed, 1))
	n := 2 + int(seed%7)
	pageSize := []int{32, 64, 128, 256}[rng.IntN(4)]
	gc := int64(1 << 40)
	if rng.IntN(3) == 0 {
		gc = int64(pageSize * (1 + rng.IntN(16)))
	}
	pc := ProgramConfig{NProcs: n, PageSize: pageSize, Phases: phases, Ops: 4 + rng.IntN(12), Locks: 16, Barriers: 8}
	prog := Random(rng, pc)
	cfg := Config{
		NProcs: n, Pages: prog.Pages + prog.HeapPages, PageSize: pageSize, Locks: pc.Locks, Barriers: pc.Barriers,
		GCThreshold: gc, Prefetch: rng.IntN(2) == 0, StrayFaults: rng.IntN(2) == 0, Seed: seed, Trace: *traceFlag,
		Homes: seed%3 != 0, AsyncWrites: rng.IntN(2) == 0,
	}
	// Half the jobs spread over fewer nodes than ranks (drawn apart, so
	// that each seed's program and schedule stay what they were).
	if nodes := rand.New(rand.NewPCG(seed, 2)); nodes.IntN(2) == 0 {
		k := 1 + nodes.IntN(n)
		cfg.Nodes = make([]int, n)
		for r := range cfg.Nodes {
			cfg.Nodes[r] = nodes.IntN(k)
		}
	}
	return cfg, prog
}

func runProgram(t *testing.T, cfg Config, prog Program) *Sim {
	s, err := New(cfg)
	require.NoError(t, err)
	for r, ops := range prog.Ops {
		s.Enqueue(r, ops...)
	}
	err = s.Run(true)
	if *traceFlag {
		for _, l := range s.Trace() {
			fmt.Println(l)
		}
	}
	if err != nil {
		t.Fatalf("%s\nreplay: go test ./dsm/sim -run 'TestRandomPrograms$' -sim.seed=%d -sim.seeds=1 -sim.phases=%d -sim.trace", s.Failure(), cfg.Seed, *phases)
	}
	return s
}

// TestRandomPrograms runs random data-race-free programs under random
// schedules: every read must see what a sequentially consistent execution
// with the same synchronization order sees, and the final memory of every
// rank must equal the reference. Across the seeds, every mechanism the
// protocol has must have been exercised.
func TestRandomPrograms(t *testing.T) {
	var collections, prefetched, silent, subsetBarriers, diffs, dropped, refetched atomic.Int64
	var fetched, refreshed, migrations, homeDiffs, allocations, inCache, takenAway atomic.Int64
	t.Cleanup(func() {
		if *seeds < 100 || t.Failed() {
			return
		}
		assert.Positive(t, collections.Load(), "no garbage collection ran")
		assert.Positive(t, prefetched.Load(), "no page was prefetched")
		assert.Positive(t, silent.Load(), "no silent write was seen")
		assert.Positive(t, subsetBarriers.Load(), "no processor-set barrier ran")
		assert.Positive(t, diffs.Load(), "no diff was applied")
		assert.Positive(t, dropped.Load(), "no collection dropped a page")
		assert.Positive(t, refetched.Load(), "no dropped page was fetched from its keeper")
		assert.Positive(t, fetched.Load(), "no page was fetched from its home")
		assert.Positive(t, refreshed.Load(), "no page was brought up to date in place")
		assert.Positive(t, migrations.Load(), "no home moved")
		assert.Positive(t, homeDiffs.Load(), "no diff reached a home")
		assert.Positive(t, allocations.Load(), "no allocation was made")
		assert.Positive(t, inCache.Load(), "no lock was taken or released in the cache")
		assert.Positive(t, takenAway.Load(), "no cached lock was released in the application's place")
	})
	for i := range *seeds {
		seed := *firstSeed + uint64(i)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			cfg, prog := jobFor(seed, *phases)
			s := runProgram(t, cfg, prog)
			allocations.Add(s.Allocations())
			c, a := s.LockCache()
			inCache.Add(c)
			takenAway.Add(a)
			for r := range cfg.NProcs {
				st := s.RankStats(r)
				collections.Add(st.Collections)
				prefetched.Add(st.Prefetched)
				silent.Add(st.SilentPages)
				diffs.Add(st.DiffsApplied)
				dropped.Add(st.Dropped)
				refetched.Add(st.Refetched)
				fetched.Add(st.PagesFetched)
				refreshed.Add(st.Refreshed)
				migrations.Add(st.HomeMigrations)
				if cfg.Homes {
					homeDiffs.Add(st.DiffsApplied)
				}
			}
			for _, ops := range prog.Ops {
				for _, op := range ops {
					if op.Kind == OpBarrier && op.Members != nil {
						subsetBarriers.Add(1)
					}
				}
			}
		})
	}
}

// TestGarbageCollectionBoundsMetadata runs long programs twice, without and
// with a small collection threshold: with it, the metadata any rank holds
// stays a fraction of what the uncollected history grows to, and memory is
// still correct (checked by every read, as always).
func TestGarbageCollectionBoundsMetadata(t *testing.T) {
	for _, seed := range []uint64{11, 12, 13, 14} {
		cfg, prog := jobFor(seed, 60)
		cfg.Homes = false
		cfg.GCThreshold = 1 << 40
		unbounded := runProgram(t, cfg, prog).MaxMetadata()
		cfg.GCThreshold = int64(8 * cfg.PageSize)
		s := runProgram(t, cfg, prog)
		var collections int64
		for r := range cfg.NProcs {
			collections += s.RankStats(r).Collections
		}
		t.Logf("seed %d: %d ranks, most metadata held %d bytes without collection, %d with (%d collections)",
			seed, cfg.NProcs, unbounded, s.MaxMetadata(), collections)
		assert.Positive(t, collections)
		assert.Less(t, s.MaxMetadata()*3, unbounded, "seed %d: collection did not bound the metadata", seed)
	}
}

// TestHomesBoundMetadata: home-based, every barrier of every rank drops the
// history every rank has, and diffs go home as they are made, so long
// programs hold a fraction of the metadata the homeless protocol holds
// uncollected.
func TestHomesBoundMetadata(t *testing.T) {
	for _, seed := range []uint64{11, 12, 13, 14} {
		cfg, prog := jobFor(seed, 60)
		cfg.GCThreshold = 1 << 40
		cfg.Homes = false
		homeless := runProgram(t, cfg, prog).MaxMetadata()
		cfg.Homes = true
		homes := runProgram(t, cfg, prog).MaxMetadata()
		t.Logf("seed %d: %d ranks, most metadata held %d bytes homeless and uncollected, %d home-based", seed, cfg.NProcs, homeless, homes)
		assert.Less(t, homes*3, homeless, "seed %d: home-based metadata not bounded", seed)
	}
}

// TestPushesOptional runs programs whose ranks take pages their homes
// pushed, then runs them again with every push dropped: a rank then asks
// for the pages as it would without pushes, so every program still reads
// what it must. (A push that comes after the departure it was for, as one
// from another node can, the random programs cover: messages of different
// senders reach a rank in any order.)
func TestPushesOptional(t *testing.T) {
	ran, taken := 0, int64(0)
	for seed := uint64(1); ran < 200 && seed < 3000; seed++ {
		cfg, prog := jobFor(seed, 4)
		if !cfg.Homes {
			continue
		}
		ran++
		for _, drop := range []bool{false, true} {
			if drop {
				cfg.Mutate = func(_ *rand.Rand, _, _ int, m protocol.Message) protocol.Message {
					if _, ok := m.(*protocol.PagePush); ok {
						return nil
					}
					return m
				}
			}
			s, err := New(cfg)
			require.NoError(t, err)
			for r, ops := range prog.Ops {
				s.Enqueue(r, ops...)
			}
			require.NoError(t, s.Run(true), "seed %d, pushes dropped %v", seed, drop)
			for r := range cfg.NProcs {
				if drop {
					assert.Zero(t, s.RankStats(r).Pushed, "seed %d: rank %d took a dropped push", seed, r)
				} else {
					taken += s.RankStats(r).Pushed
				}
			}
		}
	}
	t.Logf("%d programs took %d pushed pages", ran, taken)
	assert.Positive(t, taken)
}

// TestJoinsAndPrefetchesExercised: the random programs that TestRandomPrograms
// checks take the homeless paths the byte counts rest on: diffs joined to
// earlier ones, and prefetches.
func TestJoinsAndPrefetchesExercised(t *testing.T) {
	var total rank.Stats
	ran := 0
	for seed := uint64(1); ran < 200 && seed < 3000; seed++ {
		cfg, prog := jobFor(seed, 4)
		if cfg.Homes || !cfg.Prefetch {
			continue
		}
		ran++
		s := runProgram(t, cfg, prog)
		for r := range cfg.NProcs {
			total.Add(s.RankStats(r))
		}
	}
	t.Logf("%d programs: %d diffs joined, %d pages prefetched", ran, total.DiffsJoined, total.Prefetched)
	assert.Positive(t, total.DiffsJoined)
	assert.Positive(t, total.Prefetched)
}

// TestLostCachedWritesCaught: an engine that forgets the pages its
// application wrote before releasing locks into the cache loses writes, and
// the simulation sees it; the same programs pass with the cache whole.
func TestLostCachedWritesCaught(t *testing.T) {
	caught, ran := 0, 0
	for seed := uint64(1); ran < 100 && seed < 3000; seed++ {
		cfg, prog := jobFor(seed, 4)
		if !cfg.AsyncWrites {
			continue
		}
		ran++
		s := runProgram(t, cfg, prog)
		if c, _ := s.LockCache(); c == 0 {
			continue
		}
		broken, err := New(cfg)
		require.NoError(t, err)
		broken.loseCachedWritten = true
		for r, ops := range prog.Ops {
			broken.Enqueue(r, ops...)
		}
		if broken.Run(true) != nil {
			caught++
		}
	}
	t.Logf("%d of %d programs caught losing the cache's written pages", caught, ran)
	assert.Greater(t, caught, ran/4)
}

// ownCopy is rank r's own copy of page p: what a stale update would bring.
func (s *Sim) ownCopy(r int, p uint32) []byte {
	off := int(p) * s.cfg.PageSize
	return slices.Clone(s.ranks[r].mem[off : off+s.cfg.PageSize])
}

// TestMutationsCaught breaks the home-based protocol on purpose and checks
// that the simulation notices: diffs sent to a rank that is not the page's
// home, diffs lost on their way home, and pages answered or pushed with
// stale contents (the receiver's own old copy). From a random message of its kind on, the
// break hits every such message of the run. Every run's memory is read
// whole at its end, so a break that changed anything is seen, as a wrong
// read, a protocol error or a deadlock; a run may pass unseen only where the
// breaks changed nothing (a lost diff whose bytes were written again, a page
// whose old copy was still right).
func TestMutationsCaught(t *testing.T) {
	mutations := []struct {
		name string
		// mutate returns the message to deliver (nil: none) and whether
		// it broke anything.
		mutate func(s *Sim, rng *rand.Rand, from, to int, m protocol.Message) (protocol.Message, bool)
	}{
		{"wrong home", func(s *Sim, rng *rand.Rand, from, to int, m protocol.Message) (protocol.Message, bool) {
			if _, ok := m.(*protocol.HomeDiffs); !ok {
				return m, false
			}
			other := (to + 1 + rng.IntN(s.cfg.NProcs-1)) % s.cfg.NProcs
			if other == from {
				return m, false
			}
			s.misdeliver(from, other, m)
			return nil, true
		}},
		{"lost diff", func(_ *Sim, _ *rand.Rand, _, _ int, m protocol.Message) (protocol.Message, bool) {
			if _, ok := m.(*protocol.HomeDiffs); ok {
				return nil, true
			}
			return m, false
		}},
		{"stale update", func(s *Sim, _ *rand.Rand, _, to int, m protocol.Message) (protocol.Message, bool) {
			resp, ok := m.(*protocol.PageResponse)
			if !ok {
				return m, false
			}
			for i, pc := range resp.Pages {
				resp.Pages[i].Data = s.ownCopy(to, pc.Page)
			}
			return resp, true
		}},
		{"stale push", func(s *Sim, _ *rand.Rand, _, to int, m protocol.Message) (protocol.Message, bool) {
			push, ok := m.(*protocol.PagePush)
			if !ok {
				return m, false
			}
			for i, pp := range push.Pages {
				push.Pages[i].Data = s.ownCopy(to, pp.Page)
			}
			return push, true
		}},
	}
	for _, mu := range mutations {
		t.Run(mu.name, func(t *testing.T) {
			t.Parallel()
			var applied, caught int
			for seed := uint64(1); applied < 60 && seed < 3000; seed++ {
				cfg, prog := jobFor(seed, 4)
				if !cfg.Homes {
					continue
				}
				rng := rand.New(rand.NewPCG(seed, 7))
				done := false
				var s *Sim
				cfg.Mutate = func(_ *rand.Rand, from, to int, m protocol.Message) protocol.Message {
					if !done && rng.IntN(4) != 0 {
						return m
					}
					out, broke := mu.mutate(s, rng, from, to, m)
					done = done || broke
					return out
				}
				var err error
				s, err = New(cfg)
				require.NoError(t, err)
				for r, ops := range prog.Ops {
					s.Enqueue(r, ops...)
				}
				err = s.Run(true)
				if done {
					applied++
					if err != nil {
						caught++
					}
				}
			}
			t.Logf("%s: caught in %d of %d runs it broke", mu.name, caught, applied)
			require.Positive(t, applied)
			assert.GreaterOrEqual(t, caught*10, applied*9, "%s: the simulation must catch at least 90%% of the runs it breaks", mu.name)
		})
	}
}
