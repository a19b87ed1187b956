// Command fft is the NAS FT kernel — a 3-D FFT solving a diffusion equation
// in Fourier space — as the TreadMarks study's TreadMarks version ran it: an
// n × n × n array of complex doubles in shared memory, distributed by planes,
// each rank doing the 1-D FFTs along the two dimensions local to its planes,
// then, after a barrier, a transpose in which it reads from the other ranks'
// planes the rows it needs for the third dimension, and the 1-D FFTs along
// that one. Run it with svmf run -np N fft [flags]; with -seq it runs alone,
// without shared memory, for the sequential time.
//
// The steps are NAS FT's: the initial conditions from NAS's pseudo-random
// generator (seed 314159265, multiplier 5^13 modulo 2^46), a forward 3-D FFT,
// then per iteration the evolve step (multiplying every element by its
// exponential factor exp(-4απ²|k|²), α = 1e-6), an inverse 3-D FFT and NAS's
// checksum of 1024 elements. The input is deterministic. The timed part is
// the forward FFT and the iterations, as NAS FT times them; generating the
// initial conditions (each rank its own planes) and the table of exponential
// factors is excluded, as the study excluded distributing the initial values.
//
// Two shared arrays hold the data between the transposes: x, laid out
// [z][y][x] and distributed by z, and y, laid out [y][z][x] and distributed
// by y. The transpose exchanges the plane and row indices and keeps rows
// whole, so a rank reads from every other rank a contiguous block of rows of
// each of its planes: at 64³ on 8 ranks two whole pages per plane. The forward
// FFT goes along x and y in x, transposes into y and goes along z; the inverse
// goes along z and x in y, transposes back into x and goes along y. Each rank
// keeps its part of the transformed initial condition and of the factors in
// private memory: only their owner touches them. Each rank writes its part of
// every checksum into its own page of a third shared array, which rank 0 adds
// up after the last iteration. The synchronization is barrier 0: before each
// transpose, and at the end of each iteration, so that no rank evolves into y
// while another still reads it.
//
// Rank 0 checks the per-iteration checksums against a sequential run: they
// must agree to a relative error of 1e-12 (the arrays are computed by the same
// operations in both, but a job sums the checksum in a different order); the
// sequential run is done in-process, after the timed part. At
// n = 64 the checksums must also match NAS's published class S values to
// NAS's own tolerance, 1e-12, and -seq checks those too. -check=false skips
// the comparison with the sequential run.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"time"

	"github.com/svmcluster/svm/bench/internal/nas"
	"github.com/svmcluster/svm/bench/internal/report"
	"github.com/svmcluster/svm/dsm"
)

type params struct {
	n, iters int
}

func (p params) String() string {
	return fmt.Sprintf("%d × %d × %d complex doubles, %d iterations", p.n, p.n, p.n, p.iters)
}

func main() {
	var p params
	flag.IntVar(&p.n, "n", 64, "side of the cube (a power of two, 2 to 128)")
	flag.IntVar(&p.iters, "iter", 6, "iterations")
	seq := flag.Bool("seq", false, "run sequentially, without shared memory")
	check := flag.Bool("check", true, "compare the checksums with a sequential run")
	flag.Parse()
	if p.n < 2 || p.n > 128 || p.n&(p.n-1) != 0 || p.iters < 1 {
		fmt.Fprintf(os.Stderr, "fft: -n %d -iter %d: want a power of two from 2 to 128 and at least 1 iteration\n", p.n, p.iters)
		os.Exit(2)
	}
	r := report.Result{Program: "fft", Variant: "", Params: p.String()}
	if *seq {
		sums, took := sequential(p)
		r.Seconds = took.Seconds()
		printSums(sums)
		r.Check = compareNAS(p, sums)
		report.Sequential(r)
		if r.Check != "ok" {
			fmt.Fprintln(os.Stderr, "fft: check:", r.Check)
			os.Exit(1)
		}
		return
	}
	if err := parallel(p, *check, r); err != nil {
		fmt.Fprintln(os.Stderr, "fft:", err)
		os.Exit(1)
	}
}

// slab is one rank's part of the computation: planes [lo, hi) of the whole
// arrays x and y, and its private data for the same planes of y.
type slab struct {
	n, lo, hi int
	x, y      []complex128
	u0        []complex128 // the transformed initial condition, laid out as y
	factors   []float64    // the exponential factors, laid out as y
	plan      *plan
}

