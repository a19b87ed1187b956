package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/bench/internal/report"
)

// TestYardstickKernels builds the installed layout into a temporary
// prefix and runs every C kernel, the shallow-water program and every
// microbenchmark at its quick size: sequentially, as 2 copies of the
// sequential program at once, as an SVM job of 1 and 2 ranks and as an
// MPI job of 2. Every parallel run of a C kernel must
// pass its own check against a sequential run and print the sequential
// program's checksum; every run of shallow water, SVM and MPI, must print
// what gfortran's build prints.
func TestYardstickKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the C kernels")
	}
	ctx := context.Background()
	root, err := moduleRoot(ctx)
	require.NoError(t, err)
	chosen, err := selectNamed(entries, "c,fortran,sync", entry.names)
	require.NoError(t, err)
	cfg := yardConfig{
		layout: layout{root: root, prefix: t.TempDir()}, entries: chosen,
		ranks: []int{1, 2}, mpiRanks: []int{2}, copies: []int{2}, syncRanks: []int{2}, runs: 1, quick: true,
		timeout: 2 * time.Minute, log: testLog{t},
	}
	ms, err := measureYardstick(ctx, cfg)
	require.NoError(t, err)
	for _, m := range ms {
		for _, s := range m.series {
			t.Run(m.entry.name+"/"+strings.ReplaceAll(seriesWords(s), " ", "-"), func(t *testing.T) {
				if s.skipped != "" {
					require.Equal(t, mpiJob, s.way, "only MPI jobs are skipped")
					t.Skip(s.skipped)
				}
				require.Len(t, s.runs, 1)
				require.NoError(t, s.runs[0].err)
				if m.entry.kind == cKernel {
					assert.Equal(t, m.reference, s.runs[0].result.Checksum)
				}
				if m.entry.kind == fortranProgram {
					last := func(args []string) string { return fmt.Sprintf("shallow%6s |U| |V| PP", args[len(args)-1]) }
					assert.Contains(t, m.reference, last(m.entry.args(true)), "the reference is the whole output")
					if m.entry.short != "" {
						assert.Contains(t, m.shortReference, last(m.entry.shortArgs(true)), "and the short run's its own")
					}
				}
			})
		}
	}
}

func TestEntries(t *testing.T) {
	names := map[string]bool{}
	for _, e := range entries {
		assert.False(t, names[e.name], "two entries named %s", e.name)
		names[e.name] = true
		assert.NotEmpty(t, e.args(false), e.name)
		assert.NotEmpty(t, e.args(true), e.name)
	}
	for _, want := range []string{"c/sor", "c/jacobi", "c/is", "fortran/shallow", "fortran/shallow-step", "go/sor/zero", "go/ep", "go/is/small", "go/water/1728", "sync/barrier", "sync/lock"} {
		assert.True(t, names[want], "no entry %s", want)
	}
	got, err := selectNamed(entries, "go/sor,sync", entry.names)
	require.NoError(t, err)
	var chosen []string
	for _, e := range got {
		chosen = append(chosen, e.name)
	}
	assert.Equal(t, []string{"go/sor/zero", "sync/barrier", "sync/mpi-barrier", "sync/lock", "sync/lock-contended"}, chosen)
	assert.Equal(t, []way{sequential, copies, mpiJob, svmJob}, entryNamed(t, "c/sor").ways())
	assert.Equal(t, []way{sequential, copies, mpiJob, svmJob}, entryNamed(t, "fortran/shallow").ways(), "shallow water has its MPI version")
	assert.Equal(t, []way{sequential, copies, svmJob}, entry{kind: fortranProgram, source: "x.f"}.ways(), "a Fortran program without one")
	assert.Equal(t, []way{sequential, svmJob}, entryNamed(t, "go/ep").ways())
	assert.Equal(t, "mpifort", entryNamed(t, "fortran/shallow").mpiCompiler())
	assert.Equal(t, "mpicc", entryNamed(t, "c/sor").mpiCompiler())
	assert.Equal(t, "mpicc", entryNamed(t, "sync/mpi-barrier").mpiCompiler())
	_, err = selectNamed(entries, "c/nbody", entry.names)
	assert.EqualError(t, err, `-programs: no program or variant "c/nbody" in the table`)

	step := entryNamed(t, "fortran/shallow-step")
	apart, err := step.stepsApart(false)
	require.NoError(t, err)
	assert.Equal(t, 40, apart, "50 steps less 10")
	apart, err = step.stepsApart(true)
	require.NoError(t, err)
	assert.Equal(t, 36, apart, "the quick sizes: 40 steps less 4")
	for _, bad := range []entry{
		{name: "x", full: "64 4", short: "64 10"},
		{name: "x", full: "64 4", short: "64 4"},
		{name: "x", full: "64 many", short: "64 4"},
		{name: "x", full: "64 4"},
	} {
		_, err := bad.stepsApart(false)
		assert.Error(t, err, "%+v", bad)
	}
	_, err = entry{name: "x", full: "64 4", short: "64 ten"}.stepsApart(false)
	assert.EqualError(t, err, `x: the last arguments, "4" and "ten", are not step counts with the full run's the larger`)
	assert.Empty(t, entryNamed(t, "fortran/shallow").shortArgs(false), "the whole-process entry has no short run")
}

