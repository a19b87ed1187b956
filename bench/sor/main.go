// Command sor is red-black successive over-relaxation as the TreadMarks
// study ran it: a rows × cols float32 matrix kept as a red and a black array
// of rows × cols/2, each rank updating one band of rows, with a barrier after
// each half-iteration. The first iterations (-warmup) are not measured, as
// the study excluded its first. Run it with svmf run -np N sor [flags]; with
// -seq it runs alone, without shared memory, for the sequential time.
//
// The matrix is a checkerboard: element (i, c) is red when i+c is even. Row i
// of the red array holds the red elements of matrix row i, so red[i][j] is
// column 2j+i%2 and its left and right neighbours are black[i][j] and
// black[i][j-1] (even rows) or black[i][j+1] (odd rows); black likewise with
// the parities swapped.
//
// Rank 0 checks the result against a sequential run: red-black updates read
// only the other color, so the parallel result must equal the sequential one
// bit for bit. -check=false skips that (it costs rank 0 a sequential run).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/svmcluster/svm/bench/internal/report"
	"github.com/svmcluster/svm/dsm"
)

type params struct {
	rows, cols, iters, warmup int
	nonzero                   bool
}

func (p params) variant() string { return map[bool]string{false: "zero", true: "nonzero"}[p.nonzero] }

func (p params) String() string {
	return fmt.Sprintf("%d × %d, %d iterations", p.rows, p.cols, p.iters)
}

func main() {
	var p params
	flag.IntVar(&p.rows, "rows", 1024, "matrix rows")
	flag.IntVar(&p.cols, "cols", 3072, "matrix columns (even)")
	flag.IntVar(&p.iters, "iter", 50, "iterations measured")
	flag.IntVar(&p.warmup, "warmup", 1, "iterations run before measuring")
	flag.BoolVar(&p.nonzero, "nonzero", false, "start with every element nonzero (SOR-NonZero) instead of edges 1, interior 0")
	seq := flag.Bool("seq", false, "run sequentially, without shared memory")
	check := flag.Bool("check", true, "compare the result with a sequential run")
	flag.Parse()
	if p.rows < 3 || p.cols < 4 || p.cols%2 != 0 || p.iters < 1 || p.warmup < 0 {
		fmt.Fprintf(os.Stderr, "sor: %d × %d matrix, %d iterations after %d: want at least 3 × 4, an even column count, 1 iteration and no negative warm-up\n", p.rows, p.cols, p.iters, p.warmup)
		os.Exit(2)
	}
	r := report.Result{Program: "sor", Variant: p.variant(), Params: p.String(), Check: "ok"}
	if *seq {
		red, black := initialArrays(p)
		iterate(red, black, p.cols/2, 1, p.rows-1, p.warmup)
		start := time.Now()
		iterate(red, black, p.cols/2, 1, p.rows-1, p.iters)
		r.Seconds = time.Since(start).Seconds()
		report.Sequential(r)
		return
	}
	if err := parallel(p, *check, r); err != nil {
		fmt.Fprintln(os.Stderr, "sor:", err)
		os.Exit(1)
	}
}

func initial(p params, color, i, j int) float32 {
	w := p.cols / 2
	switch {
	case p.nonzero:
		return 1 + float32((i*7+j*13+color)%97)/97
	case i == 0 || i == p.rows-1 || j == 0 || j == w-1:
		return 1
	}
	return 0
}

// update computes rows [lo, hi) of dst, of color dstColor (0 red, 1 black),
// from src, the other color, keeping the first and last column.
func update(dst, src []float32, dstColor, w, lo, hi int) {
	for i := lo; i < hi; i++ {
		up, row, down := src[(i-1)*w:i*w], src[i*w:(i+1)*w], src[(i+1)*w:(i+2)*w]
		out := dst[i*w : (i+1)*w]
		if (i+dstColor)%2 == 0 { // the other neighbour in the row is on the left
			for j := 1; j < w-1; j++ {
				out[j] = (up[j] + down[j] + row[j-1] + row[j]) * 0.25
			}
		} else {
			for j := 1; j < w-1; j++ {
				out[j] = (up[j] + down[j] + row[j] + row[j+1]) * 0.25
			}
		}
	}
}

