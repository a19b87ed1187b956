// Command qsort is quicksort as the TreadMarks version of the TreadMarks vs
// PVM study runs it (section 3.7). Run it with svmf run -np N qsort [flags];
// with -seq it runs alone, without shared memory, for the sequential time.
//
// The array and a work queue of subarray descriptors are shared; the queue
// (a stack of descriptors and a count of elements in their final place) is
// guarded by a lock. A worker takes a subarray off the queue and releases
// the lock. While the subarray is longer than -threshold it partitions it,
// then takes the lock again to put the larger part back on the queue, and
// goes on with the smaller; a subarray of at most -threshold elements it
// sorts with bubblesort. Every element ends as a pivot or in a bubblesorted
// subarray; a worker adds those it placed to the count at its next visit to
// the queue, and all stop when the count reaches the array's length. A
// worker that finds the queue empty polls it, sleeping between visits.
//
// The input is n integers drawn by math/rand/v2 with a fixed seed. Timed:
// the sort on every rank, to the barrier after it; not timed: drawing the
// input (rank 0 writes it into shared memory before the timed part).
//
// Rank 0 checks the result: it must equal a sorted copy of the input, so
// it is sorted and a permutation of the input. -check=false skips that.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"
	"unsafe"

	"github.com/svmcluster/svm/bench/internal/report"
	"github.com/svmcluster/svm/dsm"
)

const (
	seed      = 1995 // of the input generator
	queueLock = 0
	// The polling interval of an idle worker doubles from minWait to maxWait.
	minWait = 50 * time.Microsecond
	maxWait = 2 * time.Millisecond
)

// A task is the subarray [lo, hi).
type task struct{ lo, hi int32 }

// header is the state of the work queue; it is guarded by queueLock with
// the tasks it counts.
type header struct {
	tasks  int32 // the queue holds tasks[0..tasks-1]
	placed int32 // elements in their final place
}

// queue is the shared work queue. Its tasks are disjoint nonempty
// subarrays, so it never holds more tasks than there are elements.
type queue struct {
	h     *header
	tasks []task
}

// syncer is the part of dsm.Node the sort uses; the sequential program runs
// the same code with a lock that does nothing.
type syncer interface {
	Lock(id int) error
	Unlock(id int) error
}

// alone is the syncer of a sequential run: there is nobody to exclude.
type alone struct{}

func (alone) Lock(int) error   { return nil }
func (alone) Unlock(int) error { return nil }

func main() {
	n := flag.Int("n", 512*1024, "number of integers")
	threshold := flag.Int("threshold", 1024, "bubblesort subarrays of at most this many integers")
	seq := flag.Bool("seq", false, "run sequentially, without shared memory")
	check := flag.Bool("check", true, "compare the result with a sorted copy of the input")
	flag.Parse()
	if *n < 1 || *n > 1<<30 || *threshold < 1 {
		fmt.Fprintf(os.Stderr, "qsort: %d integers, threshold %d: want 1 to 2^30 integers and a threshold of at least 1\n", *n, *threshold)
		os.Exit(2)
	}
	r := report.Result{Program: "qsort", Variant: "", Params: fmt.Sprintf("%d integers, threshold %d", *n, *threshold), Check: "ok"}
	if *seq {
		a := input(*n)
		q := queue{h: new(header), tasks: make([]task, *n)}
		q.push(task{0, int32(*n)})
		begin := time.Now()
		if err := worker(q, a, *threshold, alone{}); err != nil {
			fmt.Fprintln(os.Stderr, "qsort:", err)
			os.Exit(1)
		}
		r.Seconds = time.Since(begin).Seconds()
		if *check {
			r.Check = compare(a)
		}
		report.Sequential(r)
		if r.Check != "ok" {
			os.Exit(1)
		}
		return
	}
	if err := parallel(*n, *threshold, *check, r); err != nil {
		fmt.Fprintln(os.Stderr, "qsort:", err)
		os.Exit(1)
	}
}

// input is the array to sort.
func input(n int) []int32 {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	a := make([]int32, n)
	for i := range a {
		a[i] = rng.Int32()
	}
	return a
}

