package rt

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/svmfortran"
)

// hits counts how often each iteration of a loop ran, and on which rank.
type hits struct {
	lo    int
	count []atomic.Int32
	by    []atomic.Int32
}

func newHits(b svmfortran.Block) *hits {
	return &hits{lo: b.Lo, count: make([]atomic.Int32, b.Len()), by: make([]atomic.Int32, b.Len())}
}

// run runs loop h to its end, marking each iteration of its (1-D) boxes.
func (x *hits) run(r *Runtime, h int) error {
	for {
		box, ok, err := r.LoopNext(h)
		if err != nil || !ok {
			return err
		}
		for i := box[0].Lo; i <= box[0].Hi; i++ {
			x.count[i-x.lo].Add(1)
			x.by[i-x.lo].Store(int32(r.comm.Rank()))
		}
	}
}

func (x *hits) once(t *testing.T, what string) {
	t.Helper()
	for i := range x.count {
		require.Equal(t, int32(1), x.count[i].Load(), "%s: iteration %d ran %d times", what, x.lo+i, x.count[i].Load())
	}
}

func TestLoopsRunEveryIterationOnce(t *testing.T) {
	loop := svmfortran.Block{Lo: -3, Hi: 97}
	for _, n := range []int{1, 2, 3, 5} {
		for _, s := range []Strategy{Block, Cyclic, Dynamic} {
			for _, chunk := range []int{0, 1, 7} {
				x := newHits(loop)
				runJob(t, n, func(r *Runtime) error {
					h, err := r.LoopBegin(s, []svmfortran.Block{loop}, chunk, 0, nil)
					if err != nil {
						return err
					}
					return x.run(r, h)
				})
				x.once(t, fmt.Sprintf("%v chunk %d on %d ranks", s, chunk, n))
			}
		}
	}
}

// TestDynamicLoopsInARow: the counter a dynamic loop leaves behind is where
// the next one starts, loop after loop, with different sizes.
func TestDynamicLoopsInARow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var loops []svmfortran.Block
	for range 12 {
		lo := rng.IntN(20)
		loops = append(loops, svmfortran.Block{Lo: lo, Hi: lo + rng.IntN(40) - 1})
	}
	for _, n := range []int{2, 4} {
		xs := make([]*hits, len(loops))
		for i, l := range loops {
			xs[i] = newHits(l)
		}
		j := runJob(t, n, func(r *Runtime) error {
			for i, l := range loops {
				h, err := r.LoopBegin(Dynamic, []svmfortran.Block{l}, 1+i%3, 0, nil)
				if err != nil {
					return err
				}
				if err := xs[i].run(r, h); err != nil {
					return err
				}
			}
			return nil
		})
		for i, x := range xs {
			x.once(t, fmt.Sprintf("loop %d on %d ranks", i, n))
		}
		for c, v := range j.counters {
			assert.Zero(t, v, "counter %d left at %d", c, v)
		}
	}
}

// TestOnHomeFollowsTheTemplate: ON_HOME runs each iteration on the owner of
// its template element, for each distribution format, with an offset.
func TestOnHomeFollowsTheTemplate(t *testing.T) {
	const n = 4
	mapping := make([]int, 50)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range mapping {
		mapping[i] = 1 + rng.IntN(n)
	}
	for name, dist := range map[string]svmfortran.Dist{
		"BLOCK":         {Format: svmfortran.BlockFormat},
		"CYCLIC(3)":     {Format: svmfortran.Cyclic, Segment: 3},
		"GENERAL_BLOCK": {Format: svmfortran.GeneralBlock, Sizes: []int{10, 0, 25, 15}},
		"INDIRECT":      {Format: svmfortran.Indirect, Map: mapping},
	} {
		loop := svmfortran.Block{Lo: 0, Hi: 49} // ON_HOME(T(I+1)) over T(1:50)
		x := newHits(loop)
		owners := make([]int, 50)
		runJob(t, n, func(r *Runtime) error {
			p, err := r.Processors("P", []int{n})
			if err != nil {
				return err
			}
			tm, err := r.Template("T", 1)
			if err != nil {
				return err
			}
			if err := r.Create(tm, []svmfortran.Block{{Lo: 1, Hi: 50}}); err != nil {
				return err
			}
			if err := r.Distribute(tm, p, []svmfortran.Dist{dist}, false); err != nil {
				return err
			}
			if r.comm.Rank() == 0 {
				for e := 1; e <= 50; e++ {
					if owners[e-1], err = r.Owner(tm, []int{e}); err != nil {
						return err
					}
				}
			}
			h, err := r.LoopBegin(OnHome, []svmfortran.Block{loop}, 0, tm, []int{1})
			if err != nil {
				return err
			}
			return x.run(r, h)
		})
		x.once(t, name)
		for i := range x.by {
			assert.Equal(t, owners[i], int(x.by[i].Load()), "%s: iteration %d", name, i)
		}
	}
}

