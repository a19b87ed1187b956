package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/dsm/launch"
	"github.com/svmcluster/svm/internal/cli"
)

const runUsage = `usage: svmf run -np N [flags] PROGRAM [ARGS...]
       svmf run [-np N] --hosts NODE[:SLOTS],... [--daemon DIR] [flags] PROGRAM [ARGS...]
       svmf run [-np N] --hostfile FILE [--daemon DIR] [flags] PROGRAM [ARGS...]

Runs PROGRAM as N ranks of one SVM job. svmf starts the ranks with
SVM_SOCKET, SVM_RANK and SVM_NPROCS set, which dsm.Join reads.

Without --hosts or --hostfile the job runs on this machine: svmf itself runs
the coherence engine (never inside the ranks); rank 0 reads svmf's standard
input; every rank writes to svmf's standard output and error.

With --hosts or --hostfile, svmf submits the job to the svmd of this node
(its socket directory: --daemon, else $SVM_DAEMON, else /run/svm for root,
$XDG_RUNTIME_DIR/svm or /tmp/svm-UID for others). svmd places the ranks by
slot, as mpirun does: NODE:SLOTS takes SLOTS ranks in turn (1 if not given),
and when every slot is taken the rounds start again from the first node;
-np defaults to the total of the slots. A hostfile lists one node a line, as
"node slots=4" or "node:4", with # comments. Every node runs PROGRAM at the
same path, in the same working directory, with svmf's environment, as the
user who runs svmf; their ranks' output comes back to svmf; standard input
is not forwarded (the ranks read /dev/null).

svmf exits 0 when every rank exits 0. If a rank exits with an error or is
killed, or the engine fails (a protocol error, or a deadlock: every running
rank waiting in a lock, barrier or share no other rank can end), svmf stops
the other ranks (SIGTERM, then SIGKILL after -kill-after), reports which rank
failed and how, and exits with that rank's status (128+signal for a signal;
1 for an engine failure). Ctrl-C stops the whole job.

Sizes accept K, M, G and T suffixes (powers of 1024).

flags:
`

type runFlags struct {
	np          int
	hosts       string
	hostfile    string
	daemon      string
	tagOutput   bool
	region      string
	base        string
	locks       uint32Flag
	barriers    uint32Flag
	gcThreshold string
	prefetch    bool
	protocol    string
	writes      string
	bind        string
	stats       bool
	statsJSON   string
	profile     string
	killAfter   time.Duration
}

func runCommand(args []string, stdout, stderr io.Writer) (int, error) {
	fs, f := runFlagSet(stderr)
	if err := cli.Parse(fs, args, stdout); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return 0, nil
		}
		return 2, fmt.Errorf("run: %w", err)
	}
	if fs.NArg() == 0 {
		return 2, errors.New("run: no program given: svmf run -np N PROGRAM [ARGS...]")
	}
	if f.hosts != "" || f.hostfile != "" {
		if f.profile != "" {
			return 2, errors.New("run: --profile profiles the engine svmf runs, and the engines of a job through svmd run in the daemons: leave out --hosts, or profile svmd")
		}
		return submitCommand(*f, fs.Arg(0), fs.Args()[1:], stdout, stderr)
	}
	if f.daemon != "" {
		return 2, errors.New("run: --daemon needs --hosts or --hostfile")
	}
	if f.np == 0 {
		return 2, errors.New("run: -np N is required (or --hosts NODE:SLOTS,... to run through svmd)")
	}
	settings, err := f.settings()
	if err != nil {
		return 2, fmt.Errorf("run: %w", err)
	}
	prog, err := exec.LookPath(fs.Arg(0))
	if err != nil {
		return 2, fmt.Errorf("run: %w", err)
	}
	return runJob(engine.Config{Settings: settings}, *f, prog, fs.Args()[1:], stdout, stderr)
}

