package daemon

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/protocol/peer"
)

// tcpPair returns the two ends of a loopback TCP connection as peer conns.
func tcpPair(t *testing.T) (*peer.Conn, *peer.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	s := <-accepted
	require.NotNil(t, s)
	a, b := peer.Local(c, "b"), peer.Local(s, "a")
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestLinkKeepsEachSendersOrder: frames from many goroutines, small and
// large enough to fill the socket (so that send's own write stops part
// way and the writer finishes it), all arrive whole and in each sender's
// order.
func TestLinkKeepsEachSendersOrder(t *testing.T) {
	a, b := tcpPair(t)
	l := newLink("b", a, 0, nil)
	go l.run()
	defer l.down(errors.New("test over"))
	const senders, frames = 8, 300
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range frames {
				size := 16
				if i%37 == 0 {
					size = 3 << 20 // bigger than the socket's buffers
				}
				body := make([]byte, size)
				binary.LittleEndian.PutUint32(body, uint32(s))
				binary.LittleEndian.PutUint32(body[4:], uint32(i))
				body[size-1] = byte(i)
				if err := l.send(kindOutput, body); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	next := make([]int, senders)
	for range senders * frames {
		kind, body, err := b.Recv()
		require.NoError(t, err)
		require.Equal(t, kindOutput, kind)
		s, i := binary.LittleEndian.Uint32(body), binary.LittleEndian.Uint32(body[4:])
		require.Equal(t, next[s], int(i), "sender %d", s)
		require.Equal(t, byte(i), body[len(body)-1])
		next[s]++
	}
	wg.Wait()
}

func TestLinkHeartbeatsWhenIdle(t *testing.T) {
	a, b := tcpPair(t)
	l := newLink("b", a, 20*time.Millisecond, nil)
	go l.run()
	defer l.down(errors.New("test over"))
	for range 3 {
		b.SetReadDeadline(time.Now().Add(time.Second))
		kind, body, err := b.Recv()
		require.NoError(t, err)
		require.Equal(t, kindHeartbeat, kind)
		require.Empty(t, body)
	}
}

// TestLinkDown: the peer's end closing takes the link down once, senders
// are told, and a paced sender waiting on a full queue is released.
func TestLinkDown(t *testing.T) {
	a, b := tcpPair(t)
	var downs []error
	var mu sync.Mutex
	l := newLink("b", a, 0, func(_ *link, err error) {
		mu.Lock()
		downs = append(downs, err)
		mu.Unlock()
	})
	go l.run()
	// Nobody reads b: a paced sender soon waits for the queue to drain.
	paced := make(chan error, 1)
	go func() {
		for {
			if err := l.sendPaced(kindOutput, make([]byte, 1<<20), 2<<20); err != nil {
				paced <- err
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	b.Close()
	select {
	case err := <-paced:
		require.ErrorIs(t, err, errLinkDown)
	case <-time.After(5 * time.Second):
		t.Fatal("the paced sender was not released")
	}
	<-l.done
	require.ErrorIs(t, l.send(kindOutput, []byte("x")), errLinkDown)
	l.down(errors.New("again"))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, downs, 1)
}
