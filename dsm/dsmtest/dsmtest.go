// Package dsmtest runs jobs of real processes from Go tests and benchmarks:
// the engine runs in the test process (so the race detector watches it),
// and the test binary itself, executed again, runs as every rank. The
// package under test sends the re-executed binary to the rank's code from
// its TestMain:
//
//	func TestMain(m *testing.M) {
//		if job, ok := dsmtest.Child(); ok {
//			os.Exit(runRank(job))
//		}
//		os.Exit(m.Run())
//	}
package dsmtest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/svmcluster/svm/dsm"
	"github.com/svmcluster/svm/dsm/engine"
)

// childEnv holds, in a rank, the job description Run was given.
const childEnv = "SVM_DSMTEST_JOB"

// Child reports whether this process is a rank started by Run, and the job
// description it was given.
func Child() (string, bool) { return os.LookupEnv(childEnv) }

// Command returns the test binary set up to run as a child with the job
// description job (Child reports it), outside any job: for helper processes.
func Command(job string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+job)
	cmd.Stderr = os.Stderr
	return cmd
}

// Run runs np ranks of the test binary with the job description job, the
// engine in this process (configure, if not nil, adjusts its defaults), and
// returns what rank 0 printed. A rank or engine failure fails tb.
func Run(tb testing.TB, np int, job string, configure func(*engine.Config)) string {
	tb.Helper()
	dir, err := engine.SocketDir()
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := engine.DefaultConfig(np, engine.SocketPath(dir))
	if configure != nil {
		configure(&cfg)
	}
	eng, err := engine.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	defer eng.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	engDone := make(chan error, 1)
	go func() { engDone <- eng.Run(ctx) }()
	var out strings.Builder
	var cmds []*exec.Cmd
	for r := range np {
		cmd := Command(job)
		cmd.Env = append(cmd.Env, dsm.EnvSocket+"="+cfg.Socket, dsm.EnvRank+"="+strconv.Itoa(r))
		if r == 0 {
			cmd.Stdout = &out
		}
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for r, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			cancel()
			tb.Fatalf("rank %d: %v; rank 0 printed %q", r, err, out.String())
		}
	}
	if err := <-engDone; err != nil {
		tb.Fatal(err)
	}
	return out.String()
}
