package peer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/protocol"
)

// pair runs a handshake between a dialer and a listener over loopback TCP
// and returns both ends (or the errors).
func pair(t *testing.T, dialerSecret, listenerSecret []byte) (*Conn, *Conn, error, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	type result struct {
		c   *Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- result{nil, err}
			return
		}
		sc, err := Server(c, "b", listenerSecret)
		if err != nil {
			c.Close()
		}
		done <- result{sc, err}
	}()
	dc, derr := Dial(ln.Addr().String(), "a", dialerSecret)
	res := <-done
	return dc, res.c, derr, res.err
}

// listen runs the listener's side of one handshake, as node "b" with
// secret, on a loopback port; it returns the address and the handshake's
// error when it ends.
func listen(t *testing.T, secret []byte) (string, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		_, err = Server(c, "b", secret)
		c.Close()
		done <- err
	}()
	return ln.Addr().String(), done
}

func TestHandshakeAndFrames(t *testing.T) {
	a, b, errA, errB := pair(t, []byte("s3cret"), []byte("s3cret"))
	require.NoError(t, errA)
	require.NoError(t, errB)
	defer a.Close()
	defer b.Close()
	assert.Equal(t, "b", a.Peer)
	assert.Equal(t, "a", b.Peer)
	for i, body := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte{7}, 1<<20)} {
		require.NoError(t, a.Send(FirstKind+Kind(i), body))
		kind, got, err := b.Recv()
		require.NoError(t, err)
		assert.Equal(t, FirstKind+Kind(i), kind)
		assert.Equal(t, len(body), len(got))
		assert.True(t, bytes.Equal(body, got))
	}
}

func TestWrongSecretIsRefused(t *testing.T) {
	a, b, errA, errB := pair(t, []byte("wrong"), []byte("right"))
	assert.Nil(t, a)
	assert.Nil(t, b)
	// The dialer finds out first: the listener's MAC does not check out.
	assert.True(t, errors.Is(errA, ErrAuth), "dialer: %v", errA)
	assert.Error(t, errB, "listener")
	assert.Contains(t, errA.Error(), `node "b" does not hold the cluster secret`)
}

// TestImpostorDialerIsRefused: a dialer that does not check the listener's
// MAC and answers with garbage is refused by the listener.
func TestImpostorDialerIsRefused(t *testing.T) {
	addr, done := listen(t, []byte("right"))
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	imp := newConn(c)
	require.NoError(t, imp.Send(kindHello, hello{Name: "mallory", Nonce: make([]byte, nonceSize), Version: protocol.WireVersion}.encode()))
	_, err = imp.expect(kindChallenge)
	require.NoError(t, err)
	require.NoError(t, imp.Send(kindResponse, make([]byte, 32)))
	err = <-done
	assert.True(t, errors.Is(err, ErrAuth), "%v", err)
	assert.Contains(t, err.Error(), `node "mallory"`)
}