// TestSemiDynamicRepeatsTheRecordedSchedule: the second run of a
// semi-dynamic loop gives each rank exactly the chunks it executed in the
// first, without the counter.
func TestSemiDynamicRepeatsTheRecordedSchedule(t *testing.T) {
	const n = 3
	loop := svmfortran.Block{Lo: 1, Hi: 64}
	first, second := newHits(loop), newHits(loop)
	j := runJob(t, n, func(r *Runtime) error {
		tm, err := r.Template("SCHED", 1)
		if err != nil {
			return err
		}
		if err := r.Create(tm, []svmfortran.Block{loop}); err != nil {
			return err
		}
		for _, x := range []*hits{first, second} {
			h, err := r.LoopBegin(SemiDynamic, []svmfortran.Block{loop}, 5, tm, nil)
			if err != nil {
				return err
			}
			if err := x.run(r, h); err != nil {
				return err
			}
		}
		return nil
	})
	first.once(t, "recording run")
	second.once(t, "replay")
	for i := range first.by {
		require.Equal(t, first.by[i].Load(), second.by[i].Load(), "iteration %d moved", i+1)
	}
	for c, v := range j.counters {
		assert.Zero(t, v, "counter %d", c)
	}
}

// TestNestedSections: sections split the set; inside each, set barriers
// and a loop run over the section's set alone; nested sections go one level
// deeper, and the fake job refuses two sets at one barrier manager at once.
func TestNestedSections(t *testing.T) {
	for _, n := range []int{1, 2, 5, 7} {
		var mu sync.Mutex
		ran := map[string][]int{}
		loops := []*hits{newHits(svmfortran.Block{Lo: 1, Hi: 30}), newHits(svmfortran.Block{Lo: 1, Hi: 30}), newHits(svmfortran.Block{Lo: 1, Hi: 30})}
		runJob(t, n, func(r *Runtime) error {
			if err := r.SectionsBegin(3, nil); err != nil {
				return err
			}
			for {
				s, err := r.SectionNext()
				if err != nil || s == 0 {
					return err
				}
				mu.Lock()
				ran[fmt.Sprint(s)] = append(ran[fmt.Sprint(s)], r.comm.Rank())
				mu.Unlock()
				for range 3 {
					if err := r.Barrier(); err != nil {
						return err
					}
				}
				h, err := r.LoopBegin(Block, []svmfortran.Block{{Lo: 1, Hi: 30}}, 0, 0, nil)
				if err != nil {
					return err
				}
				if err := loops[s-1].run(r, h); err != nil {
					return err
				}
				// Two inner sections in each section.
				if err := r.SectionsBegin(2, nil); err != nil {
					return err
				}
				for {
					inner, err := r.SectionNext()
					if err != nil {
						return err
					}
					if inner == 0 {
						break
					}
					mu.Lock()
					ran[fmt.Sprint(s, ".", inner)] = append(ran[fmt.Sprint(s, ".", inner)], r.comm.Rank())
					mu.Unlock()
					if err := r.Barrier(); err != nil {
						return err
					}
				}
			}
		})
		for s, l := range loops {
			l.once(t, fmt.Sprintf("loop in section %d on %d ranks", s+1, n))
		}
		for _, s := range []string{"1", "2", "3", "1.1", "1.2", "2.1", "2.2", "3.1", "3.2"} {
			assert.NotEmpty(t, ran[s], "section %s never ran on %d ranks", s, n)
		}
		parts, err := svmfortran.SectionPositions(3, n)
		require.NoError(t, err)
		for s, part := range parts {
			if n >= 3 {
				assert.Len(t, ran[fmt.Sprint(s+1)], len(part), "section %d on %d ranks: %v", s+1, n, ran[fmt.Sprint(s+1)])
			}
		}
	}
}

