package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/svmcluster/svm/bench/internal/report"
)

// mpiGoal is the highest SVM time over MPI time we aim for on a kernel
// (docs/design.md, "Where the time goes, and the yardstick").
const mpiGoal = 1.10

// yardSummary is what the yardstick's report shows.
type yardSummary struct {
	machine string // the date and the machine, for the header
	cores   int
	load    string // the load averages at the start and the end
	command string // the command that made the report
	quick   bool
	yardConfig
	measured []measured
}

// kernels and syncs are the measured entries of the two tables.
func (s yardSummary) kernels() []measured {
	return slices.DeleteFunc(slices.Clone(s.measured), func(m measured) bool { return m.entry.isSync() })
}

func (s yardSummary) syncs() []measured {
	return slices.DeleteFunc(slices.Clone(s.measured), func(m measured) bool { return !m.entry.isSync() })
}

// yardFailures lists every failed build and run, one line each.
func (s yardSummary) yardFailures() []string {
	var lines []string
	for _, m := range s.measured {
		for _, sr := range m.series {
			for i, r := range sr.runs {
				if r.err != nil {
					lines = append(lines, fmt.Sprintf("%s, %s, run %d: %v", m.entry.title, seriesWords(sr), i+1, r.err))
				}
			}
		}
	}
	return lines
}

// writeYardstick writes the Markdown report: the machine and the caveat,
// the kernels' table, the synchronisation table, what they mean, the
// failures, and every command behind a figure.
func writeYardstick(w io.Writer, s yardSummary) error {
	p := &printer{w: w}
	title := "SVM beside MPI: the yardstick"
	if s.quick {
		title += " (quick sizes)"
	}
	p.printf("# %s\n\n", title)
	p.printf("%s. Load average %s.\n\n", s.machine, s.load)
	p.printf("Made with `%s` from the module's root. Every figure is the median of %s of its command (below), "+
		"the runs of an entry interleaved (each round runs each of its commands once, in the table's order), one process at a time. "+
		"The ranks share this machine's %d cores with each other, with SVM's engine, and with whatever else runs here: "+
		"the medians damp the noise, they do not remove it.\n\n", s.command, plural(s.runs, "run"), s.cores)
	if s.quick {
		p.printf("At the quick sizes the runs check that every program works; their times say nothing.\n\n")
	}
	if ks := s.kernels(); len(ks) > 0 {
		p.table(kernelTable(s, ks))
		p.printf("\nTimes are seconds. A C kernel's is its timed part as the program measures it on rank 0, between barriers: "+
			"after the start, the allocation, the initialisation and the first iteration, and before the check. "+
			"A Go program's is its timed part (bench/results/results.md has these programs at the study's sizes, with their messages). "+
			"The Fortran program's is the whole process, start to exit, as the harness measures it: its SVM runs include starting the job, its MPI runs mpirun's start. "+
			"Its row \"a step\" is a time step alone: each of its runs is the program at fewer steps, then at the full count, and its time is theirs apart over the steps apart, "+
			"which leaves out the start, the setup and the end (mpirun's start and SVM's alike): a program of many steps tends to its speedup. "+
			"The copies are the sequential program run as that many processes at once, each the whole problem, "+
			"and their time is the slowest's: the ceiling beside it, the copies times the sequential time over theirs, "+
			"is what the machine lets that many cores do side by side with no parallel overhead at all "+
			"(they share the memory's bandwidth, the last-level cache and the clock), the speedup no parallel program of that many ranks can pass where each rank's share of the data is served as the whole is (a share small enough for a core's own caches can beat it). "+
			"Speedup is the sequential time over the job's; SVM ÷ MPI is the SVM job's time over the MPI job's at the same rank count; "+
			"the one-rank overhead is the 1-rank SVM time over the sequential time. "+
			"%s marks SVM ÷ MPI above %.2f and a one-rank overhead above %.2f: the goals. "+
			"%s after a time marks a noisy median: its slowest run took more than %.1f times its fastest (every run's time is under Commands). "+
			"Every parallel run is checked: a C kernel's SVM and MPI programs compare their result with a sequential run bit for bit, "+
			"and every run of a C kernel must print the sequential program's checksum; "+
			"every run of the Fortran program, its SVM build's and its MPI version's (mpifort), must print exactly what its gfortran-only build prints; "+
			"the Go programs compare with a sequential run. A failed run makes its cell \"failed\" (or \"timed out\") and is not run again.\n",
			mark, mpiGoal, overheadGoal, noisyMark, noisySpread)
	}
	if ss := s.syncs(); len(ss) > 0 {
		p.printf("\n## Synchronisation\n\n")
		p.table(syncTable(s, ss))
		p.printf("\nMicroseconds per call (%s: a noisy median): the timed loop's time on rank 0 over its calls, nothing written in between. "+
			"Uncontended, rank 0 alone takes and releases a lock it released last, while the others wait at a barrier; "+
			"with every rank on one lock, the time is the loop's over all the ranks' acquisitions: one hand-over.\n", noisyMark)
	}
	if notes := yardNotes(s); len(notes) > 0 {
		p.printf("\nNotes:\n\n")
		for _, n := range notes {
			p.printf("- %s\n", n)
		}
	}
	if lines := s.yardFailures(); len(lines) > 0 {
		p.printf("\nFailed:\n\n")
		for _, l := range lines {
			p.printf("- %s\n", oneLine(l))
		}
	}
	p.printf("\n## Commands\n\n")
	p.printf("From the module's root, after the harness has built the programs into %s:\n", s.display([]string{s.exe("")}))
	for _, m := range s.measured {
		p.printf("\n%s:\n\n", m.entry.title)
		format := m.entry.timeFormat()
		for _, sr := range m.series {
			if sr.skipped != "" {
				continue
			}
			p.printf("- %s: `%s`", seriesWords(sr), s.display(sr.argv))
			if sr.shortArgv != nil {
				p.printf(" less `%s`", s.display(sr.shortArgv))
			}
			if len(sr.runs) > 0 {
				runs := make([]string, len(sr.runs))
				for i, r := range sr.runs {
					if r.err != nil {
						runs[i] = failure(r.err)
					} else {
						runs[i] = format(r.time())
					}
				}
				p.printf(" — runs: %s", strings.Join(runs, ", "))
			}
			p.printf("\n")
		}
	}
	p.printf("\nThe builds:\n\n")
	var seen []string
	for _, m := range s.measured {
		var ways []way
		for _, sr := range m.series {
			if sr.skipped == "" && !slices.Contains(ways, sr.way) {
				ways = append(ways, sr.way)
			}
		}
		for _, st := range s.steps(m.entry, ways) {
			if cmd := s.display(st.argv); !slices.Contains(seen, cmd) {
				seen = append(seen, cmd)
				p.printf("- `%s`\n", cmd)
			}
		}
	}
	return p.err
}

