package lock

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/protocol"
)

// cluster drives the lock tables of n ranks, delivering messages in an
// order chosen by rng, and checks mutual exclusion and the grant order.
type cluster struct {
	t       *testing.T
	tables  []*Table
	flight  []protocol.Envelope
	holder  map[uint32]int // lock → rank holding it
	waiting map[int]uint32 // rank → lock it waits for
	sent    int
	// requested records, per lock, the ranks in the order the manager took
	// their requests; granted, the order they received the lock by a grant.
	// (A local re-acquire needs no request and is in neither.)
	requested, granted map[uint32][]int
	acquired           map[uint32][]int
	// wanted counts the requests queued behind a rank's hold.
	wanted int
}

func newCluster(t *testing.T, n int, locks uint32) *cluster {
	c := &cluster{t: t, holder: map[uint32]int{}, waiting: map[int]uint32{},
		requested: map[uint32][]int{}, granted: map[uint32][]int{}, acquired: map[uint32][]int{}}
	for r := range n {
		tb, err := New(Config{Self: r, NProcs: n, Locks: locks})
		require.NoError(t, err)
		c.tables = append(c.tables, tb)
	}
	return c
}

func (c *cluster) vt(r int) protocol.VectorTime {
	v := make(protocol.VectorTime, len(c.tables))
	v[r] = uint32(r + 1)
	return v
}

func (c *cluster) send(envs []protocol.Envelope) {
	for _, e := range envs {
		if req, ok := e.Msg.(*protocol.LockRequest); ok && req.Forwarded && e.From == req.Requester {
			// The manager forwards its own request: it takes it now.
			c.requested[req.Lock] = append(c.requested[req.Lock], req.Requester)
		}
		c.flight = append(c.flight, e)
		c.sent++
	}
}

func (c *cluster) holds(r int, id uint32) bool {
	h, ok := c.holder[id]
	return ok && h == r
}

func (c *cluster) grant(from int, g *Grant) {
	if g == nil {
		return
	}
	require.Equal(c.t, c.vt(g.To), g.VT, "grant must carry the requester's vector time")
	c.send([]protocol.Envelope{{From: from, To: g.To, Msg: &protocol.LockGrant{Lock: g.Lock}}})
}

func (c *cluster) acquired1(r int, id uint32) {
	if h, ok := c.holder[id]; ok {
		c.t.Fatalf("rank %d acquired lock %d held by rank %d", r, id, h)
	}
	c.holder[id] = r
	c.acquired[id] = append(c.acquired[id], r)
	delete(c.waiting, r)
}

func (c *cluster) acquire(r int, id uint32) {
	local, send, err := c.tables[r].Acquire(id, c.vt(r))
	require.NoError(c.t, err)
	if local {
		assert.Empty(c.t, send, "a local acquire sends nothing")
		c.acquired1(r, id)
		return
	}
	c.waiting[r] = id
	c.send(send)
}

func (c *cluster) release(r int, id uint32) {
	require.True(c.t, c.holds(r, id))
	delete(c.holder, id)
	g, err := c.tables[r].Release(id)
	require.NoError(c.t, err)
	c.grant(r, g)
}

func (c *cluster) deliver(i int) {
	e := c.flight[i]
	c.flight = append(c.flight[:i], c.flight[i+1:]...)
	if req, ok := e.Msg.(*protocol.LockRequest); ok && !req.Forwarded {
		c.requested[req.Lock] = append(c.requested[req.Lock], req.Requester)
	}
	res, err := c.tables[e.To].Step(e.From, e.Msg)
	require.NoError(c.t, err)
	if req, ok := e.Msg.(*protocol.LockRequest); ok {
		// A request queued behind the application's hold says so, for an
		// engine that lets the application release without a call.
		if req.Forwarded && c.holds(e.To, req.Lock) {
			assert.True(c.t, res.Wanted, "request for lock %d queued behind rank %d's hold", req.Lock, e.To)
		}
		if res.Wanted {
			c.wanted++
			assert.Equal(c.t, req.Lock, res.WantedLock)
			assert.True(c.t, c.holds(e.To, req.Lock) && c.tables[e.To].Wanted(req.Lock))
		}
	}
	c.send(res.Send)
	c.grant(e.To, res.Grant)
	if res.Acquired != nil {
		c.granted[res.Acquired.Lock] = append(c.granted[res.Acquired.Lock], e.To)
		c.acquired1(e.To, res.Acquired.Lock)
	}
}

