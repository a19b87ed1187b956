package main

import (
	"math"
	"math/rand/v2"
)

// Units: lengths in Å, times in fs, masses in amu, so energies are in
// amu·Å²/fs² (1 amu·Å²/fs² = 10⁴ kJ/mol) and forces in amu·Å/fs².
const (
	kJPerMol = 1e-4 // one kJ/mol in amu·Å²/fs²

	dt          = 0.5                     // time step, fs
	temperature = 300.0                   // K, for the initial velocities
	kB          = 0.0083144626 * kJPerMol // Boltzmann's constant per K
	density     = 0.6022140 / 18.0154     // molecules per Å³ at 1 g/cm³

	massO, massH = 15.9994, 1.008
	chargeO      = -0.82 // e, SPC charges
	chargeH      = 0.41
	coulomb      = 1389.35458 * kJPerMol // e²/(4πε₀) in amu·Å³/fs² per e²

	sigmaOO   = 3.166             // Å, Lennard-Jones between oxygens (SPC)
	epsilonOO = 0.6502 * kJPerMol // Lennard-Jones well depth

	bondOH   = 1.0               // Å, O–H rest length
	springOH = 4431.0 * kJPerMol // per Å², harmonic O–H bond
	bondHH   = 1.632993          // Å, H–H rest length: 109.47° between the bonds
	springHH = 953.0 * kJPerMol  // per Å², the bend as an H–H spring
)

// The atoms of a molecule, in SPLASH's order.
const (
	h1 = iota
	o
	h2
)

var (
	mass   = [3]float64{massH, massO, massH}
	charge = [3]float64{chargeH, chargeO, chargeH}
)

// values is the number of scaled derivatives the Gear predictor-corrector
// keeps per coordinate, as SPLASH's sixth-order one: the displacement and
// its first six time derivatives, each as r_k = dtᵏ/k! · dᵏx/dtᵏ.
const values = 7

// gear holds the corrector coefficients of Gear's 7-value method for
// second-order equations.
var gear = [values]float64{863.0 / 6048, 665.0 / 1008, 1, 25.0 / 36, 35.0 / 144, 1.0 / 24, 1.0 / 360}

type vec [3]float64

// molecule is the shared part of a molecule record, as in the study's tuned
// TreadMarks Water: the center of mass, the displacements (atom positions,
// the scaled derivative r_0) and the forces on the atoms. 21 float64s, 168
// bytes, the same fields and sizes as in SPLASH's record (VM, F[DISP],
// F[FORCES]), so 24.4 records share a 4096-byte page.
type molecule struct {
	VM    vec
	Disp  [3]vec
	Force [3]vec
}

// motion is the private part of a molecule record: the scaled derivatives
// r_1 … r_6 of its atom positions.
type motion [values - 1][3]vec

// sim is the state one rank works on: the records of all molecules (in
// shared memory in a job), the private part of the records of its own
// molecules lo..hi-1, and its private copy of the forces.
type sim struct {
	n      int
	box    float64 // side of the periodic cube
	cut2   float64 // square of the cutoff, half the box
	mols   []molecule
	motion []motion // motion[i-lo] is molecule i's
	acc    [][3]vec // the forces this rank's pairs put on every molecule
	lo, hi int
}

// chunk returns the molecules rank q of np owns: a contiguous range.
func chunk(n, np, q int) (lo, hi int) { return q * n / np, (q + 1) * n / np }

// boxSide is the side of the cube that holds n molecules at the density of
// water.
func boxSide(n int) float64 { return math.Cbrt(float64(n) / density) }

