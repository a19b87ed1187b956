// Command barnes is the SPLASH Barnes-Hut n-body simulation as the
// TreadMarks version of the TreadMarks vs PVM study (section 3.9) runs it:
// the array of bodies is shared and the cells of the octree are private. In
// each time step every rank reads all the bodies and builds the whole tree
// in its own memory (maketree), takes its bodies by costzones (the bodies
// in tree order whose cumulative cost from the last force phase falls in
// its share, so a rank's bodies are adjacent in the tree but scattered over
// the shared array), computes the forces on them by walking its tree into
// private memory, and then updates their records in shared memory
// (acceleration, potential, cost, velocity, position), with a barrier after
// maketree, after the force computation (which only reads the bodies) and
// after the update. Run it with svmf run -np N barnes [flags]; with -seq it
// runs alone, without shared memory, for the sequential time.
//
// The input is generated deterministically: one Plummer model drawn with
// SPLASH's generator and seed (123) the way SPLASH's testdata draws one
// (SPLASH-2 places two such spheres side by side), and SPLASH's defaults:
// opening criterion theta 1.0, softening 0.05, time step 0.025, leapfrog
// integration, one body per leaf. Bodies are 96-byte records in index
// order, 42⅔ to a 4 KiB page; each rank writes an equal block of the
// initial bodies. Of -steps steps (6 in the study) the first is not timed:
// the time and the counters are those of the last steps-1.
//
// Rank 0 checks the result against a sequential run: every rank builds the
// same tree from the same positions and each body's force is summed in tree
// order whichever rank computes it, so every field of every body must equal
// the sequential run's bit for bit. -check=false skips that (it costs rank 0
// a sequential run).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"time"
	"unsafe"

	"github.com/svmcluster/svm/bench/internal/report"
	"github.com/svmcluster/svm/dsm"
)

type params struct {
	bodies, steps int
	theta         float64
}

func (p params) String() string {
	return fmt.Sprintf("%d bodies, %d steps (last %d timed), theta %g", p.bodies, p.steps, p.steps-1, p.theta)
}

func main() {
	var p params
	flag.IntVar(&p.bodies, "bodies", 4096, "number of bodies")
	flag.IntVar(&p.steps, "steps", 6, "time steps (the first is not timed)")
	flag.Float64Var(&p.theta, "theta", 1.0, "opening criterion: a cell nearer than its size/theta is opened")
	seq := flag.Bool("seq", false, "run sequentially, without shared memory")
	check := flag.Bool("check", true, "compare the result with a sequential run")
	flag.Parse()
	if p.bodies < 2 || p.bodies > math.MaxInt32 || p.steps < 2 || !(p.theta > 0) || math.IsInf(p.theta, 0) {
		fmt.Fprintf(os.Stderr, "barnes: %d bodies, %d steps, theta %g: want at least 2 bodies, 2 steps and a finite theta > 0\n", p.bodies, p.steps, p.theta)
		os.Exit(2)
	}
	r := report.Result{Program: "barnes", Variant: "", Params: p.String(), Check: "ok"}
	if *seq {
		_, took, err := sequential(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "barnes:", err)
			os.Exit(1)
		}
		r.Seconds = took.Seconds()
		report.Sequential(r)
		return
	}
	if err := parallel(p, *check, r); err != nil {
		fmt.Fprintln(os.Stderr, "barnes:", err)
		os.Exit(1)
	}
}

// sequential runs the simulation in private memory and returns the bodies
// and the time of the steps after the first.
func sequential(p params) ([]body, time.Duration, error) {
	bs := plummer(p.bodies)
	var t tree
	var all []int32
	var fs []force
	var start time.Time
	for step := range p.steps {
		if step == 1 {
			start = time.Now()
		}
		if err := t.build(bs); err != nil {
			return nil, 0, fmt.Errorf("step %d: %w", step, err)
		}
		all = t.zone(bs, 0, 1, all)
		fs = t.forces(bs, all, p.theta, fs)
		advance(bs, all, fs, step == 0)
	}
	return bs, time.Since(start), nil
}

func parallel(p params, check bool, r report.Result) error {
	n, err := dsm.Join(context.Background(), dsm.Funneled()) // one goroutine writes shared memory
	if err != nil {
		return err
	}
	defer n.Close()
	a, err := n.Alloc(p.bodies * int(unsafe.Sizeof(body{})))
	if err != nil {
		return err
	}
	bs := dsm.Slice[body](a, p.bodies)
	np, me := n.NProcs(), n.Rank()
	copy(bs[me*p.bodies/np:(me+1)*p.bodies/np], plummer(p.bodies)[me*p.bodies/np:(me+1)*p.bodies/np])
	if err := n.Barrier(0); err != nil {
		return err
	}
	var t tree
	var mine []int32
	var fs []force
	var before dsm.Stats
	var start time.Time
	for step := range p.steps {
		if step == 1 {
			before = n.Stats()
			start = time.Now()
		}
		if err := t.build(bs); err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
		mine = t.zone(bs, me, np, mine)
		if err := n.Barrier(0); err != nil {
			return err
		}
		fs = t.forces(bs, mine, p.theta, fs)
		if err := n.Barrier(0); err != nil {
			return err
		}
		advance(bs, mine, fs, step == 0)
		if err := n.Barrier(0); err != nil {
			return err
		}
	}
	took := time.Since(start)
	after := n.Stats()
	if check && me == 0 {
		r.Check = compare(p, bs)
	}
	if err := report.Parallel(n, 63, r, took, before, after); err != nil {
		return err
	}
	if r.Check != "ok" {
		return fmt.Errorf("check: %s", r.Check)
	}
	return nil
}

// compare checks the shared bodies against a sequential run.
func compare(p params, bs []body) string {
	want, _, err := sequential(p)
	if err != nil {
		return fmt.Sprintf("the sequential run failed: %v", err)
	}
	for i := range want {
		if d := differ(bs[i], want[i]); d != "" {
			return fmt.Sprintf("body %d differs from the sequential run: %s", i, d)
		}
	}
	return "ok"
}

// differ names the first field in which got differs from want bit for bit,
// or returns "".
func differ(got, want body) string {
	fields := []struct {
		name      string
		got, want []float64
	}{
		{"position", got.Pos[:], want.Pos[:]},
		{"velocity", got.Vel[:], want.Vel[:]},
		{"acceleration", got.Acc[:], want.Acc[:]},
		{"mass", []float64{got.Mass}, []float64{want.Mass}},
		{"potential", []float64{got.Phi}, []float64{want.Phi}},
	}
	for _, f := range fields {
		for k := range f.got {
			if math.Float64bits(f.got[k]) != math.Float64bits(f.want[k]) {
				return fmt.Sprintf("%s %v, want %v", f.name, f.got, f.want)
			}
		}
	}
	if got.Cost != want.Cost {
		return fmt.Sprintf("cost %d, want %d", got.Cost, want.Cost)
	}
	return ""
}