func newSlab(n, lo, hi int, x, y []complex128) *slab {
	s := &slab{n: n, lo: lo, hi: hi, x: x, y: y, u0: make([]complex128, (hi-lo)*n*n), plan: newPlan(n)}
	s.factors = make([]float64, 0, (hi-lo)*n*n)
	ap := -4 * alpha * math.Pi * math.Pi
	for j := lo; j < hi; j++ {
		for k := range n {
			for i := range n {
				s.factors = append(s.factors, math.Exp(ap*(wave(i, n)+wave(j, n)+wave(k, n))))
			}
		}
	}
	return s
}

// alpha is NAS FT's diffusion constant.
const alpha = 1e-6

// wave is the square of the wave number of index i of n.
func wave(i, n int) float64 {
	k := (i+n/2)%n - n/2
	return float64(k * k)
}

// forward transforms the initial conditions in x into u0; barrier orders the
// transpose after every rank's first two dimensions.
func (s *slab) forward(barrier func() error) error {
	s.plan.rows(s.x, s.lo, s.hi, false)
	s.plan.columns(s.x, s.lo, s.hi, false)
	if err := barrier(); err != nil {
		return err
	}
	transpose(s.y, s.x, s.n, s.lo, s.hi)
	s.plan.columns(s.y, s.lo, s.hi, false)
	copy(s.u0, s.y[s.lo*s.n*s.n:s.hi*s.n*s.n])
	return nil
}

// iteration evolves u0 by one step into y, transforms y back into x and
// returns this slab's part of the checksum, not yet divided by n³.
func (s *slab) iteration(barrier func() error) (complex128, error) {
	own := s.y[s.lo*s.n*s.n : s.hi*s.n*s.n]
	for i, f := range s.factors {
		s.u0[i] = complex(real(s.u0[i])*f, imag(s.u0[i])*f)
		own[i] = s.u0[i]
	}
	s.plan.columns(s.y, s.lo, s.hi, true)
	s.plan.rows(s.y, s.lo, s.hi, true)
	if err := barrier(); err != nil {
		return 0, err
	}
	transpose(s.x, s.y, s.n, s.lo, s.hi)
	s.plan.columns(s.x, s.lo, s.hi, true)
	return s.checksum(), nil
}

// checksum sums NAS FT's 1024 sample elements of x that lie in this slab.
func (s *slab) checksum() complex128 {
	var sum complex128
	n := s.n
	for j := 1; j <= 1024; j++ {
		i, k, l := j%n, 3*j%n, 5*j%n
		if l >= s.lo && l < s.hi {
			sum += s.x[(l*n+k)*n+i]
		}
	}
	return sum
}

// transpose sets planes [lo, hi) of dst from src with the plane and row
// indices exchanged, dst[p][q][·] = src[q][p][·], reading src plane by plane.
func transpose(dst, src []complex128, n, lo, hi int) {
	for q := range n {
		for p := lo; p < hi; p++ {
			copy(dst[(p*n+q)*n:(p*n+q+1)*n], src[(q*n+p)*n:(q*n+p+1)*n])
		}
	}
}

// initial fills planes [lo, hi) of x with NAS FT's initial conditions: one
// stream of the generator over the array in memory order, real part first.
func initial(x []complex128, n, lo, hi int) {
	v := nas.Mul(nas.Seed, nas.Pow(nas.A, uint64(2*n*n*lo)))
	for i := lo * n * n; i < hi*n*n; i++ {
		v = nas.Mul(nas.A, v)
		re := nas.Float(v)
		v = nas.Mul(nas.A, v)
		x[i] = complex(re, nas.Float(v))
	}
}

// sequential runs the same steps on one slab of the whole cube, and returns
// the checksums and the time of the part a job times.
func sequential(p params) ([]complex128, time.Duration) {
	size := p.n * p.n * p.n
	x, y := make([]complex128, size), make([]complex128, size)
	initial(x, p.n, 0, p.n)
	s := newSlab(p.n, 0, p.n, x, y)
	none := func() error { return nil }
	start := time.Now()
	_ = s.forward(none) // none never fails
	sums := make([]complex128, p.iters)
	for it := range sums {
		sum, _ := s.iteration(none)
		sums[it] = sum / complex(float64(size), 0)
	}
	return sums, time.Since(start)
}