// iterate runs n iterations over rows [lo, hi): red, then black.
func iterate(red, black []float32, w, lo, hi, n int) {
	for range n {
		update(red, black, 0, w, lo, hi)
		update(black, red, 1, w, lo, hi)
	}
}

func initialArrays(p params) (red, black []float32) {
	w := p.cols / 2
	red, black = make([]float32, p.rows*w), make([]float32, p.rows*w)
	for i := range p.rows {
		for j := range w {
			red[i*w+j], black[i*w+j] = initial(p, 0, i, j), initial(p, 1, i, j)
		}
	}
	return red, black
}

// sequential returns the arrays after every iteration, warm-up included.
func sequential(p params) (red, black []float32) {
	red, black = initialArrays(p)
	iterate(red, black, p.cols/2, 1, p.rows-1, p.warmup+p.iters)
	return red, black
}

// band is rank me's rows [lo, hi) of n ranks. Bands begin at odd rows: with
// the study's rows of one and a half pages, the last row of one band and the
// first of the next then share a page, and the page on the far side of a
// boundary row holds only rows of its own band. A neighbour reading the
// boundary row takes the writer's diffs of two pages, as the study counts,
// and none of a row it does not read. (The study's SOR-NonZero moved 8 853 KB,
// a boundary row's 6 KB a read; bands at even rows move 8 KB a read.)
func band(me, n, rows int) (lo, hi int) {
	lo, hi = me*rows/n, (me+1)*rows/n
	if me > 0 {
		lo |= 1
	}
	if me < n-1 {
		hi |= 1
	}
	return lo, hi
}

func parallel(p params, check bool, r report.Result) error {
	n, err := dsm.Join(context.Background(), dsm.Funneled()) // one goroutine writes shared memory
	if err != nil {
		return err
	}
	defer n.Close()
	w := p.cols / 2
	size := p.rows * w * 4
	ra, err := n.Alloc(size)
	if err != nil {
		return err
	}
	ba, err := n.Alloc(size)
	if err != nil {
		return err
	}
	red, black := dsm.Slice[float32](ra, p.rows*w), dsm.Slice[float32](ba, p.rows*w)
	np, me := n.NProcs(), n.Rank()
	lo, hi := band(me, np, p.rows)
	for i := lo; i < hi; i++ {
		for j := range w {
			red[i*w+j], black[i*w+j] = initial(p, 0, i, j), initial(p, 1, i, j)
		}
	}
	if err := n.Barrier(0); err != nil {
		return err
	}
	first, last := max(lo, 1), min(hi, p.rows-1)
	iterations := func(count int) error {
		for range count {
			update(red, black, 0, w, first, last)
			if err := n.Barrier(0); err != nil {
				return err
			}
			update(black, red, 1, w, first, last)
			if err := n.Barrier(0); err != nil {
				return err
			}
		}
		return nil
	}
	if err := iterations(p.warmup); err != nil {
		return err
	}
	before := n.Stats()
	start := time.Now()
	if err := iterations(p.iters); err != nil {
		return err
	}
	took := time.Since(start)
	after := n.Stats()
	if check && me == 0 {
		r.Check = compare(p, red, black)
	}
	if err := report.Parallel(n, 1, r, took, before, after); err != nil {
		return err
	}
	if r.Check != "ok" {
		return fmt.Errorf("check: %s", r.Check)
	}
	return nil
}

// compare checks the shared result against a sequential run.
func compare(p params, red, black []float32) string {
	sr, sb := sequential(p)
	for i := range sr {
		if math.Float32bits(sr[i]) != math.Float32bits(red[i]) || math.Float32bits(sb[i]) != math.Float32bits(black[i]) {
			return fmt.Sprintf("element %d differs from the sequential run: red %v/%v, black %v/%v", i, red[i], sr[i], black[i], sb[i])
		}
	}
	return "ok"
}