// yardNotes are the series that never ran, and why.
func yardNotes(s yardSummary) []string {
	var notes []string
	for _, m := range s.measured {
		for _, sr := range m.series {
			if sr.skipped != "" {
				notes = append(notes, fmt.Sprintf("%s, %s: not run: %s.", m.entry.title, seriesWords(sr), sr.skipped))
			}
		}
	}
	return notes
}

// kernelTable has a row per kernel: the problem, the sequential, MPI and
// SVM times with speedups, SVM ÷ MPI and the one-rank overhead.
func kernelTable(s yardSummary, ms []measured) *table {
	both := slices.DeleteFunc(slices.Clone(s.mpiRanks), func(n int) bool { return !slices.Contains(s.ranks, n) })
	t := &table{}
	t.column("kernel", left)
	t.column("problem", left)
	t.column("sequential s", right)
	for _, n := range s.copies {
		t.column(fmt.Sprintf("%d copies: s (ceiling)", n), right)
	}
	for _, n := range s.mpiRanks {
		t.column(fmt.Sprintf("MPI %d: s (speedup)", n), right)
	}
	for _, n := range s.ranks {
		t.column(fmt.Sprintf("SVM %d: s (speedup)", n), right)
	}
	for _, n := range both {
		t.column(fmt.Sprintf("SVM ÷ MPI at %d", n), right)
	}
	if slices.Contains(s.ranks, 1) {
		t.column("1-rank overhead", right)
	}
	for _, m := range ms {
		format := m.entry.timeFormat()
		seq, seqOK := medianOf(m.find(sequential, 0))
		row := []string{m.entry.title, yardProblem(m), cell(m.find(sequential, 0), format)}
		timed := func(sr *series) string {
			c := cell(sr, format)
			if t, ok := medianOf(sr); ok && seqOK {
				c += fmt.Sprintf(" (%.2f)", seq/t)
			}
			return c
		}
		for _, n := range s.copies {
			sr := m.find(copies, n)
			c := cell(sr, format)
			if t, ok := medianOf(sr); ok && seqOK {
				c += fmt.Sprintf(" (%.2f)", float64(n)*seq/t)
			}
			row = append(row, c)
		}
		for _, n := range s.mpiRanks {
			row = append(row, timed(m.find(mpiJob, n)))
		}
		for _, n := range s.ranks {
			row = append(row, timed(m.find(svmJob, n)))
		}
		for _, n := range both {
			c := "—"
			svm, svmOK := medianOf(m.find(svmJob, n))
			mpi, mpiOK := medianOf(m.find(mpiJob, n))
			if svmOK && mpiOK {
				c = marked("%.2f", svm/mpi, mpiGoal)
			}
			row = append(row, c)
		}
		if slices.Contains(s.ranks, 1) {
			c := "—"
			if one, ok := medianOf(m.find(svmJob, 1)); ok && seqOK {
				c = overhead(one / seq)
			}
			row = append(row, c)
		}
		t.row(row)
	}
	return t
}

