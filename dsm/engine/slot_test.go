package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/dsm/internal/link"
)

// TestCallsWithAndWithoutSlot: an application that never asks for a call
// slot (a libsvm older than it) makes its calls by the socket; one that
// asks gets the slot once, and its calls through it are answered in it,
// while those the slot does not carry still go by the socket.
func TestCallsWithAndWithoutSlot(t *testing.T) {
	cfg := DefaultConfig(1, filepath.Join(t.TempDir(), "engine.sock"))
	e, err := New(cfg)
	require.NoError(t, err)
	defer e.Close()
	go e.Run(context.Background())

	c, err := link.Dial(cfg.Socket)
	require.NoError(t, err)
	defer c.Close()
	call := func(req link.Request) (link.Reply, []int) {
		t.Helper()
		rep, fds, err := c.Call(req)
		require.NoError(t, err)
		return rep, fds
	}
	rep, fds := call(link.Request{Op: link.OpJoin})
	require.NotNil(t, rep.Join, rep.Err)
	for _, fd := range fds {
		unix.Close(fd)
	}

	bySocket, _ := call(link.Request{Op: link.OpAlloc, Size: 1 << 20})
	require.Empty(t, bySocket.Err)
	assert.GreaterOrEqual(t, bySocket.Value, cfg.Base)

	rep, fds = call(link.Request{Op: link.OpSlot})
	require.Empty(t, rep.Err)
	slot, err := link.MapSlot(fds)
	require.NoError(t, err)
	defer slot.Close()
	again, _ := call(link.Request{Op: link.OpSlot})
	assert.Equal(t, "slot: the call slot is open already", again.Err)

	bySlot, err := slot.Call(link.Request{Op: link.OpAlloc, Size: 1 << 20}, c)
	require.NoError(t, err)
	require.Empty(t, bySlot.Err)
	assert.Greater(t, bySlot.Value, bySocket.Value)
	refused, err := slot.Call(link.Request{Op: link.OpBarrier, ID: 1 << 20}, c)
	require.NoError(t, err)
	assert.Equal(t, "barrier: barrier 1048576 out of range [0,64)", refused.Err)

	stats, err := slot.Call(link.Request{Op: link.OpStats}, c)
	require.NoError(t, err)
	require.NotNil(t, stats.Stats, "statistics come by the socket")
}