// initial returns the records of n molecules: oxygens on a cubic lattice
// filled in index order, orientations and center-of-mass velocities (300 K,
// no net momentum) from a fixed seed, higher derivatives zero.
func initial(n int) ([]molecule, []motion) {
	box := boxSide(n)
	side := int(math.Ceil(math.Cbrt(float64(n)) - 1e-9))
	spacing := box / float64(side)
	rng := rand.New(rand.NewPCG(1992, 288))
	mols, motions := make([]molecule, n), make([]motion, n)
	half := math.Acos(-1.0/3) / 2 // half the angle between the bonds
	var momentum vec
	velocities := make([]vec, n)
	for i := range n {
		cell := [3]int{i % side, i / side % side, i / (side * side)}
		u := unit(gaussian(rng))
		v := gaussian(rng)
		dot := v[0]*u[0] + v[1]*u[1] + v[2]*u[2]
		v = unit(vec{v[0] - dot*u[0], v[1] - dot*u[1], v[2] - dot*u[2]})
		m := &mols[i]
		for x := range 3 {
			m.Disp[o][x] = (float64(cell[x]) + 0.5) * spacing
			m.Disp[h1][x] = m.Disp[o][x] + bondOH*(math.Cos(half)*u[x]+math.Sin(half)*v[x])
			m.Disp[h2][x] = m.Disp[o][x] + bondOH*(math.Cos(half)*u[x]-math.Sin(half)*v[x])
		}
		sd := math.Sqrt(kB * temperature / (massO + 2*massH))
		for x := range 3 {
			velocities[i][x] = sd * rng.NormFloat64()
			momentum[x] += velocities[i][x]
		}
	}
	for i := range n {
		for a := range 3 {
			for x := range 3 {
				motions[i][0][a][x] = (velocities[i][x] - momentum[x]/float64(n)) * dt
			}
		}
	}
	return mols, motions
}

func gaussian(rng *rand.Rand) vec {
	return vec{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
}

func unit(v vec) vec {
	l := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])
	return vec{v[0] / l, v[1] / l, v[2] / l}
}

// newSim returns the state of the rank that owns molecules lo..hi-1 of
// mols, with their private records taken from motions.
func newSim(mols []molecule, motions []motion, lo, hi int) *sim {
	box := boxSide(len(mols))
	s := &sim{n: len(mols), box: box, cut2: box * box / 4, mols: mols, lo: lo, hi: hi}
	s.motion = append([]motion(nil), motions[lo:hi]...)
	s.acc = make([][3]vec, len(mols))
	return s
}

// derivatives gathers coordinate x of atom a of molecule i.
func (s *sim) derivatives(i, a, x int) [values]float64 {
	var r [values]float64
	r[0] = s.mols[i].Disp[a][x]
	for k := 1; k < values; k++ {
		r[k] = s.motion[i-s.lo][k-1][a][x]
	}
	return r
}

func (s *sim) setDerivatives(i, a, x int, r [values]float64) {
	s.mols[i].Disp[a][x] = r[0]
	for k := 1; k < values; k++ {
		s.motion[i-s.lo][k-1][a][x] = r[k]
	}
}

// predict advances the rank's molecules by one step along their Taylor
// series (SPLASH's PREDIC).
func (s *sim) predict() {
	for i := s.lo; i < s.hi; i++ {
		for a := range 3 {
			for x := range 3 {
				r := s.derivatives(i, a, x)
				for k := 0; k < values-1; k++ {
					for l := values - 1; l > k; l-- {
						r[l-1] += r[l]
					}
				}
				s.setDerivatives(i, a, x, r)
			}
		}
	}
}

// intraf computes the center of mass and the intramolecular forces of the
// rank's molecules, overwriting their forces (SPLASH's INTRAF), and returns
// their intramolecular potential energy.
func (s *sim) intraf() float64 {
	pot := 0.0
	for i := s.lo; i < s.hi; i++ {
		m := &s.mols[i]
		for x := range 3 {
			m.VM[x] = (massH*m.Disp[h1][x] + massO*m.Disp[o][x] + massH*m.Disp[h2][x]) / (2*massH + massO)
		}
		m.Force = [3]vec{}
		pot += spring(m, o, h1, springOH, bondOH)
		pot += spring(m, o, h2, springOH, bondOH)
		pot += spring(m, h1, h2, springHH, bondHH)
	}
	return pot
}

// spring adds the force of a harmonic spring between atoms a and b of m
// and returns its energy.
func spring(m *molecule, a, b int, k, rest float64) float64 {
	var d vec
	for x := range 3 {
		d[x] = m.Disp[a][x] - m.Disp[b][x]
	}
	r := math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
	f := -k * (r - rest) / r
	for x := range 3 {
		m.Force[a][x] += f * d[x]
		m.Force[b][x] -= f * d[x]
	}
	return k * (r - rest) * (r - rest) / 2
}

