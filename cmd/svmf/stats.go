package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/svmcluster/svm/dsm/engine"
)

// jobStats is what --stats prints and --stats-json writes: the job's wall
// time and every rank's counters, with their totals.
type jobStats struct {
	WallSeconds float64 `json:"wall_seconds"`
	// EngineCPUSeconds is the CPU time the coherence engine took (user and
	// system), which the ranks on this machine did not get; absent for a
	// job through svmd, whose engines run inside the daemons.
	EngineCPUSeconds *float64    `json:"engine_cpu_seconds,omitempty"`
	Ranks            []rankStats `json:"ranks"`
	Total            rankStats   `json:"total"`
	// Messages are the protocol messages of the whole job by type.
	Messages map[string]typeCount `json:"messages"`
}

type rankStats struct {
	Rank                 int     `json:"rank"`
	ReadFaults           int64   `json:"read_faults"`
	WriteFaults          int64   `json:"write_faults"`
	PagesFetched         int64   `json:"pages_fetched"`
	PagesPrefetched      int64   `json:"pages_prefetched"`
	DiffsMade            int64   `json:"diffs_made"`
	DiffBytesMade        int64   `json:"diff_bytes_made"`
	DiffsApplied         int64   `json:"diffs_applied"`
	DiffBytesApplied     int64   `json:"diff_bytes_applied"`
	MessagesSent         int64   `json:"messages_sent"`
	BytesSent            int64   `json:"bytes_sent"`
	Barriers             int64   `json:"barriers"`
	LockAcquires         int64   `json:"lock_acquires"`
	BarrierWaitSeconds   float64 `json:"barrier_wait_seconds"`
	LockWaitSeconds      float64 `json:"lock_wait_seconds"`
	HomeMigrations       int64   `json:"home_migrations"`
	Invalidations        int64   `json:"invalidations"`
	MetadataBytesAtClose int64   `json:"metadata_bytes"`
}

type typeCount struct {
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
}

// collectStats gathers the job's figures; engineCPU is nil when the engines
// are not svmf's own.
func collectStats(wall time.Duration, engineCPU *time.Duration, snaps []engine.RankSnapshot) jobStats {
	js := jobStats{WallSeconds: wall.Seconds(), Messages: map[string]typeCount{}}
	if engineCPU != nil {
		cpu := engineCPU.Seconds()
		js.EngineCPUSeconds = &cpu
	}
	sum := engine.RankSnapshot{Rank: -1, Sent: map[engine.Flow]engine.FlowCount{}}
	for _, s := range snaps {
		js.Ranks = append(js.Ranks, rankStatsOf(s))
		sum.AddCounts(s)
		for f, c := range s.Sent {
			t := js.Messages[f.Type.String()]
			t.Messages += c.Messages
			t.Bytes += c.Bytes
			js.Messages[f.Type.String()] = t
			sum.Sent[f] = engine.FlowCount{Messages: sum.Sent[f].Messages + c.Messages, Bytes: sum.Sent[f].Bytes + c.Bytes}
		}
	}
	js.Total = rankStatsOf(sum)
	slices.SortFunc(js.Ranks, func(a, b rankStats) int { return cmp.Compare(a.Rank, b.Rank) })
	return js
}

// rankStatsOf is what --stats shows of a rank's counters (or of their sum).
func rankStatsOf(s engine.RankSnapshot) rankStats {
	r := rankStats{
		Rank: s.Rank, ReadFaults: s.Stats.ReadFaults, WriteFaults: s.Stats.WriteFaults,
		PagesFetched: s.Stats.PagesFetched + s.Stats.Refetched, PagesPrefetched: s.Stats.Prefetched,
		DiffsMade: s.Stats.DiffsCreated, DiffBytesMade: s.Stats.DiffBytesCreated,
		DiffsApplied: s.Stats.DiffsApplied, DiffBytesApplied: s.Stats.DiffBytesApplied,
		Barriers: s.Stats.Barriers, LockAcquires: s.Stats.LockAcquiresLocal + s.Stats.LockAcquiresRemote,
		BarrierWaitSeconds: s.BarrierWait.Seconds(), LockWaitSeconds: s.LockWait.Seconds(),
		HomeMigrations: s.Stats.HomeMigrations, Invalidations: s.Stats.Invalidations,
		MetadataBytesAtClose: s.Metadata,
	}
	for _, c := range s.Sent {
		r.MessagesSent += c.Messages
		r.BytesSent += c.Bytes
	}
	return r
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeStatsTable prints js for people.
func writeStatsTable(w io.Writer, js jobStats) {
	if js.EngineCPUSeconds != nil {
		fmt.Fprintf(w, "svmf: job statistics: wall time %.3f s, engine CPU time %.3f s\n", js.WallSeconds, *js.EngineCPUSeconds)
	} else {
		fmt.Fprintf(w, "svmf: job statistics: wall time %.3f s (the engines run in svmd: their CPU time is in its process_cpu_seconds_total)\n", js.WallSeconds)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tread faults\twrite faults\tpages fetched\tprefetched\tdiffs made\tdiff bytes\tdiffs applied\tmessages\tbytes\tbarriers\tbarrier wait s\tlocks\tlock wait s\t")
	row := func(name string, r rankStats) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%d\t%.3f\t\n", name,
			r.ReadFaults, r.WriteFaults, r.PagesFetched, r.PagesPrefetched, r.DiffsMade, r.DiffBytesMade,
			r.DiffsApplied, r.MessagesSent, r.BytesSent, r.Barriers, r.BarrierWaitSeconds, r.LockAcquires, r.LockWaitSeconds)
	}
	for _, r := range js.Ranks {
		row(fmt.Sprint(r.Rank), r)
	}
	if len(js.Ranks) > 1 {
		row("total", js.Total)
	}
	tw.Flush()
	if len(js.Messages) == 0 {
		return
	}
	types := make([]string, 0, len(js.Messages))
	for t := range js.Messages {
		types = append(types, t)
	}
	slices.Sort(types)
	fmt.Fprintln(w, "messages by type:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tmessages\tbytes\t")
	for _, t := range types {
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", t, js.Messages[t].Messages, js.Messages[t].Bytes)
	}
	tw.Flush()
}

// writeStatsJSON writes js to the file path.
func writeStatsJSON(path string, js jobStats) error {
	b, err := json.MarshalIndent(js, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("--stats-json: %w", err)
	}
	return nil
}

// reportStats prints and writes the job's figures as --stats and
// --stats-json ask; a file that cannot be written is an error.
func reportStats(f runFlags, stderr io.Writer, js jobStats) error {
	if f.stats {
		writeStatsTable(stderr, js)
	}
	if f.statsJSON != "" {
		return writeStatsJSON(f.statsJSON, js)
	}
	return nil
}
