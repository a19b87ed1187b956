// Package barrier is the barrier protocol of one rank, as a state machine.
//
// A barrier over a processor set (every rank, or any subset of them, as
// SVM-Fortran's processor sets need) has one manager, a member chosen by the
// barrier id. Each member sends the manager one arrival; when all members have
// arrived the manager answers each one with a departure: 2(n-1) messages for n
// members. Ranks outside the set take no part.
//
// The package checks and collects arrivals; the caller fills in and merges the
// consistency information they carry. It never does I/O, keeps no clock and
// starts no goroutine.
package barrier

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/svmcluster/svm/protocol"
)

// Config describes the rank and the job's barrier id space.
type Config struct {
	Self, NProcs int
	Barriers     uint32 // barrier ids are 0..Barriers-1
}

// Table holds this rank's barrier state: its own crossings, and the arrivals
// gathered at the barriers it manages.
type Table struct {
	cfg Config
	// episodes counts this rank's completed crossings of each barrier id.
	episodes map[uint32]uint32
	// inside is the barrier this rank has arrived at and not yet left, if
	// isInside; insideManager manages it.
	inside        uint32
	isInside      bool
	insideManager int
	gathering     map[uint32]*gathering
}

type gathering struct {
	members  []int // nil: every rank
	arrivals map[int]*protocol.BarrierArrive
}

// Complete is a barrier whose members have all arrived, at its manager. The
// caller merges the arrivals' intervals, sends each other member a departure
// and lets this rank leave the barrier.
type Complete struct {
	Barrier uint32
	// Arrivals are every member's arrival, this rank's included, in rank order.
	Arrivals []Arrival
}

// Arrival is one member's arrival message.
type Arrival struct {
	From int
	*protocol.BarrierArrive
}

// Result is what an arrival or a message produced.
type Result struct {
	Send     []protocol.Envelope
	Complete *Complete
	// Departed, if not nil, releases this rank from the barrier it waits at.
	Departed *protocol.BarrierDepart
}

// New returns the barrier table of one rank.
func New(cfg Config) (*Table, error) {
	if cfg.NProcs <= 0 || cfg.Self < 0 || cfg.Self >= cfg.NProcs {
		return nil, fmt.Errorf("barrier: rank %d of %d processes", cfg.Self, cfg.NProcs)
	}
	if cfg.Barriers == 0 {
		return nil, errors.New("barrier: no barriers configured")
	}
	return &Table{cfg: cfg, episodes: make(map[uint32]uint32), gathering: make(map[uint32]*gathering)}, nil
}

// Manager returns the manager of barrier id over members (nil: every rank of
// a job of nprocs ranks).
func Manager(id uint32, members []int, nprocs int) int {
	if len(members) == 0 {
		return int(id % uint32(nprocs))
	}
	return members[int(id%uint32(len(members)))]
}

// Normalize checks a processor set and returns it in the form barriers use:
// sorted, distinct, and nil when it names every rank.
func Normalize(members []int, nprocs int) ([]int, error) {
	if len(members) == 0 {
		return nil, nil
	}
	set := slices.Clone(members)
	slices.Sort(set)
	for i, r := range set {
		if r < 0 || r >= nprocs {
			return nil, fmt.Errorf("processor set names rank %d, outside [0,%d)", r, nprocs)
		}
		if i > 0 && r == set[i-1] {
			return nil, fmt.Errorf("processor set names rank %d twice", r)
		}
	}
	if len(set) == nprocs {
		return nil, nil
	}
	return set, nil
}

// Episode returns how many times this rank has crossed barrier id.
func (t *Table) Episode(id uint32) uint32 { return t.episodes[id] }

