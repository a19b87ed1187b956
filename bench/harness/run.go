package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/svmcluster/svm/bench/internal/report"
)

// config is what to measure and how.
// quickGCThreshold is the garbage-collection threshold of quick jobs.
const quickGCThreshold = "64K"

type config struct {
	root     string        // the module's root directory
	programs []program     // what to run
	ranks    []int         // the rank counts of the svmf jobs
	quick    bool          // run the quick sizes
	timeout  time.Duration // per run
	log      io.Writer     // progress: a line per run
}

// outcome is what became of one program variant.
type outcome struct {
	prog    program
	skipped string // why it did not run; empty if it did
	build   error  // why it did not build; nil if it did
	runs    []run  // the sequential run, then one per rank count
	// homeless is the job at the largest rank count with TreadMarks'
	// homeless protocol, whose counts are set beside the study's.
	homeless *run
}

// counted returns the result whose messages and bytes are set beside the
// study's: the homeless job's, if it passed.
func (o outcome) counted() *report.Result {
	if o.homeless != nil && o.homeless.err == nil {
		return o.homeless.result
	}
	return nil
}

// run is one execution: the sequential program (ranks 0) or a job under
// svmf run.
type run struct {
	ranks  int
	result *report.Result // what the program printed; nil if nothing
	err    error          // why the run failed; nil if it passed
}

// find returns the run at ranks, or nil if there was none.
func (o outcome) find(ranks int) *run {
	for i := range o.runs {
		if o.runs[i].ranks == ranks {
			return &o.runs[i]
		}
	}
	return nil
}

// passed returns the result of the run at ranks if that run passed.
func (o outcome) passed(ranks int) *report.Result {
	if r := o.find(ranks); r != nil && r.err == nil {
		return r.result
	}
	return nil
}

// label names a program variant for people: "sor zero".
func (p program) label() string {
	return strings.TrimSpace(p.name + " " + p.variant)
}

// moduleRoot returns the root directory of the module around the working
// directory.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the svm module: run from its directory tree")
	}
	return filepath.Dir(mod), nil
}

// present reports whether bench/name holds Go files yet.
func present(root, name string) bool {
	files, _ := filepath.Glob(filepath.Join(root, "bench", name, "*.go"))
	return len(files) > 0
}

// build compiles the main package pkg of the module into exe.
func build(ctx context.Context, root, exe, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", exe, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, bytes.TrimSpace(out))
	}
	return nil
}

// measure builds svmf and the programs into a temporary directory and
// runs each program variant sequentially and at every rank count, one run
// at a time. It returns an error only if it cannot start at all, or ctx
// ends; a program that fails to build or run is reported in its outcome.
func measure(ctx context.Context, cfg config) ([]outcome, error) {
	bin, err := os.MkdirTemp("", "svm-harness-")
	if err != nil {
		return nil, fmt.Errorf("binaries directory: %w", err)
	}
	defer os.RemoveAll(bin)
	svmf := filepath.Join(bin, "svmf")
	if err := build(ctx, cfg.root, svmf, "./cmd/svmf"); err != nil {
		return nil, err
	}
	built := map[string]error{} // by program name: variants share a binary
	var outs []outcome
	for _, p := range cfg.programs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o := outcome{prog: p}
		if !present(cfg.root, p.name) {
			o.skipped = fmt.Sprintf("no bench/%s yet", p.name)
			fmt.Fprintf(cfg.log, "%s: skipped: %s\n", p.label(), o.skipped)
			outs = append(outs, o)
			continue
		}
		exe := filepath.Join(bin, p.name)
		buildErr, done := built[p.name]
		if !done {
			buildErr = build(ctx, cfg.root, exe, "./bench/"+p.name)
			built[p.name] = buildErr
		}
		if buildErr != nil {
			o.build = buildErr
			fmt.Fprintf(cfg.log, "%s: FAILED: %v\n", p.label(), buildErr)
			outs = append(outs, o)
			continue
		}
		args := p.args(cfg.quick)
		o.runs = append(o.runs, runOnce(ctx, cfg, p, 0, append([]string{exe, "-seq"}, args...)))
		job := func(n int, flags ...string) []string {
			argv := append([]string{svmf, "run", "-np", strconv.Itoa(n)}, flags...)
			if cfg.quick {
				// Small problems never reach the default threshold: collect
				// often, so that CI exercises garbage collection too.
				argv = append(argv, "-gc-threshold", quickGCThreshold)
			}
			return append(append(argv, exe), args...)
		}
		for _, n := range cfg.ranks {
			o.runs = append(o.runs, runOnce(ctx, cfg, p, n, job(n)))
		}
		if len(cfg.ranks) > 0 {
			n := slices.Max(cfg.ranks)
			r := judgeResult(execute(ctx, cfg.timeout, job(n, "-protocol", "homeless")), p.name, n)
			if r.result != nil {
				r.result.Protocol = "homeless"
			}
			fmt.Fprintf(cfg.log, "%s, %s, homeless: %s\n", p.label(), rankWords(n), r.summary())
			o.homeless = &r
		}
		outs = append(outs, o)
	}
	return outs, ctx.Err()
}

