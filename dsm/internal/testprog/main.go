// Command testprog holds the programs the end-to-end tests run as the ranks
// of real jobs (svmf run -np N testprog NAME [ARGS]). Each checks its own
// result and exits non-zero with a message when it is wrong.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/svmcluster/svm/dsm"
	"github.com/svmcluster/svm/dsm/internal/microbench"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testprog counter|falseshare|list|gc|crash|hang|misuse|deadlock|syscall|micro|sets|handoff|pagetables [flags]")
		os.Exit(2)
	}
	progs := map[string]func(*dsm.Node, []string) error{
		"counter": counter, "falseshare": falseShare, "list": list, "gc": gcStress,
		"crash": crash, "hang": hang, "misuse": misuse, "deadlock": deadlock, "syscall": sysRead,
		"micro": micro, "sets": sets, "handoff": handoff, "pagetables": pageTables,
	}
	prog, ok := progs[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "testprog: unknown program %q\n", os.Args[1])
		os.Exit(2)
	}
	var opts []dsm.Option
	if os.Getenv("SVM_TEST_FUNNELED") == "1" {
		opts = append(opts, dsm.Funneled())
	}
	n, err := dsm.Join(context.Background(), opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprog:", err)
		os.Exit(1)
	}
	if err := prog(n, os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "testprog %s: rank %d: %v\n", os.Args[1], n.Rank(), err)
		os.Exit(1)
	}
	if err := n.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "testprog:", err)
		os.Exit(1)
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// counter: every rank adds 1 to a shared counter K times under a lock.
func counter(n *dsm.Node, args []string) error {
	fs := flag.NewFlagSet("counter", flag.ExitOnError)
	k := fs.Int("k", 1000, "increments per rank")
	fs.Parse(args)
	a, err := n.Alloc(8)
	if err != nil {
		return err
	}
	c := dsm.Slice[int64](a, 1)
	for range *k {
		must(n.Lock(0))
		c[0]++
		must(n.Unlock(0))
	}
	must(n.Barrier(0))
	if want := int64(n.NProcs() * *k); c[0] != want {
		return fmt.Errorf("counter is %d, want %d", c[0], want)
	}
	if n.Rank() == 0 {
		s := n.Stats()
		fmt.Printf("counter %d; rank 0: %d messages, %d remote and %d local lock acquires\n",
			c[0], s.MessagesSent, s.LockAcquiresRemote, s.LockAcquiresLocal)
	}
	return nil
}

