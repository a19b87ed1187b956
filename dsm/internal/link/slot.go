package link

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/protocol"
)

// A Slot carries a rank's calls and their replies through memory the rank
// and its engine share, beside the socket, which stays for what the slot
// does not carry (joining, descriptors, statistics, the end) and to learn
// that the other end is gone. A call through the socket costs a frame
// encoded, sent, received and decoded each way, and the wait for a reply
// a recvmsg(2) at each look; through the slot the rank writes its request
// in place and wakes the engine's thread with an eventfd, and the engine
// writes the reply in place, where a rank that waits with a CPU of its own
// sees it at its next look, waking it with a second eventfd only if it
// went to sleep.
//
// The slot is one memfd: a page of counters (the request's sequence
// number, written by the rank; the reply's, by the engine; whether the
// rank sleeps), then the request's area, then the reply's. A request is
// its fields as 64-bit words, then its members, then its written pages as
// first, count pairs of 32-bit words; a reply, whether it went by the
// socket, its value, the length of its error and its count of pages to
// drop as words, then the error's bytes, then the pages. A call whose
// request or reply does not fit goes by the socket.
type Slot struct {
	mem                 []byte
	reqSeq, repSeq      *uint64
	sleeping            *uint32
	request, reply      []byte
	reqFD, repFD, memfd int
	seq                 uint64 // the rank's last request; the engine's last one read
	pollFDs             []unix.PollFd
	eventBuf            [8]byte
}

const (
	slotCounters  = 4096
	slotArea      = 32 << 10
	slotSize      = slotCounters + 2*slotArea
	requestWords  = 9 // op, id, size, addr, root, write, delta, members, written
	replyWords    = 4 // on socket, value, error's length, pages to drop
	repSeqOffset  = 64
	sleepOffset   = 128
	wordBytes     = 8
	pageRangeSize = 8
)

// BySlot reports whether a call of kind o may go through a Slot: not those
// that pass descriptors or whose replies are large (statistics), nor the
// end.
func (o Op) BySlot() bool {
	switch o {
	case OpJoin, OpAttach, OpStats, OpClose, OpSlot:
		return false
	}
	return o > 0 && int(o) < len(opNames)
}

// NewSlot makes a slot for the engine's side, and returns it with the
// descriptors the rank maps it with (MapSlot): its memfd and its two
// eventfds, which stay the slot's.
func NewSlot() (*Slot, []int, error) {
	memfd, err := unix.MemfdCreate("svm-calls", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, fmt.Errorf("call slot: memfd_create: %w", err)
	}
	s := &Slot{memfd: memfd, reqFD: -1, repFD: -1}
	if err = unix.Ftruncate(memfd, slotSize); err == nil {
		s.reqFD, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	}
	if err == nil {
		s.repFD, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	}
	if err == nil {
		err = s.mapMemory()
	}
	if err != nil {
		s.Close()
		return nil, nil, fmt.Errorf("call slot: %w", err)
	}
	return s, []int{s.memfd, s.reqFD, s.repFD}, nil
}

// MapSlot maps the slot an engine made (NewSlot) for the rank's side. It
// takes the descriptors over.
func MapSlot(fds []int) (*Slot, error) {
	if len(fds) != 3 {
		closeAll(fds)
		return nil, fmt.Errorf("call slot: %d descriptors, not 3", len(fds))
	}
	s := &Slot{memfd: fds[0], reqFD: fds[1], repFD: fds[2]}
	var st unix.Stat_t
	err := unix.Fstat(s.memfd, &st)
	if err == nil && st.Size != slotSize {
		err = fmt.Errorf("of %d bytes, not %d", st.Size, slotSize)
	}
	if err == nil {
		err = s.mapMemory()
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("call slot: %w", err)
	}
	return s, nil
}

func (s *Slot) mapMemory() error {
	mem, err := unix.Mmap(s.memfd, 0, slotSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap: %w", err)
	}
	s.mem = mem
	s.reqSeq = (*uint64)(unsafe.Pointer(&mem[0]))
	s.repSeq = (*uint64)(unsafe.Pointer(&mem[repSeqOffset]))
	s.sleeping = (*uint32)(unsafe.Pointer(&mem[sleepOffset]))
	s.request = mem[slotCounters : slotCounters+slotArea]
	s.reply = mem[slotCounters+slotArea:]
	return nil
}