func TestDispatch(t *testing.T) {
	codes := []int{2, 1, 3, -7}
	for _, n := range []int{1, 2, 4} {
		got := make([][]int, n)
		runJob(t, n, func(r *Runtime) error {
			for _, c := range codes {
				if r.MyProcSet() == 0 {
					if err := r.DispatchSend(c); err != nil {
						return err
					}
					continue
				}
				v, err := r.DispatchRecv()
				if err != nil {
					return err
				}
				got[r.comm.Rank()] = append(got[r.comm.Rank()], v)
			}
			return nil
		})
		for rank := 1; rank < n; rank++ {
			assert.Equal(t, codes, got[rank], "rank %d", rank)
		}
	}
}

// TestDispatchValues: the values the master puts reach every member that
// the dispatch resumes, in order, dispatch after dispatch (the message
// buffers alternate and grow; a plain code in between carries none), and in
// a nested set with its own master.
func TestDispatchValues(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		j := runJob(t, n, func(r *Runtime) error {
			for round := range 5 {
				big := bytes.Repeat([]byte{byte(round)}, 100*(round+1))
				scalar := []byte{byte(round), 7}
				if r.MyProcSet() == 0 {
					if round == 2 {
						if err := r.DispatchSend(1); err != nil {
							return err
						}
					}
					if err := errors.Join(r.DispatchPut(scalar), r.DispatchPut(nil), r.DispatchPut(big)); err != nil {
						return err
					}
					if err := r.DispatchSend(round + 2); err != nil {
						return err
					}
					continue
				}
				if round == 2 {
					if code, err := r.DispatchRecv(); err != nil || code != 1 {
						return fmt.Errorf("a plain dispatch: code %d, %v", code, err)
					}
				}
				code, err := r.DispatchRecv()
				if err != nil {
					return err
				}
				gotScalar, gotBig := make([]byte, 2), make([]byte, len(big))
				if err := errors.Join(r.DispatchGet(gotScalar), r.DispatchGet(nil), r.DispatchGet(gotBig)); err != nil {
					return err
				}
				if code != round+2 || !bytes.Equal(gotScalar, scalar) || !bytes.Equal(gotBig, big) {
					return fmt.Errorf("round %d: code %d, values %v and %d bytes", round, code, gotScalar, len(gotBig))
				}
			}
			if r.Active().Size() < 3 {
				return nil
			}
			in, err := r.Enter([]int{1, 2})
			if err != nil || !in {
				return err
			}
			if r.MyProcSet() == 0 {
				return errors.Join(r.DispatchPut([]byte{42}), r.DispatchSend(5), r.Leave())
			}
			code, err := r.DispatchRecv()
			got := make([]byte, 1)
			if err := errors.Join(err, r.DispatchGet(got), r.Leave()); err != nil {
				return err
			}
			if code != 5 || got[0] != 42 {
				return fmt.Errorf("nested set: code %d, value %d", code, got[0])
			}
			return nil
		})
		if n > 1 {
			assert.NotEmpty(t, j.freed, "outgrown message buffers are freed")
		}
	}
}

func TestDispatchValuesMisuse(t *testing.T) {
	runJob(t, 2, func(r *Runtime) error {
		if r.MyProcSet() == 0 {
			assert.ErrorContains(t, r.DispatchGet(make([]byte, 1)), "dispatch get by the master")
			require.NoError(t, r.DispatchPut([]byte{1, 2, 3}))
			require.NoError(t, r.DispatchPut([]byte{4}))
			require.NoError(t, r.DispatchSend(2))
			require.NoError(t, r.DispatchSend(3))
			return nil
		}
		assert.ErrorContains(t, r.DispatchPut([]byte{1}), "only its master (0) sends values")
		code, err := r.DispatchRecv()
		require.NoError(t, err)
		assert.Equal(t, 2, code)
		assert.ErrorContains(t, r.DispatchGet(make([]byte, 2)), "the master sent 3 bytes here")
		// Memory that holds the value already is not written.
		same := []byte{1, 2, 3}
		require.NoError(t, r.DispatchGet(same))
		_, err = r.DispatchRecv()
		assert.ErrorContains(t, err, "before every value of the last dispatch was taken")
		require.NoError(t, r.DispatchGet(make([]byte, 1)))
		assert.ErrorContains(t, r.DispatchGet(make([]byte, 1)), "no value of the last dispatch is left")
		code, err = r.DispatchRecv()
		require.NoError(t, err)
		assert.Equal(t, 3, code)
		return nil
	})
}