// handoff: every rank appends its (rank, step) to a shared log under lock 0,
// K times, and between its visits writes its own pages, outside any lock
// (so a lock released without a call leaves the engine writes to find, and
// writes made after it); every few steps it also updates, under one of
// three more locks, two cells on different pages that must always agree,
// sometimes lingering there so that others queue behind it. At the end
// every rank checks the whole log and every rank's pages.
func handoff(n *dsm.Node, args []string) error {
	fs := flag.NewFlagSet("handoff", flag.ExitOnError)
	k := fs.Int("k", 500, "steps per rank")
	fs.Parse(args)
	np, me := n.NProcs(), n.Rank()
	ps := n.PageSize()
	logAddr, err := n.Alloc(8 * (1 + np**k))
	if err != nil {
		return err
	}
	pairsAddr, err := n.Alloc(2 * 3 * ps)
	if err != nil {
		return err
	}
	const perPage = 64 // each step writes one int64 of its rank's pages, perPage steps a page
	ownAddr, err := n.Alloc(np * (*k/perPage + 1) * ps)
	if err != nil {
		return err
	}
	logs := dsm.Slice[int64](logAddr, 1+np**k)
	pairs := dsm.Slice[int64](pairsAddr, 2*3*ps/8)
	cell := func(l, side int) *int64 { return &pairs[(3*side+l)*ps/8] } // six cells, each on its own page
	ownWords := (*k/perPage + 1) * ps / 8
	own := dsm.Slice[int64](ownAddr, np*ownWords)
	value := func(r, i int) int64 { return int64(r)<<32 | int64(i) + 1 }
	slot := func(r, i int) int { return r*ownWords + (i/perPage)*(ps/8) + i%perPage }
	must(n.Barrier(0))
	for i := range *k {
		must(n.Lock(0))
		logs[1+logs[0]] = value(me, i)
		logs[0]++
		must(n.Unlock(0))
		own[slot(me, i)] = value(me, i)
		if i%5 == me%5 {
			l := 1 + i%3
			must(n.Lock(l))
			a, b := cell(l-1, 0), cell(l-1, 1)
			if *a != *b {
				return fmt.Errorf("step %d: lock %d's cells differ: %d and %d", i, l, *a, *b)
			}
			*a, *b = value(me, i), value(me, i)
			if i%50 == 0 {
				time.Sleep(200 * time.Microsecond) // others queue behind this hold
			}
			must(n.Unlock(l))
		}
	}
	must(n.Barrier(0))
	if got, want := logs[0], int64(np**k); got != want {
		return fmt.Errorf("the log holds %d entries, want %d", got, want)
	}
	next := make([]int, np)
	for _, v := range logs[1 : 1+np**k] {
		r, i := int(v>>32), int(v&0xffffffff)-1
		if r < 0 || r >= np || i != next[r] {
			return fmt.Errorf("log entry %#x out of order (rank %d expected step %d)", v, r, next[min(max(r, 0), np-1)])
		}
		next[r]++
	}
	for r := range np {
		for i := range *k {
			if got := own[slot(r, i)]; got != value(r, i) {
				return fmt.Errorf("rank %d's step %d wrote %#x, read %#x", r, i, value(r, i), got)
			}
		}
	}
	for l := range 3 {
		if *cell(l, 0) != *cell(l, 1) {
			return fmt.Errorf("lock %d's cells differ at the end", l+1)
		}
	}
	if me == 0 {
		s := n.Stats()
		fmt.Printf("handoff ok; rank 0: %d remote and %d local lock acquires\n", s.LockAcquiresRemote, s.LockAcquiresLocal)
	}
	return nil
}

// falseShare: ranks write interleaved 1-, 4- and 8-byte elements of the same
// pages, ownership rotating every phase; after each phase every rank checks
// every element.
func falseShare(n *dsm.Node, args []string) error {
	fs := flag.NewFlagSet("falseshare", flag.ExitOnError)
	phases := fs.Int("phases", 20, "barrier phases")
	fs.Parse(args)
	const elems = 3000 // each array spans several pages
	a1, err := n.Alloc(elems)
	if err != nil {
		return err
	}
	a4, err := n.Alloc(elems * 4)
	if err != nil {
		return err
	}
	a8, err := n.Alloc(elems * 8)
	if err != nil {
		return err
	}
	b, w, d := dsm.Slice[uint8](a1, elems), dsm.Slice[uint32](a4, elems), dsm.Slice[uint64](a8, elems)
	np, me := n.NProcs(), n.Rank()
	val := func(phase, j int) uint64 { return uint64(phase*1000003+j*7919) + 1 }
	for phase := range *phases {
		for j := range elems {
			if (j+phase)%np == me {
				v := val(phase, j)
				b[j], w[j], d[j] = uint8(v), uint32(v), v
			}
		}
		must(n.Barrier(1))
		for j := range elems {
			v := val(phase, j)
			if b[j] != uint8(v) || w[j] != uint32(v) || d[j] != v {
				return fmt.Errorf("phase %d element %d: got %d/%d/%d, want %d/%d/%d", phase, j, b[j], w[j], d[j], uint8(v), uint32(v), v)
			}
		}
		must(n.Barrier(2))
	}
	return nil
}

// node is a linked-list cell in shared memory: a pointer valid in every rank.
type node struct {
	next dsm.Addr
	val  int64
}

