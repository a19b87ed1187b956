package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/svmcluster/svm/bench/internal/report"
)

// overheadGoal is the highest one-rank overhead (1-rank time / sequential
// time) we aim for; the SVM-Fortran study reports 1.025.
const overheadGoal = 1.03

// mark follows a figure that misses its goal.
const mark = "✗"

// studyRanks is the rank count of the study's published counts.
const studyRanks = 8

// summary is what the report shows.
type summary struct {
	machine  string // the date and the machine, for the header
	cores    int
	quick    bool
	ranks    []int // ascending
	outcomes []outcome
}

// countRanks is the rank count whose messages and bytes the report shows:
// the largest one run.
func (s summary) countRanks() int {
	return s.ranks[len(s.ranks)-1]
}

// compares reports whether the counts can be set beside the study's: at
// its rank count and its problem sizes.
func (s summary) compares() bool {
	return !s.quick && s.countRanks() == studyRanks
}

// failures lists every failed build and run, one line each.
func (s summary) failures() []string {
	var lines []string
	for _, o := range s.outcomes {
		if o.build != nil {
			lines = append(lines, fmt.Sprintf("%s: %v", o.prog.label(), o.build))
		}
		for _, r := range o.runs {
			if r.err != nil {
				lines = append(lines, fmt.Sprintf("%s, %s: %v", o.prog.label(), rankWords(r.ranks), r.err))
			}
		}
		if r := o.homeless; r != nil && r.err != nil {
			lines = append(lines, fmt.Sprintf("%s, %s, homeless: %v", o.prog.label(), rankWords(r.ranks), r.err))
		}
	}
	return lines
}

// writeReport writes the Markdown report: the machine and the caveat, the
// table, its notes, the failures and, at full size, the study's own
// figures.
func writeReport(w io.Writer, s summary) error {
	p := &printer{w: w}
	title := "SVM benchmarks"
	if s.quick {
		title += " (quick sizes)"
	}
	p.printf("# %s\n\n", title)
	p.printf("%s.\n\n", s.machine)
	p.printf("Speedups on this %d-core machine say little beyond %d ranks: the ranks and the coherence engine share the cores, "+
		"with other jobs running. The message and byte counts do not depend on the machine: they are the result to compare.\n\n",
		s.cores, s.cores)
	if s.quick {
		p.printf("At the quick sizes the runs check that every program works; their times are too short to judge speedups or the overhead.\n\n")
	}
	p.table(mainTable(s))
	p.printf("\nSpeedup is the sequential time over the job's; the one-rank overhead is the 1-rank time over the sequential time. ")
	p.printf("Speedups are the default, home-based protocol's. Messages, KB (1024 bytes) and the dominant message type (with its share of the messages) are for the timed part at %d ranks, summed over the ranks, with the homeless protocol (svmf run -protocol homeless), the one the study measured; home messages and home KB are the home-based protocol's at the same rank count. ", s.countRanks())
	if s.compares() {
		p.printf("TreadMarks and PVM are the study's counts on %d processors (— where it gives none); ÷TreadMarks and ÷PVM are ours over theirs. ", studyRanks)
		p.printf("%s marks a one-rank overhead above %.2f and counts above TreadMarks': the goals.\n", mark, overheadGoal)
	} else {
		p.printf("%s marks a one-rank overhead above %.2f: the goal.\n", mark, overheadGoal)
	}
	if notes := notes(s); len(notes) > 0 {
		p.printf("\nNotes:\n\n")
		for _, n := range notes {
			p.printf("- %s\n", n)
		}
	}
	if lines := s.failures(); len(lines) > 0 {
		p.printf("\nFailed:\n\n")
		for _, l := range lines {
			p.printf("- %s\n", oneLine(l))
		}
	}
	if s.compares() {
		p.printf("\n## The study's own figures (HP 9000-735/125, 1996)\n\n")
		p.table(studyTable(s))
	}
	return p.err
}

// notes are the skipped programs and, for the others at full size, what
// the study says beyond its table.
func notes(s summary) []string {
	var notes []string
	for _, o := range s.outcomes {
		if o.skipped != "" {
			notes = append(notes, fmt.Sprintf("%s: not run: %s.", o.prog.title, o.skipped))
		} else if s.compares() && o.prog.study.note != "" {
			notes = append(notes, fmt.Sprintf("%s: %s.", o.prog.title, o.prog.study.note))
		}
	}
	return notes
}

