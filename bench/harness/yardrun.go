package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svmcluster/svm/bench/internal/report"
)

// yardConfig is what the yardstick measures and how.
type yardConfig struct {
	layout
	entries   []entry
	ranks     []int // the SVM jobs of the kernels
	mpiRanks  []int // the MPI jobs of the kernels
	copies    []int // how many copies of a kernel's sequential program run at once
	syncRanks []int // the microbenchmarks' jobs
	runs      int   // of every command
	quick     bool
	timeout   time.Duration // per run
	log       io.Writer
}

// series is every run of one command: an entry's program in one way at
// one rank count.
type series struct {
	way   way
	ranks int // 0 for the sequential program; for copies, how many
	argv  []string
	// shortArgv is the short run of an entry timed a step at a time, run
	// before argv each time; nil for any other.
	shortArgv []string
	runs      []run
	skipped   string // why it never ran (no MPI here); "" if it did
}

// measured is an entry and the series of its commands.
type measured struct {
	entry  entry
	series []*series
	// reference is the answer of the entry's first passing run (its
	// sequential program's, as that runs first), which every other run
	// must give; by is that run's command. The short runs of an entry
	// timed a step at a time have theirs.
	reference, by           string
	shortReference, shortBy string
}

// find returns the series of way at ranks, or nil if there is none.
func (m measured) find(w way, ranks int) *series {
	for _, s := range m.series {
		if s.way == w && s.ranks == ranks {
			return s
		}
	}
	return nil
}

// failed returns the series' failed run, or nil.
func (s *series) failed() *run {
	for i := range s.runs {
		if s.runs[i].err != nil {
			return &s.runs[i]
		}
	}
	return nil
}

// times are the series' times in run order (per operation for a
// microbenchmark); nil unless it ran and every run passed.
func (s *series) times() []float64 {
	if len(s.runs) == 0 || s.failed() != nil {
		return nil
	}
	var times []float64
	for _, r := range s.runs {
		times = append(times, r.time())
	}
	return times
}

// time is a passing run's time, per operation for a microbenchmark and per
// step for an entry timed a step at a time.
func (r run) time() float64 {
	if r.result.Ops > 0 {
		return r.result.Seconds / float64(r.result.Ops)
	}
	return r.result.Seconds
}

// median is the median of the series' times; ok is false unless it ran
// and every run passed.
func (s *series) median() (median float64, ok bool) {
	times := s.times()
	slices.Sort(times)
	n := len(times)
	switch {
	case n == 0:
		return 0, false
	case n%2 == 1:
		return times[n/2], true
	}
	return (times[n/2-1] + times[n/2]) / 2, true
}

// noisy reports whether the series' runs are far apart: the slowest
// over noisySpread times the fastest. Other work on the machine does that.
func (s *series) noisy() bool {
	times := s.times()
	return len(times) > 1 && slices.Max(times) > noisySpread*slices.Min(times)
}

// noisySpread is the spread of a series' times (slowest over fastest)
// beyond which its median is marked as noisy.
const noisySpread = 1.5

