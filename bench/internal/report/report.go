// Package report is how the benchmark programs in bench/ report a run: one
// line starting with "RESULT " and holding a JSON Result, which the harness
// collects, after whatever the program prints for people. The C programs
// of bench/kernels print the same line (bench/kernels/yardstick.h).
//
// A parallel run sums every rank's counters over the timed part; the ranks
// pass them through shared memory, after the timing, so the reduction's own
// traffic is not counted.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/svmcluster/svm/dsm"
	"github.com/svmcluster/svm/protocol"
)

// Result is one run of one benchmark program.
type Result struct {
	Program string `json:"program"` // e.g. "sor"
	Variant string `json:"variant"` // e.g. "zero"; the harness keys rows by program and variant
	Params  string `json:"params"`  // the problem size, for people
	// Ranks is the number of ranks; 0 for the sequential program (no DSM).
	Ranks   int     `json:"ranks"`
	Seconds float64 `json:"seconds"` // the timed part
	// Check is "ok", or what the self-check found wrong.
	Check string `json:"check"`
	// Totals over all ranks for the timed part (parallel runs only).
	Messages       int64            `json:"messages"`
	Bytes          int64            `json:"bytes"`
	MessagesByType map[string]int64 `json:"messages_by_type,omitempty"`
	ReadFaults     int64            `json:"read_faults"`
	WriteFaults    int64            `json:"write_faults"`
	DiffsCreated   int64            `json:"diffs_created"`
	DiffsApplied   int64            `json:"diffs_applied"`
	LockAcquires   int64            `json:"lock_acquires"`
	Barriers       int64            `json:"barriers"`
	// Ops is the number of operations a microbenchmark timed (barriers,
	// lock acquisitions): one takes Seconds / Ops.
	Ops int64 `json:"ops,omitempty"`
	// Checksum is what a program of bench/kernels computed from its
	// answer: every way of running a kernel must print the same one.
	Checksum string `json:"checksum,omitempty"`
	// Protocol is "homeless" for a job run with TreadMarks' protocol;
	// empty for the default (home-based) one.
	Protocol string `json:"protocol,omitempty"`
}

// Prefix starts every result line.
const Prefix = "RESULT "

// Print writes r as a result line to w.
func Print(w io.Writer, r Result) {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // a Result always encodes
	}
	fmt.Fprintf(w, "%s%s\n", Prefix, b)
}

// Sequential prints the result of a sequential run, and a line for people.
func Sequential(r Result) {
	r.Ranks = 0
	fmt.Printf("%s %s (%s) sequential: %.3f s, check %s\n", r.Program, r.Variant, r.Params, r.Seconds, r.Check)
	Print(os.Stdout, r)
}

// counters are the per-rank fields passed through shared memory, in order.
const baseCounters = 9

func deltas(before, after dsm.Stats, took time.Duration) []int64 {
	c := []int64{
		int64(took),
		after.MessagesSent - before.MessagesSent,
		after.BytesSent - before.BytesSent,
		after.ReadFaults - before.ReadFaults,
		after.WriteFaults - before.WriteFaults,
		after.DiffsCreated - before.DiffsCreated,
		after.DiffsApplied - before.DiffsApplied,
		after.LockAcquiresLocal + after.LockAcquiresRemote - before.LockAcquiresLocal - before.LockAcquiresRemote,
		after.Barriers - before.Barriers,
	}
	for _, t := range protocol.MsgTypes {
		c = append(c, after.MessagesByType[t.String()]-before.MessagesByType[t.String()])
	}
	return c
}

// Parallel is collective: every rank calls it after its timed part, with
// the counters it read before and after that part. Rank 0 prints the sums
// (and the longest time) as r; barrier is a barrier id the program does
// not use at the same time.
func Parallel(n *dsm.Node, barrier int, r Result, took time.Duration, before, after dsm.Stats) error {
	mine := deltas(before, after, took)
	width := len(mine)
	a, err := n.Alloc(8 * width * n.NProcs())
	if err != nil {
		return err
	}
	if n.Rank() == 0 {
		defer n.Free(a) // after the last barrier: nobody reads it any more
	}
	all := dsm.Slice[int64](a, width*n.NProcs())
	copy(all[width*n.Rank():], mine)
	if err := n.Barrier(barrier); err != nil {
		return err
	}
	if n.Rank() == 0 {
		sum := make([]int64, width)
		var longest int64
		for rk := range n.NProcs() {
			row := all[width*rk : width*(rk+1)]
			longest = max(longest, row[0])
			for k := 1; k < width; k++ {
				sum[k] += row[k]
			}
		}
		r.Ranks = n.NProcs()
		r.Seconds = time.Duration(longest).Seconds()
		r.Messages, r.Bytes = sum[1], sum[2]
		r.ReadFaults, r.WriteFaults = sum[3], sum[4]
		r.DiffsCreated, r.DiffsApplied = sum[5], sum[6]
		r.LockAcquires, r.Barriers = sum[7], sum[8]
		r.MessagesByType = make(map[string]int64)
		for i, t := range protocol.MsgTypes {
			if v := sum[baseCounters+i]; v != 0 {
				r.MessagesByType[t.String()] = v
			}
		}
		fmt.Printf("%s %s (%s) on %d ranks: %.3f s, check %s; %d messages, %.1f KB, %d read and %d write faults, %d diffs created, %d applied\n",
			r.Program, r.Variant, r.Params, r.Ranks, r.Seconds, r.Check, r.Messages, float64(r.Bytes)/1024,
			r.ReadFaults, r.WriteFaults, r.DiffsCreated, r.DiffsApplied)
		Print(os.Stdout, r)
	}
	return n.Barrier(barrier)
}
