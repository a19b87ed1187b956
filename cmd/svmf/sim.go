package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/svmcluster/svm/dsm/sim"
	"github.com/svmcluster/svm/internal/cli"
)

const simUsage = `usage: svmf sim sor [flags]

Simulates red-black SOR as the TreadMarks study ran it — a matrix kept as red
and black float32 arrays, one band of rows per rank, two barriers per
iteration — over the real protocol code (lrc, locks, barriers, codec) with
every value read checked, and prints the messages and bytes it sends in the
measured iterations beside TreadMarks' published counts.

flags:
`

// treadmarksSOR are the published TreadMarks 0.9.4 counts for SOR on 8
// processors, 1024 × 3072, 50 measured iterations (../shared/reference).
var treadmarksSOR = map[bool]struct{ messages, kilobytes int }{
	false: {7014, 509},  // SOR-Zero
	true:  {7014, 8853}, // SOR-NonZero
}

func simCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("svmf sim sor", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), simUsage)
		fs.PrintDefaults()
	}
	np := fs.Int("np", 8, "ranks")
	rows := fs.Int("rows", 1024, "matrix rows")
	cols := fs.Int("cols", 3072, "matrix columns (even)")
	iterations := fs.Int("iterations", 50, "measured iterations")
	warmup := fs.Int("warmup", 1, "iterations run before measuring")
	pageSize := fs.Int("page-size", 4096, "page size in bytes")
	prefetch := fs.Bool("prefetch", true, "fetch the other pages in use from the same writers with a fault")
	proto := fs.String("protocol", "home", "home (home-based) or homeless (TreadMarks')")
	variant := fs.String("variant", "both", "zero (edges 1, interior 0), nonzero, or both")
	switch {
	case cli.IsHelp(args):
		return cli.Parse(fs, args[:1], stdout)
	case len(args) == 0:
		return errors.New("sim: name a program: svmf sim sor [flags]")
	case args[0] != "sor":
		return fmt.Errorf("sim: unknown program %q: svmf sim sor is the one there is", args[0])
	}
	if err := cli.Parse(fs, args[1:], stdout); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return err
		}
		return fmt.Errorf("sim sor: %w", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("sim sor: unexpected argument %q", fs.Arg(0))
	}
	if *proto != "home" && *proto != "homeless" {
		return fmt.Errorf("sim sor: -protocol %q: want home or homeless", *proto)
	}
	var variants []bool
	switch *variant {
	case "zero":
		variants = []bool{false}
	case "nonzero":
		variants = []bool{true}
	case "both":
		variants = []bool{false, true}
	default:
		return fmt.Errorf("sim sor: -variant %q: want zero, nonzero or both", *variant)
	}
	for _, nonzero := range variants {
		cfg := sim.SORConfig{NProcs: *np, Rows: *rows, Cols: *cols, PageSize: *pageSize, NonZero: nonzero}
		res, err := sim.RunSOR(cfg, *warmup, *iterations, *prefetch, *proto == "home")
		if err != nil {
			return err
		}
		name := map[bool]string{false: "SOR-Zero", true: "SOR-NonZero"}[nonzero]
		fmt.Fprintf(stdout, "%s: %d × %d float32 on %d ranks, %d iterations measured after %d, %d-byte pages, %s protocol, prefetch %v\n",
			name, *rows, *cols, *np, *iterations, *warmup, *pageSize, *proto, *prefetch)
		fmt.Fprint(stdout, res)
		if tm := treadmarksSOR[nonzero]; *np == 8 && *rows == 1024 && *cols == 3072 && *iterations == 50 && *pageSize == 4096 {
			msgs, bytes := res.Stats.Total()
			fmt.Fprintf(stdout, "TreadMarks (published): %d messages, %d KB; here %d messages (%.2f×), %.0f KB (%.2f×)\n",
				tm.messages, tm.kilobytes, msgs, float64(msgs)/float64(tm.messages),
				float64(bytes)/1024, float64(bytes)/1024/float64(tm.kilobytes))
		}
		fmt.Fprintln(stdout)
	}
	return nil
}