// entryNamed returns the yardstick's entry of that name.
func entryNamed(t *testing.T, name string) entry {
	for _, e := range entries {
		if e.name == name {
			return e
		}
	}
	t.Fatalf("no entry %s", name)
	return entry{}
}

func TestCommands(t *testing.T) {
	l := layout{root: "/src/svm", prefix: "/src/svm"}
	sor, is, shallow := entryNamed(t, "c/sor"), entryNamed(t, "go/is/small"), entryNamed(t, "fortran/shallow")
	step := entryNamed(t, "fortran/shallow-step")
	assert.Nil(t, l.shortCommand(shallow, svmJob, 2, false), "no short run but for an entry timed a step at a time")
	assert.Equal(t, l.binary(shallow, svmJob), l.binary(step, svmJob), "both entries run one program")
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{l.command(sor, sequential, 0, false), "bin/yardstick/sor-seq 1024 3072 200"},
		{l.command(sor, copies, 2, false), "bin/yardstick/sor-seq 1024 3072 200"},
		{l.shortCommand(step, copies, 2, false), "bin/yardstick/shallow-seq 1024 10"},
		{l.command(sor, svmJob, 2, false), "bin/svmf run -np 2 bin/yardstick/sor-svm 1024 3072 200"},
		{l.command(sor, mpiJob, 2, true), "--oversubscribe --bind-to none --mca btl self,vader -np 2 bin/yardstick/sor-mpi 64 128 4"},
		{l.command(is, sequential, 0, false), "bin/yardstick/is -seq -keys-log2 25 -range-log2 7 -iter 90"},
		{l.command(is, svmJob, 4, false), "bin/svmf run -np 4 -region 512M bin/yardstick/is -keys-log2 25"},
		{l.command(shallow, sequential, 0, true), "bin/yardstick/shallow-seq 64 4"},
		{l.command(shallow, svmJob, 1, true), "bin/svmf run -np 1 bin/yardstick/shallow 64 4"},
		{l.command(shallow, mpiJob, 2, false), "--oversubscribe --bind-to none --mca btl self,vader -np 2 bin/yardstick/shallow-mpi 1024 50"},
		{l.shortCommand(step, svmJob, 2, false), "bin/svmf run -np 2 bin/yardstick/shallow 1024 10"},
		{l.shortCommand(step, sequential, 0, true), "bin/yardstick/shallow-seq 64 4"},
		{l.command(step, mpiJob, 2, false), "-np 2 bin/yardstick/shallow-mpi 1024 50"},
	} {
		assert.Contains(t, l.display(tc.argv), tc.want)
	}
	var builds []string
	for _, st := range l.steps(sor, sor.ways()) {
		builds = append(builds, l.display(st.argv))
	}
	assert.Equal(t, []string{
		"gcc -o bin/yardstick/sor-seq -O2 -falign-loops=64 bench/kernels/sor_seq.c",
		"mpicc -o bin/yardstick/sor-mpi -O2 -falign-loops=64 bench/kernels/sor_mpi.c",
		"bin/svmf cc -o bin/yardstick/sor-svm -O2 -falign-loops=64 bench/kernels/sor_svm.c",
	}, builds)
	builds = nil
	for _, st := range l.steps(shallow, shallow.ways()) {
		builds = append(builds, l.display(st.argv))
	}
	assert.Equal(t, []string{
		"bin/svmf build -o bin/yardstick/shallow-seq -nodist -O2 -falign-loops=64 svmfortran/compile/testdata/programs/shallow.f",
		"mpifort -o bin/yardstick/shallow-mpi -O2 -falign-loops=64 bench/kernels/shallow_mpi.f",
		"bin/svmf build -o bin/yardstick/shallow -O2 -falign-loops=64 svmfortran/compile/testdata/programs/shallow.f",
	}, builds, "gfortran, mpifort and svmf build take the same flags; the copies run the sequential program")
}

