// Command svmf is the SVM driver: svmf run starts a job on this machine with
// an embedded coherence engine (or on svmd nodes), svmf cc and svmf fc
// compile C and Fortran programs against libsvm, and svmf sim runs the
// protocol simulator on a benchmark's sharing pattern; svmf build is the
// SVM-Fortran compiler.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/svmcluster/svm/internal/cli"
)

const usage = `usage: svmf <command> [arguments]

commands:
  run     run a program as the ranks of a job on this machine (svmf run -h)
  sim     simulate a job on the protocol and count its messages (svmf sim -h)
  build   compile an SVM-Fortran program (svmf build -h)
  cc      compile and link a C program against libsvm (svmf cc -h)
  fc      compile and link a Fortran program against libsvm (svmf fc -h)
  version print svmf's module version and VCS revision

Every command takes -h (or --help) and prints its usage.

A program built against SVM and started by Slurm's srun runs as one job per
job step: its first task on each node starts "svmf slurm-engine" (found on
PATH, or at $SVM_SVMF), the node's engine, with svmf run's engine flags
from $SVM_SLURM_FLAGS.
`

const slurmEngineUsage = `usage: svmf slurm-engine

The coherence engine of a Slurm job step on this node: the step's first task
here starts it with the task's environment (SLURM_* and $SVM_SLURM_FLAGS,
svmf run's engine flags); it is not meant to be run by hand.
`

func main() {
	// SVMF_CPUPROFILE=FILE profiles svmf itself, whatever the command (svmf
	// run --profile DIR is the way for a job's engine).
	if path := os.Getenv("SVMF_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "svmf:", err)
	}
	if code != 0 {
		pprof.StopCPUProfile()
		os.Exit(code)
	}
}

// run runs the command args name. It returns the exit status and, unless
// it is 0 or the command has said why already, an error of one line.
func run(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		return 2, errors.New("no command given: svmf run -np N PROGRAM runs a job (svmf -h lists the commands)")
	}
	switch args[0] {
	case "run":
		return runCommand(args[1:], stdout, stderr)
	case "sim":
		switch err := simCommand(args[1:], stdout); {
		case errors.Is(err, cli.ErrHelp):
			return 0, nil
		case err != nil:
			return 2, err
		}
		return 0, nil
	case "build":
		return buildCommand(args[1:], stdout, stderr)
	case "cc", "fc":
		return compileCommand(args[0], args[1:], stdout, stderr)
	case "slurm-engine":
		if cli.IsHelp(args[1:]) {
			fmt.Fprint(stdout, slurmEngineUsage)
			return 0, nil
		}
		return slurmEngineCommand(stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, cli.Version("svmf"))
		return 0, nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0, nil
	}
	return 2, fmt.Errorf("unknown command %q (svmf -h lists the commands)", args[0])
}