// TestRandomSchedules runs many ranks acquiring and releasing a few locks
// with messages delivered in random order: never two holders, every request
// granted, grants in the order the manager took the requests (FIFO).
func TestRandomSchedules(t *testing.T) {
	wanted := 0
	defer func() { assert.Positive(t, wanted, "no request queued behind a hold") }()
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(8)
		locks := uint32(1 + rng.IntN(3))
		c := newCluster(t, n, locks)
		held := map[int]uint32{}
		steps := 0
		for steps < 400 || len(c.flight) > 0 || len(c.waiting) > 0 || len(held) > 0 {
			steps++
			require.Less(t, steps, 100000, "seed %d: no progress", seed)
			r := rng.IntN(n)
			switch {
			case len(c.flight) > 0 && rng.IntN(2) == 0:
				c.deliver(rng.IntN(len(c.flight)))
			case steps >= 400:
				// Drain: release what is held, deliver the rest.
				if id, ok := held[r]; ok && c.holds(r, id) {
					c.release(r, id)
					delete(held, r)
				} else if len(c.flight) > 0 {
					c.deliver(rng.IntN(len(c.flight)))
				}
			default:
				if id, ok := held[r]; ok {
					if c.holds(r, id) {
						c.release(r, id)
						delete(held, r)
					}
					continue
				}
				id := uint32(rng.IntN(int(locks)))
				held[r] = id
				c.acquire(r, id)
			}
		}
		for id, order := range c.granted {
			assert.Equal(t, c.requested[id], order, "seed %d lock %d: grants out of request order", seed, id)
		}
		assert.Empty(t, c.waiting, "seed %d: requests never granted", seed)
		wanted += c.wanted
	}
}

func TestMessageCounts(t *testing.T) {
	c := newCluster(t, 4, 8)
	// Lock 1 is managed by rank 1, which holds its token.
	c.acquire(1, 1)
	assert.Equal(t, 0, c.sent, "the manager takes its own idle lock locally")
	c.release(1, 1)

	c.acquire(0, 1) // request to the manager, which grants at once
	for len(c.flight) > 0 {
		c.deliver(0)
	}
	assert.Equal(t, 2, c.sent)
	c.release(0, 1)

	c.sent = 0
	c.acquire(2, 1) // request, forward to rank 0, grant
	for len(c.flight) > 0 {
		c.deliver(0)
	}
	assert.Equal(t, 3, c.sent)
	c.release(2, 1)

	c.sent = 0
	c.acquire(2, 1) // released last, nobody asked since: local
	assert.Equal(t, 0, c.sent)
	assert.Equal(t, []int{1, 0, 2, 2}, c.acquired[1])
	c.release(2, 1)

	c.sent = 0
	c.acquire(1, 1) // the manager forwards its own request to rank 2
	for len(c.flight) > 0 {
		c.deliver(0)
	}
	assert.Equal(t, 2, c.sent)
}

func TestMisuse(t *testing.T) {
	tb, err := New(Config{Self: 0, NProcs: 2, Locks: 4})
	require.NoError(t, err)
	vt := protocol.VectorTime{0, 0}
	_, _, err = tb.Acquire(4, vt)
	assert.ErrorContains(t, err, "lock 4 out of range [0,4)")
	_, err = tb.Release(2)
	assert.ErrorContains(t, err, "unlock of lock 2, which rank 0 does not hold")
	local, _, err := tb.Acquire(2, vt)
	require.NoError(t, err)
	require.True(t, local)
	_, _, err = tb.Acquire(2, vt)
	assert.ErrorContains(t, err, "already held")
	_, send, err := tb.Acquire(1, vt)
	require.NoError(t, err)
	require.Len(t, send, 1)
	_, _, err = tb.Acquire(1, vt)
	assert.ErrorContains(t, err, "already being acquired")

	_, err = tb.Step(1, &protocol.LockGrant{Lock: 3})
	assert.ErrorContains(t, err, "unexpected grant")
	_, err = tb.Step(1, &protocol.LockRequest{Lock: 1, Requester: 1, VT: vt})
	assert.ErrorContains(t, err, "does not manage it")
	_, err = tb.Step(1, &protocol.LockRequest{Lock: 0, Requester: 0, VT: vt})
	assert.ErrorContains(t, err, "names requester 0")
	_, err = tb.Step(1, &protocol.LockRequest{Forwarded: true, Lock: 3, Requester: 1, VT: vt})
	assert.ErrorContains(t, err, "neither has nor awaits")
	_, err = tb.Step(1, &protocol.BarrierDepart{})
	assert.ErrorContains(t, err, "unexpected message")

	_, err = New(Config{Self: 2, NProcs: 2, Locks: 1})
	assert.Error(t, err)
	_, err = New(Config{Self: 0, NProcs: 2})
	assert.Error(t, err)
}
