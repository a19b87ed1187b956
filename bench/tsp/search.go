package main

import (
	"fmt"
	"math"
)

const (
	// maxCities is the longest path a tour record holds; visited sets are
	// uint32 bit sets.
	maxCities = 32
	// maxTours is the number of slots in the tour pool.
	maxTours = 1 << 14

	queueLock = 0 // guards the tour pool, the priority queue and the free-slot stack
	bestLock  = 1 // guards the shortest tour
	noBound   = math.MaxInt32
)

// A tour is one partially evaluated tour: a record of the tour pool.
type tour struct {
	path    [maxCities]int32 // path[0..last]: the cities in order, from city 0
	visited uint32           // bit c is set when city c is on the path
	last    int32            // the index in path of the last city
	length  int32            // the length of the path
	bound   int32            // a lower bound on every complete tour extending the path
}

// An entry of the priority queue: a slot of the tour pool and its bound.
type entry struct{ slot, bound int32 }

// shared is everything the workers share, as in the TreadMarks version's
// global structure. The pool, the queue and the stack are guarded by
// queueLock; a slot taken off the queue to be solved belongs to the worker
// that took it until it frees the slot at its next getTour.
type shared struct {
	// Guarded by queueLock.
	queueLen int32 // the queue is the heap queue[1..queueLen]
	stackLen int32 // the free slots are stack[0..stackLen-1]
	done     int32 // no tour is left to solve
	// bound is the shortest tour length the workers have brought to the
	// queue: a copy of bestLen as of their last getTour, for pruning.
	bound int32
	// Guarded by bestLock.
	bestLen  int32
	bestPath [maxCities]int32
	// Guarded by queueLock.
	stack [maxTours]int32
	queue [maxTours + 1]entry
	tours [maxTours]tour
}

// A problem is the distance matrix (private to every rank) and the size of
// the tails solved recursively.
type problem struct {
	cities, threshold int
	dist              [maxCities][maxCities]int32
}

// syncer is the part of dsm.Node the search uses; the sequential program
// runs the same code with locks that do nothing.
type syncer interface {
	Lock(id int) error
	Unlock(id int) error
}

// start puts the tour of city 0 alone on the queue and every other slot on
// the free stack.
func start(s *shared, p *problem) {
	s.tours[0] = tour{visited: 1}
	s.tours[0].bound = p.lowerBound(&s.tours[0])
	s.queue[1] = entry{slot: 0, bound: s.tours[0].bound}
	s.queueLen = 1
	for i := range maxTours - 1 {
		s.stack[i] = int32(maxTours - 1 - i) // slot 1 on top
	}
	s.stackLen = maxTours - 1
	s.done = 0
	s.bound = noBound
	s.bestLen = noBound
}

// worker takes tours off the queue and solves them until none is left.
func worker(s *shared, p *problem, sy syncer) error {
	slot, bound := int32(-1), int32(noBound)
	for {
		var err error
		slot, bound, err = getTour(s, p, sy, slot, bound)
		if err != nil || slot < 0 {
			return err
		}
		if bound, err = solve(s, p, sy, slot, bound); err != nil {
			return err
		}
	}
}

// getTour frees the slot the worker solved last (none if free < 0), brings
// the shortest tour length the worker knows to the queue, and returns the
// next tour to solve recursively (-1 when none is left) with the bound to
// solve it with.
func getTour(s *shared, p *problem, sy syncer, free, bound int32) (int32, int32, error) {
	if err := sy.Lock(queueLock); err != nil {
		return -1, 0, err
	}
	if free >= 0 {
		s.stack[s.stackLen] = free
		s.stackLen++
	}
	s.bound = min(s.bound, bound)
	slot, err := findSolvable(s, p)
	bound = s.bound
	if uerr := sy.Unlock(queueLock); err == nil {
		err = uerr
	}
	return slot, bound, err
}

// findSolvable takes the most promising tour off the queue: if few enough
// cities remain it returns it, otherwise it puts the tour's extensions by
// one city on the queue and tries again. It returns -1 when the queue is
// empty or holds nothing shorter than the shortest tour.
func findSolvable(s *shared, p *problem) (int32, error) {
	for s.done == 0 && s.queueLen > 0 && s.queue[1].bound < s.bound {
		slot := pop(s)
		if int(s.tours[slot].last) >= p.cities-p.threshold-1 {
			return slot, nil
		}
		if err := split(s, p, slot); err != nil {
			return -1, err
		}
		s.stack[s.stackLen] = slot
		s.stackLen++
	}
	s.done = 1
	return -1, nil
}

