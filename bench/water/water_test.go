package main

import (
	"math"
	"testing"
)

// energyOf returns the potential energy of all molecules of s: intra- and
// intermolecular, with the forces left in the records and the private copy.
func energyOf(s *sim) float64 {
	return s.intraf() + s.interf()
}

// TestForcesAreGradients checks every force against a central difference
// of the potential energy.
func TestForcesAreGradients(t *testing.T) {
	mols, motions := initial(12)
	s := newSim(mols, motions, 0, len(mols))
	energyOf(s)
	s.add(0, s.n)
	forces := make([][3]vec, s.n)
	for i := range s.n {
		forces[i] = s.mols[i].Force
	}
	const h = 1e-6
	for i := range s.n {
		for a := range 3 {
			for x := range 3 {
				keep := s.mols[i].Disp[a][x]
				s.mols[i].Disp[a][x] = keep + h
				up := energyOf(s)
				s.mols[i].Disp[a][x] = keep - h
				down := energyOf(s)
				s.mols[i].Disp[a][x] = keep
				want := -(up - down) / (2 * h)
				if got := forces[i][a][x]; math.Abs(got-want) > 1e-6*(1+math.Abs(want)) {
					t.Errorf("molecule %d atom %d coordinate %d: force %g, want %g", i, a, x, got, want)
				}
			}
		}
	}
}