// syncTable has a row per microbenchmark: µs per call at each rank count.
func syncTable(s yardSummary, ms []measured) *table {
	t := &table{}
	t.column("call", left)
	for _, n := range s.syncRanks {
		t.column(fmt.Sprintf("%s: µs", rankWords(n)), right)
	}
	for _, m := range ms {
		row := []string{m.entry.title}
		for _, n := range s.syncRanks {
			sr := m.find(svmJob, n)
			if m.entry.kind == mpiSync {
				sr = m.find(mpiJob, n)
			}
			row = append(row, cell(sr, micros))
		}
		t.row(row)
	}
	return t
}

// cell is a series' median, formatted, or what became of it: "failed",
// "timed out", or — if it did not run.
func cell(sr *series, format func(float64) string) string {
	if sr == nil || sr.skipped != "" || len(sr.runs) == 0 {
		return "—"
	}
	if r := sr.failed(); r != nil {
		return failure(r.err)
	}
	m, _ := sr.median()
	if sr.noisy() {
		return format(m) + noisyMark
	}
	return format(m)
}

// noisyMark follows the median of a noisy series.
const noisyMark = "~"

// failure says how a run failed: "timed out", or "failed".
func failure(err error) string {
	if errors.Is(err, errTimedOut) {
		return "timed out"
	}
	return "failed"
}

// medianOf is the series' median, if it has one.
func medianOf(sr *series) (float64, bool) {
	if sr == nil {
		return 0, false
	}
	return sr.median()
}

// yardProblem is the problem as the first result states it.
func yardProblem(m measured) string {
	for _, sr := range m.series {
		for _, r := range sr.runs {
			if r.result != nil {
				return r.result.Params
			}
		}
	}
	return "—"
}

// plural says "1 run", "5 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// timeFormat formats the entry's times: microseconds for a
// microbenchmark, seconds to the tenth of a millisecond for a step, else
// seconds.
func (e entry) timeFormat() func(float64) string {
	switch {
	case e.isSync():
		return micros
	case e.short != "":
		return func(s float64) string { return fmt.Sprintf("%.4f", s) }
	}
	return seconds
}

// micros formats seconds as microseconds.
func micros(s float64) string {
	us := s * 1e6
	if us < 10 {
		return fmt.Sprintf("%.2f", us)
	}
	return fmt.Sprintf("%.1f", us)
}

// seriesRecord is a series in the yardstick's JSON file.
type seriesRecord struct {
	Entry   string `json:"entry"`
	Title   string `json:"title"`
	Way     string `json:"way"`
	Ranks   int    `json:"ranks"`
	Command string `json:"command"`
	// ShortCommand is the short run of an entry timed a step at a time:
	// its time is Command's less this one's, per step apart.
	ShortCommand string `json:"short_command,omitempty"`
	Skipped      string `json:"skipped,omitempty"`
	// Median is in seconds (per operation for a microbenchmark or a
	// step), present
	// only if every run passed.
	Median *float64    `json:"median_seconds,omitempty"`
	Runs   []runRecord `json:"runs"`
}

// runRecord is one run: its result line, or why it failed.
type runRecord struct {
	Result *report.Result `json:"result,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// records are the summary's series for the JSON file.
func (s yardSummary) records() []seriesRecord {
	recs := []seriesRecord{}
	for _, m := range s.measured {
		for _, sr := range m.series {
			rec := seriesRecord{
				Entry: m.entry.name, Title: m.entry.title, Way: sr.way.String(), Ranks: sr.ranks,
				Command: s.display(sr.argv), Skipped: sr.skipped, Runs: []runRecord{},
			}
			if sr.shortArgv != nil {
				rec.ShortCommand = s.display(sr.shortArgv)
			}
			if med, ok := sr.median(); ok {
				rec.Median = &med
			}
			for _, r := range sr.runs {
				rr := runRecord{Result: r.result}
				if r.err != nil {
					rr.Error = r.err.Error()
				}
				rec.Runs = append(rec.Runs, rr)
			}
			recs = append(recs, rec)
		}
	}
	return recs
}