// list: rank 0 builds a linked list with Malloc and shares its head; every
// rank walks it through the pointers stored in shared memory.
func list(n *dsm.Node, args []string) error {
	fs := flag.NewFlagSet("list", flag.ExitOnError)
	length := fs.Int("n", 500, "cells")
	fs.Parse(args)
	var head dsm.Addr
	if n.Rank() == 0 {
		for i := range *length {
			a, err := n.Malloc(int(unsafe.Sizeof(node{})))
			if err != nil {
				return err
			}
			cell := &dsm.Slice[node](a, 1)[0]
			cell.next, cell.val = head, int64(i+1)
			head = a
		}
	}
	head, err := n.Share(0, head)
	if err != nil {
		return err
	}
	var sum, count int64
	for a := head; a != 0; {
		cell := dsm.Slice[node](a, 1)[0]
		sum += cell.val
		count++
		a = cell.next
	}
	if want := int64(*length) * int64(*length+1) / 2; sum != want || count != int64(*length) {
		return fmt.Errorf("walked %d cells summing %d, want %d summing %d", count, sum, *length, want)
	}
	return nil
}

// gcStress uses copy, clear and bytes.Equal — runtime assembly that cannot
// be preempted while it faults — on shared memory that barriers keep
// invalidating, while another goroutine runs the garbage collector in a
// loop. With the fault handler in this process it would deadlock.
func gcStress(n *dsm.Node, args []string) error {
	fs := flag.NewFlagSet("gc", flag.ExitOnError)
	rounds := fs.Int("rounds", 30, "barrier rounds")
	fs.Parse(args)
	const size = 64 << 10
	a, err := n.Alloc(size * n.NProcs())
	if err != nil {
		return err
	}
	shared := dsm.Bytes(a, size*n.NProcs())
	var stop atomic.Bool
	gcs := make(chan int)
	go func() {
		count := 0
		for !stop.Load() {
			runtime.GC()
			count++
		}
		gcs <- count
	}()
	private := make([]byte, size)
	me := n.Rank()
	for round := range *rounds {
		mine := shared[me*size : (me+1)*size]
		for i := range private {
			private[i] = byte(round + i + me)
		}
		copy(mine, private) // write faults inside memmove
		must(n.Barrier(0))
		next := (me + 1) % n.NProcs()
		theirs := shared[next*size : (next+1)*size]
		for i := range private {
			private[i] = byte(round + i + next)
		}
		if !bytes.Equal(theirs, private) { // read faults inside memequal
			return fmt.Errorf("round %d: rank %d's block differs", round, next)
		}
		must(n.Barrier(1))
		clear(mine) // write faults inside memclr
		must(n.Barrier(2))
	}
	stop.Store(true)
	fmt.Printf("rank %d: %d rounds with %d garbage collections\n", me, *rounds, <-gcs)
	return nil
}

// crash: rank 1 panics (or, with -kill, waits to be killed) while the others
// wait at a barrier that it never reaches.
func crash(n *dsm.Node, args []string) error {
	if n.Rank() == 1 {
		panic("testprog crash: rank 1 fails on purpose")
	}
	return n.Barrier(0)
}

// hang: every rank waits at a barrier except the last, which sleeps (until
// the test kills it).
func hang(n *dsm.Node, args []string) error {
	if n.Rank() == n.NProcs()-1 {
		fmt.Println("ready") // the test waits for this line
		time.Sleep(time.Hour)
	}
	return n.Barrier(0)
}

// micro NAME N runs a microbenchmark (package microbench) of N operations;
// rank 0 prints nanoseconds per operation.
func micro(n *dsm.Node, args []string) error {
	if len(args) != 2 {
		return errors.New("usage: micro NAME N")
	}
	count, err := strconv.Atoi(args[1])
	if err != nil {
		return fmt.Errorf("micro: count %q: %w", args[1], err)
	}
	ns, err := microbench.Run(n, args[0], count)
	if err != nil {
		return err
	}
	if n.Rank() == 0 {
		fmt.Printf("%g\n", ns)
	}
	return nil
}

