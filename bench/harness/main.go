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
// With -yardstick (make bench) it measures the yardstick instead: the same
// kernels sequentially, in hand-written MPI and as SVM jobs — the C
// kernels of bench/kernels, the SVM-Fortran shallow-water program beside
// its gfortran-only build, the Go suite at sizes whose sequential runs
// take seconds — and the latency of barriers and locks beside
// MPI_Barrier. It builds the installed layout (scripts/install-layout)
// under -prefix and the programs into its bin/yardstick, runs every
// command -runs times, interleaved, and writes one table of medians, with
// the command behind every figure, to stdout and bench/results/
// yardstick.md, and every run to yardstick.json.
//
//	go run ./bench/harness -yardstick                      # SVM at 1, 2, 4 ranks, MPI at 2, 5 runs
//	go run ./bench/harness -yardstick -programs c/sor -ranks 2 -runs 9
//	go run ./bench/harness -yardstick -quick               # small sizes, 1 run: a check
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
	yardstick := flag.Bool("yardstick", false, "measure the yardstick instead of the suite: kernels sequential, in MPI and as SVM jobs, and barrier and lock latency (yardstick.md)")
	ranksFlag := flag.String("ranks", "", "rank counts of the SVM jobs, comma-separated (default 1,2,4,8, with -quick 1,4; with -yardstick 1,2,4, with -quick too 1,2)")
	mpiRanksFlag := flag.String("mpi-ranks", "2", "with -yardstick: rank counts of the MPI jobs")
	syncRanksFlag := flag.String("sync-ranks", "", "with -yardstick: rank counts of the barrier and lock jobs (default 2,4,8; with -quick 2)")
	runs := flag.Int("runs", 0, "with -yardstick: runs of every command, whose median the tables show (default 5; with -quick 1)")
	prefix := flag.String("prefix", "", "with -yardstick: where to build the installed layout, with the programs in its bin/yardstick (default the module's root, as make build)")
	quick := flag.Bool("quick", false, "small problem sizes for CI; no charts")
	out := flag.String("out", "", "directory for the report, results and charts (default bench/results in the module)")
	timeout := flag.Duration("timeout", 0, "time limit of each run (default 15m; with -yardstick 5m)")
	only := flag.String("programs", "", "run only these, comma-separated: a program (water) or a variant (water/288); with -yardstick an entry (c/sor) or a group (c, fortran, go, sync)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if !*yardstick {
		for _, name := range []string{"mpi-ranks", "sync-ranks", "runs", "prefix"} {
			if isSet(name) {
				return fmt.Errorf("-%s is a flag of -yardstick", name)
			}
		}
	}
	d := defaultsOf[mode{*yardstick, *quick}]
	if !isSet("ranks") {
		*ranksFlag = d.ranks
	}
	if !isSet("sync-ranks") {
		*syncRanksFlag = d.syncRanks
	}
	if !isSet("runs") {
		*runs = d.runs
	}
	if !isSet("timeout") {
		*timeout = d.timeout
	}
	ranks, err := parseRanks(*ranksFlag)
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

	if *yardstick {
		if *runs < 1 {
			return fmt.Errorf("-runs %d: want at least 1", *runs)
		}
		cfg := yardConfig{layout: layout{root: root, prefix: *prefix}, ranks: ranks, runs: *runs, quick: *quick, timeout: *timeout, log: os.Stderr}
		if cfg.prefix == "" {
			cfg.prefix = root
		}
		if cfg.prefix, err = filepath.Abs(cfg.prefix); err != nil {
			return fmt.Errorf("-prefix: %w", err)
		}
		if cfg.mpiRanks, err = parseRanks(*mpiRanksFlag); err != nil {
			return err
		}
		if cfg.syncRanks, err = parseRanks(*syncRanksFlag); err != nil {
			return err
		}
		// Copies beyond the cores would measure the sharing of a core.
		for _, n := range ranks {
			if n >= 2 && n <= runtime.NumCPU() {
				cfg.copies = append(cfg.copies, n)
			}
		}
		if cfg.entries, err = selectNamed(entries, *only, entry.names); err != nil {
			return err
		}
		return yardstickMain(ctx, dir, cfg)
	}
	progs, err := selectNamed(programs, *only, program.names)
	if err != nil {
		return err
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

// yardstickMain measures the yardstick and writes its report to stdout
// and to dir/yardstick.md (yardstick-quick.md), with every run in
// yardstick.json.
func yardstickMain(ctx context.Context, dir string, cfg yardConfig) error {
	load := loadAverage()
	ms, err := measureYardstick(ctx, cfg)
	if err != nil {
		return err
	}
	s := yardSummary{
		machine:    time.Now().Format(time.DateOnly) + ", " + machine(),
		cores:      runtime.NumCPU(),
		load:       fmt.Sprintf("%s at the start, %s at the end", load, loadAverage()),
		command:    strings.Join(append([]string{"go run ./bench/harness"}, os.Args[1:]...), " "),
		yardConfig: cfg,
		measured:   ms,
	}
	name := "yardstick"
	if cfg.quick {
		name = "yardstick-quick"
	}
	md := filepath.Join(dir, name+".md")
	if err := writeMarkdown(md, func(w io.Writer) error { return writeYardstick(w, s) }); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, name+".json"), s.records()); err != nil {
		return err
	}
	if n := len(s.yardFailures()); n > 0 {
		return fmt.Errorf("%d builds or runs failed (%s)", n, md)
	}
	return nil
}