// measureYardstick builds the installed layout and the entries' programs,
// then runs every entry's commands in rounds — each command once a round,
// in order (sequential, MPI, SVM at each rank count), one process at a
// time — cfg.runs times. A command that fails, by its build or a run, is
// not run again. It returns an error only if it cannot start at all, or
// ctx ends; failures are in the series.
func measureYardstick(ctx context.Context, cfg yardConfig) ([]measured, error) {
	fmt.Fprintf(cfg.log, "building the installed layout under %s\n", cfg.prefix)
	layoutCmd := exec.CommandContext(ctx, "scripts/install-layout", cfg.prefix)
	layoutCmd.Dir = cfg.root
	if out, err := layoutCmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("scripts/install-layout %s: %w\n%s", cfg.prefix, err, bytes.TrimSpace(out))
	}
	if err := os.MkdirAll(cfg.exe(""), 0o755); err != nil {
		return nil, fmt.Errorf("programs directory: %w", err)
	}
	built := map[string]error{} // by output: entries share programs
	var all []measured
	for _, e := range cfg.entries {
		m := measured{entry: e}
		missing := mpiMissing(e.mpiCompiler())
		var ways []way
		for _, w := range e.ways() {
			if w == mpiJob && missing != "" {
				m.series = append(m.series, cfg.seriesOf(e, w, missing)...)
				continue
			}
			ways = append(ways, w)
			m.series = append(m.series, cfg.seriesOf(e, w, "")...)
		}
		for _, st := range cfg.steps(e, ways) {
			err, done := built[st.out]
			if !done {
				err = buildStep(ctx, cfg.layout, st)
				built[st.out] = err
			}
			if err == nil {
				continue
			}
			fmt.Fprintf(cfg.log, "%s: FAILED: %v\n", e.name, err)
			for _, s := range m.series {
				if s.skipped == "" && cfg.binary(e, s.way) == st.out {
					s.runs = append(s.runs, run{ranks: s.ranks, err: err})
				}
			}
		}
		all = append(all, m)
	}
	for i := range all {
		m := &all[i]
		for round := range cfg.runs {
			for _, s := range m.series {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if s.skipped != "" || s.failed() != nil {
					continue
				}
				r := m.runOnce(ctx, cfg, s)
				s.runs = append(s.runs, r)
				fmt.Fprintf(cfg.log, "%s, %s, run %d of %d: %s\n", m.entry.name, seriesWords(s), round+1, cfg.runs, r.yardSummary(m.entry))
			}
		}
	}
	return all, ctx.Err()
}

// seriesOf returns the entry's series in way w: one per rank count.
func (cfg yardConfig) seriesOf(e entry, w way, skipped string) []*series {
	counts := []int{0}
	switch {
	case w == sequential:
	case e.isSync():
		counts = cfg.syncRanks
	case w == mpiJob:
		counts = cfg.mpiRanks
	case w == copies:
		counts = cfg.copies
	default:
		counts = cfg.ranks
	}
	var ss []*series
	for _, n := range counts {
		ss = append(ss, &series{way: w, ranks: n, argv: cfg.command(e, w, n, cfg.quick), shortArgv: cfg.shortCommand(e, w, n, cfg.quick), skipped: skipped})
	}
	return ss
}

// buildStep runs one build command in the module's root.
func buildStep(ctx context.Context, l layout, st step) error {
	cmd := exec.CommandContext(ctx, st.argv[0], st.argv[1:]...)
	cmd.Dir = l.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %s: %w\n%s", l.display(st.argv), err, bytes.TrimSpace(out))
	}
	return nil
}

// runOnce runs the series' command once and judges it. For an entry timed
// a step at a time it runs the short command first (perStep).
func (m *measured) runOnce(ctx context.Context, cfg yardConfig, s *series) run {
	if s.shortArgv == nil {
		return m.runJudged(ctx, cfg, s, s.argv, &m.reference, &m.by)
	}
	short := m.runJudged(ctx, cfg, s, s.shortArgv, &m.shortReference, &m.shortBy)
	if short.err != nil {
		short.err = fmt.Errorf("the run of fewer steps, %s: %w", cfg.display(s.shortArgv), short.err)
		return short
	}
	return m.perStep(cfg, s, short, m.runJudged(ctx, cfg, s, s.argv, &m.reference, &m.by))
}

// runJudged runs argv of the series once and judges it against the
// reference answer. A series of copies starts its copies together; each
// must pass as a run of the sequential program would, and the run is the
// slowest copy's.
func (m *measured) runJudged(ctx context.Context, cfg yardConfig, s *series, argv []string, reference, by *string) run {
	if s.way != copies {
		return m.judgeAgainst(cfg, s, argv, execute(ctx, cfg.timeout, argv), reference, by)
	}
	procs := make([]process, s.ranks)
	var wg sync.WaitGroup
	for i := range procs {
		wg.Go(func() { procs[i] = execute(ctx, cfg.timeout, argv) })
	}
	wg.Wait()
	alone := &series{way: sequential, argv: argv}
	var slowest run
	for i, p := range procs {
		r := m.judgeAgainst(cfg, alone, argv, p, reference, by)
		r.ranks = s.ranks
		if r.err != nil {
			r.err = fmt.Errorf("copy %d of %d: %w", i+1, s.ranks, r.err)
			return r
		}
		if slowest.result == nil || r.result.Seconds > slowest.result.Seconds {
			slowest = r
		}
	}
	return slowest
}