// passing is a canned passing run.
func passing(ranks int, seconds float64, ops int64, checksum string) run {
	return run{ranks: ranks, result: &report.Result{Params: "a problem", Ranks: ranks, Seconds: seconds, Ops: ops, Check: "ok", Checksum: checksum}}
}

// TestProgressLine: a run's progress line gives a step's time for an entry
// timed a step at a time, an operation's for a microbenchmark, and the
// whole run's otherwise.
func TestProgressLine(t *testing.T) {
	step, barrier, sor := entryNamed(t, "fortran/shallow-step"), entryNamed(t, "sync/barrier"), entryNamed(t, "c/sor")
	assert.Equal(t, "6.20 ms per step (a problem)", passing(2, 0.248, 40, "").yardSummary(step))
	assert.Equal(t, "20.50 µs per operation (a problem)", passing(2, 0.0205, 1000, "").yardSummary(barrier))
	assert.Equal(t, "0.150 s (a problem)", passing(2, 0.15, 0, "").yardSummary(sor))
	assert.Equal(t, "FAILED: no answer", run{err: errors.New("no answer")}.yardSummary(step))
}

func TestMedian(t *testing.T) {
	s := &series{runs: []run{passing(2, 3, 0, ""), passing(2, 1, 0, ""), passing(2, 2, 0, "")}}
	m, ok := s.median()
	assert.True(t, ok)
	assert.Equal(t, 2.0, m)
	s.runs = append(s.runs, passing(2, 10, 0, ""))
	m, _ = s.median()
	assert.Equal(t, 2.5, m, "even: the mean of the middle two")
	s = &series{runs: []run{passing(2, 0.002, 100, ""), passing(2, 0.004, 100, "")}}
	m, _ = s.median()
	assert.InDelta(t, 30e-6, m, 1e-12, "per operation")
	s.runs = append(s.runs, run{ranks: 2, err: errors.New("exit status 1")})
	_, ok = s.median()
	assert.False(t, ok, "a failed run leaves no median")
	_, ok = (&series{}).median()
	assert.False(t, ok, "nor does no run")

	s = &series{runs: []run{passing(2, 1, 0, ""), passing(2, 1.4, 0, "")}}
	assert.False(t, s.noisy())
	assert.Equal(t, "1.200", cell(s, seconds))
	s.runs = append(s.runs, passing(2, 1.6, 0, ""))
	assert.True(t, s.noisy(), "the slowest took more than 1.5 times the fastest")
	assert.Equal(t, "1.400~", cell(s, seconds))
}

