package dsm_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/svmcluster/svm/dsm"
	"github.com/svmcluster/svm/dsm/dsmtest"
	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/dsm/internal/microbench"
)

// These tests and benchmarks run real jobs: the engine runs in the test
// process (so the race detector watches it) and the test binary, executed
// again, runs as the ranks. The benchmarks' ranks time their own loops and
// print the result. Round trips over a unix socket and over TCP on loopback,
// between this process and a child, are measured in the same run, so the
// ratio of a fault to the physical limit is visible.

func TestMain(m *testing.M) {
	if job, ok := dsmtest.Child(); ok {
		if job == "example" {
			Example()
			os.Exit(0)
		}
		name, arg, _ := strings.Cut(job, " ")
		if err := benchChild(name, arg); err != nil {
			fmt.Fprintf(os.Stderr, "bench child %s: %v\n", name, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runJob runs child name as np ranks with arg and returns what rank 0 printed.
func runJob(tb testing.TB, name string, np int, prefetch bool, arg string) string {
	tb.Helper()
	return dsmtest.Run(tb, np, name+" "+arg, func(c *engine.Config) { c.Prefetch = prefetch })
}

// TestExample runs Example, the README's Go program, as the job it is
// written for, on 1 and 3 ranks.
func TestExample(t *testing.T) {
	for np, want := range map[int]string{1: "1 ranks: sum 2147450880, counter 1\n", 3: "3 ranks: sum 2147450880, counter 6\n"} {
		if got := dsmtest.Run(t, np, "example", nil); got != want {
			t.Errorf("%d ranks: rank 0 printed %q, want %q", np, got, want)
		}
	}
}

// TestJobs runs small jobs of each kind, so that faults, fetches, barriers
// and allocation go through the engine under the test's eyes (and the race
// detector's, with -race).
func TestJobs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		np       int
		prefetch bool
	}{{"read-fault", 2, true}, {"write-fault", 2, true}, {"remote-fetch", 2, false}, {"remote-fetch", 3, true},
		{"lock-local", 2, true}, {"lock-remote", 2, true}, {"lock-contended", 4, true}, {"fetch-add", 3, true}, {"barrier", 3, true}} {
		t.Run(fmt.Sprintf("%s-%d", tc.name, tc.np), func(t *testing.T) {
			out := runJob(t, tc.name, tc.np, tc.prefetch, "300")
			if ns, err := strconv.ParseFloat(strings.TrimSpace(out), 64); err != nil || ns <= 0 {
				t.Fatalf("rank 0 printed %q", out)
			}
		})
	}
}

// TestAlone: a rank alone in its job synchronises without the engine, and
// with the same rules and counts as one among others.
func TestAlone(t *testing.T) {
	out := runJob(t, "alone", 1, true, "0")
	if strings.TrimSpace(out) != "ok" {
		t.Fatalf("rank 0 printed %q", out)
	}
}

// aloneChild checks a rank alone: barriers, shares and locks work and are
// counted, and wrong lock use is refused as it is with others.
func aloneChild(node *dsm.Node) error {
	for i := range 3 {
		if err := node.Barrier(i); err != nil {
			return err
		}
	}
	if err := node.BarrierAmong(0, []int{0}); err != nil {
		return err
	}
	if a, err := node.Share(0, 0x1234); err != nil || a != 0x1234 {
		return fmt.Errorf("share gave %#x, %v", a, err)
	}
	if err := node.Lock(7); err != nil {
		return err
	}
	if err := node.Lock(7); err == nil || !strings.Contains(err.Error(), "lock 7 is already held by rank 0") {
		return fmt.Errorf("a second Lock(7) gave %v", err)
	}
	if err := node.Unlock(7); err != nil {
		return err
	}
	if err := node.Unlock(7); err == nil || !strings.Contains(err.Error(), "unlock of lock 7, which rank 0 does not hold") {
		return fmt.Errorf("a second Unlock(7) gave %v", err)
	}
	if err := node.Barrier(node.Barriers()); err == nil {
		return errors.New("a barrier out of range went through")
	}
	if s := node.Stats(); s.Barriers != 5 || s.LockAcquiresLocal != 1 {
		return fmt.Errorf("stats count %d barriers and %d lock acquires, want 5 and 1", s.Barriers, s.LockAcquiresLocal)
	}
	if err := aloneMemory(node); err != nil {
		return err
	}
	fmt.Println("ok")
	return nil
}

// TestBands: ranks fill their bands of a large array at once (each first
// touch maps a run of pages, the engine filling and mapping them outside its
// lock while the other ranks' faults go on), then read every band and write
// their neighbour's, so pages are served, invalidated and diffed while
// other runs are still being mapped.
func TestBands(t *testing.T) {
	for _, np := range []int{2, 4} {
		if out := runJob(t, "bands", np, true, "3"); strings.TrimSpace(out) != "ok" {
			t.Fatalf("%d ranks: rank 0 printed %q", np, out)
		}
	}
}

// bandsChild: phases rounds of every rank writing the band of rank
// me+round, then checking the whole array.
func bandsChild(node *dsm.Node, phases int) error {
	const words = 1 << 20 // 8 MiB of uint64
	a, err := node.Alloc(words * 8)
	if err != nil {
		return err
	}
	w := dsm.Slice[uint64](a, words)
	np, me := node.NProcs(), node.Rank()
	band := func(r int) (int, int) { return r * words / np, (r + 1) * words / np }
	val := func(round, i int) uint64 { return uint64(round)<<40 | uint64(i)*2654435761 }
	for round := range phases {
		lo, hi := band((me + round) % np)
		for i := lo; i < hi; i++ {
			w[i] = val(round, i)
		}
		if err := node.Barrier(0); err != nil {
			return err
		}
		for i := range w {
			if w[i] != val(round, i) {
				return fmt.Errorf("round %d: word %d is %#x, want %#x", round, i, w[i], val(round, i))
			}
		}
		if err := node.Barrier(0); err != nil {
			return err
		}
	}
	if me == 0 {
		fmt.Println("ok")
	}
	return nil
}

// aloneMemory checks that a rank alone computes in private anonymous memory
// with small pages, as a sequential program's heap, and that the memory
// works.
func aloneMemory(node *dsm.Node) error {
	const size = 8 << 20
	a, err := node.Alloc(size)
	if err != nil {
		return err
	}
	b := dsm.Bytes(a, size)
	for i := range b {
		b[i] = byte(i % 251)
	}
	for i := range b {
		if b[i] != byte(i%251) {
			return fmt.Errorf("byte %d of the region reads %d, was written %d", i, b[i], i%251)
		}
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return err
	}
	var mapping []string // the header line and fields of the region's mapping
	for _, line := range strings.Split(string(smaps), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			var lo, hi uint64
			if _, err := fmt.Sscanf(fields[0], "%x-%x", &lo, &hi); err == nil {
				mapping = nil
				if lo <= uint64(a) && uint64(a) < hi {
					mapping = []string{line}
				}
				continue
			}
		}
		if mapping != nil {
			mapping = append(mapping, line)
		}
		if mapping != nil && len(fields) > 0 && fields[0] == "VmFlags:" {
			break
		}
	}
	if len(mapping) == 0 {
		return fmt.Errorf("no mapping of the region at %#x in /proc/self/smaps", a)
	}
	if head := strings.Fields(mapping[0]); len(head) > 5 || !strings.HasSuffix(head[1], "p") {
		return fmt.Errorf("the region of a rank alone is mapped %q, want private anonymous memory", mapping[0])
	}
	if flags := strings.Fields(mapping[len(mapping)-1]); len(flags) == 0 || flags[0] != "VmFlags:" || slices.Contains(flags[1:], "hg") {
		return fmt.Errorf("the region of a rank alone has %q, want small pages, no huge pages asked for (hg)", mapping[len(mapping)-1])
	}
	return nil
}

// reportNs reports the child's measured nanoseconds per operation as the
// benchmark's ns/op (the job's start-up is not part of it).
func reportNs(b *testing.B, out, unit string) {
	b.Helper()
	var ns float64
	if _, err := fmt.Sscanf(out, "%g", &ns); err != nil {
		b.Fatalf("child printed %q: %v", out, err)
	}
	b.ReportMetric(ns, "ns/op")
	b.ReportMetric(1e9/ns, unit+"/s")
}

// BenchmarkReadFault: a read of a page whose current copy the engine holds
// (the application dropped its mapping): one minor fault, resolved by
// UFFDIO_CONTINUE. (Two ranks: a job of one needs no coherence at all.)
func BenchmarkReadFault(b *testing.B) {
	reportNs(b, runJob(b, "read-fault", 2, true, strconv.Itoa(b.N)), "faults")
}

// BenchmarkWriteFault: the first write to a write-protected (cold) page in
// an interval: a write-protect fault, a twin, and the protection lifted.
func BenchmarkWriteFault(b *testing.B) {
	reportNs(b, runJob(b, "write-fault", 2, true, strconv.Itoa(b.N)), "faults")
}

// BenchmarkRemoteDiffFetch: a read of a page another rank wrote: a fault,
// one diff request and response between the ranks, the diff applied, the
// page mapped. Prefetching is off, so each fault fetches one page.
func BenchmarkRemoteDiffFetch(b *testing.B) {
	reportNs(b, runJob(b, "remote-fetch", 2, false, strconv.Itoa(b.N)), "fetches")
}

// BenchmarkLockLocal: Lock and Unlock of a lock this rank released last:
// no protocol message, one call to the engine each.
func BenchmarkLockLocal(b *testing.B) {
	reportNs(b, runJob(b, "lock-local", 2, true, strconv.Itoa(b.N)), "acquires")
}

// BenchmarkLockRemote: acquiring a lock another rank released last and
// nobody else wants: a request to the manager, a forward (unless the manager
// is the last holder) and the grant.
func BenchmarkLockRemote(b *testing.B) {
	reportNs(b, runJob(b, "lock-remote", 2, true, strconv.Itoa(b.N)), "acquires")
}

// BenchmarkLockContended: N ranks take one lock in turn, an increment under
// it; the time is per acquisition, all ranks together.
func BenchmarkLockContended(b *testing.B) {
	for _, np := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("N=%d", np), func(b *testing.B) {
			reportNs(b, runJob(b, "lock-contended", np, true, strconv.Itoa(b.N)), "acquires")
		})
	}
}