// TestOtherWireVersionIsRefused: a node of another wire version, or of a
// release from before versions (frames without one), is refused by name,
// on both sides of the handshake.
func TestOtherWireVersionIsRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		hello []byte
		want  string
	}{
		{"newer dialer", hello{Name: "new", Nonce: make([]byte, nonceSize), Version: protocol.WireVersion + 1}.encode(), fmt.Sprintf(`node "new" speaks wire version %d, this node %d`, protocol.WireVersion+1, protocol.WireVersion)},
		{"dialer before versions", append(appendName(nil, "old"), make([]byte, nonceSize)...), fmt.Sprintf(`node "old" speaks wire version 1, this node %d`, protocol.WireVersion)},
	} {
		t.Run("listener, "+tt.name, func(t *testing.T) {
			addr, done := listen(t, nil)
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			other := newConn(c)
			require.NoError(t, other.Send(kindHello, tt.hello))
			body, err := other.expect(kindChallenge)
			require.NoError(t, err, "the listener says its version before it hangs up")
			ch, err := decodeChallenge(body)
			require.NoError(t, err)
			assert.Equal(t, uint16(protocol.WireVersion), ch.Version)
			assert.ErrorContains(t, <-done, tt.want)
		})
	}
	for _, tt := range []struct {
		name      string
		challenge func(ch challenge) []byte
		want      string
	}{
		{"newer listener", func(ch challenge) []byte { ch.Version++; return ch.encode() }, fmt.Sprintf(`node "b" speaks wire version %d, this node %d`, protocol.WireVersion+1, protocol.WireVersion)},
		{"listener before versions", func(ch challenge) []byte {
			return append(append(appendName(nil, ch.Name), ch.Nonce...), ch.MAC...)
		}, fmt.Sprintf(`node "b" speaks wire version 1, this node %d`, protocol.WireVersion)},
		{"listener that hangs up", nil, "hung up at this node's hello"},
	} {
		t.Run("dialer, "+tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				other := newConn(c)
				if _, err := other.expect(kindHello); err != nil || tt.challenge == nil {
					return
				}
				ch := challenge{Name: "b", Nonce: make([]byte, nonceSize), MAC: make([]byte, 32), Version: protocol.WireVersion}
				other.Send(kindChallenge, tt.challenge(ch))
				other.expect(kindResponse)
			}()
			_, err = Dial(ln.Addr().String(), "a", nil)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestGarbageIsRefused(t *testing.T) {
	addr, done := listen(t, nil)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	c.Close()
	assert.Error(t, <-done)
}

func TestReadFrameLimits(t *testing.T) {
	_, _, err := ReadFrame(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 9}))
	assert.ErrorIs(t, err, ErrFrameTooLarge)
	assert.ErrorContains(t, err, "4294967295 bytes, over the 67108864 this connection takes")
	_, _, err = ReadFrame(bytes.NewReader([]byte{4, 0, 0, 0, 9, 1, 2}))
	assert.ErrorContains(t, err, "unexpected EOF")

	// A body larger than the first read, arriving whole.
	body := bytes.Repeat([]byte("svm"), firstBodyRead)
	kind, got, err := ReadFrame(bytes.NewReader(AppendFrame(nil, 7, body)))
	require.NoError(t, err)
	assert.Equal(t, Kind(7), kind)
	assert.Equal(t, body, got)
}

// TestReadFrameGrowsAsBytesArrive: a length the sender does not back with
// bytes costs the reader about what did arrive, not what was declared.
func TestReadFrameGrowsAsBytesArrive(t *testing.T) {
	frame := AppendFrame(nil, 7, make([]byte, 1<<20))[:5+1000]
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		_, _, err := ReadFrame(bytes.NewReader(frame))
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	}
	runtime.ReadMemStats(&after)
	perRead := (after.TotalAlloc - before.TotalAlloc) / 10
	t.Logf("a frame declaring 1 MiB and carrying 1000 bytes allocated %d bytes", perRead)
	assert.Less(t, perRead, uint64(2*firstBodyRead))
}

// TestHandshakeFrameLimit: before the handshake has ended, a frame longer
// than the handshake's is refused on its header, whatever follows.
func TestHandshakeFrameLimit(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		require.NoError(t, err)
		_, err = Server(c, "b", []byte("0123456789abcdef"))
		c.Close()
		done <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write(binary.LittleEndian.AppendUint32(nil, MaxHandshakeFrame+1))
	require.NoError(t, err)
	_, err = c.Write([]byte{byte(kindHello)})
	require.NoError(t, err)
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrFrameTooLarge)
	case <-time.After(HandshakeTimeout / 2):
		t.Fatal("the listener waited for the body of an oversized hello")
	}
	// After it, frames up to MaxFrame pass.
	a, b, aerr, berr := pair(t, nil, nil)
	require.NoError(t, aerr)
	require.NoError(t, berr)
	defer a.Close()
	defer b.Close()
	body := make([]byte, 4<<20)
	go a.Send(FirstKind, body)
	_, got, err := b.Recv()
	require.NoError(t, err)
	assert.Len(t, got, len(body))
}

// FuzzReadFrame: arbitrary bytes never panic the frame reader, and what it
// accepts re-encodes to the same bytes.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 5})
	f.Add([]byte{3, 0, 0, 0, 6, 'a', 'b', 'c'})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			kind, body, err := ReadFrame(r)
			if err != nil {
				return
			}
			if len(body) > MaxFrame {
				t.Fatalf("body of %d bytes", len(body))
			}
			_ = kind
		}
	})
}