func TestCriticalSectionsAndPageLocks(t *testing.T) {
	const n, k = 4, 200
	var inside, total, paged int // no atomics: the locks must order them
	runJob(t, n, func(r *Runtime) error {
		for range k {
			if err := r.CriticalBegin("update"); err != nil {
				return err
			}
			// Nested holds of the same lock count, they do not wait.
			if err := r.CriticalBegin("update"); err != nil {
				return err
			}
			inside++
			total += inside
			inside--
			if err := r.CriticalEnd("update"); err != nil {
				return err
			}
			if err := r.CriticalEnd("update"); err != nil {
				return err
			}
			if err := r.PageLock(0x10000+100, 3*4096); err != nil {
				return err
			}
			paged++
			if err := r.PageUnlock(0x10000+100, 3*4096); err != nil {
				return err
			}
		}
		return nil
	})
	assert.Equal(t, n*k, total)
	assert.Equal(t, n*k, paged)

	runJob(t, 1, func(r *Runtime) error {
		assert.ErrorContains(t, r.CriticalEnd("never"), `end of critical section "never", which this rank is not in`)
		assert.ErrorContains(t, r.PageUnlock(0x1000, 8), "which this rank has not page locked")
		assert.ErrorContains(t, r.PageLock(0x1000, 0), "page lock of 0 bytes")
		ids, err := r.pageLocks(0, 1<<30)
		require.NoError(t, err)
		assert.Len(t, ids, 16, "a huge range takes every page lock once")
		assert.True(t, slices.IsSorted(ids))
		return nil
	})
}

func TestSharedAllocation(t *testing.T) {
	const n = 3
	// 8209 bytes leave the next Malloc 16 bytes past a page boundary, where
	// a coloured block starts furthest into what Malloc gave.
	sizes := []int{1, 4096, 8209, 10000, 3*4096 + 1}
	addrs := make([][]uintptr, n)
	j := runJob(t, n, func(r *Runtime) error {
		me := r.comm.Rank()
		for _, size := range sizes {
			a, err := r.SharedAlloc(size)
			if err != nil {
				return err
			}
			addrs[me] = append(addrs[me], a)
		}
		c1, err := r.Common("BLK", 800)
		if err != nil {
			return err
		}
		c2, err := r.Common("BLK", 800)
		if err != nil {
			return err
		}
		if c1 != c2 {
			return fmt.Errorf("COMMON /BLK/ at %#x, then %#x", c1, c2)
		}
		if _, err := r.Common("BLK", 808); err == nil {
			return fmt.Errorf("COMMON /BLK/ with another size was accepted")
		}
		addrs[me] = append(addrs[me], c1)
		for _, a := range addrs[me][:len(sizes)] {
			if err := r.SharedFree(a); err != nil {
				return err
			}
		}
		return r.FreeCommons()
	})
	for rank := range n {
		assert.Equal(t, addrs[0], addrs[rank], "rank %d", rank)
	}
	sizes = append(sizes, 800)
	lines := make(map[uintptr]bool)
	for i, a := range addrs[0] {
		if sizes[i] <= 4096 {
			assert.Zero(t, a%4096, "a block of %d bytes at %#x is not page aligned", sizes[i], a)
		} else {
			assert.Zero(t, a%64, "a block of %d bytes at %#x does not start a cache line", sizes[i], a)
			assert.False(t, lines[a%4096], "two blocks of more than a page start at line %#x of their pages", a%4096)
			lines[a%4096] = true
		}
		inside := false
		for base, size := range j.malloced {
			inside = inside || base <= a && a+uintptr(sizes[i]) <= base+uintptr(size)
		}
		assert.True(t, inside, "the block of %d bytes at %#x is not inside what Malloc gave", sizes[i], a)
		for k, b := range addrs[0][:i] {
			assert.True(t, a >= b+uintptr(sizes[k]) || b >= a+uintptr(sizes[i]), "blocks at %#x and %#x overlap", b, a)
			assert.NotEqual(t, a/4096, b/4096, "blocks at %#x and %#x start on one page", b, a)
		}
	}
	assert.Len(t, j.freed, len(sizes))
}

