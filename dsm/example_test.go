package dsm_test

import (
	"context"
	"fmt"
	"log"

	"github.com/svmcluster/svm/dsm"
)

// A whole program: each rank fills its band of a shared array, adds its
// number to a counter under a lock, and after a barrier rank 0 reads what
// every rank wrote. Build it and run it as a job of 4 ranks with
// bin/svmf run -np 4 ./prog: dsm.Join reads the job from the environment
// svmf run gives each rank. (TestExample runs this function as such a
// job: outside one, Join fails.)
func Example() {
	node, err := dsm.Join(context.Background(), dsm.Funneled())
	if err != nil {
		log.Fatal(err)
	}
	defer node.Close()

	// Collective: every rank allocates in the same order and gets the
	// same address.
	const n = 1 << 16
	a, err := node.Alloc(n * 8)
	if err != nil {
		log.Fatal(err)
	}
	c, err := node.Alloc(8)
	if err != nil {
		log.Fatal(err)
	}
	xs, counter := dsm.Slice[float64](a, n), dsm.Slice[int64](c, 1)

	band := (n + node.NProcs() - 1) / node.NProcs()
	for i := node.Rank() * band; i < min(n, (node.Rank()+1)*band); i++ {
		xs[i] = float64(i)
	}
	if err := node.Lock(0); err != nil {
		log.Fatal(err)
	}
	counter[0] += int64(node.Rank() + 1)
	if err := node.Unlock(0); err != nil {
		log.Fatal(err)
	}
	// What every rank wrote before the barrier is visible to all after it.
	if err := node.Barrier(0); err != nil {
		log.Fatal(err)
	}
	if node.Rank() == 0 {
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		fmt.Printf("%d ranks: sum %.0f, counter %d\n", node.NProcs(), sum, counter[0])
	}
}
