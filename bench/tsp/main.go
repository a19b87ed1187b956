// Command tsp solves the travelling salesman problem by branch and bound as
// the TreadMarks version of the TreadMarks vs PVM study does (section 3.6).
// Run it with svmf run -np N tsp [flags]; with -seq it runs alone, without
// shared memory, for the sequential time.
//
// The major data structures are shared: a pool of partially evaluated tours
// (fixed-size records), a priority queue of pool slots ordered by lower
// bound, a stack of free slots, and the shortest tour's length and path.
// The pool, the queue and the stack are guarded by one lock, the shortest
// tour by another. A worker repeatedly takes the most promising tour off the
// queue under the first lock: if at most -threshold cities remain, it solves
// the rest recursively in private memory (trying every completion, pruning
// paths longer than the shortest tour it knows, and recording a shorter tour
// under the second lock); otherwise it puts the tour's extensions by one city
// back on the queue and takes the next. The original read the shortest
// length without a lock (a data race); here a worker learns it only under a
// lock: recording a tour under the second lock returns the shortest length,
// and the queue keeps a copy that every worker lowers to what it knows when
// it takes a tour, prunes the queue with, and solves its next tour with.
//
// The distances between the cities are integers drawn uniformly from
// 1..1000 (symmetric) by math/rand/v2 with a fixed seed. Timed: the search
// on every rank, to the barrier after it; not timed: drawing the distances
// and setting up the pool and the queue.
//
// Rank 0 checks the result: the shortest tour must visit every city once,
// have the length recorded, and that length must equal the optimum a
// sequential run of the same branch and bound finds (a sequential run checks
// its own tour). -check=false skips the check.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"
	"unsafe"

	"github.com/svmcluster/svm/bench/internal/report"
	"github.com/svmcluster/svm/dsm"
)

// seed is the seed of the city generator.
const seed = 14

func main() {
	cities := flag.Int("cities", 19, "number of cities")
	threshold := flag.Int("threshold", 12, "solve a tour recursively when at most this many cities remain")
	seq := flag.Bool("seq", false, "run sequentially, without shared memory")
	check := flag.Bool("check", true, "compare the result with a sequential run")
	flag.Parse()
	if *cities < 3 || *cities > maxCities || *threshold < 2 || *threshold >= *cities {
		fmt.Fprintf(os.Stderr, "tsp: %d cities, threshold %d: want 3 to %d cities and a threshold from 2 to one less than the cities\n", *cities, *threshold, maxCities)
		os.Exit(2)
	}
	p := newProblem(*cities, *threshold)
	r := report.Result{Program: "tsp", Variant: "", Params: fmt.Sprintf("%d cities, threshold %d", *cities, *threshold), Check: "ok"}
	if *seq {
		s := new(shared)
		start(s, p)
		begin := time.Now()
		err := worker(s, p, alone{})
		r.Seconds = time.Since(begin).Seconds()
		if err != nil {
			fmt.Fprintln(os.Stderr, "tsp:", err)
			os.Exit(1)
		}
		if *check {
			r.Check = verify(p, s, s.bestLen)
		}
		report.Sequential(r)
		if r.Check != "ok" {
			os.Exit(1)
		}
		return
	}
	if err := parallel(p, *check, r); err != nil {
		fmt.Fprintln(os.Stderr, "tsp:", err)
		os.Exit(1)
	}
}

// newProblem draws the distances: symmetric, uniform in 1..1000.
func newProblem(cities, threshold int) *problem {
	p := &problem{cities: cities, threshold: threshold}
	rng := rand.New(rand.NewPCG(seed, uint64(cities)))
	for i := range cities {
		for j := range i {
			w := int32(1 + rng.IntN(1000))
			p.dist[i][j], p.dist[j][i] = w, w
		}
	}
	return p
}

// alone is the syncer of a sequential run: there is nobody to exclude.
type alone struct{}

func (alone) Lock(int) error   { return nil }
func (alone) Unlock(int) error { return nil }

func parallel(p *problem, check bool, r report.Result) error {
	n, err := dsm.Join(context.Background(), dsm.Funneled()) // one goroutine writes shared memory
	if err != nil {
		return err
	}
	defer n.Close()
	a, err := n.Alloc(int(unsafe.Sizeof(shared{})))
	if err != nil {
		return err
	}
	s := &dsm.Slice[shared](a, 1)[0]
	if n.Rank() == 0 {
		start(s, p)
	}
	if err := n.Barrier(0); err != nil {
		return err
	}
	before := n.Stats()
	begin := time.Now()
	if err := worker(s, p, n); err != nil {
		return fmt.Errorf("rank %d: %w", n.Rank(), err)
	}
	if err := n.Barrier(0); err != nil {
		return err
	}
	took := time.Since(begin)
	after := n.Stats()
	if check && n.Rank() == 0 {
		r.Check = compare(p, s)
	}
	if err := report.Parallel(n, 63, r, took, before, after); err != nil {
		return err
	}
	if r.Check != "ok" {
		return fmt.Errorf("check: %s", r.Check)
	}
	return nil
}

// compare checks s's shortest tour against a sequential run's.
func compare(p *problem, s *shared) string {
	seq := new(shared)
	start(seq, p)
	if err := worker(seq, p, alone{}); err != nil {
		return fmt.Sprintf("the sequential run failed: %v", err)
	}
	return verify(p, s, seq.bestLen)
}

// verify checks that s's shortest tour visits every city once, starting at
// city 0, and that its recorded length is its length and equals want.
func verify(p *problem, s *shared, want int32) string {
	path := s.bestPath[:p.cities]
	var seen uint32
	for i, c := range path {
		if c < 0 || int(c) >= p.cities || seen&(1<<c) != 0 || i == 0 && c != 0 {
			return fmt.Sprintf("the tour %v is not a tour of the %d cities from city 0", path, p.cities)
		}
		seen |= 1 << c
	}
	length := int32(0)
	for i, c := range path {
		length += p.dist[c][path[(i+1)%p.cities]]
	}
	switch {
	case length != s.bestLen:
		return fmt.Sprintf("the tour %v has length %d, recorded %d", path, length, s.bestLen)
	case length != want:
		return fmt.Sprintf("the tour has length %d, the sequential optimum is %d", length, want)
	}
	return "ok"
}
