// Package rt is the SVM-Fortran runtime of one rank: the processor-set
// tree, processor arrangements, templates and loop schedules of package
// svmfortran, driven by the calls the compiler generates (and exported to C
// and Fortran by libsvm), plus the operations that need the rest of the job
// — barriers and dispatch over a processor set, the shared counter of
// dynamic loops, critical sections, page locks and shared allocation —
// made through Comm.
//
// The runtime keeps its own ids out of the program's way: processor-set
// nesting level k uses barrier id Barriers-1-k (16 levels at most, fewer in
// a job with fewer than 32 barriers), critical sections use lock ids in
// [Locks/2, 3·Locks/4) and page locks [3·Locks/4, Locks), and dynamic loops
// use fetch-and-add counters from 2^31 up.
package rt

import (
	"fmt"
	"slices"

	"github.com/svmcluster/svm/svmfortran"
)

// Comm is what the runtime needs from the job: package dsm's Node.
type Comm interface {
	Rank() int
	NProcs() int
	PageSize() int
	Locks() int
	Barriers() int
	BarrierAmong(id int, members []int) error
	ShareAmong(id int, members []int, root int, value uint64) (uint64, error)
	FetchAdd(counter uint32, delta int64) (int64, error)
	Lock(id int) error
	Unlock(id int) error
	Malloc(size int) (uintptr, error)
	Free(a uintptr) error
	// Store and Load copy bytes to and from shared memory at a, inside a
	// block Malloc returned.
	Store(a uintptr, b []byte)
	Load(a uintptr, b []byte)
}

// Strategy is a parallel loop's scheduling strategy.
type Strategy int

// The strategies of the PDO directive's STRATEGY clause.
const (
	Block       Strategy = 1 + iota // direct: BLOCK over the active set
	Cyclic                          // direct: CYCLIC(chunk)
	OnHome                          // predefined: ON_HOME(T(I+o, ...))
	Dynamic                         // self scheduling: chunks from a shared counter
	SemiDynamic                     // dynamic, recorded in a template and then reused
)

func (s Strategy) String() string {
	switch s {
	case Block:
		return "BLOCK"
	case Cyclic:
		return "CYCLIC"
	case OnHome:
		return "ON_HOME"
	case Dynamic:
		return "DYNAMIC"
	case SemiDynamic:
		return "SEMI_DYNAMIC"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

const (
	maxLevels   = 16      // processor-set nesting levels, each with a barrier id
	counterBase = 1 << 31 // the runtime's fetch-and-add counters
)

// Runtime is one rank's SVM-Fortran runtime. It is not safe for concurrent
// use: a rank's generated code calls it from one thread.
type Runtime struct {
	comm         Comm
	tree         *svmfortran.Tree
	arrangements handles[svmfortran.Arrangement]
	templates    handles[svmfortran.Template]
	// recorded marks the templates holding a semi-dynamic loop's schedule.
	recorded map[*svmfortran.Template]bool
	loops    []*loop
	sections []*sections
	// held counts this rank's nested holds of each lock the runtime takes.
	held    map[int]int
	commons map[string]common
	// blocks maps a shared block's address to the address Malloc returned,
	// on the master that allocated it; coloured counts the master's blocks
	// of more than a page (SharedAlloc).
	blocks   map[uintptr]uintptr
	coloured int
	// out holds the values the master put for its next dispatch, in holds
	// those of the last dispatch a member received and has not taken yet,
	// and mail the master's message buffers, by nesting level (dispatch.go).
	out, in []byte
	mail    map[int]*mailbox
}

type common struct {
	addr uintptr
	size int
}

// New returns the runtime of the rank comm belongs to; the active processor
// set is every rank.
func New(comm Comm) (*Runtime, error) {
	tree, err := svmfortran.NewTree(comm.NProcs(), comm.Rank())
	if err != nil {
		return nil, err
	}
	if comm.Barriers() < 2 || comm.Locks() < 4 {
		return nil, fmt.Errorf("the SVM-Fortran runtime needs at least 2 barriers and 4 locks; the job has %d and %d", comm.Barriers(), comm.Locks())
	}
	return &Runtime{
		comm: comm, tree: tree,
		arrangements: handles[svmfortran.Arrangement]{kind: "processor arrangement"},
		templates:    handles[svmfortran.Template]{kind: "template"},
		recorded:     make(map[*svmfortran.Template]bool),
		held:         make(map[int]int), commons: make(map[string]common), blocks: make(map[uintptr]uintptr),
		mail: make(map[int]*mailbox),
	}, nil
}

// NumProc is NUMPROC(): the number of processors in the active set.
func (r *Runtime) NumProc() int { return r.tree.Active().Size() }

// MyProcSet is MYPROCSET(): this rank's position in the active set, 0 for
// its master.
func (r *Runtime) MyProcSet() int { return r.tree.MyProcSet() }

// Active returns the active processor set.
func (r *Runtime) Active() *svmfortran.ProcSet { return r.tree.Active() }

// setBarrierID is the barrier id of the active set's nesting level. Sets
// active at once are disjoint (siblings) or on different levels (a set and
// its ancestors), so they never share a barrier's manager state.
func (r *Runtime) setBarrierID() (int, error) {
	levels := min(maxLevels, r.comm.Barriers()/2)
	level := r.tree.Active().Level
	if level >= levels {
		return 0, fmt.Errorf("processor sets nested %d levels deep; this job allows %d (one barrier id each, from the top of the job's %d)", level+1, levels, r.comm.Barriers())
	}
	return r.comm.Barriers() - 1 - level, nil
}

// Barrier is a barrier over the active processor set.
func (r *Runtime) Barrier() error {
	set := r.tree.Active()
	if set.Size() == 1 {
		return nil
	}
	id, err := r.setBarrierID()
	if err != nil {
		return err
	}
	return r.comm.BarrierAmong(id, set.Members)
}

// broadcast hands value from the active set's master to every member, with
// the ordering of a barrier over the set.
func (r *Runtime) broadcast(value uint64) (uint64, error) {
	set := r.tree.Active()
	if set.Size() == 1 {
		return value, nil
	}
	id, err := r.setBarrierID()
	if err != nil {
		return 0, err
	}
	return r.comm.ShareAmong(id, set.Members, set.Master(), value)
}

// Enter makes the subset of the active set at positions the active set, if
// this rank is in it, and reports whether it is; ranks outside it go on in
// the current set. Each member calls Leave at the end of the subset's work.
func (r *Runtime) Enter(positions []int) (bool, error) {
	if !slices.Contains(positions, r.MyProcSet()) {
		if err := r.tree.CheckPositions(positions); err != nil {
			return false, err
		}
		return false, nil
	}
	if err := r.tree.Enter(positions); err != nil {
		return false, err
	}
	if _, err := r.setBarrierID(); err != nil {
		r.tree.Leave()
		return false, err
	}
	return true, nil
}

// Leave returns to the parent of the active processor set.
func (r *Runtime) Leave() error { return r.tree.Leave() }
