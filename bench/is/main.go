// Command is is the NAS integer sort kernel (IS) as the TreadMarks study ran
// it: a bucket sort that ranks 2^N keys in [0, 2^R) several times. Each rank
// holds an equal share of the keys. In each iteration it counts its keys
// into a private array of buckets; then, under a lock, adds its counts into
// a shared array of buckets; releases the lock; waits at a barrier; and
// reads the final shared counts to rank its keys, the rank of a key being
// the number of keys smaller than it (NAS's rank). Run it with svmf run -np
// N is [flags]; with -seq it runs alone, without shared memory, for the
// sequential time.
//
// The study's sizes: 2^23 keys in [0, 2^7) (IS-Small, variant "small") and
// in [0, 2^15) (IS-Large, -range-log2 15, variant "large"); other ranges are
// variant "range2^R". It ran 10 iterations, NAS's count (its PVM version
// sends 140 messages on 8 processors: 10 × 2(8−1)), the default here.
// The study's byte counts fit a shared array of 2^10 counts for IS-Small
// rather than 2^7 (PVM's 573 KB is 10 × 2(8−1) × 2^10 × 4 bytes, as its
// 18350 KB for IS-Large is with 2^15); -range-log2 10 runs that size.
//
// As in NAS IS, the keys come from NAS's generator from seed 314159265:
// key i is 2^R/4 times the sum of random numbers 4i+1 to 4i+4, truncated
// (a bell-shaped distribution), and a rank finds the start of its share by
// jumping ahead in the sequence, so the keys are the same in any job, and
// the same as NAS's (NAS class S is 2^16 keys in [0, 2^11)). Before
// iteration i, key i becomes i and key i+iterations becomes 2^R−i, as in
// NAS. Generating the keys is not timed.
//
// The shared counts must start from zero in every iteration without a
// second barrier: there are two shared arrays, used in alternate
// iterations, each with a word naming the iteration that last wrote it. The
// first rank to take the lock in an iteration finds an old iteration there
// and stores its counts instead of adding them. An array is reused two
// iterations later, after a barrier that every reader of its previous
// counts has passed.
//
// Rank 0 checks the result after the timed part: every rank's ranks must
// equal the sequential ranking, and the keys, placed at their positions in
// shared memory by every rank (NAS's full verification, untimed), must be
// the sequential sorted sequence. A rank places its keys of value k after
// the keys that earlier lock holders counted (what it found in the shared
// count before adding its own) and, among its own, in index order.
// -check=false skips that (it costs rank 0 a sequential run and two
// shared arrays of the keys' size).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/svmcluster/svm/bench/internal/nas"
	"github.com/svmcluster/svm/bench/internal/report"
	"github.com/svmcluster/svm/dsm"
)

const (
	// bucketLock guards the shared buckets.
	bucketLock = 0
)

type params struct {
	keysLog2, rangeLog2, iters int
}

func (p params) keys() int   { return 1 << p.keysLog2 }
func (p params) maxKey() int { return 1 << p.rangeLog2 }

func (p params) variant() string {
	switch p.rangeLog2 {
	case 7:
		return "small"
	case 15:
		return "large"
	}
	return fmt.Sprintf("range2^%d", p.rangeLog2)
}

func (p params) String() string {
	return fmt.Sprintf("2^%d keys in [0, 2^%d), %d iterations", p.keysLog2, p.rangeLog2, p.iters)
}