func parallel(p params, check bool, r report.Result) error {
	node, err := dsm.Join(context.Background(), dsm.Funneled()) // one goroutine writes shared memory
	if err != nil {
		return err
	}
	defer node.Close()
	np, me := node.NProcs(), node.Rank()
	size := p.n * p.n * p.n
	xa, err := node.Alloc(size * 16)
	if err != nil {
		return fmt.Errorf("allocating x: %w", err)
	}
	ya, err := node.Alloc(size * 16)
	if err != nil {
		return fmt.Errorf("allocating y: %w", err)
	}
	// Each rank's parts of the checksums fill whole pages of their own, so
	// that writing them needs no other rank's writes.
	ps := node.PageSize()
	stride := (p.iters*16 + ps - 1) / ps * ps / 16
	pa, err := node.Alloc(np * stride * 16)
	if err != nil {
		return fmt.Errorf("allocating the checksums: %w", err)
	}
	x, y := dsm.Slice[complex128](xa, size), dsm.Slice[complex128](ya, size)
	parts := dsm.Slice[complex128](pa, np*stride) // [rank][iteration]
	lo, hi := me*p.n/np, (me+1)*p.n/np
	initial(x, p.n, lo, hi)
	s := newSlab(p.n, lo, hi, x, y)
	barrier := func() error { return node.Barrier(0) }
	if err := barrier(); err != nil {
		return err
	}
	before := node.Stats()
	start := time.Now()
	if err := s.forward(barrier); err != nil {
		return err
	}
	for it := range p.iters {
		sum, err := s.iteration(barrier)
		if err != nil {
			return err
		}
		parts[me*stride+it] = sum
		// Nobody may evolve into y while another rank still reads it.
		if err := barrier(); err != nil {
			return err
		}
	}
	var sums []complex128
	if me == 0 {
		sums = make([]complex128, p.iters)
		for it := range sums {
			for rk := range np {
				sums[it] += parts[rk*stride+it]
			}
			sums[it] /= complex(float64(size), 0)
		}
	}
	took := time.Since(start)
	after := node.Stats()
	r.Check = "ok"
	if me == 0 {
		printSums(sums)
		if check {
			r.Check = compareSequential(p, sums)
		}
		if r.Check == "ok" {
			r.Check = compareNAS(p, sums)
		}
	}
	if err := report.Parallel(node, 63, r, took, before, after); err != nil {
		return err
	}
	if r.Check != "ok" {
		return fmt.Errorf("check: %s", r.Check)
	}
	return nil
}

func printSums(sums []complex128) {
	for it, sum := range sums {
		fmt.Printf("fft: iteration %d checksum %.12e %.12e\n", it+1, real(sum), imag(sum))
	}
}

// tolerance is the relative error allowed in a checksum, NAS FT's epsilon.
const tolerance = 1e-12

// compareSequential checks the job's checksums against a sequential run.
func compareSequential(p params, sums []complex128) string {
	want, _ := sequential(p)
	return compare(sums, want, "the sequential run's")
}

// classS are NAS FT's published checksums for class S: 64³, iterations 1 to 6.
var classS = []complex128{
	complex(5.546087004964e+02, 4.845363331978e+02),
	complex(5.546385409189e+02, 4.865304269511e+02),
	complex(5.546148406171e+02, 4.883910722336e+02),
	complex(5.545423607415e+02, 4.901273169046e+02),
	complex(5.544255039624e+02, 4.917475857993e+02),
	complex(5.542683411902e+02, 4.932597244941e+02),
}

// compareNAS checks the checksums against NAS's class S values when the cube
// is class S's; the checksum of an iteration does not depend on how many
// follow it.
func compareNAS(p params, sums []complex128) string {
	if p.n != 64 {
		return "ok"
	}
	k := min(len(sums), len(classS))
	return compare(sums[:k], classS[:k], "NAS's class S")
}

func compare(got, want []complex128, what string) string {
	for it := range got {
		if e := cmplx.Abs(got[it]-want[it]) / cmplx.Abs(want[it]); !(e <= tolerance) {
			return fmt.Sprintf("iteration %d checksum %v differs from %s %v (relative error %.1e, tolerance %.0e)", it+1, got[it], what, want[it], e, tolerance)
		}
	}
	return "ok"
}