// Close unmaps the slot and closes its descriptors.
func (s *Slot) Close() {
	if s.mem != nil {
		unix.Munmap(s.mem)
		s.mem = nil
	}
	for _, fd := range []*int{&s.memfd, &s.reqFD, &s.repFD} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// RequestFD is the descriptor that becomes readable when the rank has made
// a request (the engine's side).
func (s *Slot) RequestFD() int { return s.reqFD }

// Call makes a call through the slot and waits for its reply, which may
// come by c, the rank's connection to the same engine (the rank's side); it
// looks for the reply as long as c's Recv would (SetSpin) before it sleeps.
// A request that does not fit goes by c. It returns c's errors, such as
// the engine's end.
func (s *Slot) Call(req Request, c *Conn) (Reply, error) {
	if !req.Op.BySlot() || !s.putRequest(req) {
		rep, _, err := c.Call(req) // no call that may go through a slot gets descriptors
		return rep, err
	}
	s.seq++
	atomic.StoreUint64(s.reqSeq, s.seq)
	if err := signal(s.reqFD); err != nil {
		return Reply{}, fmt.Errorf("link: waking the engine: %w", err)
	}
	if err := s.await(c); err != nil {
		return Reply{}, err
	}
	return s.takeReply(c)
}

// await waits for the reply to the request s.seq: it looks for up to c.spin,
// yielding the CPU between looks, then sleeps until the engine wakes it or
// c has something to read. The rank's sleeping flag and the reply's number
// are each stored before the other is loaded, so either the rank sees the
// reply or the engine sees it asleep.
func (s *Slot) await(c *Conn) error {
	var deadline time.Time
	if c.spin > 0 {
		deadline = time.Now().Add(c.spin)
	}
	for atomic.LoadUint64(s.repSeq) != s.seq {
		if !deadline.IsZero() && time.Now().Before(deadline) {
			Yield()
			continue
		}
		atomic.StoreUint32(s.sleeping, 1)
		if atomic.LoadUint64(s.repSeq) == s.seq {
			atomic.StoreUint32(s.sleeping, 0)
			break
		}
		s.pollFDs = append(s.pollFDs[:0], unix.PollFd{Fd: int32(s.repFD), Events: unix.POLLIN}, unix.PollFd{Fd: int32(c.FD()), Events: unix.POLLIN})
		_, err := unix.Poll(s.pollFDs, -1)
		atomic.StoreUint32(s.sleeping, 0)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("link: waiting for the engine: %w", err)
		}
		if s.pollFDs[0].Revents != 0 {
			unix.Read(s.repFD, s.eventBuf[:]) // a wake-up may come late, for an earlier reply: look again
		}
		if s.pollFDs[1].Revents != 0 && atomic.LoadUint64(s.repSeq) != s.seq {
			// The engine's end, or a reply it sends by the socket
			// before it marks the slot.
			return nil
		}
	}
	return nil
}

// takeReply reads the reply to the request s.seq, from the slot or, when
// it did not fit there or came before the slot said so, from c.
func (s *Slot) takeReply(c *Conn) (Reply, error) {
	if atomic.LoadUint64(s.repSeq) != s.seq || binary.LittleEndian.Uint64(s.reply) != 0 {
		var rep Reply
		_, err := c.Recv(&rep)
		return rep, err
	}
	b := s.reply
	rep := Reply{Value: binary.LittleEndian.Uint64(b[wordBytes:])}
	errLen, zaps := binary.LittleEndian.Uint64(b[2*wordBytes:]), binary.LittleEndian.Uint64(b[3*wordBytes:])
	at := replyWords * wordBytes
	if errLen > slotArea || zaps > slotArea/pageRangeSize || uint64(at)+errLen+wordBytes+zaps*pageRangeSize > slotArea {
		return Reply{}, fmt.Errorf("link: a reply of %d error bytes and %d pages to drop exceeds the call slot", errLen, zaps)
	}
	if errLen > 0 {
		rep.Err = string(b[at : at+int(errLen)])
		at += (int(errLen) + wordBytes - 1) / wordBytes * wordBytes
	}
	rep.Zap = getRanges(b[at:], zaps)
	return rep, nil
}

// putRequest writes req into the request area, and reports false if it
// does not fit.
func (s *Slot) putRequest(req Request) bool {
	size := requestWords*wordBytes + len(req.Members)*wordBytes + len(req.Written)*pageRangeSize
	if size > len(s.request) {
		return false
	}
	b := s.request
	var write uint64
	if req.Write {
		write = 1
	}
	for i, w := range [requestWords]uint64{uint64(req.Op), uint64(req.ID), req.Size, req.Addr, uint64(int64(req.Root)), write, uint64(req.Delta), uint64(len(req.Members)), uint64(len(req.Written))} {
		binary.LittleEndian.PutUint64(b[i*wordBytes:], w)
	}
	at := requestWords * wordBytes
	for _, m := range req.Members {
		binary.LittleEndian.PutUint64(b[at:], uint64(int64(m)))
		at += wordBytes
	}
	putRanges(b[at:], req.Written)
	return true
}

