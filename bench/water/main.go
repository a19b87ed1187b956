// Command water is SPLASH's Water (n-squared) molecular dynamics as the
// TreadMarks study ran it: the tuned TreadMarks version, whose molecule
// records are split into a shared part (center of mass, displacements,
// forces) and a private part (the other derivatives). Run it with svmf run
// -np N water [flags]; with -seq it runs alone, without shared memory, for
// the sequential time.
//
// Each rank owns a contiguous chunk of the molecule array. A time step is
// SPLASH's: predict the rank's molecules and compute their intramolecular
// forces, then a barrier; compute the interactions of each of its molecules
// with the half of the others that follow it in the array (wrapping around)
// into a private copy of the forces, then, for each rank j it has forces
// for, starting with itself, acquire lock j and add them to the shared
// forces of j's molecules, then a barrier; correct the rank's molecules,
// move those that left the box back in, add the rank's potential and
// kinetic energy to the step's sums under another lock, then a barrier.
//
// The potential is simpler than SPLASH's, but physical: flexible 3-site
// water with SPC charges, harmonic O–H bonds and an H–H spring for the bend,
// Lennard-Jones between oxygens and Coulomb between the nine site pairs,
// periodic boundaries with the nearest image, and a cutoff at half the box
// on the distance between centers of mass; Gear's 7-value
// predictor-corrector, as SPLASH's sixth-order one, with 0.5 fs steps.
// The shared records are one array of 168-byte records (24 per 4096-byte
// page): the center of mass, displacements and forces of SPLASH's 672-byte
// record (VM, F[DISP], F[FORCES]), whose other derivatives stay private.
//
// The input is deterministic: oxygens on a cubic lattice at the density of
// water, orientations and velocities (300 K) from math/rand/v2 with a fixed
// seed. The timed part is the time steps; the setup and the force
// computation that gives the initial accelerations are not timed.
//
// Rank 0 checks the result against a sequential run: the ranks add their
// forces in another order than the sequential program, so the final atom
// positions must agree within 1e-12 of the box side and the last step's
// total energy within 1e-12 of its potential and kinetic energies' magnitudes.
// -check=false skips that (it costs rank 0 a sequential run).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"time"

	"github.com/svmcluster/svm/bench/internal/report"
	"github.com/svmcluster/svm/dsm"
)

// tolerance is the self-check's relative tolerance.
const tolerance = 1e-12

// Barrier and lock ids: locks 0..N-1 guard the forces of each rank's
// molecules.
const (
	barrierIntra  = 0 // after predict and the intramolecular forces
	barrierInter  = 1 // after the intermolecular forces are added
	barrierStep   = 2 // after correct and the energy sums
	barrierReport = 63
	sumLock       = 1023 // the energy sums
)

type params struct {
	molecules, steps int
}

func (p params) variant() string { return strconv.Itoa(p.molecules) }

func (p params) String() string {
	return fmt.Sprintf("%d molecules, %d steps", p.molecules, p.steps)
}

// energy is one step's potential and kinetic energy, summed over ranks.
type energy struct {
	Pot, Kin float64
}

func (e energy) String() string {
	return fmt.Sprintf("potential %.4f, kinetic %.4f, total %.4f kJ/mol", e.Pot/kJPerMol, e.Kin/kJPerMol, (e.Pot+e.Kin)/kJPerMol)
}

func main() {
	var p params
	flag.IntVar(&p.molecules, "molecules", 1728, "molecules (the study ran 288 and 1728)")
	flag.IntVar(&p.steps, "steps", 5, "time steps")
	seq := flag.Bool("seq", false, "run sequentially, without shared memory")
	check := flag.Bool("check", true, "compare the result with a sequential run")
	flag.Parse()
	if p.molecules < 2 || p.steps < 1 {
		fmt.Fprintf(os.Stderr, "water: %d molecules, %d steps: want at least 2 molecules and 1 step\n", p.molecules, p.steps)
		os.Exit(2)
	}
	r := report.Result{Program: "water", Variant: p.variant(), Params: p.String(), Check: "ok"}
	if *seq {
		_, sums, took := sequential(p)
		r.Seconds = took.Seconds()
		fmt.Printf("water: after step %d: %v\n", p.steps, sums[p.steps-1])
		report.Sequential(r)
		return
	}
	if err := parallel(p, *check, r); err != nil {
		fmt.Fprintln(os.Stderr, "water:", err)
		os.Exit(1)
	}
}

