package link

import (
	"encoding/binary"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/protocol"
)

// slotPair returns a slot's two sides, as the engine makes it and as a rank
// maps it from the descriptors it was sent.
func slotPair(t testing.TB) (rank, engine *Slot) {
	engine, fds, err := NewSlot()
	require.NoError(t, err)
	t.Cleanup(engine.Close)
	sent := make([]int, len(fds))
	for i, fd := range fds {
		sent[i], err = unix.Dup(fd)
		require.NoError(t, err)
	}
	rank, err = MapSlot(sent)
	require.NoError(t, err)
	t.Cleanup(rank.Close)
	return rank, engine
}

// serveSlot answers each request through the slot with answer, as an
// engine's thread does, until the test ends: it stops before the test's
// earlier cleanups close the slot and the connection, whose descriptors
// and memory a later test may be given again.
func serveSlot(t testing.TB, s *Slot, conn *Conn, answer func(Request) Reply) {
	t.Helper()
	stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	require.NoError(t, err)
	done := make(chan struct{})
	t.Cleanup(func() {
		signal(stop)
		<-done
		unix.Close(stop)
	})
	go func() {
		defer close(done)
		pfd := []unix.PollFd{{Fd: int32(s.RequestFD()), Events: unix.POLLIN}, {Fd: int32(conn.FD()), Events: unix.POLLIN}, {Fd: int32(stop), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(pfd, -1); err != nil && err != unix.EINTR {
				return
			}
			if pfd[2].Revents != 0 {
				return
			}
			if pfd[1].Revents != 0 {
				var req Request
				if _, err := conn.Recv(&req); err != nil {
					return
				}
				conn.Send(answer(req))
			}
			if pfd[0].Revents != 0 {
				req, ok, err := s.Request()
				if !ok {
					continue
				}
				rep := answer(req)
				if err != nil {
					rep = Reply{Err: err.Error()}
				}
				s.Reply(rep, conn)
			}
		}
	}()
}

// TestSlotCarriesCalls: a call's request and reply go through the slot
// whole, with a CPU of its own (spinning) or without (sleeping), call after
// call, and a request or reply too large for it goes by the socket.
func TestSlotCarriesCalls(t *testing.T) {
	app, eng := pair(t)
	rank, engine := slotPair(t)
	var bySocket atomic.Int32
	serveSlot(t, engine, eng, func(req Request) Reply {
		if req.Op == OpStats {
			bySocket.Add(1)
		}
		rep := Reply{Value: uint64(req.ID) * 10, Err: strings.Repeat("e", int(req.Size))}
		for _, w := range req.Written {
			rep.Zap = append(rep.Zap, protocol.PageRange{First: w.First + 1, Count: w.Count})
		}
		return rep
	})
	for _, spin := range []time.Duration{0, 200 * time.Microsecond} {
		app.SetSpin(spin)
		for i := range 50 {
			req := Request{Op: OpBarrier, ID: uint32(i), Size: uint64(i % 3), Members: []int{0, 2, 5}}
			for k := range i {
				req.Written = append(req.Written, protocol.PageRange{First: uint32(k * 7), Count: uint32(k + 1)})
			}
			rep, err := rank.Call(req, app)
			require.NoError(t, err)
			assert.Equal(t, uint64(i*10), rep.Value)
			assert.Equal(t, strings.Repeat("e", i%3), rep.Err)
			require.Len(t, rep.Zap, i)
			for k, z := range rep.Zap {
				assert.Equal(t, protocol.PageRange{First: uint32(k*7 + 1), Count: uint32(k + 1)}, z)
			}
		}
	}
	assert.Zero(t, bySocket.Load())

	// Larger than the slot's areas: 5 000 written ranges, then 5 000
	// pages to drop in the reply.
	big := Request{Op: OpLock, ID: 3}
	for k := range 5000 {
		big.Written = append(big.Written, protocol.PageRange{First: uint32(2 * k), Count: 1})
	}
	rep, err := rank.Call(big, app)
	require.NoError(t, err)
	assert.Len(t, rep.Zap, 5000)
	small := Request{Op: OpUnlock, ID: 4, Written: big.Written[:3000]}
	require.True(t, rank.putRequest(small), "3 000 ranges fit in the request's area")
	rep, err = rank.Call(small, app)
	require.NoError(t, err)
	assert.Len(t, rep.Zap, 3000)
	assert.Equal(t, uint64(40), rep.Value)

	// Statistics never go through it.
	_, err = rank.Call(Request{Op: OpStats}, app)
	require.NoError(t, err)
	assert.Equal(t, int32(1), bySocket.Load())
}

// TestSlotSeesEngineEnd: a rank that waits for a reply the engine never
// sends returns once the engine's end of the connection closes, whether it
// spins or sleeps.
func TestSlotSeesEngineEnd(t *testing.T) {
	for _, spin := range []time.Duration{0, time.Millisecond} {
		app, eng := pair(t)
		app.SetSpin(spin)
		rank, _ := slotPair(t)
		time.AfterFunc(20*time.Millisecond, func() { eng.Close() })
		done := make(chan error, 1)
		go func() {
			_, err := rank.Call(Request{Op: OpBarrier}, app)
			done <- err
		}()
		select {
		case err := <-done:
			assert.Error(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("the call did not return after the engine's end")
		}
	}
}

// TestSlotRefusesBadRequests: the engine reads the slot of a process it
// does not trust; a request it cannot carry, or whose counts exceed the
// area, is refused with what was wrong, and reading it again finds no new
// request.
func TestSlotRefusesBadRequests(t *testing.T) {
	put := func(s *Slot, words ...uint64) {
		for i, w := range words {
			binary.LittleEndian.PutUint64(s.request[i*wordBytes:], w)
		}
		s.seq++
		*s.reqSeq = s.seq
	}
	for _, c := range []struct {
		name  string
		words []uint64
		err   string
	}{
		{"join", []uint64{uint64(OpJoin), 0, 0, 0, 0, 0, 0, 0, 0}, "request 1 cannot come through the call slot"},
		{"op beyond a byte", []uint64{0x109, 0, 0, 0, 0, 0, 0, 0, 0}, "request 265 cannot come through the call slot"},
		{"unknown op", []uint64{99, 0, 0, 0, 0, 0, 0, 0, 0}, "request 99 cannot come through the call slot"},
		{"id beyond 32 bits", []uint64{uint64(OpLock), 1 << 32, 0, 0, 0, 0, 0, 0, 0}, "request's id 4294967296 exceeds 4294967295"},
		{"members", []uint64{uint64(OpBarrier), 0, 0, 0, 0, 0, 0, 1 << 40, 0}, "request of 1099511627776 members and 0 written ranges exceeds the call slot"},
		{"written", []uint64{uint64(OpBarrier), 0, 0, 0, 0, 0, 0, 2000, 3000}, "request of 2000 members and 3000 written ranges exceeds the call slot"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rank, engine := slotPair(t)
			put(rank, c.words...)
			_, ok, err := engine.Request()
			assert.True(t, ok)
			assert.EqualError(t, err, c.err)
			_, ok, _ = engine.Request()
			assert.False(t, ok)
		})
	}
}

// TestMapSlotChecksItsMemory: a slot of the wrong size, or too few
// descriptors, is refused.
func TestMapSlotChecksItsMemory(t *testing.T) {
	_, err := MapSlot([]int{})
	assert.EqualError(t, err, "call slot: 0 descriptors, not 3")
	fd, err := unix.MemfdCreate("short", unix.MFD_CLOEXEC)
	require.NoError(t, err)
	require.NoError(t, unix.Ftruncate(fd, 4096))
	a, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	require.NoError(t, err)
	b, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	require.NoError(t, err)
	_, err = MapSlot([]int{fd, a, b})
	assert.EqualError(t, err, "call slot: of 4096 bytes, not 69632")
}

// BenchmarkSlotCall times a barrier's call with thirty written ranges
// through the slot, the engine answering on another thread.
func BenchmarkSlotCall(b *testing.B) {
	app, eng := pair(b)
	rank, engine := slotPair(b)
	serveSlot(b, engine, eng, func(Request) Reply { return Reply{} })
	req := Request{Op: OpBarrier, ID: 63, Members: []int{0, 1}}
	for i := range 30 {
		req.Written = append(req.Written, protocol.PageRange{First: uint32(i * 1000), Count: 3})
	}
	app.SetSpin(200 * time.Microsecond)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rank.Call(req, app); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSocketCall times the same call as BenchmarkSlotCall by the
// socket.
func BenchmarkSocketCall(b *testing.B) {
	app, eng := pair(b)
	_, engine := slotPair(b)
	serveSlot(b, engine, eng, func(Request) Reply { return Reply{} })
	app.SetSpin(200 * time.Microsecond)
	req := Request{Op: OpBarrier, ID: 63, Members: []int{0, 1}}
	for i := range 30 {
		req.Written = append(req.Written, protocol.PageRange{First: uint32(i * 1000), Count: 3})
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := app.Send(req); err != nil {
			b.Fatal(err)
		}
		var rep Reply
		if _, err := app.Recv(&rep); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSlotRefusesCorruptReply: a reply whose counts exceed the area is an
// error, not a read past it.
func TestSlotRefusesCorruptReply(t *testing.T) {
	app, _ := pair(t)
	rank, engine := slotPair(t)
	binary.LittleEndian.PutUint64(engine.reply[2*wordBytes:], 1<<20)
	engine.seq = 1
	*engine.repSeq = 1
	rank.seq = 1
	_, err := rank.takeReply(app)
	assert.EqualError(t, err, "link: a reply of 1048576 error bytes and 0 pages to drop exceeds the call slot")
}
