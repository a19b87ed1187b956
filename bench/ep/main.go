// Command ep is the NAS EP kernel (embarrassingly parallel) as the
// TreadMarks study ran it: 2^M pairs of uniform pseudo-random numbers, of
// which the pairs inside the unit circle become pairs of Gaussian deviates
// (Marsaglia's polar method); the deviates are counted in ten square annuli
// (by the larger absolute value of the pair) and summed. Each rank computes
// its share of the pairs privately, then adds its ten counts and two sums
// to a shared list under a lock; a barrier ends the timed part. Run it with
// svmf run -np N ep [flags]; with -seq it runs alone, without shared memory,
// for the sequential time.
//
// The numbers come from NAS's generator, in NAS's batches of 2^16 pairs;
// the seed of a batch is found by jumping ahead in the sequence, so a
// rank's share starts where the sequential run would be and every pair is
// the same pair in any job. The counts of a parallel run therefore equal
// the sequential counts exactly; the sums differ only by the order of
// summation (per rank, then across ranks in lock order), and must agree to
// a relative 1e-8, the tolerance NAS EP verifies its sums with (relative to
// √pairs when a sum is smaller than that: rounding errors scale with the
// partial sums, a random walk). They agree to about 1e-12 in practice.
//
// The default is the study's size, NAS class A: 2^28 pairs, about 9 s
// sequentially on the 2-core development machine. At NAS's sizes, 24
// (class S), 25 (W), 28 (A), 30 (B) and 32 (C), rank 0 also checks the
// sums and the number of Gaussian pairs against NAS's published values,
// and for class S the ten counts. Rank 0 checks the result against a
// sequential run; -check=false skips that (it costs rank 0 a sequential
// run, as long as the whole sequential program).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/svmcluster/svm/bench/internal/nas"
	"github.com/svmcluster/svm/bench/internal/report"
	"github.com/svmcluster/svm/dsm"
)

const (
	// nq is the number of annuli: a pair whose larger absolute deviate is
	// in [l, l+1) is counted in annulus l.
	nq = 10
	// batchLog2 is NAS's batch: 2^16 pairs from one jump-ahead.
	batchLog2 = 16
	// epSeed is NAS EP's seed.
	epSeed = 271828183
	// listLock guards the shared list.
	listLock = 0
	// sumTolerance is the relative difference allowed between sums made in
	// different orders, and between a sum and NAS's published value.
	sumTolerance = 1e-8
)

type params struct {
	pairsLog2 int
}

func (p params) String() string { return fmt.Sprintf("2^%d pairs", p.pairsLog2) }

// batch is the number of pairs in a batch, and batches the number of
// batches: 2^16 pairs each, or one smaller batch for fewer pairs.
func (p params) batch() int   { return 1 << min(p.pairsLog2, batchLog2) }
func (p params) batches() int { return 1 << (p.pairsLog2 - min(p.pairsLog2, batchLog2)) }

// tally is what EP computes: the counts per annulus and the sums of the
// deviates. It is also the layout of the shared list.
type tally struct {
	Counts [nq]int64
	SX, SY float64
}

// tallyBytes is the size of a tally in shared memory.
const tallyBytes = (nq + 2) * 8

// pairs is the number of Gaussian pairs, the sum of the counts.
func (t *tally) pairs() int64 {
	var n int64
	for _, c := range t.Counts {
		n += c
	}
	return n
}

// add adds u to t.
func (t *tally) add(u *tally) {
	for i, c := range u.Counts {
		t.Counts[i] += c
	}
	t.SX += u.SX
	t.SY += u.SY
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var p params
	fs.IntVar(&p.pairsLog2, "pairs-log2", 28, "log2 of the number of pairs (28: NAS class A, the study's size)")
	seq := fs.Bool("seq", false, "run sequentially, without shared memory")
	check := fs.Bool("check", true, "compare the result with a sequential run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ep: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if p.pairsLog2 < 1 || p.pairsLog2 > 40 {
		fmt.Fprintf(stderr, "ep: -pairs-log2 %d: want 1 to 40\n", p.pairsLog2)
		return 2
	}
	r := report.Result{Program: "ep", Variant: "", Params: p.String(), Check: "ok"}
	if *seq {
		start := time.Now()
		t := compute(p, 0, p.batches())
		r.Seconds = time.Since(start).Seconds()
		r.Check = verifyNAS(p, &t)
		printTally(stdout, &t)
		report.Sequential(r)
		if r.Check != "ok" {
			fmt.Fprintln(stderr, "ep: check:", r.Check)
			return 1
		}
		return 0
	}
	if err := parallel(p, *check, r, stdout); err != nil {
		fmt.Fprintln(stderr, "ep:", err)
		return 1
	}
	return 0
}