// mainTable has a row per program variant: the problem, the times and
// speedups, the one-rank overhead and the counts.
func mainTable(s summary) *table {
	t := &table{}
	t.column("program", left)
	t.column("problem", left)
	t.column("sequential s", right)
	for _, n := range s.ranks {
		t.column(rankWords(n)+": s (speedup)", right)
	}
	if slices.Contains(s.ranks, 1) {
		t.column("1-rank overhead", right)
	}
	for _, q := range quantities {
		t.column(q.name, right)
		if s.compares() {
			t.column(strings.TrimSpace("TreadMarks "+q.unit), right)
			t.column(strings.TrimSpace("PVM "+q.unit), right)
			t.column(strings.TrimSpace(q.unit+" ÷TreadMarks"), right)
			t.column(strings.TrimSpace(q.unit+" ÷PVM"), right)
		}
	}
	t.column("dominant message", left)
	for _, q := range quantities {
		t.column("home "+q.name, right)
	}
	for _, o := range s.outcomes {
		if o.skipped == "" {
			t.row(mainRow(s, o))
		}
	}
	return t
}

// mainRow is one program variant's row of the main table.
func mainRow(s summary, o outcome) []string {
	seq := o.passed(0)
	row := []string{o.prog.title, problem(o), status(o, 0)}
	if seq != nil {
		row[2] = seconds(seq.Seconds)
	}
	for _, n := range s.ranks {
		cell := status(o, n)
		if r := o.passed(n); r != nil {
			cell = seconds(r.Seconds)
			if seq != nil {
				cell += fmt.Sprintf(" (%.2f)", seq.Seconds/r.Seconds)
			}
		}
		row = append(row, cell)
	}
	if slices.Contains(s.ranks, 1) {
		cell := "—"
		if one := o.passed(1); one != nil && seq != nil {
			cell = overhead(one.Seconds / seq.Seconds)
		}
		row = append(row, cell)
	}
	at := o.counted()
	for _, q := range quantities {
		cell := "—"
		switch {
		case at != nil:
			cell = q.format(q.ours(at))
		case o.build != nil || o.homeless != nil:
			cell = "failed"
		}
		row = append(row, cell)
		if s.compares() {
			tm, pvm := o.prog.study.treadMarks, o.prog.study.pvm
			row = append(row, published(tm, q), published(pvm, q), ratio(at, tm, q, true), ratio(at, pvm, q, false))
		}
	}
	dom := "—"
	if at != nil {
		dom = dominant(at)
	}
	row = append(row, dom)
	home := o.passed(s.countRanks())
	for _, q := range quantities {
		cell := status(o, s.countRanks())
		if home != nil {
			cell = q.format(q.ours(home))
		}
		row = append(row, cell)
	}
	return row
}

// studyTable sets our sequential time and speedup at 8 ranks beside the
// study's.
func studyTable(s summary) *table {
	t := &table{}
	t.column("program", left)
	t.column("problem in the study", left)
	t.column("sequential s, 1996", right)
	t.column("ours", right)
	t.column("speedup at 8: TreadMarks", right)
	t.column("PVM", right)
	t.column("ours", right)
	for _, o := range s.outcomes {
		if o.skipped != "" {
			continue
		}
		st := o.prog.study
		row := []string{o.prog.title, st.problem, fmt.Sprint(st.seconds), "—", fmt.Sprintf("%.2f", st.speedupTreadMarks), fmt.Sprintf("%.2f", st.speedupPVM), "—"}
		seq := o.passed(0)
		if seq != nil {
			row[3] = seconds(seq.Seconds)
		}
		if r := o.passed(studyRanks); r != nil && seq != nil {
			row[6] = fmt.Sprintf("%.2f", seq.Seconds/r.Seconds)
		}
		t.row(row)
	}
	return t
}

// problem is the problem size as the program states it.
func problem(o outcome) string {
	for _, r := range o.runs {
		if r.result != nil {
			return r.result.Params
		}
	}
	return "—"
}

// status is the cell of a run without a passing result: "failed", or —
// if there was no such run.
func status(o outcome, ranks int) string {
	if o.build != nil {
		return "failed"
	}
	if r := o.find(ranks); r != nil && r.err != nil {
		return "failed"
	}
	return "—"
}

