package barrier

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/protocol"
)

type net struct {
	t       *testing.T
	tables  []*Table
	flight  []protocol.Envelope
	sent    int
	inside  map[int]bool
	crossed []int // per rank, completed barriers
}

func newNet(t *testing.T, n int) *net {
	nt := &net{t: t, inside: map[int]bool{}, crossed: make([]int, n)}
	for r := range n {
		tb, err := New(Config{Self: r, NProcs: n, Barriers: 8})
		require.NoError(t, err)
		nt.tables = append(nt.tables, tb)
	}
	return nt
}

func (nt *net) result(r int, res Result) {
	for _, e := range res.Send {
		nt.flight = append(nt.flight, e)
		nt.sent++
	}
	if c := res.Complete; c != nil {
		// The manager answers every other member and leaves itself.
		for _, a := range c.Arrivals {
			if a.From != r {
				nt.flight = append(nt.flight, protocol.Envelope{From: r, To: a.From, Msg: &protocol.BarrierDepart{Barrier: c.Barrier, Episode: a.Episode}})
				nt.sent++
			}
		}
		require.NoError(nt.t, nt.tables[r].Leave(c.Barrier))
		nt.left(r)
	}
	if res.Departed != nil {
		nt.left(r)
	}
}

func (nt *net) left(r int) {
	require.True(nt.t, nt.inside[r], "rank %d left a barrier it was not in", r)
	nt.inside[r] = false
	nt.crossed[r]++
}

func (nt *net) arrive(r int, id uint32, members []int) {
	set, err := Normalize(members, len(nt.tables))
	require.NoError(nt.t, err)
	nt.inside[r] = true
	res, err := nt.tables[r].Arrive(&protocol.BarrierArrive{Barrier: id, Members: set})
	require.NoError(nt.t, err)
	nt.result(r, res)
}

func (nt *net) deliver(i int) {
	e := nt.flight[i]
	nt.flight = append(nt.flight[:i], nt.flight[i+1:]...)
	res, err := nt.tables[e.To].Step(e.From, e.Msg)
	require.NoError(nt.t, err)
	nt.result(e.To, res)
}

func TestWholeJobCosts2NMinus1(t *testing.T) {
	for n := 1; n <= 9; n++ {
		nt := newNet(t, n)
		for r := range n {
			nt.arrive(r, 3, nil)
		}
		for len(nt.flight) > 0 {
			nt.deliver(0)
		}
		assert.Equal(t, 2*(n-1), nt.sent, "n=%d", n)
		for r := range n {
			assert.False(t, nt.inside[r])
			assert.Equal(t, uint32(1), nt.tables[r].Episode(3))
		}
	}
}

// TestSubsetsAndRandomOrder has two disjoint processor sets cross their own
// barriers many times, with every message delivered in random order: each
// set costs 2(k-1) messages per crossing and no rank leaves early.
func TestSubsetsAndRandomOrder(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 3))
		n := 2 + rng.IntN(8)
		perm := rng.Perm(n)
		cut := 1 + rng.IntN(n-1)
		sets := [][]int{perm[:cut], perm[cut:]}
		nt := newNet(t, n)
		rounds := 1 + rng.IntN(5)
		next := make([]int, n) // barrier crossings started per rank
		setOf := map[int]int{}
		for s, set := range sets {
			for _, r := range set {
				setOf[r] = s
			}
		}
		for {
			var ready []int
			for r := range n {
				if !nt.inside[r] && next[r] < rounds {
					ready = append(ready, r)
				}
			}
			if len(ready) == 0 && len(nt.flight) == 0 {
				break
			}
			if len(nt.flight) > 0 && (len(ready) == 0 || rng.IntN(2) == 0) {
				nt.deliver(rng.IntN(len(nt.flight)))
				continue
			}
			r := ready[rng.IntN(len(ready))]
			// A rank may not pass its set's barrier before every member arrived.
			s := setOf[r]
			for _, o := range sets[s] {
				require.GreaterOrEqual(t, next[o], next[r], "seed %d: rank %d is ahead of set member %d", seed, r, o)
			}
			next[r]++
			nt.arrive(r, uint32(s), sets[s])
		}
		want := 0
		for _, set := range sets {
			want += rounds * 2 * (len(set) - 1)
		}
		assert.Equal(t, want, nt.sent, "seed %d", seed)
		for r := range n {
			assert.Equal(t, rounds, nt.crossed[r], "seed %d rank %d", seed, r)
		}
	}
}

func TestNormalizeAndManager(t *testing.T) {
	set, err := Normalize([]int{3, 1, 2}, 5)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, set)
	set, err = Normalize([]int{1, 0}, 2)
	require.NoError(t, err)
	assert.Nil(t, set, "a set of every rank is the whole job")
	_, err = Normalize([]int{1, 1}, 3)
	assert.ErrorContains(t, err, "rank 1 twice")
	_, err = Normalize([]int{5}, 3)
	assert.ErrorContains(t, err, "rank 5, outside [0,3)")
	assert.Equal(t, 2, Manager(7, nil, 5))
	assert.Equal(t, 4, Manager(7, []int{2, 4, 6}, 8))
}

func TestMisuse(t *testing.T) {
	nt := newNet(t, 3)
	tb := nt.tables[0]
	_, err := tb.Arrive(&protocol.BarrierArrive{Barrier: 8})
	assert.ErrorContains(t, err, "barrier 8 out of range [0,8)")
	_, err = tb.Arrive(&protocol.BarrierArrive{Barrier: 1, Members: []int{1, 2}})
	assert.ErrorContains(t, err, "does not include it")
	_, err = tb.Step(1, &protocol.BarrierDepart{Barrier: 1})
	assert.ErrorContains(t, err, "not waiting at it")

	_, err = tb.Arrive(&protocol.BarrierArrive{Barrier: 1}) // manager: rank 1
	require.NoError(t, err)
	_, err = tb.Arrive(&protocol.BarrierArrive{Barrier: 2})
	assert.ErrorContains(t, err, "while still inside barrier 1")
	_, err = tb.Step(2, &protocol.BarrierDepart{Barrier: 1})
	assert.ErrorContains(t, err, "but rank 1 manages it")
	_, err = tb.Step(1, &protocol.BarrierDepart{Barrier: 1, Episode: 5})
	assert.ErrorContains(t, err, "crossing 5")

	mgr := nt.tables[1]
	_, err = mgr.Step(0, &protocol.BarrierArrive{Barrier: 1})
	require.NoError(t, err)
	_, err = mgr.Step(0, &protocol.BarrierArrive{Barrier: 1})
	assert.ErrorContains(t, err, "rank 0 arrived twice")
	_, err = mgr.Step(0, &protocol.BarrierArrive{Barrier: 1, Members: []int{0, 1}})
	assert.ErrorContains(t, err, "arrived over processor set [0 1], others over all")
	_, err = mgr.Step(2, &protocol.BarrierArrive{Barrier: 0})
	assert.ErrorContains(t, err, "but rank 0 manages it")
	_, err = mgr.Step(2, &protocol.BarrierArrive{Barrier: 1, Members: []int{0, 1}})
	assert.ErrorContains(t, err, "does not include it")
	_, err = mgr.Step(0, &protocol.LockGrant{})
	assert.ErrorContains(t, err, "unexpected message")
	assert.Error(t, mgr.Leave(1), "not inside")
}