// TestJudge judges runs of a C kernel and of the Fortran program against
// their first passing run.
func TestJudge(t *testing.T) {
	cfg := yardConfig{layout: layout{root: "/r", prefix: "/r"}, timeout: time.Second}
	judge := func(m *measured, s *series, p process) run {
		return m.judgeAgainst(cfg, s, s.argv, p, &m.reference, &m.by)
	}
	result := func(checksum string) process {
		return process{stdout: fmt.Appendf(nil, `RESULT {"program":"sor","ranks":2,"seconds":1,"check":"ok","checksum":%q}`+"\n", checksum)}
	}
	m := &measured{entry: entryNamed(t, "c/sor")}
	seq := &series{way: sequential, argv: []string{"/r/bin/yardstick/sor-seq", "1"}}
	job := &series{way: svmJob, ranks: 2, argv: []string{"/r/bin/svmf", "run"}}
	first := judge(m, seq, process{stdout: []byte(`RESULT {"program":"sor","ranks":0,"seconds":1,"check":"ok","checksum":"42"}`)})
	require.NoError(t, first.err)
	assert.Equal(t, "42", m.reference)
	assert.Equal(t, "bin/yardstick/sor-seq 1", m.by)
	assert.NoError(t, judge(m, job, result("42")).err)
	assert.EqualError(t, judge(m, job, result("43")).err, `its answer differs from that of bin/yardstick/sor-seq 1: line 1 is "43", want "42"`)
	assert.EqualError(t, judge(m, job, result("")).err, "it printed no answer to compare")

	f := &measured{entry: entryNamed(t, "fortran/shallow")}
	out := "shallow N = 64\nshallow 0 P U V 1.0\n"
	r := judge(f, seq, process{stdout: []byte(out), wall: 1500 * time.Millisecond})
	require.NoError(t, r.err)
	assert.Equal(t, 1.5, r.result.Seconds, "the process's time")
	assert.Equal(t, "1024 × 1024 grid, 50 steps, whole process", r.result.Params)
	assert.NoError(t, judge(f, job, process{stdout: []byte(out)}).err)
	assert.EqualError(t, judge(f, job, process{stdout: []byte("shallow N = 64\nshallow 0 P U V 1.1\n")}).err,
		`its answer differs from that of bin/yardstick/sor-seq 1: line 2 is "shallow 0 P U V 1.1", want "shallow 0 P U V 1.0"`)
	mpi := &series{way: mpiJob, ranks: 2, argv: []string{"mpirun", "-np", "2", "/r/bin/yardstick/shallow-mpi"}}
	r = judge(f, mpi, process{stdout: []byte(out), wall: 800 * time.Millisecond})
	require.NoError(t, r.err, "the MPI version's output is judged as the SVM build's")
	assert.Equal(t, 0.8, r.result.Seconds)
	assert.Equal(t, 2, r.result.Ranks)
	assert.EqualError(t, judge(f, mpi, process{stdout: []byte("shallow N = 64\n")}).err,
		`its answer differs from that of bin/yardstick/sor-seq 1: line 2 is "", want "shallow 0 P U V 1.0"`)
	timedOut := judge(f, job, process{timedOut: true, err: fmt.Errorf("%w after 1s", errTimedOut)})
	assert.ErrorIs(t, timedOut.err, errTimedOut)
}

// TestPerStep: a step's time is the full run's less the short run's, over
// the steps apart; a failed run, or a full run no slower than the short
// one, fails it.
func TestPerStep(t *testing.T) {
	cfg := yardConfig{layout: layout{root: "/r", prefix: "/r"}}
	m := &measured{entry: entryNamed(t, "fortran/shallow-step")}
	s := &series{way: svmJob, ranks: 2, argv: []string{"/r/bin/svmf", "run", "50"}, shortArgv: []string{"/r/bin/svmf", "run", "10"}}
	r := m.perStep(cfg, s, passing(2, 0.2, 0, ""), passing(2, 0.44, 0, ""))
	require.NoError(t, r.err)
	assert.InDelta(t, 0.006, r.time(), 1e-12, "(0.44 - 0.2) / 40")
	assert.Equal(t, int64(40), r.result.Ops)
	failed := run{ranks: 2, err: errors.New("exit status 1")}
	assert.Equal(t, failed, m.perStep(cfg, s, passing(2, 0.2, 0, ""), failed))
	r = m.perStep(cfg, s, passing(2, 0.3, 0, ""), passing(2, 0.3, 0, ""))
	assert.EqualError(t, r.err, "0.300 s for bin/svmf run 50 against 0.300 s for bin/svmf run 10: the longer run was not the slower (the machine is too busy to time a step)")
	cfg.quick = true
	r = m.perStep(cfg, s, passing(2, 0.3, 0, ""), passing(2, 0.29, 0, ""))
	require.NoError(t, r.err, "at the quick sizes times say nothing")
	assert.InDelta(t, -0.01/36, r.time(), 1e-12)
}

