package link

import (
	"encoding/binary"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/protocol"
)

// pair returns both ends of a connected unix stream socket.
func pair(t testing.TB) (*Conn, *Conn) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	var conns [2]*Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "link")
		c, err := net.FileConn(f)
		f.Close()
		require.NoError(t, err)
		conns[i], err = New(c.(*net.UnixConn))
		require.NoError(t, err)
		t.Cleanup(func() { conns[i].Close() })
	}
	return conns[0], conns[1]
}

// TestRequestFrameLimit: the engine reads requests from processes it does
// not trust; a request's length beyond 1 MiB is refused before its body,
// while replies, from the engine, may be large.
func TestRequestFrameLimit(t *testing.T) {
	app, eng := pair(t)
	_, err := unix.Write(app.fd, binary.LittleEndian.AppendUint32(nil, maxRequest+1))
	require.NoError(t, err)
	var req Request
	_, err = eng.Recv(&req)
	assert.EqualError(t, err, "link: frame of 1048577 bytes exceeds 1048576")

	app, eng = pair(t)
	zap := make([]protocol.PageRange, 500000) // 1.5 MB encoded
	go eng.Send(Reply{Zap: zap})
	var rep Reply
	_, err = app.Recv(&rep)
	require.NoError(t, err)
	assert.Len(t, rep.Zap, len(zap))
}

// TestCloseWakesRecv: closing a connection returns a Recv blocked on it.
func TestCloseWakesRecv(t *testing.T) {
	app, _ := pair(t)
	done := make(chan error, 1)
	go func() {
		var rep Reply
		_, err := app.Recv(&rep)
		done <- err
	}()
	app.Close()
	assert.Error(t, <-done)
	assert.Error(t, app.Send(Reply{}), "send after close")
}

// TestSpinningRecv: a Recv that polls first gets a reply that comes while
// it polls and one that comes after it has gone to sleep.
func TestSpinningRecv(t *testing.T) {
	app, eng := pair(t)
	app.SetSpin(20 * time.Millisecond)
	for _, delay := range []time.Duration{time.Millisecond, 60 * time.Millisecond} {
		go func() {
			time.Sleep(delay)
			eng.Send(Reply{Value: uint64(delay)})
		}()
		var rep Reply
		_, err := app.Recv(&rep)
		require.NoError(t, err)
		assert.Equal(t, uint64(delay), rep.Value)
	}
}

// TestBufferedFrames: frames that arrive together are returned one by one,
// and Buffered says when one waits without the socket being readable.
func TestBufferedFrames(t *testing.T) {
	app, eng := pair(t)
	require.NoError(t, app.Send(Request{Op: OpBarrier, ID: 1}))
	require.NoError(t, app.Send(Request{Op: OpBarrier, ID: 2}))
	time.Sleep(10 * time.Millisecond) // both in the socket
	var req Request
	_, err := eng.Recv(&req)
	require.NoError(t, err)
	assert.Equal(t, uint32(1), req.ID)
	require.True(t, eng.Buffered())
	_, err = eng.Recv(&req)
	require.NoError(t, err)
	assert.Equal(t, uint32(2), req.ID)
	assert.False(t, eng.Buffered())
}
