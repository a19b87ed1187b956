// Command sor is red-black successive over-relaxation as the TreadMarks
// study ran it: a rows × cols float32 matrix kept as a red and a black array
// of rows × cols/2, each rank updating one band of rows, with a barrier after
// each half-iteration. Run it with svmf run -np N sor [flags]; with -seq it
// runs alone, without shared memory, for the sequential time.
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
	rows, cols, iters int
	nonzero           bool
}

func (p params) variant() string { return map[bool]string{false: "zero", true: "nonzero"}[p.nonzero] }

func (p params) String() string {
	return fmt.Sprintf("%d × %d, %d iterations", p.rows, p.cols, p.iters)
}

func main() {
	var p params
	flag.IntVar(&p.rows, "rows", 1024, "matrix rows")
	flag.IntVar(&p.cols, "cols", 3072, "matrix columns (even)")
	flag.IntVar(&p.iters, "iter", 50, "iterations")
	flag.BoolVar(&p.nonzero, "nonzero", false, "start with every element nonzero (SOR-NonZero) instead of edges 1, interior 0")
	seq := flag.Bool("seq", false, "run sequentially, without shared memory")
	check := flag.Bool("check", true, "compare the result with a sequential run")
	flag.Parse()
	if p.rows < 3 || p.cols < 4 || p.cols%2 != 0 || p.iters < 1 {
		fmt.Fprintf(os.Stderr, "sor: %d × %d matrix, %d iterations: want at least 3 × 4, an even column count and 1 iteration\n", p.rows, p.cols, p.iters)
		os.Exit(2)
	}
	r := report.Result{Program: "sor", Variant: p.variant(), Params: p.String(), Check: "ok"}
	if *seq {
		start := time.Now()
		sequential(p)
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

// update computes rows [lo, hi) of dst from src, the other color, keeping
// the first and last column.
func update(dst, src []float32, w, lo, hi int) {
	for i := lo; i < hi; i++ {
		up, row, down := src[(i-1)*w:i*w], src[i*w:(i+1)*w], src[(i+1)*w:(i+2)*w]
		out := dst[i*w : (i+1)*w]
		for j := 1; j < w-1; j++ {
			out[j] = (up[j] + down[j] + row[j-1] + row[j+1]) * 0.25
		}
	}
}

func sequential(p params) (red, black []float32) {
	w := p.cols / 2
	red, black = make([]float32, p.rows*w), make([]float32, p.rows*w)
	for i := range p.rows {
		for j := range w {
			red[i*w+j], black[i*w+j] = initial(p, 0, i, j), initial(p, 1, i, j)
		}
	}
	for range p.iters {
		update(red, black, w, 1, p.rows-1)
		update(black, red, w, 1, p.rows-1)
	}
	return red, black
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
	lo, hi := me*p.rows/np, (me+1)*p.rows/np
	for i := lo; i < hi; i++ {
		for j := range w {
			red[i*w+j], black[i*w+j] = initial(p, 0, i, j), initial(p, 1, i, j)
		}
	}
	if err := n.Barrier(0); err != nil {
		return err
	}
	before := n.Stats()
	start := time.Now()
	first, last := max(lo, 1), min(hi, p.rows-1)
	for range p.iters {
		update(red, black, w, first, last)
		if err := n.Barrier(0); err != nil {
			return err
		}
		update(black, red, w, first, last)
		if err := n.Barrier(0); err != nil {
			return err
		}
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