// BenchmarkFetchAdd: N ranks take tickets from one shared counter (the
// dynamic loops' chunks); the time is per ticket, all ranks together.
// Compare BenchmarkLockContended, a lock-protected counter in shared memory.
func BenchmarkFetchAdd(b *testing.B) {
	for _, np := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("N=%d", np), func(b *testing.B) {
			reportNs(b, runJob(b, "fetch-add", np, true, strconv.Itoa(b.N)), "tickets")
		})
	}
}

// BenchmarkBarrier: N ranks cross a barrier: 2(N-1) messages.
func BenchmarkBarrier(b *testing.B) {
	for _, np := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("N=%d", np), func(b *testing.B) {
			reportNs(b, runJob(b, "barrier", np, true, strconv.Itoa(b.N)), "barriers")
		})
	}
}

// BenchmarkUnixRoundTrip: one byte to a child process and back over a unix
// stream socket.
func BenchmarkUnixRoundTrip(b *testing.B) {
	dir := b.TempDir()
	ln, err := net.Listen("unix", filepath.Join(dir, "echo.sock"))
	if err != nil {
		b.Fatal(err)
	}
	benchRoundTrip(b, ln, "unix")
}

// BenchmarkTCPRoundTrip: the same over TCP on loopback.
func BenchmarkTCPRoundTrip(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	benchRoundTrip(b, ln, "tcp")
}

func benchRoundTrip(b *testing.B, ln net.Listener, network string) {
	defer ln.Close()
	cmd := dsmtest.Command("echo " + network + "=" + ln.Addr().String())
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	c, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	buf := make([]byte, 1)
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/op")
}

// benchChild runs one rank of a benchmark job (or the echo peer).
func benchChild(name, arg string) error {
	if name == "echo" {
		network, addr, _ := strings.Cut(arg, "=")
		c, err := net.Dial(network, addr)
		if err != nil {
			return err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		_, err = io.Copy(c, bufio.NewReader(c))
		return err
	}
	n, err := strconv.Atoi(arg)
	if err != nil {
		return err
	}
	var opts []dsm.Option
	if name == "bands" {
		opts = append(opts, dsm.Funneled()) // homes written in place, mapped in runs
	}
	node, err := dsm.Join(context.Background(), opts...)
	if err != nil {
		return err
	}
	defer node.Close()
	switch name {
	case "alone":
		return aloneChild(node)
	case "bands":
		return bandsChild(node, n)
	}
	ns, err := microbench.Run(node, name, n)
	if err != nil {
		return err
	}
	if node.Rank() == 0 {
		fmt.Printf("%g\n", ns)
	}
	return nil
}