func (p params) validate() error {
	switch {
	case p.keysLog2 < 2 || p.keysLog2 > 30:
		return fmt.Errorf("-keys-log2 %d: want 2 to 30", p.keysLog2)
	case p.rangeLog2 < 2 || p.rangeLog2 > 28:
		return fmt.Errorf("-range-log2 %d: want 2 to 28", p.rangeLog2)
	case p.iters < 1 || 2*p.iters >= p.keys() || p.iters >= p.maxKey():
		return fmt.Errorf("-iter %d: want at least 1, fewer than half the keys and fewer than the key range", p.iters)
	}
	return nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("is", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var p params
	fs.IntVar(&p.keysLog2, "keys-log2", 23, "log2 of the number of keys")
	fs.IntVar(&p.rangeLog2, "range-log2", 7, "log2 of the key range: 7 is IS-Small, 15 IS-Large")
	fs.IntVar(&p.iters, "iter", 10, "ranking iterations")
	seq := fs.Bool("seq", false, "run sequentially, without shared memory")
	check := fs.Bool("check", true, "compare the result with a sequential run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "is: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := p.validate(); err != nil {
		fmt.Fprintln(stderr, "is:", err)
		return 2
	}
	r := report.Result{Program: "is", Variant: p.variant(), Params: p.String(), Check: "ok"}
	if *seq {
		s := newSequential(p)
		start := time.Now()
		s.run(p, nil)
		r.Seconds = time.Since(start).Seconds()
		r.Check = s.verify()
		report.Sequential(r)
		if r.Check != "ok" {
			fmt.Fprintln(stderr, "is: check:", r.Check)
			return 1
		}
		return 0
	}
	if err := parallel(p, *check, r); err != nil {
		fmt.Fprintln(stderr, "is:", err)
		return 1
	}
	return 0
}

// generate sets keys to NAS IS's keys first, first+1, ...: key i is
// 2^R/4 · (r(4i+1) + ... + r(4i+4)) truncated, r(j) = x(j)·2^-46, which is
// the 48-bit sum of the four states shifted right by 48−R, exactly.
func generate(p params, keys []int32, first int) {
	x := nas.Mul(nas.Seed, nas.Pow(nas.A, uint64(4*first)))
	shift := 48 - p.rangeLog2
	for j := range keys {
		var sum uint64
		for range 4 {
			x = nas.Mul(nas.A, x)
			sum += x
		}
		keys[j] = int32(sum >> shift)
	}
}

// modify makes NAS's change before iteration it to the keys first,
// first+1, ...: key it becomes it and key it+iterations becomes 2^R−it.
func modify(p params, keys []int32, first, it int) {
	for _, c := range [2][2]int{{it, it}, {it + p.iters, p.maxKey() - it}} {
		if j := c[0] - first; j >= 0 && j < len(keys) {
			keys[j] = int32(c[1])
		}
	}
}

// count counts keys into counts.
//
// count and rank are the whole kernel of both the sequential and the
// parallel run; kept out of line, both runs execute the same machine code.
// Inlined, each got its own code layout, and the two layouts differed by
// 12 % in speed with nothing of SVM's in the loop (2^25 keys, 90
// iterations, 1 rank against the sequential run).
//
//go:noinline
func count(keys, counts []int32) {
	clear(counts)
	for _, k := range keys {
		counts[k]++
	}
}

// rank sets less[k] to the number of keys smaller than k, from the final
// counts, and ranks[j] to the rank of keys[j]. It returns the number of
// keys counted.
//
//go:noinline
func rank(keys, ranks, counts, less []int32) int {
	sum := int32(0)
	for k, c := range counts {
		less[k] = sum
		sum += c
	}
	for j, k := range keys {
		ranks[j] = less[k]
	}
	return int(sum)
}

// sequential is the whole sort in one process.
type sequential struct {
	keys, ranks  []int32
	counts, less []int32
}

func newSequential(p params) *sequential {
	s := &sequential{
		keys: make([]int32, p.keys()), ranks: make([]int32, p.keys()),
		counts: make([]int32, p.maxKey()), less: make([]int32, p.maxKey()),
	}
	generate(p, s.keys, 0)
	return s
}

// run ranks the keys p.iters times, calling visit (if not nil) after each
// iteration.
func (s *sequential) run(p params, visit func(it int)) {
	for it := 1; it <= p.iters; it++ {
		modify(p, s.keys, 0, it)
		count(s.keys, s.counts)
		rank(s.keys, s.ranks, s.counts, s.less)
		if visit != nil {
			visit(it)
		}
	}
}

// sorted returns the keys placed by rank, equal keys in index order.
func (s *sequential) sorted() []int32 {
	out := make([]int32, len(s.keys))
	next := append([]int32(nil), s.less...)
	for _, k := range s.keys {
		out[next[k]] = k
		next[k]++
	}
	return out
}

// verify is NAS's full verification: the keys placed by rank are sorted.
func (s *sequential) verify() string {
	out := s.sorted()
	for i := 1; i < len(out); i++ {
		if out[i-1] > out[i] {
			return fmt.Sprintf("the keys placed by rank are out of order at position %d: %d before %d", i, out[i-1], out[i])
		}
	}
	return "ok"
}

func parallel(p params, check bool, r report.Result) error {
	n, err := dsm.Join(context.Background(), dsm.Funneled()) // one goroutine writes shared memory
	if err != nil {
		return err
	}
	defer n.Close()
	nb := p.maxKey()
	// Two shared bucket arrays, for odd and even iterations; word nb of
	// each is the iteration that last wrote it.
	var buckets [2][]int32
	for i := range buckets {
		a, err := n.Alloc(4 * (nb + 1))
		if err != nil {
			return err
		}
		buckets[i] = dsm.Slice[int32](a, nb+1)
	}
	np, me := n.NProcs(), n.Rank()
	lo, hi := me*p.keys()/np, (me+1)*p.keys()/np
	keys, ranks := make([]int32, hi-lo), make([]int32, hi-lo)
	generate(p, keys, lo)
	counts, before, less := make([]int32, nb), make([]int32, nb), make([]int32, nb)
	if err := n.Barrier(0); err != nil {
		return err
	}
	statsBefore := n.Stats()
	start := time.Now()
	for it := 1; it <= p.iters; it++ {
		modify(p, keys, lo, it)
		count(keys, counts)
		shared := buckets[it%2]
		if err := n.Lock(bucketLock); err != nil {
			return err
		}
		if int(shared[nb]) != it {
			// The first holder in this iteration: the array holds the
			// counts of two iterations ago.
			clear(before)
			copy(shared, counts)
			shared[nb] = int32(it)
		} else {
			copy(before, shared[:nb])
			for k, c := range counts {
				shared[k] += c
			}
		}
		if err := n.Unlock(bucketLock); err != nil {
			return err
		}
		if err := n.Barrier(0); err != nil {
			return err
		}
		rank(keys, ranks, shared[:nb], less)
	}
	took := time.Since(start)
	after := n.Stats()
	if check {
		r.Check, err = verify(n, p, lo, keys, ranks, before, less)
		if err != nil {
			return err
		}
	}
	if err := report.Parallel(n, 1, r, took, statsBefore, after); err != nil {
		return err
	}
	if r.Check != "ok" {
		return fmt.Errorf("check: %s", r.Check)
	}
	return nil
}

// verify is collective. Every rank writes its ranks, and its keys at their
// positions, into shared arrays; rank 0 compares them with a sequential
// run. It returns rank 0's finding ("ok" elsewhere).
func verify(n *dsm.Node, p params, lo int, keys, ranks, before, less []int32) (string, error) {
	ra, err := n.Alloc(4 * p.keys())
	if err != nil {
		return "", fmt.Errorf("check: %w (it needs 8 bytes of shared memory a key: a larger svmf run -region, or -check=false)", err)
	}
	sa, err := n.Alloc(4 * p.keys())
	if err != nil {
		return "", fmt.Errorf("check: %w (it needs 8 bytes of shared memory a key: a larger svmf run -region, or -check=false)", err)
	}
	allRanks, sorted := dsm.Slice[int32](ra, p.keys()), dsm.Slice[int32](sa, p.keys())
	copy(allRanks[lo:], ranks)
	next := make([]int32, len(less))
	for k := range less {
		next[k] = less[k] + before[k]
	}
	for _, k := range keys {
		if next[k] < 0 || int(next[k]) >= p.keys() {
			return "", fmt.Errorf("rank %d: key %d goes to position %d, outside the array: it read wrong shared counts", n.Rank(), k, next[k])
		}
		sorted[next[k]] = k
		next[k]++
	}
	if err := n.Barrier(0); err != nil {
		return "", err
	}
	if n.Rank() != 0 {
		return "ok", nil
	}
	// Fetch both arrays in as few messages as possible.
	if err := n.Validate(ra, 4*p.keys(), false); err != nil {
		return "", err
	}
	if err := n.Validate(sa, 4*p.keys(), false); err != nil {
		return "", err
	}
	return compare(p, allRanks, sorted), nil
}

// compare checks ranks and sorted keys against a sequential run.
func compare(p params, ranks, sorted []int32) string {
	s := newSequential(p)
	s.run(p, nil)
	for i, want := range s.ranks {
		if ranks[i] != want {
			return fmt.Sprintf("key %d (%d) has rank %d, the sequential ranking %d", i, s.keys[i], ranks[i], want)
		}
	}
	for i, want := range s.sorted() {
		if sorted[i] != want {
			return fmt.Sprintf("position %d of the sorted keys holds %d, the sequential sort %d", i, sorted[i], want)
		}
	}
	return "ok"
}
