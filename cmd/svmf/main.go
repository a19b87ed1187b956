// Command svmf is the SVM driver. Today it has one subcommand, sim, which runs
// the protocol simulator on a benchmark's sharing pattern and prints the
// messages and bytes the real protocol code sends; the job launcher (run) and
// the SVM-Fortran compiler (build) join it in later steps.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

const usage = `usage: svmf <command> [arguments]

commands:
  sim     simulate a job on the protocol and count its messages (svmf sim -h)
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "svmf:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "sim":
		return simCommand(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