// TestRunOnceShort runs an entry timed a step at a time with real
// processes: its short and full runs each must give the answer of their
// first run.
func TestRunOnceShort(t *testing.T) {
	// At the quick sizes: echo's times say nothing.
	cfg := yardConfig{layout: layout{root: "/r", prefix: "/r"}, timeout: time.Minute, quick: true}
	m := &measured{entry: entry{name: "x/step", kind: fortranProgram, quick: "8 3", quickShort: "8 1", problem: "%[1]s: %[2]s steps less %[4]s"}}
	say := func(words string) []string { return []string{"sh", "-c", "echo " + words} }
	s := &series{way: sequential, argv: say("three steps"), shortArgv: say("one step")}
	r := m.runOnce(context.Background(), cfg, s)
	require.NoError(t, r.err)
	assert.Equal(t, "8: 3 steps less 1", r.result.Params)
	assert.Equal(t, int64(2), r.result.Ops)
	assert.Equal(t, "three steps\n", m.reference)
	assert.Equal(t, "one step\n", m.shortReference)
	assert.Equal(t, "sh -c echo one step", m.shortBy)

	job := &series{way: svmJob, ranks: 2, argv: say("three steps"), shortArgv: say("one stop")}
	assert.EqualError(t, m.runOnce(context.Background(), cfg, job).err,
		`the run of fewer steps, sh -c echo one stop: its answer differs from that of sh -c echo one step: line 1 is "one stop", want "one step"`)
	job = &series{way: svmJob, ranks: 2, argv: say("three stops"), shortArgv: say("one step")}
	assert.EqualError(t, m.runOnce(context.Background(), cfg, job).err,
		`its answer differs from that of sh -c echo three steps: line 1 is "three stops", want "three steps"`)
}

// TestRunOnceCopies: a series of copies starts them together, judges each
// as a run of the sequential program, and takes the slowest's time; a copy
// with another answer fails the run, naming it.
func TestRunOnceCopies(t *testing.T) {
	cfg := yardConfig{layout: layout{root: "/r", prefix: "/r"}, timeout: time.Minute}
	m := &measured{entry: entry{name: "x", kind: fortranProgram, full: "8", problem: "%[1]s"}}
	// Each copy sleeps its turn: the third copy started is the slowest.
	dir := t.TempDir()
	sleepy := []string{"sh", "-c", `n=$(mkdir ` + dir + `/a 2>/dev/null && echo 0 || (mkdir ` + dir + `/b 2>/dev/null && echo 0 || echo 0.3)); sleep $n; echo the answer`}
	start := time.Now()
	r := m.runOnce(context.Background(), cfg, &series{way: copies, ranks: 3, argv: sleepy})
	require.NoError(t, r.err)
	assert.Equal(t, 3, r.ranks)
	assert.GreaterOrEqual(t, r.result.Seconds, 0.3, "the slowest copy's time")
	assert.Less(t, time.Since(start), 900*time.Millisecond, "the copies ran at once")
	assert.Equal(t, "the answer\n", m.reference)

	other := []string{"sh", "-c", `mkdir ` + dir + `/c 2>/dev/null && echo the answer || echo another answer`}
	r = m.runOnce(context.Background(), cfg, &series{way: copies, ranks: 2, argv: other})
	require.Error(t, r.err)
	assert.Regexp(t, `^copy [12] of 2: its answer differs from that of sh -c .*: line 1 is "another answer", want "the answer"$`, r.err.Error())
}