// split puts on the queue every extension of tour slot by one city whose
// lower bound is below the shortest tour.
func split(s *shared, p *problem, slot int32) error {
	cur := s.tours[slot]
	from := cur.path[cur.last]
	for c := 1; c < p.cities; c++ {
		if cur.visited&(1<<c) != 0 {
			continue
		}
		next := cur
		next.last++
		next.path[next.last] = int32(c)
		next.visited |= 1 << c
		next.length += p.dist[from][c]
		next.bound = p.lowerBound(&next)
		if next.bound >= s.bound {
			continue
		}
		if s.stackLen == 0 {
			return fmt.Errorf("the pool of %d tours is full", maxTours)
		}
		s.stackLen--
		n := s.stack[s.stackLen]
		s.tours[n] = next
		push(s, entry{slot: n, bound: next.bound})
	}
	return nil
}

// lowerBound is the length of t's path plus, for every city not on it,
// half its two shortest edges to other such cities or to the path's ends,
// plus one: the TreadMarks program's bound. It needs two cities off the
// path and distances of at least 1.
func (p *problem) lowerBound(t *tour) int32 {
	first, last := t.path[0], t.path[t.last]
	sum := int32(1)
	for i := range p.cities {
		if t.visited&(1<<i) != 0 {
			continue
		}
		w1, w2 := int32(noBound), int32(noBound)
		for j := range p.cities {
			if j == i || t.visited&(1<<j) != 0 && int32(j) != first && int32(j) != last {
				continue
			}
			switch w := p.dist[i][j]; {
			case w < w1:
				w1, w2 = w, w1
			case w < w2:
				w2 = w
			}
		}
		sum += (w1 + w2) / 2
	}
	return t.length + sum
}

// less orders the queue: the smaller bound first, then the longer path.
func less(s *shared, a, b entry) bool {
	return a.bound < b.bound || a.bound == b.bound && s.tours[a.slot].last > s.tours[b.slot].last
}

func push(s *shared, e entry) {
	s.queueLen++
	i := s.queueLen
	for ; i > 1 && less(s, e, s.queue[i/2]); i /= 2 {
		s.queue[i] = s.queue[i/2]
	}
	s.queue[i] = e
}

func pop(s *shared) int32 {
	top := s.queue[1].slot
	e := s.queue[s.queueLen]
	s.queueLen--
	i := int32(1)
	for 2*i <= s.queueLen {
		c := 2 * i
		if c < s.queueLen && less(s, s.queue[c+1], s.queue[c]) {
			c++
		}
		if !less(s, s.queue[c], e) {
			break
		}
		s.queue[i] = s.queue[c]
		i = c
	}
	s.queue[i] = e
	return top
}

// A solver tries every completion of one tour, in private memory, pruning
// paths longer than the shortest tour it knows.
type solver struct {
	s       *shared
	p       *problem
	sy      syncer
	path    [maxCities]int32
	n       int // cities on path
	visited uint32
	length  int32
	bound   int32
	err     error
}

// solve searches the completions of tour slot, starting from bound, and
// returns the shortest tour length it knows at the end.
func solve(s *shared, p *problem, sy syncer, slot, bound int32) (int32, error) {
	t := s.tours[slot]
	v := solver{s: s, p: p, sy: sy, path: t.path, n: int(t.last) + 1, visited: t.visited, length: t.length, bound: bound}
	v.visit(t.path[t.last])
	return v.bound, v.err
}

func (v *solver) visit(from int32) {
	for c := int32(1); c < int32(v.p.cities) && v.err == nil; c++ {
		d := v.p.dist[from][c]
		if v.visited&(1<<c) != 0 || v.length+d > v.bound {
			continue
		}
		v.visited |= 1 << c
		v.path[v.n] = c
		v.n++
		v.length += d
		if v.n == v.p.cities {
			if total := v.length + v.p.dist[c][0]; total < v.bound {
				v.setBest(total)
			}
		} else if v.length < v.bound {
			v.visit(c)
		}
		v.length -= d
		v.n--
		v.visited &^= 1 << c
	}
}

// setBest records a complete tour if it is the shortest yet, and learns
// the shortest tour length.
func (v *solver) setBest(length int32) {
	if v.err = v.sy.Lock(bestLock); v.err != nil {
		return
	}
	if length < v.s.bestLen {
		v.s.bestLen = length
		v.s.bestPath = v.path
	}
	v.bound = v.s.bestLen
	v.err = v.sy.Unlock(bestLock)
}
