package rt

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeJob is a job of n ranks in one process, for the runtime's tests: each
// rank is a goroutine with its own Runtime. Its barriers are managed as
// package barrier manages them — by id and manager — so two processor sets
// using one barrier id at one manager at once are an error, as they are in
// a real job.
type fakeJob struct {
	n, locks, barriers int
	mu                 sync.Mutex
	cond               *sync.Cond
	gathering          map[[2]int]*gathering
	counters           map[uint32]int64
	lockMu             []sync.Mutex
	heap               uintptr
	freed              map[uintptr]bool
	malloced           map[uintptr]int // the size each Malloc asked, by address
	mem                []byte          // the bytes of the heap, from heapBase
}

// heapBase is where the fake job's shared heap starts.
const heapBase = 1 << 30

type gathering struct {
	members string
	size    int
	arrived int
	done    bool
	value   uint64
}

func newFakeJob(n, locks, barriers int) *fakeJob {
	j := &fakeJob{n: n, locks: locks, barriers: barriers, gathering: make(map[[2]int]*gathering),
		counters: make(map[uint32]int64), lockMu: make([]sync.Mutex, locks), heap: heapBase, freed: make(map[uintptr]bool),
		malloced: make(map[uintptr]int)}
	j.cond = sync.NewCond(&j.mu)
	return j
}

type fakeRank struct {
	job  *fakeJob
	rank int
}

func (f *fakeRank) Rank() int     { return f.rank }
func (f *fakeRank) NProcs() int   { return f.job.n }
func (f *fakeRank) PageSize() int { return 4096 }
func (f *fakeRank) Locks() int    { return f.job.locks }
func (f *fakeRank) Barriers() int { return f.job.barriers }

func (f *fakeRank) BarrierAmong(id int, members []int) error {
	_, err := f.job.cross(f.rank, id, members, -1, 0)
	return err
}

func (f *fakeRank) ShareAmong(id int, members []int, root int, value uint64) (uint64, error) {
	return f.job.cross(f.rank, id, members, root, value)
}

func (j *fakeJob) cross(self, id int, members []int, root int, value uint64) (uint64, error) {
	if id < 0 || id >= j.barriers {
		return 0, fmt.Errorf("barrier %d out of range", id)
	}
	set := slices.Sorted(slices.Values(members))
	if !slices.Contains(set, self) {
		return 0, fmt.Errorf("set %v does not include rank %d", set, self)
	}
	key := [2]int{id, set[id%len(set)]}
	j.mu.Lock()
	defer j.mu.Unlock()
	g := j.gathering[key]
	if g == nil {
		g = &gathering{members: fmt.Sprint(set), size: len(set)}
		j.gathering[key] = g
	}
	if g.members != fmt.Sprint(set) {
		return 0, fmt.Errorf("barrier %d at manager %d: sets %s and %v at once", id, key[1], g.members, set)
	}
	if self == root {
		g.value = value
	}
	g.arrived++
	if g.arrived == g.size {
		g.done = true
		delete(j.gathering, key)
		j.cond.Broadcast()
	}
	for !g.done {
		j.cond.Wait()
	}
	return g.value, nil
}

func (f *fakeRank) FetchAdd(c uint32, delta int64) (int64, error) {
	f.job.mu.Lock()
	defer f.job.mu.Unlock()
	v := f.job.counters[c]
	f.job.counters[c] = v + delta
	return v, nil
}

func (f *fakeRank) Lock(id int) error {
	if id < 0 || id >= f.job.locks {
		return fmt.Errorf("lock %d out of range", id)
	}
	f.job.lockMu[id].Lock()
	return nil
}

func (f *fakeRank) Unlock(id int) error {
	f.job.lockMu[id].Unlock()
	return nil
}

func (f *fakeRank) Malloc(size int) (uintptr, error) {
	f.job.mu.Lock()
	defer f.job.mu.Unlock()
	a := f.job.heap
	f.job.malloced[a] = size
	f.job.heap += (uintptr(size) + 15) &^ 15
	f.job.mem = append(f.job.mem, make([]byte, f.job.heap-a)...)
	return a, nil
}

func (f *fakeRank) Store(a uintptr, b []byte) {
	f.job.mu.Lock()
	defer f.job.mu.Unlock()
	copy(f.job.mem[a-heapBase:a-heapBase+uintptr(len(b))], b)
}

func (f *fakeRank) Load(a uintptr, b []byte) {
	f.job.mu.Lock()
	defer f.job.mu.Unlock()
	copy(b, f.job.mem[a-heapBase:a-heapBase+uintptr(len(b))])
}

func (f *fakeRank) Free(a uintptr) error {
	f.job.mu.Lock()
	defer f.job.mu.Unlock()
	if f.job.freed[a] {
		return fmt.Errorf("double free of %#x", a)
	}
	f.job.freed[a] = true
	return nil
}

// runJob runs body as every rank of a fake job of n ranks and fails the
// test with the first rank's error.
func runJob(t *testing.T, n int, body func(r *Runtime) error) *fakeJob {
	t.Helper()
	return runJobWith(t, newFakeJob(n, 64, 32), body)
}

func runJobWith(t *testing.T, j *fakeJob, body func(r *Runtime) error) *fakeJob {
	t.Helper()
	errs := make([]error, j.n)
	var wg sync.WaitGroup
	for rank := range j.n {
		wg.Go(func() {
			r, err := New(&fakeRank{job: j, rank: rank})
			if err == nil {
				err = body(r)
			}
			errs[rank] = err
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		// A rank waits at a barrier the others never reach; its goroutine
		// cannot be stopped, but the test ends.
		t.Fatalf("the job of %d ranks did not finish within a minute", j.n)
	}
	for rank, err := range errs {
		require.NoError(t, err, "rank %d", rank)
	}
	return j
}