// cannedYardstick has SOR with every way passing, Jacobi with a failed
// and a timed-out job and no MPI here, a Go program, shallow water with
// its MPI version, and four microbenchmarks, one of them failed at 8
// ranks.
func cannedYardstick(t *testing.T) yardSummary {
	cfg := yardConfig{
		layout: layout{root: "/r", prefix: "/r"},
		ranks:  []int{1, 2, 4}, mpiRanks: []int{2}, copies: []int{2}, syncRanks: []int{2, 4, 8}, runs: 3,
	}
	times := func(w way, ranks int, skipped string, secs ...float64) *series {
		s := &series{way: w, ranks: ranks, argv: []string{"/r/bin/x", fmt.Sprint(ranks)}, skipped: skipped}
		for _, x := range secs {
			s.runs = append(s.runs, passing(ranks, x, 0, "1"))
		}
		return s
	}
	sor := measured{entry: entryNamed(t, "c/sor"), series: []*series{
		times(sequential, 0, "", 0.26, 0.25, 0.27), times(copies, 2, "", 0.32, 0.34, 0.33), times(mpiJob, 2, "", 0.13, 0.14, 0.12),
		times(svmJob, 1, "", 0.33, 0.32, 0.34), times(svmJob, 2, "", 5.5, 5.6, 5.58), times(svmJob, 4, "", 0.1, 0.1, 0.1),
	}}
	failed, late := times(svmJob, 2, "", 1), times(svmJob, 4, "")
	failed.runs = append(failed.runs, run{ranks: 2, err: errors.New("check: element 7 differs")})
	late.runs = append(late.runs, run{ranks: 4, err: fmt.Errorf("%w after 5m0s", errTimedOut)})
	jacobi := measured{entry: entryNamed(t, "c/jacobi"), series: []*series{
		times(sequential, 0, "", 0.5), times(mpiJob, 2, "mpicc not found"), times(svmJob, 1, "", 0.5), failed, late,
	}}
	goEP := measured{entry: entryNamed(t, "go/ep"), series: []*series{
		times(sequential, 0, "", 4), times(svmJob, 1, "", 4.2), times(svmJob, 2, "", 2), times(svmJob, 4, "", 2),
	}}
	shallow := measured{entry: entryNamed(t, "fortran/shallow"), series: []*series{
		times(sequential, 0, "", 0.52, 0.53, 0.51), times(mpiJob, 2, "", 0.40, 0.42, 0.41),
		times(svmJob, 1, "", 0.6), times(svmJob, 2, "", 0.6, 0.62, 0.58), times(svmJob, 4, "", 0.9),
	}}
	stepped := func(s *series) *series {
		s.shortArgv = append(slices.Clone(s.argv), "short")
		for i := range s.runs {
			s.runs[i].result.Ops = 40
		}
		return s
	}
	step := measured{entry: entryNamed(t, "fortran/shallow-step"), series: []*series{
		stepped(times(sequential, 0, "", 0.32, 0.33, 0.31)), stepped(times(copies, 2, "", 0.4, 0.4, 0.4)), stepped(times(mpiJob, 2, "", 0.2, 0.19, 0.21)),
		stepped(times(svmJob, 2, "", 0.24, 0.24, 0.25)),
	}}
	perOp := func(w way, ranks int, micros float64) *series {
		return &series{way: w, ranks: ranks, argv: []string{"/r/bin/b"}, runs: []run{passing(ranks, micros*1e-6*1000, 1000, "")}}
	}
	barrier := measured{entry: entryNamed(t, "sync/barrier"), series: []*series{
		perOp(svmJob, 2, 98), perOp(svmJob, 4, 120), {way: svmJob, ranks: 8, argv: []string{"/r/bin/b"}, runs: []run{{ranks: 8, err: errors.New("exit status 1")}}},
	}}
	mpiBarrier := measured{entry: entryNamed(t, "sync/mpi-barrier"), series: []*series{perOp(mpiJob, 2, 0.45), perOp(mpiJob, 4, 4.86), perOp(mpiJob, 8, 13.3)}}
	lock := measured{entry: entryNamed(t, "sync/lock"), series: []*series{perOp(svmJob, 2, 80), perOp(svmJob, 4, 90), perOp(svmJob, 8, 100)}}
	handOver := measured{entry: entryNamed(t, "sync/lock-contended"), series: []*series{perOp(svmJob, 2, 60), perOp(svmJob, 4, 130), perOp(svmJob, 8, 200)}}
	return yardSummary{
		machine: "today, this machine", cores: 2, load: "2.00 at the start, 1.00 at the end", command: "go run ./bench/harness -yardstick",
		yardConfig: cfg, measured: []measured{sor, jacobi, goEP, shallow, step, barrier, mpiBarrier, lock, handOver},
	}
}