// perStep is a run of an entry timed a step at a time from its short and
// its full run, both passed: their times apart, per step apart.
func (m *measured) perStep(cfg yardConfig, s *series, short, full run) run {
	if full.err != nil {
		return full
	}
	steps, err := m.entry.stepsApart(cfg.quick)
	if err != nil {
		return run{ranks: s.ranks, err: err}
	}
	apart := full.result.Seconds - short.result.Seconds
	if apart <= 0 && !cfg.quick { // at the quick sizes times say nothing
		return run{ranks: s.ranks, err: fmt.Errorf("%.3f s for %s against %.3f s for %s: the longer run was not the slower (the machine is too busy to time a step)",
			full.result.Seconds, cfg.display(s.argv), short.result.Seconds, cfg.display(s.shortArgv))}
	}
	r := full
	res := *full.result
	res.Seconds, res.Ops = apart, int64(steps)
	r.result = &res
	return r
}

// judgeAgainst judges a run of argv in the series. A C kernel and the
// Fortran program must also give the reference answer (the C kernels'
// checksum, the Fortran program's whole output) of its command, which the
// first passing run sets.
func (m *measured) judgeAgainst(cfg yardConfig, s *series, argv []string, p process, reference, by *string) run {
	var r run
	var answer string
	switch m.entry.kind {
	case fortranProgram:
		r = run{ranks: s.ranks, err: p.err}
		if p.err == nil {
			var args []any
			for _, a := range append(m.entry.args(cfg.quick), m.entry.shortArgs(cfg.quick)...) {
				args = append(args, a)
			}
			r.result = &report.Result{
				Program: m.entry.program(), Params: fmt.Sprintf(m.entry.problem, args...),
				Ranks: s.ranks, Seconds: p.wall.Seconds(), Check: "ok",
			}
			answer = string(p.stdout)
		}
	case cKernel:
		r = judgeResult(p, m.entry.program(), s.ranks)
		if r.err == nil {
			answer = r.result.Checksum
		}
	default:
		return judgeResult(p, m.entry.program(), s.ranks)
	}
	if r.err != nil {
		return r
	}
	switch {
	case answer == "":
		r.err = errors.New("it printed no answer to compare")
	case *reference == "":
		*reference, *by = answer, cfg.display(argv)
	case answer != *reference:
		r.err = fmt.Errorf("its answer differs from that of %s: %s", *by, difference(answer, *reference))
	}
	return r
}

// difference says where an answer first differs from the reference.
func difference(answer, reference string) string {
	got, want := strings.Split(answer, "\n"), strings.Split(reference, "\n")
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("line %d is %q, want %q", i+1, strings.TrimSpace(got[i]), strings.TrimSpace(want[i]))
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(got), len(want))
}

// yardSummary is a run of e's progress line: its time (time) per operation
// for a microbenchmark, per step for an entry timed a step at a time.
func (r run) yardSummary(e entry) string {
	switch {
	case r.err != nil:
		return "FAILED: " + r.err.Error()
	case e.isSync():
		return fmt.Sprintf("%.2f µs per operation (%s)", 1e6*r.time(), r.result.Params)
	case e.short != "":
		return fmt.Sprintf("%.2f ms per step (%s)", 1e3*r.time(), r.result.Params)
	}
	return fmt.Sprintf("%.3f s (%s)", r.time(), r.result.Params)
}

// seriesWords names a series for people: "sequential", "SVM 2 ranks",
// "2 copies at once".
func seriesWords(s *series) string {
	switch s.way {
	case sequential:
		return s.way.String()
	case copies:
		return fmt.Sprintf("%d copies at once", s.ranks)
	}
	return s.way.String() + " " + rankWords(s.ranks)
}