// compute returns the tally of batches [lo, hi).
func compute(p params, lo, hi int) tally {
	var t tally
	nk := p.batch()
	xs := make([]float64, 2*nk)
	// an jumps one batch ahead: 2·nk numbers.
	an := nas.Pow(nas.A, uint64(2*nk))
	var q [nq]int64
	sx, sy := 0.0, 0.0
	for b := lo; b < hi; b++ {
		x := nas.Mul(epSeed, nas.Pow(an, uint64(b)))
		for i := range xs {
			x = nas.Mul(nas.A, x)
			xs[i] = nas.Float(x)
		}
		for i := 0; i < nk; i++ {
			x1 := 2*xs[2*i] - 1
			x2 := 2*xs[2*i+1] - 1
			t1 := x1*x1 + x2*x2
			if t1 <= 1 {
				t2 := math.Sqrt(-2 * math.Log(t1) / t1)
				t3, t4 := x1*t2, x2*t2
				q[int(max(math.Abs(t3), math.Abs(t4)))]++
				sx += t3
				sy += t4
			}
		}
	}
	t.Counts, t.SX, t.SY = q, sx, sy
	return t
}

func parallel(p params, check bool, r report.Result, stdout io.Writer) error {
	n, err := dsm.Join(context.Background(), dsm.Funneled()) // one goroutine writes shared memory
	if err != nil {
		return err
	}
	defer n.Close()
	a, err := n.Alloc(tallyBytes)
	if err != nil {
		return err
	}
	shared := &dsm.Slice[tally](a, 1)[0]
	np, me := n.NProcs(), n.Rank()
	nb := p.batches()
	if err := n.Barrier(0); err != nil {
		return err
	}
	before := n.Stats()
	start := time.Now()
	mine := compute(p, me*nb/np, (me+1)*nb/np)
	if err := n.Lock(listLock); err != nil {
		return err
	}
	shared.add(&mine)
	if err := n.Unlock(listLock); err != nil {
		return err
	}
	if err := n.Barrier(0); err != nil {
		return err
	}
	took := time.Since(start)
	after := n.Stats()
	if me == 0 {
		t := *shared
		printTally(stdout, &t)
		r.Check = verifyNAS(p, &t)
		if check && r.Check == "ok" {
			seq := compute(p, 0, nb)
			r.Check = compare(&t, &seq)
		}
	}
	if err := report.Parallel(n, 1, r, took, before, after); err != nil {
		return err
	}
	if r.Check != "ok" {
		return fmt.Errorf("check: %s", r.Check)
	}
	return nil
}

// compare checks a parallel tally against the sequential one.
func compare(got, want *tally) string {
	if got.Counts != want.Counts {
		return fmt.Sprintf("counts %v differ from the sequential run's %v", got.Counts, want.Counts)
	}
	// Rounding errors grow with the partial sums, which wander like a
	// random walk of unit steps, so the scale is at least √pairs.
	scale := math.Sqrt(float64(want.pairs()))
	if !near(got.SX, want.SX, scale) || !near(got.SY, want.SY, scale) {
		return fmt.Sprintf("sums %.15e, %.15e differ from the sequential run's %.15e, %.15e by more than %g", got.SX, got.SY, want.SX, want.SY, sumTolerance)
	}
	return "ok"
}

// near reports whether a is within sumTolerance of b, relative to |b| or
// to scale if that is larger.
func near(a, b, scale float64) bool {
	return math.Abs(a-b) <= sumTolerance*max(math.Abs(b), scale)
}

func printTally(w io.Writer, t *tally) {
	fmt.Fprintf(w, "ep: %d Gaussian pairs, sums %.15e %.15e, counts", t.pairs(), t.SX, t.SY)
	for _, c := range t.Counts {
		fmt.Fprintf(w, " %d", c)
	}
	fmt.Fprintln(w)
}