func TestMisuse(t *testing.T) {
	runJob(t, 1, func(r *Runtime) error {
		tm, err := r.Template("T", 1)
		require.NoError(t, err)
		_, err = r.LoopBegin(OnHome, []svmfortran.Block{{Lo: 1, Hi: 10}}, 0, tm, nil)
		assert.ErrorContains(t, err, "ON_HOME loop: schedule over template T, which is empty")
		_, err = r.LoopBegin(OnHome, []svmfortran.Block{{Lo: 1, Hi: 10}}, 0, 9, nil)
		assert.ErrorContains(t, err, "no template has handle 9")
		assert.ErrorContains(t, r.Distribute(tm, 1, []svmfortran.Dist{{Format: svmfortran.BlockFormat}}, false), "no processor arrangement has handle 1")
		p, err := r.Processors("P", []int{1})
		require.NoError(t, err)
		assert.ErrorContains(t, r.Distribute(tm, p, []svmfortran.Dist{{Format: svmfortran.BlockFormat}}, false), "template T is empty")
		assert.NoError(t, r.DispatchSend(1), "a set of one: nothing to send")
		_, err = r.DispatchRecv()
		assert.ErrorContains(t, err, "dispatch receive by the master")
		_, _, err = r.LoopNext(1)
		assert.ErrorContains(t, err, "loop handle 1 is not the innermost running loop")
		_, err = r.SectionNext()
		assert.ErrorContains(t, err, "no parallel section construct is running")
		assert.ErrorContains(t, r.SectionsBegin(2, []int{1, 0}), "section 2 on 0 processors")
		assert.ErrorContains(t, r.SectionsBegin(2, []int{1}), "2 sections with 1 processor counts")
		// Sizes beyond the set: placed as without sizes, one after the other here.
		require.NoError(t, r.SectionsBegin(2, []int{1, 1}))
		for _, want := range []int{1, 2, 0} {
			s, err := r.SectionNext()
			require.NoError(t, err)
			assert.Equal(t, want, s)
		}
		_, err = r.LoopBegin(Strategy(42), []svmfortran.Block{{Lo: 1, Hi: 2}}, 0, 0, nil)
		assert.ErrorContains(t, err, "unknown strategy 42")
		return nil
	})
	// Nesting deeper than the barrier ids allow.
	runJobWith(t, newFakeJob(1, 64, 4), func(r *Runtime) error {
		ok, err := r.Enter([]int{0})
		require.NoError(t, err)
		require.True(t, ok)
		_, err = r.Enter([]int{0})
		assert.ErrorContains(t, err, "processor sets nested 3 levels deep; this job allows 2")
		return nil
	})
	runJob(t, 2, func(r *Runtime) error {
		if r.MyProcSet() == 1 {
			assert.ErrorContains(t, r.DispatchSend(1), "only its master (0) sends")
		}
		_, err := r.Enter([]int{0, 5})
		assert.ErrorContains(t, err, "position 5")
		return nil
	})
}

// TestHandlesAreReused: a unit entered again and again declares its
// template anew each time and releases it on return; the handles come back.
func TestHandlesAreReused(t *testing.T) {
	runJob(t, 1, func(r *Runtime) error {
		keep, err := r.Template("KEEP", 1)
		require.NoError(t, err)
		for range 1000 {
			p, err := r.Processors("P", []int{1})
			require.NoError(t, err)
			tm, err := r.Template("T", 1)
			require.NoError(t, err)
			require.NoError(t, r.Create(tm, []svmfortran.Block{{Lo: 1, Hi: 4}}))
			require.NoError(t, r.Distribute(tm, p, []svmfortran.Dist{{Format: svmfortran.BlockFormat}}, false))
			assert.Equal(t, 2, tm)
			assert.Equal(t, 1, p)
			require.NoError(t, r.ReleaseTemplate(tm))
			require.NoError(t, r.ReleaseProcessors(p))
		}
		assert.Len(t, r.templates.items, 2)
		assert.ErrorContains(t, r.ReleaseTemplate(2), "no template has handle 2")
		assert.ErrorContains(t, r.Create(2, []svmfortran.Block{{Lo: 1, Hi: 4}}), "no template has handle 2")
		_, err = r.TemplateOf(keep)
		return err
	})
}