func seconds(s float64) string {
	if s >= 100 {
		return fmt.Sprintf("%.1f", s)
	}
	return fmt.Sprintf("%.3f", s)
}

func kilobytes(bytes int64) float64 { return float64(bytes) / 1024 }

func kb(k float64) string {
	if k >= 10 {
		return fmt.Sprintf("%.0f", k)
	}
	return fmt.Sprintf("%.1f", k)
}

// overhead formats a one-rank overhead, marked if above the goal.
func overhead(x float64) string {
	return marked("%.3f", x, overheadGoal)
}

// marked formats x, marked if above its goal.
func marked(format string, x, goal float64) string {
	cell := fmt.Sprintf(format, x)
	if x > goal {
		cell += " " + mark
	}
	return cell
}

// quantity is one of the counts set beside the study's: messages or
// kilobytes.
type quantity struct {
	name   string // as a column header
	unit   string // after "TreadMarks" in a header
	chart  string // the file of its chart
	ours   func(*report.Result) float64
	theirs func(*counts) float64
	format func(float64) string
}

var quantities = []quantity{
	{
		name: "messages", unit: "", chart: "messages.png",
		ours:   func(r *report.Result) float64 { return float64(r.Messages) },
		theirs: func(c *counts) float64 { return c.messages },
		format: func(x float64) string { return fmt.Sprintf("%.0f", x) },
	},
	{
		name: "KB", unit: "KB", chart: "kilobytes.png",
		ours:   func(r *report.Result) float64 { return kilobytes(r.Bytes) },
		theirs: func(c *counts) float64 { return c.kb },
		format: kb,
	},
}

// published formats a published figure, or — if there is none.
func published(c *counts, q quantity) string {
	if c == nil {
		return "—"
	}
	return q.format(q.theirs(c))
}

// ratio formats ours over a published figure, or — if either is missing;
// goal marks it when above 1.
func ratio(r *report.Result, c *counts, q quantity, goal bool) string {
	if r == nil || c == nil {
		return "—"
	}
	x := q.ours(r) / q.theirs(c)
	if !goal {
		return fmt.Sprintf("%.2f", x)
	}
	return marked("%.2f", x, 1)
}

// dominant names the message type sent most, with its share of all
// messages; the first in name order among equals.
func dominant(r *report.Result) string {
	best, most := "", int64(0)
	for name, n := range r.MessagesByType {
		if n > most || n == most && name < best {
			best, most = name, n
		}
	}
	if most == 0 || r.Messages == 0 {
		return "—"
	}
	return fmt.Sprintf("%s %.0f%%", best, 100*float64(most)/float64(r.Messages))
}

// oneLine makes text fit one Markdown list item.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// printer writes formatted text and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// table writes t with its columns padded, so it reads as well as plain
// text as it renders.
func (p *printer) table(t *table) {
	widths := make([]int, len(t.header))
	for i := range widths {
		widths[i] = 3 // the shortest rule Markdown accepts
	}
	for _, row := range append([][]string{t.header}, t.rows...) {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	line := func(cells []string) {
		p.printf("|")
		for i, cell := range cells {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if t.align[i] == right {
				p.printf(" %s%s |", pad, cell)
			} else {
				p.printf(" %s%s |", cell, pad)
			}
		}
		p.printf("\n")
	}
	line(t.header)
	rule := make([]string, len(widths))
	for i, wd := range widths {
		rule[i] = strings.Repeat("-", wd)
		if t.align[i] == right {
			rule[i] = rule[i][1:] + ":"
		}
	}
	line(rule)
	for _, row := range t.rows {
		line(row)
	}
}

type alignment bool

const (
	left  alignment = false
	right alignment = true
)

// table is a Markdown table.
type table struct {
	header []string
	align  []alignment
	rows   [][]string
}

func (t *table) column(name string, a alignment) {
	t.header = append(t.header, name)
	t.align = append(t.align, a)
}

// row adds a row; it has a cell per column.
func (t *table) row(cells []string) {
	if len(cells) != len(t.header) {
		panic(fmt.Sprintf("a row of %d cells in a table of %d columns", len(cells), len(t.header)))
	}
	t.rows = append(t.rows, cells)
}
