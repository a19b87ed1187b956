// Command harness measures the benchmark programs of bench/: it builds
// svmf and the programs, runs each program variant sequentially (-seq) and
// as a job of svmf run -np N for every rank count, and writes a Markdown
// report — times, speedups, the one-rank overhead, and the message and
// byte counts beside the TreadMarks study's published ones — to stdout and
// to bench/results/results.md, with the raw results in results.json and PNG
// charts (messages.png, kilobytes.png, speedup.png).
//
//	go run ./bench/harness                 # full sizes, 1, 2, 4 and 8 ranks
//	go run ./bench/harness -quick          # small sizes, 1 and 4 ranks: for CI
//
// The quick mode writes results-quick.md and results-quick.json, and no
// charts.
//
// The programs, their arguments and the published figures are the table in
// programs.go; a program whose directory does not exist yet is skipped.
// The harness runs one process at a time, so that runs never share the
// cores with each other, and it never changes a result: a run that fails,
// times out or fails its self-check is reported as failed, and the harness
// exits 1 after writing the report for the rest.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svmcluster/svm/bench/internal/report"
)

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	ranksFlag := flag.String("ranks", "1,2,4,8", "rank counts of the jobs, comma-separated (with -quick: 1,4 unless given)")
	quick := flag.Bool("quick", false, "small problem sizes for CI; no charts")
	out := flag.String("out", "", "directory for the report, results and charts (default bench/results in the module)")
	timeout := flag.Duration("timeout", 15*time.Minute, "time limit of each run")
	only := flag.String("programs", "", "run only these, comma-separated: a program (water) or a variant (water/288)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *quick && !isSet("ranks") {
		*ranksFlag = "1,4"
	}
	ranks, err := parseRanks(*ranksFlag)
	if err != nil {
		return err
	}
	progs, err := selectPrograms(programs, *only)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join(root, "bench", "results")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}

	outs, err := measure(ctx, config{root: root, programs: progs, ranks: ranks, quick: *quick, timeout: *timeout, log: os.Stderr})
	if err != nil {
		return err
	}
	s := summary{
		machine:  time.Now().Format(time.DateOnly) + ", " + machine(),
		cores:    runtime.NumCPU(),
		quick:    *quick,
		ranks:    ranks,
		outcomes: outs,
	}
	name := "results"
	if *quick {
		name = "results-quick"
	}
	if err := writeFiles(dir, name, s); err != nil {
		return err
	}
	if !*quick {
		files, err := drawCharts(dir, s)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "charts: %s\n", strings.Join(files, ", "))
	}
	if n := len(s.failures()); n > 0 {
		return fmt.Errorf("%d builds or runs failed", n)
	}
	return nil
}

// isSet reports whether the flag was given on the command line.
func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseRanks parses a comma-separated list of rank counts into ascending
// order.
func parseRanks(s string) ([]int, error) {
	var ranks []int
	for field := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-ranks %q: %q is not a rank count", s, field)
		}
		ranks = append(ranks, n)
	}
	slices.Sort(ranks)
	return slices.Compact(ranks), nil
}

// selectPrograms returns, in the table's order, the program variants a
// -programs list names, or all of them for an empty list.
func selectPrograms(all []program, list string) ([]program, error) {
	if list == "" {
		return all, nil
	}
	names := strings.Split(list, ",")
	named := make([]bool, len(names))
	var chosen []program
	for _, p := range all {
		picked := false
		for i, name := range names {
			if name == p.name || name == p.name+"/"+p.variant {
				named[i], picked = true, true
			}
		}
		if picked {
			chosen = append(chosen, p)
		}
	}
	for i, ok := range named {
		if !ok {
			return nil, fmt.Errorf("-programs: no program or variant %q in the table", names[i])
		}
	}
	return chosen, nil
}

// writeFiles writes the report to stdout and to dir/name.md, and the
// results to dir/name.json.
func writeFiles(dir, name string, s summary) error {
	md := filepath.Join(dir, name+".md")
	f, err := os.Create(md)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	err = writeReport(io.MultiWriter(os.Stdout, f), s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("report %s: %w", md, err)
	}
	results := []report.Result{}
	for _, o := range s.outcomes {
		for _, r := range o.runs {
			if r.result != nil {
				results = append(results, *r.result)
			}
		}
	}
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// machine describes this machine: processors, CPU model, kernel, Go.
func machine() string {
	cpu, kernel := "unknown CPU", "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if key, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(key) == "model name" {
				cpu = strings.TrimSpace(value)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%d processors (nproc), %s, Linux %s, %s", runtime.NumCPU(), cpu, kernel, runtime.Version())
}