// Request reads the rank's request, if it made one since the last read,
// after the slot's descriptor became readable (the engine's side). The
// rank may be anyone's process: every count is checked against the area,
// and read once.
func (s *Slot) Request() (req Request, ok bool, err error) {
	unix.Read(s.reqFD, s.eventBuf[:])
	seq := atomic.LoadUint64(s.reqSeq)
	if seq == s.seq {
		return Request{}, false, nil
	}
	s.seq = seq
	b := s.request
	var w [requestWords]uint64
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(b[i*wordBytes:])
	}
	req = Request{Op: Op(w[0]), ID: uint32(w[1]), Size: w[2], Addr: w[3], Root: int(int64(w[4])), Write: w[5] != 0, Delta: int64(w[6])}
	members, written := w[7], w[8]
	switch {
	case w[0] > 0xff || !req.Op.BySlot():
		return req, true, fmt.Errorf("request %d cannot come through the call slot", w[0])
	case w[1] > 1<<32-1:
		return req, true, fmt.Errorf("request's id %d exceeds %d", w[1], uint32(1<<32-1))
	case members > slotArea/wordBytes || written > slotArea/pageRangeSize ||
		requestWords*wordBytes+members*wordBytes+written*pageRangeSize > slotArea:
		return req, true, fmt.Errorf("request of %d members and %d written ranges exceeds the call slot", members, written)
	}
	at := requestWords * wordBytes
	if members > 0 {
		req.Members = make([]int, members)
		for i := range req.Members {
			req.Members[i] = int(int64(binary.LittleEndian.Uint64(b[at:])))
			at += wordBytes
		}
	}
	req.Written = getRanges(b[at:], written)
	return req, true, nil
}

// Reply answers the request read last (the engine's side): in the slot if
// it fits, else by c first. It wakes the rank if it sleeps.
func (s *Slot) Reply(rep Reply, c *Conn) error {
	var err error
	onSocket := uint64(0)
	size := replyWords*wordBytes + (len(rep.Err)+wordBytes-1)/wordBytes*wordBytes + len(rep.Zap)*pageRangeSize
	if rep.Join != nil || rep.Stats != nil || size > len(s.reply) {
		onSocket = 1
		err = c.Send(rep)
	} else {
		b := s.reply
		binary.LittleEndian.PutUint64(b[wordBytes:], rep.Value)
		binary.LittleEndian.PutUint64(b[2*wordBytes:], uint64(len(rep.Err)))
		binary.LittleEndian.PutUint64(b[3*wordBytes:], uint64(len(rep.Zap)))
		at := replyWords * wordBytes
		at += copy(b[at:], rep.Err)
		at = (at + wordBytes - 1) / wordBytes * wordBytes
		putRanges(b[at:], rep.Zap)
	}
	binary.LittleEndian.PutUint64(s.reply, onSocket)
	atomic.StoreUint64(s.repSeq, s.seq)
	if atomic.LoadUint32(s.sleeping) != 0 {
		if werr := signal(s.repFD); werr != nil && err == nil {
			err = fmt.Errorf("link: waking the rank: %w", werr)
		}
	}
	return err
}

// putRanges writes page ranges into b as first, count pairs of 32-bit
// words; b has room for them.
func putRanges(b []byte, rs []protocol.PageRange) {
	for i, r := range rs {
		binary.LittleEndian.PutUint32(b[i*pageRangeSize:], r.First)
		binary.LittleEndian.PutUint32(b[i*pageRangeSize+4:], r.Count)
	}
}

// getRanges reads n page ranges that putRanges wrote into b (nil for
// none); b holds them.
func getRanges(b []byte, n uint64) []protocol.PageRange {
	if n == 0 {
		return nil
	}
	rs := make([]protocol.PageRange, n)
	for i := range rs {
		rs[i] = protocol.PageRange{First: binary.LittleEndian.Uint32(b[i*pageRangeSize:]), Count: binary.LittleEndian.Uint32(b[i*pageRangeSize+4:])}
	}
	return rs
}

// signal adds one to eventfd fd.
func signal(fd int) error {
	one := [8]byte{1}
	for {
		_, err := unix.Write(fd, one[:])
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