// runFlagSet defines svmf run's flags, which the engines of a Slurm step
// take too (slurm.EnvFlags).
func runFlagSet(stderr io.Writer) (*flag.FlagSet, *runFlags) {
	fs := flag.NewFlagSet("svmf run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), runUsage)
		fs.PrintDefaults()
	}
	f := &runFlags{}
	fs.IntVar(&f.np, "np", 0, "number of ranks (required)")
	fs.StringVar(&f.hosts, "hosts", "", "run across nodes: NODE[:SLOTS],... (through svmd)")
	fs.StringVar(&f.hostfile, "hostfile", "", "run across the nodes listed in FILE (through svmd)")
	fs.StringVar(&f.daemon, "daemon", "", "socket directory of this node's svmd (default $SVM_DAEMON, else the standard one)")
	fs.BoolVar(&f.tagOutput, "tag-output", false, "prefix each line of a rank's output with [rank]")
	fs.StringVar(&f.region, "region", "256M", "size of the shared region")
	fs.StringVar(&f.base, "base", fmt.Sprintf("%#x", engine.DefaultBase), "address of the shared region in every rank")
	def := engine.DefaultSettings(0)
	f.locks, f.barriers = uint32Flag(def.Locks), uint32Flag(def.Barriers)
	fs.Var(&f.locks, "locks", "`number` of lock ids")
	fs.Var(&f.barriers, "barriers", "`number` of barrier ids")
	fs.StringVar(&f.gcThreshold, "gc-threshold", "64M", "protocol metadata per rank that triggers garbage collection at a barrier")
	fs.BoolVar(&f.prefetch, "prefetch", true, "with a fault, fetch the other pages in use that the same writers supply")
	fs.StringVar(&f.protocol, "protocol", "home", "consistency protocol: home (home-based) or homeless (TreadMarks')")
	fs.StringVar(&f.writes, "writes", "auto", "how writes are found: auto (without faults where the kernel can) or faults")
	fs.StringVar(&f.bind, "bind", launch.BindAuto, "binding of ranks to CPUs: auto (one CPU each when there are enough), none, or cpu (in turn, shared when too few)")
	fs.BoolVar(&f.stats, "stats", false, "at the end, print every rank's faults, fetches, diffs, messages and waits on stderr")
	fs.StringVar(&f.statsJSON, "stats-json", "", "at the end, write the same figures as JSON to `FILE`")
	fs.StringVar(&f.profile, "profile", "", "write the engine's CPU profile to `DIR`/engine.cpu.pprof and the time its threads waited for its locks to DIR/engine.mutex.pprof (go tool pprof -top reads them)")
	fs.DurationVar(&f.killAfter, "kill-after", 2*time.Second, "how long stopped ranks get between SIGTERM and SIGKILL")
	return fs, f
}

// settings are the job's settings from the flags, checked as svmd checks
// them.
func (f runFlags) settings() (engine.Settings, error) {
	region, err := parseSize(f.region)
	if err != nil {
		return engine.Settings{}, fmt.Errorf("-region: %w", err)
	}
	gc, err := parseSize(f.gcThreshold)
	if err != nil {
		return engine.Settings{}, fmt.Errorf("-gc-threshold: %w", err)
	}
	base, err := strconv.ParseUint(f.base, 0, 64)
	if err != nil {
		return engine.Settings{}, fmt.Errorf("-base %q: not an address", f.base)
	}
	if f.protocol != "home" && f.protocol != "homeless" {
		return engine.Settings{}, fmt.Errorf("-protocol %q: want home or homeless", f.protocol)
	}
	if f.writes != "auto" && f.writes != "faults" {
		return engine.Settings{}, fmt.Errorf("-writes %q: want auto or faults", f.writes)
	}
	s := engine.Settings{
		NProcs: f.np, RegionSize: region, Base: base,
		Locks: uint32(f.locks), Barriers: uint32(f.barriers),
		GCThreshold: int64(gc), Prefetch: f.prefetch,
		Homeless: f.protocol == "homeless", WriteFaults: f.writes == "faults",
	}
	return s, s.Check(engine.MaxRanks)
}