func TestKernelTable(t *testing.T) {
	s := cannedYardstick(t)
	tb := kernelTable(s, s.kernels())
	assert.Equal(t, []string{"kernel", "problem", "sequential s", "2 copies: s (ceiling)", "MPI 2: s (speedup)", "SVM 1: s (speedup)", "SVM 2: s (speedup)",
		"SVM 4: s (speedup)", "SVM ÷ MPI at 2", "1-rank overhead"}, tb.header)
	require.Len(t, tb.rows, 5)
	assert.Equal(t, []string{"Red-black SOR (C)", "a problem", "0.260", "0.330 (1.58)", "0.130 (2.00)", "0.330 (0.79)", "5.580 (0.05)", "0.100 (2.60)", "42.92 ✗", "1.269 ✗"}, tb.rows[0],
		"the ceiling: 2 × 0.26 s over the copies' 0.33 s")
	assert.Equal(t, []string{"Jacobi 2-D (C)", "a problem", "0.500", "—", "—", "0.500 (1.00)", "failed", "timed out", "—", "1.000"}, tb.rows[1])
	assert.Equal(t, []string{"EP (Go)", "a problem", "4.000", "—", "—", "4.200 (0.95)", "2.000 (2.00)", "2.000 (2.00)", "—", "1.050 ✗"}, tb.rows[2])
	assert.Equal(t, []string{"Shallow water (SVM-Fortran)", "a problem", "0.520", "—", "0.410 (1.27)", "0.600 (0.87)", "0.600 (0.87)", "0.900 (0.58)", "1.46 ✗", "1.154 ✗"},
		tb.rows[3], "shallow water's MPI column, its speedup and SVM ÷ MPI")
	assert.Equal(t, []string{"Shallow water (SVM-Fortran), a step", "a problem", "0.0080", "0.0100 (1.60)", "0.0050 (1.60)", "—", "0.0060 (1.33)", "—", "1.20 ✗", "—"},
		tb.rows[4], "a step's times, to a tenth of a millisecond")

	st := syncTable(s, s.syncs())
	assert.Equal(t, []string{"call", "2 ranks: µs", "4 ranks: µs", "8 ranks: µs"}, st.header)
	assert.Equal(t, [][]string{
		{"Tmk_barrier", "98.0", "120.0", "failed"},
		{"MPI_Barrier (reference)", "0.45", "4.86", "13.3"},
		{"Tmk_lock_acquire + release, uncontended", "80.0", "90.0", "100.0"},
		{"Tmk_lock_acquire + release, every rank on one lock", "60.0", "130.0", "200.0"},
	}, st.rows)
}

