package rank

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/protocol"
)

func newRanks(t *testing.T, n int) []*Rank {
	var rs []*Rank
	for r := range n {
		rk, err := New(Config{Rank: r, NProcs: n, PageSize: 64, Pages: 4, Locks: 8, Barriers: 4, GCThreshold: 1 << 20}, make([]byte, 4*64))
		require.NoError(t, err)
		rs = append(rs, rk)
	}
	return rs
}

// pump delivers every message between the ranks, oldest first, and reports
// which ranks finished their outstanding call.
func pump(t *testing.T, rs []*Rank, first ...protocol.Envelope) map[int]bool {
	done := map[int]bool{}
	queue := first
	for i, r := range rs {
		rd := r.Ready()
		queue = append(queue, rd.Messages...)
		done[i] = done[i] || rd.Done
	}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		require.NoError(t, rs[e.To].Step(e))
		rd := rs[e.To].Ready()
		queue = append(queue, rd.Messages...)
		done[e.To] = done[e.To] || rd.Done
	}
	return done
}

func TestLockAndBarrierFlow(t *testing.T) {
	rs := newRanks(t, 3)
	require.NoError(t, rs[1].Acquire(1)) // rank 1 manages lock 1: local
	assert.True(t, rs[1].Ready().Done)
	require.NoError(t, rs[1].Release(1))

	require.NoError(t, rs[0].Acquire(1))
	assert.True(t, rs[0].Busy())
	done := pump(t, rs)
	assert.True(t, done[0])
	assert.False(t, rs[0].Busy())
	require.NoError(t, rs[0].Release(1))

	for _, r := range rs {
		require.NoError(t, r.Barrier(2, nil))
	}
	done = pump(t, rs)
	for i, r := range rs {
		assert.True(t, done[i], "rank %d left the barrier", i)
		assert.Equal(t, int64(1), r.Stats().Barriers)
	}
	assert.Equal(t, int64(1), rs[1].Stats().LockAcquiresLocal)
	assert.Equal(t, int64(1), rs[0].Stats().LockAcquiresRemote)
}

func TestMisuse(t *testing.T) {
	rs := newRanks(t, 2)
	r := rs[0]
	assert.ErrorContains(t, r.Release(3), "unlock of lock 3, which rank 0 does not hold")
	assert.ErrorContains(t, r.Acquire(8), "lock 8 out of range [0,8)")
	assert.False(t, r.Busy(), "a refused call leaves no operation behind")
	assert.ErrorContains(t, r.Barrier(4, nil), "barrier 4 out of range [0,4)")
	assert.False(t, r.Busy())
	assert.ErrorContains(t, r.Barrier(0, []int{0, 5}), "outside [0,2)")
	assert.ErrorContains(t, r.Validate(3, 2, false), "beyond the region")
	assert.False(t, r.Busy())

	require.NoError(t, r.Acquire(1)) // remote: rank 1 manages it
	assert.ErrorContains(t, r.Acquire(2), "lock acquire called while a lock acquire is in progress")
	assert.ErrorContains(t, r.Barrier(0, nil), "in progress")
	assert.ErrorContains(t, r.Release(1), "in progress")

	for _, e := range []struct {
		env  protocol.Envelope
		want string
	}{
		{protocol.Envelope{From: 1, To: 1, Msg: &protocol.LockGrant{Lock: 1}}, "addressed to rank 1"},
		{protocol.Envelope{From: 0, To: 0, Msg: &protocol.LockGrant{Lock: 1}}, "from rank 0"},
		{protocol.Envelope{From: 1, To: 0, Msg: &protocol.LockGrant{Lock: 9}}, "lock 9 out of range"},
		{protocol.Envelope{From: 1, To: 0, Msg: &protocol.LockGrant{Lock: 2}}, "unexpected grant"},
		{protocol.Envelope{From: 1, To: 0, Msg: &protocol.BarrierDepart{Barrier: 1}}, "not waiting at it"},
		{protocol.Envelope{From: 1, To: 0, Msg: &protocol.DiffResponse{ID: 7}}, "answers no outstanding request"},
	} {
		assert.ErrorContains(t, r.Step(e.env), e.want)
	}

	_, err := New(Config{Rank: 0, NProcs: 1, PageSize: 64, Pages: 1, Locks: 1, Barriers: 1}, make([]byte, 64))
	assert.ErrorContains(t, err, "garbage collection threshold")
	_, err = New(Config{Rank: 0, NProcs: 1, PageSize: 64, Pages: 1, Barriers: 1, GCThreshold: 1}, make([]byte, 64))
	assert.ErrorContains(t, err, "no locks")
}

func TestShare(t *testing.T) {
	rs := newRanks(t, 3)
	require.NoError(t, rs[0].Barrier(1, nil))
	require.NoError(t, rs[1].ShareAt(1, nil, 0xabc))
	require.NoError(t, rs[2].Barrier(1, nil))
	pump(t, rs)
	for i, r := range rs {
		v, ok := r.Shared()
		assert.True(t, ok, "rank %d", i)
		assert.Equal(t, uint64(0xabc), v, "rank %d", i)
	}
	for _, r := range rs {
		require.NoError(t, r.Barrier(1, nil))
	}
	pump(t, rs)
	_, ok := rs[2].Shared()
	assert.False(t, ok, "a plain barrier shares nothing")

	require.NoError(t, rs[0].ShareAt(2, nil, 1))
	require.NoError(t, rs[1].ShareAt(2, nil, 2))
	require.NoError(t, rs[2].Barrier(2, nil))
	var err error
	queue := append(rs[0].Ready().Messages, rs[1].Ready().Messages...)
	queue = append(queue, rs[2].Ready().Messages...)
	for _, e := range queue {
		if err = rs[e.To].Step(e); err != nil {
			break
		}
	}
	assert.ErrorContains(t, err, "both share a value")
}
