// Command svmf is the SVM driver: svmf run starts a job on this machine with
// an embedded coherence engine (or on svmd nodes), svmf cc and svmf fc
// compile C and Fortran programs against libsvm, and svmf sim runs the
// protocol simulator on a benchmark's sharing pattern; svmf build is the
// SVM-Fortran compiler.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

const usage = `usage: svmf <command> [arguments]

commands:
  run     run a program as the ranks of a job on this machine (svmf run -h)
  sim     simulate a job on the protocol and count its messages (svmf sim -h)
  build   compile an SVM-Fortran program (svmf build -h)
  cc      compile and link a C program against libsvm (svmf cc -h)
  fc      compile and link a Fortran program against libsvm (svmf fc -h)

A program built against SVM and started by Slurm's srun runs as one job per
job step: its first task on each node starts "svmf slurm-engine" (found on
PATH, or at $SVM_SVMF), the node's engine, with svmf run's engine flags
from $SVM_SLURM_FLAGS.
`

func main() {
	// SVMF_CPUPROFILE=FILE profiles svmf itself (the engine of svmf run).
	if path := os.Getenv("SVMF_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "svmf:", err)
	}
	if code != 0 {
		pprof.StopCPUProfile()
		os.Exit(code)
	}
}

func run(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2, errors.New("no command given")
	}
	switch args[0] {
	case "run":
		return runCommand(args[1:], stdout, stderr)
	case "sim":
		if err := simCommand(args[1:], stdout, stderr); err != nil {
			return 2, err
		}
		return 0, nil
	case "build":
		return buildCommand(args[1:], stdout, stderr)
	case "cc", "fc":
		return compileCommand(args[0], args[1:], stdout, stderr)
	case "slurm-engine":
		return slurmEngineCommand(stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0, nil
	}
	fmt.Fprint(stderr, usage)
	return 2, fmt.Errorf("unknown command %q", args[0])
}