// uint32Flag is a flag holding a uint32: a larger number is refused as the
// flags are parsed ("value out of range"), not cut down to a smaller one.
type uint32Flag uint32

func (u *uint32Flag) String() string { return strconv.FormatUint(uint64(*u), 10) }

func (u *uint32Flag) Set(s string) error {
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return err.(*strconv.NumError).Err
	}
	*u = uint32Flag(v)
	return nil
}

// parseSize reads a byte count with an optional K, M, G or T suffix.
func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	num := s
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K', 'k':
			mult, num = 1<<10, s[:n-1]
		case 'M', 'm':
			mult, num = 1<<20, s[:n-1]
		case 'G', 'g':
			mult, num = 1<<30, s[:n-1]
		case 'T', 't':
			mult, num = 1<<40, s[:n-1]
		}
	}
	v, err := strconv.ParseUint(num, 10, 64)
	if err != nil || v == 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	return v * mult, nil
}

// collectLessOften makes the garbage collector of a process that runs an
// engine run when the heap has grown fivefold rather than doubled. Most of
// an engine's heap is the ranks' page state, made at the start and alive to
// the end, which every collection scans again: at the default, a 2-rank
// job's start spent a quarter of its 40 ms in collections while that state
// grew, and the engine's messages keep adding more.
func collectLessOften() { debug.SetGCPercent(400) }