// interf computes the interactions of the rank's molecules with the half of
// the others that follow each in the array, wrapping around (SPLASH's
// INTERF), into the private copy of the forces, and returns their potential
// energy. With an even count the pair half the array apart is counted from
// the molecule in the first half, so every pair is counted once.
func (s *sim) interf() float64 {
	clear(s.acc)
	pot := 0.0
	for i := s.lo; i < s.hi; i++ {
		reach := (s.n - 1) / 2
		if s.n%2 == 0 && i < s.n/2 {
			reach = s.n / 2
		}
		for off := 1; off <= reach; off++ {
			j := (i + off) % s.n
			pot += s.pair(&s.mols[i], &s.mols[j], &s.acc[i], &s.acc[j])
		}
	}
	return pot
}

// pair adds the forces between mi and the nearest periodic image of mj, if
// their centers of mass are within the cutoff, to fi and fj and returns
// their potential energy: Lennard-Jones between the oxygens and Coulomb
// between the nine pairs of charged sites.
func (s *sim) pair(mi, mj *molecule, fi, fj *[3]vec) float64 {
	var img vec
	d2 := 0.0
	for x := range 3 {
		d := mi.VM[x] - mj.VM[x]
		img[x] = s.box * math.Round(d/s.box)
		d -= img[x]
		d2 += d * d
	}
	if d2 > s.cut2 {
		return 0
	}
	pot := 0.0
	for a := range 3 {
		for b := range 3 {
			var r vec
			for x := range 3 {
				r[x] = mi.Disp[a][x] - mj.Disp[b][x] - img[x]
			}
			inv2 := 1 / (r[0]*r[0] + r[1]*r[1] + r[2]*r[2])
			e := coulomb * charge[a] * charge[b] * math.Sqrt(inv2)
			f := e * inv2
			if a == o && b == o {
				sr6 := sigmaOO * sigmaOO * inv2
				sr6 = sr6 * sr6 * sr6
				e += 4 * epsilonOO * (sr6*sr6 - sr6)
				f += 24 * epsilonOO * (2*sr6*sr6 - sr6) * inv2
			}
			pot += e
			for x := range 3 {
				fi[a][x] += f * r[x]
				fj[b][x] -= f * r[x]
			}
		}
	}
	return pot
}

// contributes reports whether the private copy holds forces on any of the
// molecules lo..hi-1.
func (s *sim) contributes(lo, hi int) bool {
	for k := lo; k < hi; k++ {
		if s.acc[k] != [3]vec{} {
			return true
		}
	}
	return false
}

// add adds the private copy of the forces on molecules lo..hi-1 to their
// shared forces.
func (s *sim) add(lo, hi int) {
	for k := lo; k < hi; k++ {
		for a := range 3 {
			for x := range 3 {
				s.mols[k].Force[a][x] += s.acc[k][a][x]
			}
		}
	}
}

// accelerate sets the accelerations of the rank's molecules from their
// forces, before the first step.
func (s *sim) accelerate() {
	for i := s.lo; i < s.hi; i++ {
		for a := range 3 {
			for x := range 3 {
				s.motion[i-s.lo][1][a][x] = dt * dt / 2 * s.mols[i].Force[a][x] / mass[a]
			}
		}
	}
}

// correct corrects the predicted derivatives of the rank's molecules with
// their forces (SPLASH's CORREC), moves a molecule whose oxygen left the box
// back in (BNDRY), and returns their kinetic energy (KINETI).
func (s *sim) correct() float64 {
	kin := 0.0
	for i := s.lo; i < s.hi; i++ {
		for a := range 3 {
			for x := range 3 {
				r := s.derivatives(i, a, x)
				delta := dt*dt/2*s.mols[i].Force[a][x]/mass[a] - r[2]
				for k := range values {
					r[k] += gear[k] * delta
				}
				s.setDerivatives(i, a, x, r)
				v := r[1] / dt
				kin += mass[a] * v * v / 2
			}
		}
		m := &s.mols[i]
		for x := range 3 {
			shift := 0.0
			switch {
			case m.Disp[o][x] < 0:
				shift = s.box
			case m.Disp[o][x] >= s.box:
				shift = -s.box
			}
			if shift != 0 {
				for a := range 3 {
					m.Disp[a][x] += shift
				}
			}
		}
	}
	return kin
}