// Arrive records this rank's arrival a at a barrier. a.Members must be
// normalized (see Normalize) and include this rank; a.Episode is set here.
// The caller fills VT, Intervals and Metadata.
func (t *Table) Arrive(a *protocol.BarrierArrive) (Result, error) {
	if a.Barrier >= t.cfg.Barriers {
		return Result{}, fmt.Errorf("barrier %d out of range [0,%d)", a.Barrier, t.cfg.Barriers)
	}
	if t.isInside {
		return Result{}, fmt.Errorf("rank %d arrived at barrier %d while still inside barrier %d", t.cfg.Self, a.Barrier, t.inside)
	}
	if len(a.Members) != 0 && !slices.Contains(a.Members, t.cfg.Self) {
		return Result{}, fmt.Errorf("rank %d arrived at barrier %d over processor set %v, which does not include it", t.cfg.Self, a.Barrier, a.Members)
	}
	a.Episode = t.episodes[a.Barrier]
	mgr := Manager(a.Barrier, a.Members, t.cfg.NProcs)
	t.inside, t.isInside, t.insideManager = a.Barrier, true, mgr
	if mgr != t.cfg.Self {
		return Result{Send: []protocol.Envelope{{From: t.cfg.Self, To: mgr, Msg: a}}}, nil
	}
	return t.gather(t.cfg.Self, a)
}

// Step handles a barrier message from rank from.
func (t *Table) Step(from int, m protocol.Message) (Result, error) {
	switch m := m.(type) {
	case *protocol.BarrierArrive:
		if mgr := Manager(m.Barrier, m.Members, t.cfg.NProcs); mgr != t.cfg.Self {
			return Result{}, fmt.Errorf("barrier %d: arrival of rank %d reached rank %d, but rank %d manages it", m.Barrier, from, t.cfg.Self, mgr)
		}
		if len(m.Members) != 0 && !slices.Contains(m.Members, from) {
			return Result{}, fmt.Errorf("barrier %d: rank %d arrived, but processor set %v does not include it", m.Barrier, from, m.Members)
		}
		return t.gather(from, m)
	case *protocol.BarrierDepart:
		return t.depart(from, m)
	default:
		return Result{}, fmt.Errorf("barrier: unexpected message %v", m.Type())
	}
}

func (t *Table) gather(from int, a *protocol.BarrierArrive) (Result, error) {
	g := t.gathering[a.Barrier]
	if g == nil {
		g = &gathering{members: a.Members, arrivals: make(map[int]*protocol.BarrierArrive)}
		t.gathering[a.Barrier] = g
	}
	if !slices.Equal(g.members, a.Members) {
		return Result{}, fmt.Errorf("barrier %d: rank %d arrived over processor set %s, others over %s", a.Barrier, from, setString(a.Members), setString(g.members))
	}
	if _, dup := g.arrivals[from]; dup {
		return Result{}, fmt.Errorf("barrier %d: rank %d arrived twice", a.Barrier, from)
	}
	g.arrivals[from] = a
	size := len(g.members)
	if len(g.members) == 0 {
		size = t.cfg.NProcs
	}
	if len(g.arrivals) < size {
		return Result{}, nil
	}
	delete(t.gathering, a.Barrier)
	c := &Complete{Barrier: a.Barrier}
	for _, r := range slices.Sorted(maps.Keys(g.arrivals)) {
		c.Arrivals = append(c.Arrivals, Arrival{From: r, BarrierArrive: g.arrivals[r]})
	}
	return Result{Complete: c}, nil
}

// Leave lets this rank out of the barrier it manages and whose arrivals are
// complete.
func (t *Table) Leave(id uint32) error {
	if !t.isInside || t.inside != id {
		return fmt.Errorf("rank %d left barrier %d, which it is not inside", t.cfg.Self, id)
	}
	t.isInside = false
	t.episodes[id]++
	return nil
}

func (t *Table) depart(from int, d *protocol.BarrierDepart) (Result, error) {
	if !t.isInside || t.inside != d.Barrier {
		return Result{}, fmt.Errorf("barrier %d: departure from rank %d, but rank %d is not waiting at it", d.Barrier, from, t.cfg.Self)
	}
	if from != t.insideManager {
		return Result{}, fmt.Errorf("barrier %d: departure from rank %d, but rank %d manages it", d.Barrier, from, t.insideManager)
	}
	if d.Episode != t.episodes[d.Barrier] {
		return Result{}, fmt.Errorf("barrier %d: departure for crossing %d, but rank %d waits at crossing %d", d.Barrier, d.Episode, t.cfg.Self, t.episodes[d.Barrier])
	}
	if err := t.Leave(d.Barrier); err != nil {
		return Result{}, err
	}
	return Result{Departed: d}, nil
}

func setString(members []int) string {
	if len(members) == 0 {
		return "all"
	}
	return fmt.Sprint(members)
}