// pageTables: every rank writes its part of an array of 8 MiB and checks the
// others' after a barrier, then prints the size of its page tables
// (VmPTE), which must follow the memory used, not the region's size.
func pageTables(n *dsm.Node, _ []string) error {
	const words = 1 << 20
	a, err := n.Alloc(8 * words)
	if err != nil {
		return err
	}
	arr := dsm.Slice[int64](a, words)
	np, me := n.NProcs(), n.Rank()
	for i := me; i < words; i += np {
		arr[i] = int64(i) * 3
	}
	must(n.Barrier(0))
	for i := range arr {
		if arr[i] != int64(i)*3 {
			return fmt.Errorf("element %d is %d, want %d", i, arr[i], int64(i)*3)
		}
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	for line := range strings.Lines(string(status)) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmPTE:" {
			fmt.Printf("pagetables rank %d: %s kB\n", me, f[1])
			return nil
		}
	}
	return errors.New("no VmPTE in /proc/self/status")
}

// sysRead reads a file with read(2) straight into shared memory that other
// ranks wrote last: the pages are stale, so without Validate the kernel
// would fail the call with EFAULT (user-mode userfaultfd cannot fault in a
// system call); after Validate it succeeds.
func sysRead(n *dsm.Node, args []string) error {
	const size = 5 * 4096
	a, err := n.Alloc(size)
	if err != nil {
		return err
	}
	buf := dsm.Bytes(a, size)
	for i := n.Rank(); i < size; i += n.NProcs() {
		buf[i] = 0xff // every page is written by every rank
	}
	must(n.Barrier(0))
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i * 7)
	}
	path := fmt.Sprintf("%s/svm-syscall-%d-%d", os.TempDir(), os.Getpid(), n.Rank())
	if err := os.WriteFile(path, want, 0o600); err != nil {
		return err
	}
	defer os.Remove(path)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := n.Validate(a, size, true); err != nil {
		return err
	}
	if _, err := io.ReadFull(f, buf); err != nil {
		return fmt.Errorf("read(2) into validated shared memory: %w", err)
	}
	if !bytes.Equal(buf, want) {
		return errors.New("read(2) into shared memory read the wrong bytes")
	}
	return nil
}

// deadlock: rank 0 waits at barrier 1, the others at barrier 2.
func deadlock(n *dsm.Node, args []string) error {
	if n.Rank() == 0 {
		return n.Barrier(1)
	}
	return n.Barrier(2)
}

// misuse makes every kind of wrong call and checks that each gets an error
// saying what was wrong.
func misuse(n *dsm.Node, args []string) error {
	type check struct {
		name string
		err  error
		want string
	}
	_, errAlloc := n.Alloc(1 << 40)
	_, errShare := n.Share(n.NProcs(), 0)
	checks := []check{
		{"lock out of range", n.Lock(1 << 20), "lock 1048576 out of range"},
		{"unlock not held", n.Unlock(3), "unlock of lock 3, which rank"},
		{"barrier out of range", n.Barrier(64), "barrier 64 out of range"},
		{"alloc beyond the region", errAlloc, "exceeds the"},
		{"share root out of range", errShare, "root rank"},
		{"validate outside", n.Validate(0x1000, 10, false), "not inside the shared region"},
		{"free of a non-allocation", n.Free(0x1234), "is below the shared region"},
	}
	for _, c := range checks {
		if c.err == nil || !bytes.Contains([]byte(c.err.Error()), []byte(c.want)) {
			return fmt.Errorf("%s: got error %v, want one containing %q", c.name, c.err, c.want)
		}
	}
	// Collective allocations with different sizes: rank 0 goes first.
	if n.Rank() == 0 {
		if _, err := n.Alloc(4096); err != nil {
			return err
		}
	}
	must(n.Barrier(0))
	if n.Rank() > 0 {
		_, err := n.Alloc(8192)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("where another rank asked")) {
			return fmt.Errorf("mismatched Alloc: got %v", err)
		}
	}
	must(n.Barrier(0))
	if n.Rank() == 0 {
		must(n.Close())
		if err := n.Lock(0); err != dsm.ErrClosed {
			return fmt.Errorf("lock after close: got %v, want ErrClosed", err)
		}
		fmt.Println("misuse: every wrong call was refused")
		os.Exit(0)
	}
	return nil
}