// mode is what the harness measures: the suite or the yardstick, at full
// or quick sizes.
type mode struct{ yardstick, quick bool }

// defaults are the flags' defaults that depend on the mode.
type defaults struct {
	ranks, syncRanks string
	runs             int
	timeout          time.Duration
}

var defaultsOf = map[mode]defaults{
	{yardstick: false, quick: false}: {ranks: "1,2,4,8", runs: 1, timeout: 15 * time.Minute},
	{yardstick: false, quick: true}:  {ranks: "1,4", runs: 1, timeout: 15 * time.Minute},
	{yardstick: true, quick: false}:  {ranks: "1,2,4", syncRanks: "2,4,8", runs: 5, timeout: 5 * time.Minute},
	{yardstick: true, quick: true}:   {ranks: "1,2", syncRanks: "2", runs: 1, timeout: 5 * time.Minute},
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

// selectNamed returns, in all's order, the elements a comma-separated
// list names, or all of them for an empty list; names lists the names an
// element answers to.
func selectNamed[T any](all []T, list string, names func(T) []string) ([]T, error) {
	if list == "" {
		return all, nil
	}
	wanted := strings.Split(list, ",")
	named := make([]bool, len(wanted))
	var chosen []T
	for _, x := range all {
		picked := false
		for i, name := range wanted {
			if slices.Contains(names(x), name) {
				named[i], picked = true, true
			}
		}
		if picked {
			chosen = append(chosen, x)
		}
	}
	for i, ok := range named {
		if !ok {
			return nil, fmt.Errorf("-programs: no program or variant %q in the table", wanted[i])
		}
	}
	return chosen, nil
}

// names are the names -programs selects the program variant by.
func (p program) names() []string {
	return []string{p.name, p.name + "/" + p.variant}
}

// writeFiles writes the report to stdout and to dir/name.md, and the
// results to dir/name.json.
func writeFiles(dir, name string, s summary) error {
	if err := writeMarkdown(filepath.Join(dir, name+".md"), func(w io.Writer) error { return writeReport(w, s) }); err != nil {
		return err
	}
	results := []report.Result{}
	for _, o := range s.outcomes {
		for _, r := range o.runs {
			if r.result != nil {
				results = append(results, *r.result)
			}
		}
		if r := o.counted(); r != nil {
			results = append(results, *r)
		}
	}
	return writeJSON(filepath.Join(dir, name+".json"), results)
}

// writeMarkdown writes a report to stdout and to the file at path.
func writeMarkdown(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	err = write(io.MultiWriter(os.Stdout, f))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	return nil
}

// writeJSON writes v, indented, to the file at path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
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

// loadAverage is this machine's load averages over 1, 5 and 15 minutes.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
