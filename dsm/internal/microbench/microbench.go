// Package microbench holds the ranks' side of SVM's microbenchmarks: each
// times one kind of operation (a fault, a diff fetch, a lock acquire, a
// barrier) n times in a job and reports nanoseconds per operation. The
// engine's benchmarks run them with the engine in the test process; svmd's
// run them through daemons on one node and on two, side by side.
package microbench

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/dsm"
)

// Sink keeps the benchmarks' reads from being optimised away.
var Sink byte

// Names are the microbenchmarks, with the fewest ranks each needs.
var Names = map[string]int{
	"read-fault": 2, "write-fault": 2, "remote-fetch": 2, "lock-local": 2,
	"lock-remote": 2, "lock-contended": 2, "fetch-add": 2, "barrier": 2,
}

// Run runs microbenchmark name for n operations as this rank of the job,
// and returns rank 0's nanoseconds per operation (other ranks: 0).
func Run(node *dsm.Node, name string, n int) (float64, error) {
	if _, ok := Names[name]; !ok {
		return 0, fmt.Errorf("unknown microbenchmark %q", name)
	}
	if n < 1 {
		return 0, fmt.Errorf("%d operations", n)
	}
	ps := node.PageSize()
	pages := min(n, 2048) // a working set; rounds repeat it until n
	a, err := node.Alloc(pages * ps)
	if err != nil {
		return 0, err
	}
	mem := dsm.Bytes(a, pages*ps)
	var elapsed time.Duration
	var sink byte
	switch name {
	case "read-fault":
		if node.Rank() != 0 {
			break
		}
		for i := range pages {
			sink += mem[i*ps] // first touch: the page enters the page cache
		}
		for done := 0; done < n; done += pages {
			k := min(pages, n-done)
			if err := unix.Madvise(mem[:k*ps], unix.MADV_DONTNEED); err != nil {
				return 0, err
			}
			start := time.Now()
			for i := range k {
				sink += mem[i*ps]
			}
			elapsed += time.Since(start)
		}
	case "write-fault":
		for done := 0; done < n; done += pages {
			k := min(pages, n-done)
			if node.Rank() == 0 {
				for i := range k {
					sink += mem[i*ps] // mapped
				}
			}
			// Pages unchanged through three intervals turn cold: protected.
			for range 3 {
				if err := node.Barrier(0); err != nil {
					return 0, err
				}
			}
			if node.Rank() == 0 {
				start := time.Now()
				for i := range k {
					mem[i*ps] = byte(done + i + 1)
				}
				elapsed += time.Since(start)
			}
			if err := node.Barrier(0); err != nil {
				return 0, err
			}
		}
	case "remote-fetch":
		for done, round := 0, 1; done < n; done, round = done+pages, round+1 {
			k := min(pages, n-done)
			val := func(i int) byte { return byte(i*3 + round) } // differs every round
			if node.Rank() == 1 {
				for i := range k {
					mem[i*ps] = val(i)
				}
			}
			if err := node.Barrier(0); err != nil {
				return 0, err
			}
			if node.Rank() == 0 {
				start := time.Now()
				for i := range k {
					if mem[i*ps] != val(i) {
						return 0, fmt.Errorf("page %d: read %d, want %d", i, mem[i*ps], val(i))
					}
				}
				elapsed += time.Since(start)
			}
			if err := node.Barrier(1); err != nil {
				return 0, err
			}
		}
	case "lock-local":
		if node.Rank() == 0 {
			start := time.Now()
			for range n {
				if err := node.Lock(0); err != nil { // rank 0 manages lock 0
					return 0, err
				}
				if err := node.Unlock(0); err != nil {
					return 0, err
				}
			}
			elapsed = time.Since(start)
		}
	case "lock-remote":
		const locks = 512
		for done := 0; done < n; done += locks {
			k := min(locks, n-done)
			if node.Rank() == 1 { // rank 1 holds every lock's token
				for id := range k {
					if err := node.Lock(id); err != nil {
						return 0, err
					}
					if err := node.Unlock(id); err != nil {
						return 0, err
					}
				}
			}
			if err := node.Barrier(0); err != nil {
				return 0, err
			}
			if node.Rank() == 0 {
				start := time.Now()
				for id := range k {
					if err := node.Lock(id); err != nil {
						return 0, err
					}
					if err := node.Unlock(id); err != nil {
						return 0, err
					}
				}
				elapsed += time.Since(start)
			}
			if err := node.Barrier(1); err != nil {
				return 0, err
			}
		}
	case "lock-contended":
		counter := dsm.Slice[int64](a, 1)
		if err := node.Barrier(0); err != nil {
			return 0, err
		}
		mine := n / node.NProcs()
		if node.Rank() < n%node.NProcs() {
			mine++
		}
		start := time.Now()
		for range mine {
			if err := node.Lock(7); err != nil {
				return 0, err
			}
			counter[0]++
			if err := node.Unlock(7); err != nil {
				return 0, err
			}
		}
		if err := node.Barrier(1); err != nil {
			return 0, err
		}
		elapsed = time.Since(start)
		if node.Rank() == 0 && counter[0] != int64(n) {
			return 0, fmt.Errorf("counter %d after %d acquisitions", counter[0], n)
		}
	case "fetch-add":
		// What a self-scheduled loop pays per chunk: N ranks take tickets
		// from one counter (kept by rank 1's engine) until n are taken;
		// the time is per ticket, all ranks together. Beside
		// lock-contended, the lock-protected shared word it replaces.
		if err := node.Barrier(0); err != nil {
			return 0, err
		}
		start := time.Now()
		for {
			v, err := node.FetchAdd(1, 1)
			if err != nil {
				return 0, err
			}
			if v >= int64(n) {
				break
			}
		}
		if err := node.Barrier(1); err != nil {
			return 0, err
		}
		elapsed = time.Since(start)
	case "barrier":
		start := time.Now()
		for range n {
			if err := node.Barrier(0); err != nil {
				return 0, err
			}
		}
		elapsed = time.Since(start)
	}
	Sink = sink
	if node.Rank() != 0 {
		return 0, nil
	}
	return float64(elapsed.Nanoseconds()) / float64(n), nil
}