func parallel(n, threshold int, check bool, r report.Result) error {
	node, err := dsm.Join(context.Background(), dsm.Funneled()) // one goroutine writes shared memory
	if err != nil {
		return err
	}
	defer node.Close()
	ha, err := node.Alloc(int(unsafe.Sizeof(header{})) + n*int(unsafe.Sizeof(task{})))
	if err != nil {
		return err
	}
	aa, err := node.Alloc(n * 4)
	if err != nil {
		return err
	}
	q := queue{h: &dsm.Slice[header](ha, 1)[0], tasks: dsm.Slice[task](ha+dsm.Addr(unsafe.Sizeof(header{})), n)}
	a := dsm.Slice[int32](aa, n)
	if node.Rank() == 0 {
		copy(a, input(n))
		*q.h = header{}
		q.push(task{0, int32(n)})
	}
	if err := node.Barrier(0); err != nil {
		return err
	}
	before := node.Stats()
	begin := time.Now()
	if err := worker(q, a, threshold, node); err != nil {
		return fmt.Errorf("rank %d: %w", node.Rank(), err)
	}
	if err := node.Barrier(0); err != nil {
		return err
	}
	took := time.Since(begin)
	after := node.Stats()
	if check && node.Rank() == 0 {
		r.Check = compare(a)
	}
	if err := report.Parallel(node, 63, r, took, before, after); err != nil {
		return err
	}
	if r.Check != "ok" {
		return fmt.Errorf("check: %s", r.Check)
	}
	return nil
}

// compare checks a against a sorted copy of the input.
func compare(a []int32) string {
	want := input(len(a))
	slices.Sort(want)
	for i := range want {
		if a[i] != want[i] {
			return fmt.Sprintf("element %d is %d, the sorted input has %d", i, a[i], want[i])
		}
	}
	return "ok"
}

func (q queue) push(t task) {
	q.tasks[q.h.tasks] = t
	q.h.tasks++
}

// worker sorts the subarrays it takes off the queue until every element is
// in its final place.
func worker(q queue, a []int32, threshold int, sy syncer) error {
	placed := int32(0) // by this worker, not yet counted in the header
	for {
		t, ok, err := take(q, sy, &placed, int32(len(a)))
		if err != nil || !ok {
			return err
		}
		for t.hi-t.lo > int32(threshold) {
			p := t.lo + partition(a[t.lo:t.hi])
			placed++
			keep, give := task{t.lo, p}, task{p + 1, t.hi}
			if keep.hi-keep.lo > give.hi-give.lo {
				keep, give = give, keep
			}
			if keep.lo == keep.hi {
				t = give
				continue
			}
			if err := sy.Lock(queueLock); err != nil {
				return err
			}
			q.push(give)
			q.h.placed += placed
			placed = 0
			if err := sy.Unlock(queueLock); err != nil {
				return err
			}
			t = keep
		}
		bubblesort(a[t.lo:t.hi])
		placed += t.hi - t.lo
	}
}

// take counts the elements the worker placed and takes a task off the
// queue, waiting while the queue is empty and elements remain unplaced; it
// reports false when every element is in place.
func take(q queue, sy syncer, placed *int32, n int32) (task, bool, error) {
	for wait := minWait; ; wait = min(2*wait, maxWait) {
		if err := sy.Lock(queueLock); err != nil {
			return task{}, false, err
		}
		q.h.placed += *placed
		*placed = 0
		var t task
		have := q.h.tasks > 0
		if have {
			q.h.tasks--
			t = q.tasks[q.h.tasks]
		}
		finished := q.h.placed == n
		if err := sy.Unlock(queueLock); err != nil {
			return task{}, false, err
		}
		if have || finished {
			return t, have, nil
		}
		time.Sleep(wait)
	}
}

// partition rearranges a (at least 2 elements) around its middle element
// and returns the index where that element ends: everything before it is
// no larger, everything after it no smaller.
func partition(a []int32) int32 {
	m := len(a) / 2
	a[0], a[m] = a[m], a[0]
	pivot := a[0]
	i, j := 1, len(a)-1
	for {
		for i <= j && a[i] < pivot {
			i++
		}
		for i <= j && a[j] > pivot {
			j--
		}
		if i >= j {
			break
		}
		a[i], a[j] = a[j], a[i]
		i++
		j--
	}
	a[0], a[j] = a[j], a[0]
	return int32(j)
}

func bubblesort(a []int32) {
	for n := len(a); n > 1; {
		last := 0
		for i := 1; i < n; i++ {
			if a[i] < a[i-1] {
				a[i], a[i-1] = a[i-1], a[i]
				last = i
			}
		}
		n = last
	}
}
