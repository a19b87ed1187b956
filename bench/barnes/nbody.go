package main

import (
	"fmt"
	"math"
)

// Physical constants of the run, SPLASH's defaults.
const (
	eps   = 0.05  // softening length
	dt    = 0.025 // time step
	seed  = 123   // the generator's seed
	mfrac = 0.999 // mass cut-off of the Plummer model
)

// body is one record of the shared body array: 96 bytes, 42⅔ bodies to a
// 4 KiB page (SPLASH's body record, with its type, level and parent fields,
// was about 100 bytes on the study's 32-bit machines).
type body struct {
	Pos, Vel, Acc [3]float64
	Mass, Phi     float64 // Phi is the potential at the body
	Cost          int64   // interactions computed for it in the last force phase
}

// prand is SPLASH's linear congruential generator: x ← (1103515245·x +
// 12345) mod 2³¹, returning the value before the step divided by 2³¹.
type prand struct{ x uint32 }

func (r *prand) next() float64 {
	last := r.x
	r.x = (1103515245*r.x + 12345) & 0x7fffffff
	return float64(last) / (1 << 31)
}

// uniform is SPLASH's xrand: a number in [lo, hi).
func (r *prand) uniform(lo, hi float64) float64 { return lo + (hi-lo)*r.next() }

// shell is SPLASH's pickshell: a random point on the sphere of radius rad.
func (r *prand) shell(rad float64) [3]float64 {
	var v [3]float64
	for {
		for k := range v {
			v[k] = r.uniform(-1, 1)
		}
		if rsq := dot(v, v); rsq <= 1 {
			s := rad / math.Sqrt(rsq)
			for k := range v {
				v[k] *= s
			}
			return v
		}
	}
}

