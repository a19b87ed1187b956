package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/bench/internal/report"
)

// TestQuick runs every program present at the quick sizes, sequentially
// and on 1 and 4 ranks, and fails if any does not build, fails or fails
// its self-check.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every benchmark program")
	}
	ctx := context.Background()
	root, err := moduleRoot(ctx)
	require.NoError(t, err)
	outs, err := measure(ctx, config{
		root: root, programs: programs, ranks: []int{1, 4}, quick: true,
		timeout: 2 * time.Minute, log: testLog{t},
	})
	require.NoError(t, err)
	var md strings.Builder
	require.NoError(t, writeReport(&md, summary{machine: "this machine", cores: 2, quick: true, ranks: []int{1, 4}, outcomes: outs}))
	t.Log("\n" + md.String())
	ran := 0
	for _, o := range outs {
		assert.NoError(t, o.build, o.prog.label())
		for _, r := range o.runs {
			assert.NoError(t, r.err, "%s, %s", o.prog.label(), rankWords(r.ranks))
		}
		if o.skipped == "" {
			ran++
		}
	}
	assert.NotZero(t, ran, "no program ran")
}

// testLog writes progress lines to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

func TestParseResult(t *testing.T) {
	line := `RESULT {"program":"sor","variant":"zero","params":"p","ranks":4,"seconds":1.5,"check":"ok","messages":10,"bytes":2048}`
	for _, tc := range []struct {
		name, out string
		want      *report.Result
		err       string
	}{
		{"one line among others", "sor: 1.5 s\n" + line + "\nbye\n", &report.Result{Program: "sor", Variant: "zero", Params: "p", Ranks: 4, Seconds: 1.5, Check: "ok", Messages: 10, Bytes: 2048}, ""},
		{"none", "sor: 1.5 s\n", nil, "0 result lines in the output, want 1"},
		{"two", line + "\n" + line + "\n", nil, "2 result lines in the output, want 1"},
		{"bad json", "RESULT {\n", nil, `result line "{"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseResult([]byte(tc.out))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestRunOnce judges runs of small shell scripts standing in for programs.
func TestRunOnce(t *testing.T) {
	p := program{name: "sor", variant: "zero"}
	ok := `echo 'RESULT {"program":"sor","ranks":4,"seconds":1,"check":"ok"}'`
	for _, tc := range []struct {
		name, script string
		err          string // "" for a pass
	}{
		{"pass", ok, ""},
		{"check fails", `echo 'RESULT {"program":"sor","ranks":4,"check":"element 3 differs"}'; exit 1`, "check: element 3 differs"},
		{"exit status", ok + `; echo 'rank 2: killed' >&2; exit 3`, "exit status 3: rank 2: killed"},
		{"no result", `echo hello`, "0 result lines"},
		{"another program", `echo 'RESULT {"program":"is","ranks":4,"check":"ok"}'`, `the result is of program "is", want "sor"`},
		{"other ranks", `echo 'RESULT {"program":"sor","ranks":2,"check":"ok"}'`, "the result is of 2 ranks, want 4"},
		{"hangs", `exec sleep 30`, "timed out after 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config{timeout: 200 * time.Millisecond, log: io.Discard}
			r := runOnce(context.Background(), cfg, p, 4, []string{"/bin/sh", "-c", tc.script})
			if tc.err == "" {
				assert.NoError(t, r.err)
				return
			}
			require.Error(t, r.err)
			assert.Contains(t, r.err.Error(), tc.err)
		})
	}
}

func TestParseRanks(t *testing.T) {
	got, err := parseRanks("8, 1,4,2,4")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 4, 8}, got)
	for _, bad := range []string{"", "1,,2", "0", "-1", "two"} {
		_, err := parseRanks(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestSelectPrograms(t *testing.T) {
	got, err := selectNamed(programs, "water/288,sor", program.names)
	require.NoError(t, err)
	var labels []string
	for _, p := range got {
		labels = append(labels, p.label())
	}
	assert.Equal(t, []string{"sor zero", "sor nonzero", "water 288"}, labels)
	_, err = selectNamed(programs, "sor,nbody", program.names)
	assert.EqualError(t, err, `-programs: no program or variant "nbody" in the table`)
}

// result is a canned passing run.
func result(program string, ranks int, seconds float64, messages, bytes int64, byType map[string]int64) run {
	return run{ranks: ranks, result: &report.Result{
		Program: program, Params: "a problem", Ranks: ranks, Seconds: seconds, Check: "ok",
		Messages: messages, Bytes: bytes, MessagesByType: byType,
	}}
}

// homeless marks a canned run as the homeless protocol's.
func homeless(r run) *run {
	r.result.Protocol = "homeless"
	return &r
}

func sorZero() program    { return programs[1] }
func sorNonZero() program { return programs[2] }
func ep() program         { return programs[0] }

// cannedSummary has SOR-Zero under its goals, SOR-NonZero above them with
// a failed 2-rank run, EP without published counts, and QSORT and TSP
// skipped.
func cannedSummary() summary {
	return summary{
		machine: "today, this machine", cores: 2, ranks: []int{1, 2, 4, 8},
		outcomes: []outcome{
			{prog: ep(), runs: []run{
				result("ep", 0, 10, 0, 0, nil), result("ep", 1, 10.1, 0, 0, nil), result("ep", 2, 5, 4, 100, nil),
				result("ep", 4, 2.5, 12, 300, nil), result("ep", 8, 1.25, 20, 500, nil),
			}, homeless: homeless(result("ep", 8, 1.25, 28, 700, map[string]int64{"LockRequest": 14, "LockGrant": 14}))},
			{prog: sorZero(), runs: []run{
				result("sor", 0, 2, 0, 0, nil), result("sor", 1, 2.04, 0, 0, nil), result("sor", 2, 1, 608, 146739, nil),
				result("sor", 4, 0.5, 1824, 452608, nil),
				result("sor", 8, 0.4, 1000, 100*1024, nil),
			}, homeless: homeless(result("sor", 8, 0.4, 3507, 254.5*1024, map[string]int64{"DiffRequest": 1600, "DiffResponse": 1600, "BarrierArrive": 307}))},
			{prog: sorNonZero(), runs: []run{
				result("sor", 0, 2, 0, 0, nil), result("sor", 1, 2.2, 0, 0, nil),
				{ranks: 2, err: errors.New("exit status 1: rank 1:\nkilled")},
				result("sor", 4, 1, 1836, 4616*1024, nil),
				result("sor", 8, 1, 8000, 10000*1024, map[string]int64{"DiffRequest": 4000, "DiffResponse": 4000}),
			}, homeless: &run{ranks: 8, err: errors.New("exit status 1: rank 3: timed out")}},
			{prog: programs[6], skipped: "no bench/qsort yet"},
			{prog: programs[5], skipped: "no bench/tsp yet"},
		},
	}
}

func TestMainRow(t *testing.T) {
	s := cannedSummary()
	header := mainTable(s).header
	cells := func(o outcome) map[string]string {
		row := mainRow(s, o)
		require.Len(t, row, len(header))
		m := map[string]string{}
		for i, h := range header {
			m[h] = row[i]
		}
		return m
	}
	for _, tc := range []struct {
		o    outcome
		want map[string]string
	}{
		{s.outcomes[0], map[string]string{
			"program": "EP", "sequential s": "10.000", "8 ranks: s (speedup)": "1.250 (8.00)", "1-rank overhead": "1.010",
			"messages": "28", "TreadMarks": "—", "PVM": "—", "÷TreadMarks": "—", "÷PVM": "—",
			"KB": "0.7", "TreadMarks KB": "—", "KB ÷TreadMarks": "—", "dominant message": "LockGrant 50%",
			"home messages": "20", "home KB": "0.5",
		}},
		{s.outcomes[1], map[string]string{
			"program": "SOR-Zero", "problem": "a problem", "sequential s": "2.000", "1 rank: s (speedup)": "2.040 (0.98)",
			"2 ranks: s (speedup)": "1.000 (2.00)", "8 ranks: s (speedup)": "0.400 (5.00)", "1-rank overhead": "1.020",
			"messages": "3507", "TreadMarks": "7014", "PVM": "1414", "÷TreadMarks": "0.50", "÷PVM": "2.48",
			"KB": "254", "TreadMarks KB": "509", "PVM KB": "8607", "KB ÷TreadMarks": "0.50", "KB ÷PVM": "0.03",
			"dominant message": "DiffRequest 46%", "home messages": "1000", "home KB": "100",
		}},
		{s.outcomes[2], map[string]string{
			"1-rank overhead": "1.100 ✗", "2 ranks: s (speedup)": "failed", "4 ranks: s (speedup)": "1.000 (2.00)",
			"messages": "failed", "÷TreadMarks": "—", "KB": "failed", "dominant message": "—",
			"home messages": "8000", "home KB": "10000",
		}},
	} {
		t.Run(tc.o.prog.title, func(t *testing.T) {
			got := cells(tc.o)
			for h, want := range tc.want {
				assert.Equal(t, want, got[h], "column %q: got %q, want %q", h, got[h], want)
			}
		})
	}
}

func TestReport(t *testing.T) {
	s := cannedSummary()
	var b strings.Builder
	require.NoError(t, writeReport(&b, s))
	md := b.String()
	for _, want := range []string{
		"# SVM benchmarks\n",
		"today, this machine.",
		"Speedups on this 2-core machine say little beyond 2 ranks",
		"at 8 ranks, summed over the ranks, with the homeless protocol (svmf run -protocol homeless), the one the study measured; home messages and home KB are the home-based protocol's at the same rank count. TreadMarks and PVM are the study's counts",
		"✗ marks a one-rank overhead above 1.03 and counts above TreadMarks': the goals.",
		"- EP: the study publishes no counts for EP",
		"- QSORT: not run: no bench/qsort yet.\n- TSP: not run: no bench/tsp yet.\n",
		"- sor nonzero, 2 ranks: exit status 1: rank 1: killed\n",
		"## The study's own figures",
	} {
		assert.Contains(t, md, want)
	}
	assert.Regexp(t, `\| SOR-Zero +\| 1024 × 3072 floats, 50 iterations +\| +79 \| +2\.000 \| +4\.58 \| +4\.71 \| +5\.00 \|`, md)
	assert.NotContains(t, md, "| QSORT", "a skipped program has no row")
	assert.NotContains(t, md, "TSP: the study", "nor a note from the study")
	// Every line of a table is as wide as its header.
	var width int
	for line := range strings.Lines(md) {
		switch {
		case !strings.HasPrefix(line, "|"):
			width = 0
		case width == 0:
			width = utf8.RuneCountInString(line)
		default:
			assert.Equal(t, width, utf8.RuneCountInString(line), "line %q", line)
		}
	}

	s.quick, s.ranks = true, []int{1, 4}
	b.Reset()
	require.NoError(t, writeReport(&b, s))
	md = b.String()
	assert.Contains(t, md, "# SVM benchmarks (quick sizes)")
	assert.Contains(t, md, "At the quick sizes the runs check that every program works")
	assert.Contains(t, md, "home KB are the home-based protocol's at the same rank count. ✗ marks a one-rank overhead above 1.03: the goal.")
	for _, absent := range []string{"TreadMarks", "PVM", "we run 2^24 pairs", "study's own"} {
		assert.NotContains(t, md, absent, "quick sizes are not compared with the study")
	}
}

func TestCharts(t *testing.T) {
	dir := t.TempDir()
	files, err := drawCharts(dir, cannedSummary())
	require.NoError(t, err)
	assert.Equal(t, []string{"messages.png", "kilobytes.png", "speedup.png"}, names(files))
	for _, f := range files {
		info, err := os.Stat(f)
		require.NoError(t, err)
		assert.Positive(t, info.Size(), f)
	}

	nothing := cannedSummary()
	for i := range nothing.outcomes {
		nothing.outcomes[i].runs = nil
	}
	files, err = drawCharts(dir, nothing)
	require.NoError(t, err)
	assert.Equal(t, []string{"speedup.png"}, names(files), "no counts: no count charts")
}

func names(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return out
}

func TestDecades(t *testing.T) {
	var labels []string
	for _, tick := range (decades{}).Ticks(0, 6) {
		if tick.Label != "" {
			labels = append(labels, tick.Label)
		}
	}
	assert.Equal(t, []string{"1", "10", "100", "1k", "10k", "100k", "1M"}, labels)
	assert.Equal(t, 0.0, logBar(0), "no bar for nothing")
	assert.InDelta(t, 3.0, logBar(1000), 1e-12)
}