// sets: processor-set barriers and shares in two disjoint halves of the job
// at once, and fetch-and-add counters managed by every rank: each value a
// counter hands out is handed out once.
func sets(n *dsm.Node, args []string) error {
	fs := flag.NewFlagSet("sets", flag.ExitOnError)
	rounds := fs.Int("rounds", 20, "rounds of set barriers and shares")
	k := fs.Int("k", 200, "fetch-and-adds per rank and counter")
	fs.Parse(args)
	np, me := n.NProcs(), n.Rank()
	slots, err := n.Alloc(8 * np)
	if err != nil {
		return err
	}
	seen, err := n.Alloc(np * np * *k)
	if err != nil {
		return err
	}
	var half []int
	for r := range np {
		if (r < np/2) == (me < np/2) {
			half = append(half, r)
		}
	}
	v := dsm.Slice[int64](slots, np)
	for round := range *rounds {
		v[me] = int64(1000*round + me)
		if err := n.BarrierAmong(1, half); err != nil {
			return err
		}
		for _, r := range half {
			if v[r] != int64(1000*round+r) {
				return fmt.Errorf("round %d: slot of rank %d in my set reads %d after the set barrier", round, r, v[r])
			}
		}
		root := half[round%len(half)]
		got, err := n.ShareAmong(2, half, root, uint64(round*7+root))
		if err != nil {
			return err
		}
		if got != uint64(round*7+root) {
			return fmt.Errorf("round %d: share from rank %d gave %d", round, root, got)
		}
		if err := n.BarrierAmong(1, half); err != nil { // nobody rewrites a slot before all have read it
			return err
		}
	}
	// Counter c is kept by rank c mod np: every rank's engine serves one.
	marks := dsm.Bytes(seen, np*np**k)
	for c := range np {
		for range *k {
			got, err := n.FetchAdd(uint32(c), 1)
			if err != nil {
				return err
			}
			if got < 0 || got >= int64(np**k) {
				return fmt.Errorf("counter %d handed out %d, outside [0,%d)", c, got, np**k)
			}
			marks[c*np**k+int(got)] = byte(me + 1)
		}
	}
	must(n.Barrier(0))
	if me == 0 {
		for i, m := range marks {
			if m == 0 {
				return fmt.Errorf("counter %d never handed out %d", i/(np**k), i%(np**k))
			}
		}
		if got, err := n.FetchAdd(0, 0); err != nil || got != int64(np**k) {
			return fmt.Errorf("counter 0 ends at %d (%v), want %d", got, err, np**k)
		}
		fmt.Printf("sets ok: %d rounds, %d fetch-and-adds\n", *rounds, np*np**k)
	}
	type wantErr struct {
		err  error
		want string
	}
	errs := []wantErr{
		{n.BarrierAmong(64, half), "barrier 64 out of range"},
		{n.BarrierAmong(1, nil), "empty processor set"},
		{n.BarrierAmong(1, []int{me, np}), "outside [0,"},
	}
	if np > 1 {
		_, errShare := n.ShareAmong(2, []int{me}, (me+1)%np, 1)
		errs = append(errs, wantErr{n.BarrierAmong(1, []int{(me + 1) % np}), "does not include rank"},
			wantErr{errShare, "is not in the processor set"})
	}
	for _, c := range errs {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			return fmt.Errorf("misuse: got %v, want an error containing %q", c.err, c.want)
		}
	}
	return nil
}