// sequential runs the simulation in plain memory and returns the final
// records, each step's energies and the time the steps took.
func sequential(p params) ([]molecule, []energy, time.Duration) {
	mols, motions := initial(p.molecules)
	s := newSim(mols, motions, 0, p.molecules)
	s.intraf()
	s.interf()
	s.add(0, s.n)
	s.accelerate()
	sums := make([]energy, p.steps)
	start := time.Now()
	for step := range p.steps {
		s.predict()
		pot := s.intraf()
		pot += s.interf()
		s.add(0, s.n)
		kin := s.correct()
		sums[step] = energy{pot, kin}
	}
	return mols, sums, time.Since(start)
}

func parallel(p params, check bool, r report.Result) error {
	n, err := dsm.Join(context.Background(), dsm.Funneled()) // one goroutine writes shared memory
	if err != nil {
		return err
	}
	defer n.Close()
	np, me := n.NProcs(), n.Rank()
	if np > sumLock {
		return fmt.Errorf("%d ranks: at most %d (lock %d guards the energy sums)", np, sumLock, sumLock)
	}
	ma, err := n.Alloc(p.molecules * int(reflect.TypeFor[molecule]().Size()))
	if err != nil {
		return fmt.Errorf("allocate the molecules: %w", err)
	}
	ea, err := n.Alloc(p.steps * int(reflect.TypeFor[energy]().Size()))
	if err != nil {
		return fmt.Errorf("allocate the energy sums: %w", err)
	}
	mols, sums := dsm.Slice[molecule](ma, p.molecules), dsm.Slice[energy](ea, p.steps)
	lo, hi := chunk(p.molecules, np, me)
	records, motions := initial(p.molecules)
	copy(mols[lo:hi], records[lo:hi])
	if me == 0 {
		clear(sums)
	}
	s := newSim(mols, motions, lo, hi)
	s.intraf()
	if err := n.Barrier(barrierIntra); err != nil {
		return err
	}
	s.interf()
	if err := addForces(n, s); err != nil {
		return err
	}
	s.accelerate()

	before := n.Stats()
	begin := time.Now()
	for step := range p.steps {
		s.predict()
		pot := s.intraf()
		if err := n.Barrier(barrierIntra); err != nil {
			return err
		}
		pot += s.interf()
		if err := addForces(n, s); err != nil {
			return err
		}
		kin := s.correct()
		if err := n.Lock(sumLock); err != nil {
			return err
		}
		sums[step].Pot += pot
		sums[step].Kin += kin
		if err := n.Unlock(sumLock); err != nil {
			return err
		}
		if err := n.Barrier(barrierStep); err != nil {
			return err
		}
	}
	took := time.Since(begin)
	after := n.Stats()
	if me == 0 {
		fmt.Printf("water: after step %d: %v\n", p.steps, sums[p.steps-1])
		if check {
			r.Check = compare(p, mols, sums[p.steps-1])
		}
	}
	if err := report.Parallel(n, barrierReport, r, took, before, after); err != nil {
		return err
	}
	if r.Check != "ok" {
		return fmt.Errorf("check: %s", r.Check)
	}
	return nil
}

// addForces adds the rank's private copy of the forces to the shared forces
// of each rank's molecules under that rank's lock, starting with its own,
// and waits at a barrier until every rank has.
func addForces(n *dsm.Node, s *sim) error {
	np, me := n.NProcs(), n.Rank()
	for k := range np {
		q := (me + k) % np
		lo, hi := chunk(s.n, np, q)
		if !s.contributes(lo, hi) {
			continue
		}
		if err := n.Lock(q); err != nil {
			return err
		}
		s.add(lo, hi)
		if err := n.Unlock(q); err != nil {
			return err
		}
	}
	return n.Barrier(barrierInter)
}

// compare checks the shared result against a sequential run.
func compare(p params, mols []molecule, last energy) string {
	want, sums, _ := sequential(p)
	box := boxSide(p.molecules)
	for i := range want {
		for a := range 3 {
			for x := range 3 {
				got, w := mols[i].Disp[a][x], want[i].Disp[a][x]
				if math.Abs(got-w) > tolerance*box {
					return fmt.Sprintf("molecule %d atom %d coordinate %d is %v, the sequential run's %v", i, a, x, got, w)
				}
			}
		}
	}
	w := sums[p.steps-1]
	if math.Abs(last.Pot+last.Kin-w.Pot-w.Kin) > tolerance*(math.Abs(w.Pot)+math.Abs(w.Kin)) {
		return fmt.Sprintf("energy after step %d: %v, the sequential run's %v", p.steps, last, w)
	}
	return "ok"
}