func TestWriteYardstick(t *testing.T) {
	s := cannedYardstick(t)
	var b strings.Builder
	require.NoError(t, writeYardstick(&b, s))
	md := b.String()
	for _, want := range []string{
		"# SVM beside MPI: the yardstick\n",
		"today, this machine. Load average 2.00 at the start, 1.00 at the end.",
		"Made with `go run ./bench/harness -yardstick` from the module's root. Every figure is the median of 3 runs",
		"| Red-black SOR (C) ",
		"## Synchronisation\n",
		"| MPI_Barrier (reference) ",
		"- Jacobi 2-D (C), MPI 2 ranks: not run: mpicc not found.\n",
		"- Jacobi 2-D (C), SVM 2 ranks, run 2: check: element 7 differs\n",
		"- Jacobi 2-D (C), SVM 4 ranks, run 1: timed out after 5m0s\n",
		"- Tmk_barrier, SVM 8 ranks, run 1: exit status 1\n",
		"From the module's root, after the harness has built the programs into bin/yardstick:",
		"Red-black SOR (C):\n\n- sequential: `bin/x 0` — runs: 0.260, 0.250, 0.270\n- 2 copies at once: `bin/x 2` — runs: 0.320, 0.340, 0.330\n- MPI 2 ranks: `bin/x 2` — runs: 0.130, 0.140, 0.120\n",
		"the speedup no parallel program of that many ranks can pass",
		"- SVM 2 ranks: `bin/x 2` — runs: 1.000, failed\n- SVM 4 ranks: `bin/x 4` — runs: timed out\n",
		"- MPI 8 ranks: `bin/b` — runs: 13.3\n",
		"Shallow water (SVM-Fortran):\n\n- sequential: `bin/x 0` — runs: 0.520, 0.530, 0.510\n- MPI 2 ranks: `bin/x 2` — runs: 0.400, 0.420, 0.410\n",
		"- `mpifort -o bin/yardstick/shallow-mpi -O2 -falign-loops=64 bench/kernels/shallow_mpi.f`\n",
		"Shallow water (SVM-Fortran), a step:\n\n- sequential: `bin/x 0` less `bin/x 0 short` — runs: 0.0080, 0.0083, 0.0077\n",
		"- `gcc -o bin/yardstick/sor-seq -O2 -falign-loops=64 bench/kernels/sor_seq.c`\n",
		"- `bin/svmf cc -o bin/yardstick/lock-svm -O2 -falign-loops=64 bench/kernels/lock_svm.c`\n",
	} {
		assert.Contains(t, md, want)
	}
	assert.NotContains(t, md, "- MPI 2 ranks: `bin/x 2`\n- SVM 1 rank: `bin/x 1` — runs: 0.500", "a command that did not run is not listed")
	assert.NotContains(t, md, "jacobi_mpi.c", "nor its build")
	assert.Equal(t, 1, strings.Count(md, "lock_svm.c"), "a program built once is listed once")
	assert.Len(t, s.yardFailures(), 3)

	recs := s.records()
	require.Len(t, recs, 6+5+4+5+4+3+3+3+3)
	assert.Equal(t, seriesRecord{Entry: "c/sor", Title: "Red-black SOR (C)", Way: "copies", Ranks: 2, Command: "bin/x 2", Median: ptr(0.33), Runs: recs[1].Runs}, recs[1])
	recs = slices.Delete(recs, 1, 2)
	assert.Equal(t, seriesRecord{Entry: "c/sor", Title: "Red-black SOR (C)", Way: "MPI", Ranks: 2, Command: "bin/x 2", Median: ptr(0.13), Runs: recs[1].Runs}, recs[1])
	assert.Len(t, recs[1].Runs, 3)
	assert.Equal(t, "mpicc not found", recs[6].Skipped)
	assert.Nil(t, recs[8].Median, "a failed series has no median")
	assert.Equal(t, "check: element 7 differs", recs[8].Runs[1].Error)
	assert.Equal(t, seriesRecord{Entry: "fortran/shallow", Title: "Shallow water (SVM-Fortran)", Way: "MPI", Ranks: 2, Command: "bin/x 2", Median: ptr(0.41), Runs: recs[15].Runs}, recs[15])
	assert.Equal(t, "copies", recs[20].Way)
	recs = slices.Delete(recs, 20, 21)
	assert.Equal(t, "bin/x 2 short", recs[20].ShortCommand, "a step's short run")
	assert.InDelta(t, 0.005, *recs[20].Median, 1e-12, "per step")
	assert.Empty(t, recs[15].ShortCommand)
}

func ptr(x float64) *float64 { return &x }

// TestYardstickWithoutMPI runs the harness's measurement with no mpicc
// or mpifort on PATH: the MPI jobs are skipped with the reason, and
// nothing fails.
func TestYardstickWithoutMPI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	assert.Contains(t, mpiMissing("mpicc"), "mpicc not found (scripts/setup installs Debian's openmpi-bin and libopenmpi-dev")
	assert.Contains(t, mpiMissing("mpifort"), "mpifort not found (scripts/setup installs Debian's openmpi-bin and libopenmpi-dev")
	cfg := yardConfig{layout: layout{root: "/r", prefix: "/r"}, mpiRanks: []int{2}, ranks: []int{1}, log: io.Discard}
	ss := cfg.seriesOf(entryNamed(t, "c/sor"), mpiJob, mpiMissing("mpicc"))
	require.Len(t, ss, 1)
	assert.Equal(t, filepath.Join("/r", "bin", "yardstick", "sor-mpi"), ss[0].argv[len(ss[0].argv)-4])
	assert.Equal(t, "—", cell(ss[0], seconds))

	shallow := entryNamed(t, "fortran/shallow")
	ss = cfg.seriesOf(shallow, mpiJob, mpiMissing(shallow.mpiCompiler()))
	require.Len(t, ss, 1)
	assert.Equal(t, filepath.Join("/r", "bin", "yardstick", "shallow-mpi"), ss[0].argv[len(ss[0].argv)-3])
	s := yardSummary{yardConfig: cfg, measured: []measured{{entry: shallow, series: ss}}}
	notes := yardNotes(s)
	require.Len(t, notes, 1)
	assert.True(t, strings.HasPrefix(notes[0], "Shallow water (SVM-Fortran), MPI 2 ranks: not run: mpifort not found"), notes[0])
	assert.Equal(t, "—", kernelTable(s, s.kernels()).rows[0][3], "the MPI cell")
}
