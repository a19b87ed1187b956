// Command sor is red-black successive over-relaxation as the TreadMarks
// study ran it: a rows × cols float32 matrix kept as a red and a black array
// of rows × cols/2, each rank updating one band of rows, with a barrier after
// each half-iteration. Run it with svmf run -np N sor [flags]; with -seq it
// runs alone, without shared memory, for the sequential time.
//
// With -check, rank 0 also computes the result sequentially and compares
// every element: red-black updates read only the other color, so the
// parallel result must equal the sequential one bit for bit.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/svmcluster/svm/dsm"
)

type params struct {
	rows, cols, iters int
	nonzero           bool
}

func main() {
	var p params
	flag.IntVar(&p.rows, "rows", 1024, "matrix rows")
	flag.IntVar(&p.cols, "cols", 3072, "matrix columns (even)")
	flag.IntVar(&p.iters, "iter", 50, "iterations")
	flag.BoolVar(&p.nonzero, "nonzero", false, "start with every element nonzero (SOR-NonZero) instead of edges 1, interior 0")
	seq := flag.Bool("seq", false, "run sequentially, without shared memory")
	check := flag.Bool("check", false, "compare the result with a sequential run")
	flag.Parse()
	if p.rows < 3 || p.cols < 4 || p.cols%2 != 0 || p.iters < 1 {
		fmt.Fprintf(os.Stderr, "sor: %d × %d matrix, %d iterations: want at least 3 × 4, an even column count and 1 iteration\n", p.rows, p.cols, p.iters)
		os.Exit(2)
	}
	if *seq {
		start := time.Now()
		red, black := sequential(p)
		fmt.Printf("sor sequential: %d × %d, %d iterations: %.3f s (checksum %.6g)\n", p.rows, p.cols, p.iters, time.Since(start).Seconds(), checksum(red, black))
		return
	}
	if err := parallel(p, *check); err != nil {
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

func checksum(red, black []float32) float64 {
	var s float64
	for i := range red {
		s += float64(red[i]) + float64(black[i])
	}
	return s
}

func parallel(p params, check bool) error {
	n, err := dsm.Join(context.Background())
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
	if err := report(n, p, took, before, after); err != nil {
		return err
	}
	if check && me == 0 {
		sr, sb := sequential(p)
		for i := range sr {
			if math.Float32bits(sr[i]) != math.Float32bits(red[i]) || math.Float32bits(sb[i]) != math.Float32bits(black[i]) {
				return fmt.Errorf("element %d differs from the sequential run: red %v/%v, black %v/%v", i, red[i], sr[i], black[i], sb[i])
			}
		}
		fmt.Println("check: the result equals the sequential run's")
	}
	return n.Barrier(0)
}

// report gathers every rank's counters for the timed part in shared memory
// and rank 0 prints the totals.
func report(n *dsm.Node, p params, took time.Duration, before, after dsm.Stats) error {
	const fields = 8
	a, err := n.Alloc(8 * fields * n.NProcs())
	if err != nil {
		return err
	}
	all := dsm.Slice[int64](a, fields*n.NProcs())
	mine := all[fields*n.Rank() : fields*(n.Rank()+1)]
	copy(mine, []int64{
		after.ReadFaults - before.ReadFaults, after.WriteFaults - before.WriteFaults,
		after.DiffsCreated - before.DiffsCreated, after.DiffsApplied - before.DiffsApplied,
		after.MessagesSent - before.MessagesSent, after.BytesSent - before.BytesSent,
		after.Barriers - before.Barriers, int64(took),
	})
	if err := n.Barrier(0); err != nil {
		return err
	}
	if n.Rank() != 0 {
		return nil
	}
	var sum [fields]int64
	for r := range n.NProcs() {
		for k := range fields {
			sum[k] += all[fields*r+k]
		}
	}
	variant := map[bool]string{false: "SOR-Zero", true: "SOR-NonZero"}[p.nonzero]
	fmt.Printf("sor %s: %d × %d, %d iterations on %d ranks: %.3f s\n", variant, p.rows, p.cols, p.iters, n.NProcs(), took.Seconds())
	fmt.Printf("all ranks: %d read faults, %d write faults, %d diffs created, %d applied, %d messages, %.1f KB\n",
		sum[0], sum[1], sum[2], sum[3], sum[4], float64(sum[5])/1024)
	return nil
}