// plummer returns n bodies of equal mass drawn from one Plummer model as
// SPLASH's testdata draws each of its two (radii beyond 9 rejected), in
// units where G = M = -4E = 1, moved to their centre of mass and velocity.
func plummer(n int) []body {
	r := prand{x: seed}
	rsc := 9 * math.Pi / 16
	vsc := math.Sqrt(1 / rsc)
	bs := make([]body, n)
	var cmr, cmv [3]float64
	for i := range bs {
		b := &bs[i]
		b.Mass, b.Cost = 1/float64(n), 1
		rad := 1 / math.Sqrt(math.Pow(r.uniform(0, mfrac), -2.0/3)-1)
		for rad > 9 {
			rad = 1 / math.Sqrt(math.Pow(r.uniform(0, mfrac), -2.0/3)-1)
		}
		b.Pos = r.shell(rsc * rad)
		var x, y float64
		for {
			x, y = r.uniform(0, 1), r.uniform(0, 0.1)
			if y <= x*x*math.Pow(1-x*x, 3.5) {
				break
			}
		}
		b.Vel = r.shell(vsc * math.Sqrt2 * x / math.Pow(1+rad*rad, 0.25))
		for k := range 3 {
			cmr[k] += b.Pos[k]
			cmv[k] += b.Vel[k]
		}
	}
	for i := range bs {
		for k := range 3 {
			bs[i].Pos[k] -= cmr[k] / float64(n)
			bs[i].Vel[k] -= cmv[k] / float64(n)
		}
	}
	return bs
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// maxDepth bounds the tree: bodies that still share a cell this deep
// coincide in practice.
const maxDepth = 64

// cell is an internal node of the octree, in a rank's private memory. A
// child is 0 when empty, c > 0 for cell c, -(i+1) for body i.
type cell struct {
	child [8]int32
	mass  float64
	cm    [3]float64 // centre of mass
	cost  int64      // the sum of its bodies' costs
}

// tree is the Barnes-Hut octree over the bodies; cells[0] is the root, a
// cube of side size.
type tree struct {
	cells []cell
	size  float64
}

// build makes t the tree of bs, inserting the bodies in index order into a
// root cube around them all, and computes every cell's mass, centre of mass
// and cost. Every rank builds the same tree from the same bodies.
func (t *tree) build(bs []body) error {
	lo, hi := bs[0].Pos, bs[0].Pos
	for i := range bs {
		for k := range 3 {
			lo[k], hi[k] = min(lo[k], bs[i].Pos[k]), max(hi[k], bs[i].Pos[k])
		}
	}
	var centre [3]float64
	t.size = 0
	for k := range 3 {
		centre[k] = (lo[k] + hi[k]) / 2
		t.size = max(t.size, hi[k]-lo[k])
	}
	t.size *= 1.00002 // SPLASH's margin: no body on the root's faces
	t.cells = append(t.cells[:0], cell{})
	for i := range bs {
		if err := t.insert(bs, int32(i), centre); err != nil {
			return err
		}
	}
	t.summarize(bs, 0)
	return nil
}

func octant(pos, centre [3]float64) int {
	o := 0
	for k := range 3 {
		if pos[k] >= centre[k] {
			o |= 1 << k
		}
	}
	return o
}

// insert puts body i into the tree whose root is centred at centre,
// splitting a leaf into a cell when the slot already holds a body.
func (t *tree) insert(bs []body, i int32, centre [3]float64) error {
	c, half := int32(0), t.size/2
	for depth := 0; ; depth++ {
		o := octant(bs[i].Pos, centre)
		half /= 2
		for k := range 3 {
			if o&(1<<k) != 0 {
				centre[k] += half
			} else {
				centre[k] -= half
			}
		}
		switch ch := t.cells[c].child[o]; {
		case ch == 0:
			t.cells[c].child[o] = -(i + 1)
			return nil
		case ch > 0:
			c = ch
		default:
			if depth == maxDepth {
				return fmt.Errorf("bodies %d and %d are too close to separate in %d levels", -ch-1, i, maxDepth)
			}
			nc := int32(len(t.cells))
			t.cells = append(t.cells, cell{})
			t.cells[nc].child[octant(bs[-ch-1].Pos, centre)] = ch
			t.cells[c].child[o] = nc
			c = nc
		}
	}
}

// summarize computes the mass, centre of mass and cost of cell c and the
// cells below it.
func (t *tree) summarize(bs []body, c int32) {
	var mass float64
	var cm [3]float64
	var cost int64
	for _, ch := range t.cells[c].child {
		var m float64
		var pos [3]float64
		switch {
		case ch > 0:
			t.summarize(bs, ch)
			m, pos = t.cells[ch].mass, t.cells[ch].cm
			cost += t.cells[ch].cost
		case ch < 0:
			b := &bs[-ch-1]
			m, pos = b.Mass, b.Pos
			cost += b.Cost
		}
		mass += m
		for k := range 3 {
			cm[k] += m * pos[k]
		}
	}
	for k := range 3 {
		cm[k] /= mass
	}
	t.cells[c].mass, t.cells[c].cm, t.cells[c].cost = mass, cm, cost
}

// zone returns, in mine, the bodies of rank me of np by costzones: the
// bodies in tree order whose cumulative cost starts in this rank's share
// [total·me/np, total·(me+1)/np) of the total cost.
func (t *tree) zone(bs []body, me, np int, mine []int32) []int32 {
	total := t.cells[0].cost
	lo, hi := total*int64(me)/int64(np), total*int64(me+1)/int64(np)
	mine = mine[:0]
	t.collect(bs, 0, 0, lo, hi, &mine)
	return mine
}

// collect appends to mine the bodies below cell c whose cumulative cost,
// counted from work at the cell's start, starts in [lo, hi).
func (t *tree) collect(bs []body, c int32, work, lo, hi int64, mine *[]int32) {
	for _, ch := range t.cells[c].child {
		if work >= hi {
			return
		}
		switch {
		case ch > 0:
			cost := t.cells[ch].cost
			if work+cost > lo {
				t.collect(bs, ch, work, lo, hi, mine)
			}
			work += cost
		case ch < 0:
			if work >= lo {
				*mine = append(*mine, -ch-1)
			}
			work += bs[-ch-1].Cost
		}
	}
}

// walk is the force computation on one body, SPLASH's hackgrav: a cell
// farther than size/theta from the body acts through its centre of mass,
// a nearer one is opened.
type walk struct {
	t     *tree
	bs    []body
	self  int32
	pos   [3]float64
	tolsq float64
	acc   [3]float64
	phi   float64
	n     int64
}

// cell adds the action of cell c, of side² dsq: through its centre of mass,
// or through its children if the body is nearer than side/theta.
func (w *walk) cell(c int32, dsq float64) {
	cl := &w.t.cells[c]
	dr := [3]float64{cl.cm[0] - w.pos[0], cl.cm[1] - w.pos[1], cl.cm[2] - w.pos[2]}
	if w.tolsq*dot(dr, dr) >= dsq {
		w.add(dr, cl.mass)
		return
	}
	for _, ch := range cl.child {
		switch {
		case ch > 0:
			w.cell(ch, dsq/4)
		case ch < 0 && -ch-1 != w.self:
			b := &w.bs[-ch-1]
			w.add([3]float64{b.Pos[0] - w.pos[0], b.Pos[1] - w.pos[1], b.Pos[2] - w.pos[2]}, b.Mass)
		}
	}
}

// add is SPLASH's gravsub: the softened interaction with a mass at dr.
func (w *walk) add(dr [3]float64, mass float64) {
	drsq := dot(dr, dr) + eps*eps
	drabs := math.Sqrt(drsq)
	phii := mass / drabs
	w.phi -= phii
	mor3 := phii / drsq
	for k := range 3 {
		w.acc[k] += mor3 * dr[k]
	}
	w.n++
}

// force is what the force phase computes for one body; it stays private
// until the update phase writes it into the body's record.
type force struct {
	acc  [3]float64
	phi  float64
	cost int64
}

// forces returns, in fs, the acceleration, potential and cost of the bodies
// in mine. It only reads the bodies.
func (t *tree) forces(bs []body, mine []int32, theta float64, fs []force) []force {
	fs = fs[:0]
	for _, i := range mine {
		w := walk{t: t, bs: bs, self: i, pos: bs[i].Pos, tolsq: theta * theta}
		w.cell(0, t.size*t.size)
		fs = append(fs, force{acc: w.acc, phi: w.phi, cost: w.n})
	}
	return fs
}

// advance stores the forces fs on the bodies in mine and moves them by one
// leapfrog step: after the first step it corrects their velocities with the
// change of acceleration (SPLASH's computeforces), then advances them
// (SPLASH's stepsystem).
func advance(bs []body, mine []int32, fs []force, first bool) {
	for j, i := range mine {
		b, f := &bs[i], fs[j]
		for k := range 3 {
			if !first {
				b.Vel[k] += (f.acc[k] - b.Acc[k]) * (dt / 2)
			}
			dvel := f.acc[k] * (dt / 2)
			vel1 := b.Vel[k] + dvel
			b.Pos[k] += vel1 * dt
			b.Vel[k] = vel1 + dvel
		}
		b.Acc, b.Phi, b.Cost = f.acc, f.phi, f.cost
	}
}