func runJob(cfg engine.Config, f runFlags, prog string, args []string, stdout, stderr io.Writer) (int, error) {
	dir, lock, err := jobDir()
	if err != nil {
		return 1, fmt.Errorf("run: %w", err)
	}
	defer lock.Close()
	defer os.RemoveAll(dir)
	cfg.Socket = engine.SocketPath(dir)
	collectLessOften()
	eng, err := engine.New(cfg)
	if err != nil {
		return 1, fmt.Errorf("run: %w", err)
	}
	defer eng.Close()
	if err := engine.AsyncWritesError(); err != nil && !cfg.WriteFaults && cfg.NProcs > 1 {
		fmt.Fprintf(stderr, "svmf: writes are found by page faults: this kernel cannot report them without (Linux 6.7+): %v\n", err)
	}
	if f.profile != "" {
		stop, err := startProfile(f.profile, stderr)
		if err != nil {
			return 1, fmt.Errorf("run: --profile: %w", err)
		}
		defer stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	engDone := make(chan error, 1)
	go func() { engDone <- eng.Run(ctx) }()

	// An interrupt, a termination or a hang-up (a closed terminal) stops
	// the job, and its directory goes with it; after a SIGKILL, which
	// svmf cannot see, the next svmf run removes the directory.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	started, cpuBefore := time.Now(), cpuTime()
	cpus, err := launch.Bindings(f.np, f.bind)
	if err != nil {
		return 2, fmt.Errorf("run: -bind: %w", err)
	}
	exits := make(chan *launch.Process, f.np)
	ranks := make([]*launch.Process, 0, f.np)
	var tagMu sync.Mutex
	for r := range f.np {
		spec := launch.Rank{Rank: r, NProcs: f.np, Socket: cfg.Socket, Program: prog, Args: args, Stdout: stdout, Stderr: stderr}
		if r == 0 {
			spec.Stdin = os.Stdin
		}
		if cpus != nil {
			spec.Bind, spec.CPU = true, cpus[r]
		}
		var taggers []*launch.Tagger
		if f.tagOutput {
			prefix := fmt.Sprintf("[%d] ", r)
			taggers = []*launch.Tagger{launch.NewTagger(stdout, prefix, &tagMu), launch.NewTagger(stderr, prefix, &tagMu)}
			spec.Stdout, spec.Stderr = taggers[0], taggers[1]
		}
		p, err := launch.Start(spec)
		if err != nil {
			launch.Stop(ranks, f.killAfter)
			for _, p := range ranks {
				<-p.Done()
			}
			return 1, fmt.Errorf("run: starting rank %d: %w", r, err)
		}
		ranks = append(ranks, p)
		go func() {
			<-p.Done()
			for _, t := range taggers {
				t.Close()
			}
			exits <- p
		}()
	}

	code := 0
	var failures []string
	running := f.np
	fail := func(c int, msg string) {
		if code == 0 {
			code = c
			if running > 0 {
				msg += "; stopping the other ranks"
			}
		}
		failures = append(failures, msg)
	}
	stopping := false
	stop := func() {
		if !stopping {
			stopping = true
			launch.Stop(ranks, f.killAfter)
		}
	}
	// An engine failure often follows a rank's death (a deadlock because it
	// is gone): give the rank's exit a moment to arrive and be reported as
	// the cause.
	var engErr error
	var engGrace <-chan time.Time
	for running > 0 {
		select {
		case p := <-exits:
			running--
			if err := p.Err(); err != nil && !stopping {
				fail(launch.ExitCode(err), fmt.Sprintf("rank %d (pid %d) %s", p.Rank, p.Cmd.Process.Pid, launch.DescribeExit(err)))
				stop()
			}
		case err := <-engDone:
			engDone = nil
			if err != nil {
				engErr, engGrace = err, time.After(300*time.Millisecond)
			}
		case <-engGrace:
			engGrace = nil
			if !stopping {
				fail(1, fmt.Sprintf("engine: %v", engErr))
				stop()
			}
		case s := <-sigs:
			if !stopping {
				fail(128+int(s.(syscall.Signal)), fmt.Sprintf("interrupted by %v", s))
				stop()
			}
		}
	}
	if f.stats || f.statsJSON != "" {
		cpu := cpuTime() - cpuBefore
		if err := reportStats(f, stderr, collectStats(time.Since(started), &cpu, eng.Snapshot())); err != nil && code == 0 {
			fail(1, err.Error())
		}
	}
	cancel()
	if engDone != nil {
		engErr = <-engDone
		if errors.Is(engErr, context.Canceled) {
			engErr = nil
		}
	}
	if engErr != nil && code == 0 {
		fail(1, fmt.Sprintf("engine: %v", engErr))
	}
	if code != 0 {
		return code, fmt.Errorf("job failed: %s", strings.Join(failures, "; "))
	}
	return 0, nil
}

// startProfile starts profiling svmf's CPU, which is the engine's while a
// job runs here, into dir/engine.cpu.pprof, and the waits on its locks
// (each rank's protocol lock among them) into dir/engine.mutex.pprof; stop
// ends it and says how to read them.
func startProfile(dir string, stderr io.Writer) (stop func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cpuPath := filepath.Join(dir, "engine.cpu.pprof")
	mutexPath := filepath.Join(dir, "engine.mutex.pprof")
	file, err := os.Create(cpuPath)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(file); err != nil {
		file.Close()
		return nil, err
	}
	runtime.SetMutexProfileFraction(1)
	return func() {
		pprof.StopCPUProfile()
		err := file.Close()
		if err == nil {
			err = writeProfile("mutex", mutexPath)
		}
		runtime.SetMutexProfileFraction(0)
		if err != nil {
			fmt.Fprintf(stderr, "svmf: --profile: %v\n", err)
			return
		}
		fmt.Fprintf(stderr, "svmf: the engine's CPU profile is in %s; read it with: go tool pprof -top %s (or -http=localhost:8080 for graphs)\n", cpuPath, cpuPath)
		fmt.Fprintf(stderr, "svmf: the time its threads waited for its locks is in %s (go tool pprof -top reads it too)\n", mutexPath)
	}, nil
}

// writeProfile writes the runtime's profile name to path.
func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = pprof.Lookup(name).WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