// runOnce runs one program or job and judges it (judgeResult).
func runOnce(ctx context.Context, cfg config, p program, ranks int, argv []string) run {
	r := judgeResult(execute(ctx, cfg.timeout, argv), p.name, ranks)
	fmt.Fprintf(cfg.log, "%s, %s: %s\n", p.label(), rankWords(ranks), r.summary())
	return r
}

// process is how a command ended.
type process struct {
	stdout, stderr []byte
	wall           time.Duration // from start to exit
	timedOut       bool
	err            error // why it failed (a timeout, an exit status with the end of its standard error); nil if it exited 0
}

// execute runs argv with a time limit. A command that times out gets
// SIGTERM (svmf and mpirun then stop their ranks), and SIGKILL 10 s later.
func execute(ctx context.Context, timeout time.Duration, argv []string) process {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	p := process{stdout: stdout.Bytes(), stderr: stderr.Bytes(), wall: time.Since(start)}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		p.timedOut, p.err = true, fmt.Errorf("%w after %v", errTimedOut, timeout)
	case err != nil:
		p.err = fmt.Errorf("%w%s", err, tail(stderr.String()))
	}
	return p
}

// errTimedOut marks a run that did not end within its time limit.
var errTimedOut = errors.New("timed out")

// judgeResult judges a run of a program that prints a result line: it
// fails if it timed out, exited non-zero, printed no single result of
// program at ranks, or its check is not ok.
func judgeResult(p process, program string, ranks int) run {
	res, parseErr := parseResult(p.stdout)
	r := run{ranks: ranks, result: res}
	switch {
	case p.timedOut:
		r.err = p.err
	case res != nil && res.Check != "ok":
		r.err = fmt.Errorf("check: %s", res.Check)
	case p.err != nil:
		r.err = p.err
	case parseErr != nil:
		r.err = parseErr
	case res.Program != program:
		r.err = fmt.Errorf("the result is of program %q, want %q", res.Program, program)
	case res.Ranks != ranks:
		r.err = fmt.Errorf("the result is of %d ranks, want %d", res.Ranks, ranks)
	}
	return r
}

// summary is a run's progress line.
func (r run) summary() string {
	if r.err != nil {
		return "FAILED: " + r.err.Error()
	}
	if r.ranks == 0 {
		return fmt.Sprintf("%.3f s (%s)", r.result.Seconds, r.result.Params)
	}
	return fmt.Sprintf("%.3f s, %d messages, %.1f KB", r.result.Seconds, r.result.Messages, kilobytes(r.result.Bytes))
}

// rankWords says "sequential" or "4 ranks".
func rankWords(ranks int) string {
	switch ranks {
	case 0:
		return "sequential"
	case 1:
		return "1 rank"
	}
	return fmt.Sprintf("%d ranks", ranks)
}

// tail returns the last lines of a run's standard error, to say why it
// failed.
func tail(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	if s := strings.Join(lines, "; "); s != "" {
		return ": " + s
	}
	return ""
}

// parseResult returns the one result line in a run's standard output.
func parseResult(stdout []byte) (*report.Result, error) {
	var found []*report.Result
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), report.Prefix)
		if !ok {
			continue
		}
		var r report.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("result line %q: %w", line, err)
		}
		found = append(found, &r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the output: %w", err)
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%d result lines in the output, want 1", len(found))
	}
	return found[0], nil
}
