package rt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Exclusive mode (the paper's Figure 4): the master of the active set runs
// the code, and re-activates the other members with continuation codes
// where they join it. The private values the master set and the members
// read after they resume ride on the dispatch: the master puts them before
// DispatchSend, and each member takes them after DispatchRecv.
//
// A dispatch broadcasts one word over the set, with the ordering of a
// barrier. A plain code travels in it (code<<1). A dispatch with values
// travels as a message in shared memory whose address (even: Malloc aligns)
// is the word with its low bit set; the message is the code and the length
// of the values (8 bytes each, little endian), then the values, each its
// length (8 bytes) and its bytes.
//
// A member copies the message out before it returns from DispatchRecv,
// that is before it reaches any later synchronisation of the set. So once
// the master's next dispatch has completed, the message is free again: the
// master writes its messages alternately into two buffers, and the one it
// writes was last read two dispatches ago.

const messageHeader = 16 // the code and the length of the values

// mailbox is a master's two message buffers at one nesting level (a rank
// masters at most one active set per level at a time).
type mailbox struct {
	addr [2]uintptr
	size [2]int
	next int
}

// DispatchPut adds value to the values of the master's next dispatch.
func (r *Runtime) DispatchPut(value []byte) error {
	if r.MyProcSet() != 0 {
		return fmt.Errorf("dispatch put by position %d of the processor set: only its master (0) sends values", r.MyProcSet())
	}
	r.out = binary.LittleEndian.AppendUint64(r.out, uint64(len(value)))
	r.out = append(r.out, value...)
	return nil
}

// DispatchSend is SVM_DISPATCH_SEND(code): the master of the active set, in
// exclusive mode, sends the other members the continuation code where they
// resume, with the values put since its last dispatch. It orders memory
// like a barrier over the set.
func (r *Runtime) DispatchSend(code int) error {
	if r.MyProcSet() != 0 {
		return fmt.Errorf("dispatch send by position %d of the processor set: only its master (0) sends", r.MyProcSet())
	}
	values := r.out
	r.out = r.out[:0]
	word := uint64(int64(code)) << 1
	if len(values) > 0 && r.Active().Size() > 1 {
		addr, err := r.message(code, values)
		if err != nil {
			// The members wait for a word: hand them an empty message,
			// which they refuse.
			_, berr := r.broadcast(1)
			return errors.Join(err, berr)
		}
		word = uint64(addr) | 1
	}
	_, err := r.broadcast(word)
	return err
}

// message writes the dispatch message of code and values into the next
// buffer of the active set's level, and returns its address.
func (r *Runtime) message(code int, values []byte) (uintptr, error) {
	level := r.Active().Level
	m := r.mail[level]
	if m == nil {
		m = &mailbox{}
		r.mail[level] = m
	}
	k := m.next
	m.next ^= 1
	need := messageHeader + len(values)
	if m.size[k] < need {
		size := max(need, 2*m.size[k], 256)
		if m.addr[k] != 0 {
			if err := r.comm.Free(m.addr[k]); err != nil {
				return 0, fmt.Errorf("freeing a dispatch message buffer: %w", err)
			}
			m.addr[k], m.size[k] = 0, 0
		}
		a, err := r.comm.Malloc(size)
		if err != nil {
			return 0, fmt.Errorf("a dispatch message of %d bytes: %w", need, err)
		}
		if a&1 != 0 {
			return 0, fmt.Errorf("a dispatch message buffer at the odd address %#x", a)
		}
		m.addr[k], m.size[k] = a, size
	}
	var header [messageHeader]byte
	binary.LittleEndian.PutUint64(header[:], uint64(int64(code)))
	binary.LittleEndian.PutUint64(header[8:], uint64(len(values)))
	r.comm.Store(m.addr[k], header[:])
	r.comm.Store(m.addr[k]+messageHeader, values)
	return m.addr[k], nil
}

// DispatchRecv is SVM_DISPATCH_RECV(): a non-master member of the active set
// waits for the master's next continuation code, and receives the values
// that come with it.
func (r *Runtime) DispatchRecv() (int, error) {
	if r.MyProcSet() == 0 {
		return 0, errors.New("dispatch receive by the master of the processor set: the master sends (it would wait for itself)")
	}
	if len(r.in) > 0 {
		return 0, errors.New("dispatch receive before every value of the last dispatch was taken")
	}
	word, err := r.broadcast(0)
	if err != nil {
		return 0, err
	}
	if word&1 == 0 {
		return int(int64(word) >> 1), nil
	}
	addr := uintptr(word &^ 1)
	if addr == 0 {
		return 0, errors.New("the master of the processor set could not send the values of its dispatch")
	}
	var header [messageHeader]byte
	r.comm.Load(addr, header[:])
	code := int(int64(binary.LittleEndian.Uint64(header[:])))
	r.in = make([]byte, binary.LittleEndian.Uint64(header[8:]))
	r.comm.Load(addr+messageHeader, r.in)
	return code, nil
}

// DispatchGet takes the next value of the last dispatch this member
// received into b, which must be its size. It writes b only if b does not
// hold the value already, so b may be memory that must not be written when
// the master sent what it holds (a constant passed as an argument).
func (r *Runtime) DispatchGet(b []byte) error {
	if r.MyProcSet() == 0 {
		return errors.New("dispatch get by the master of the processor set: the values are its own")
	}
	if len(r.in) < 8 {
		return fmt.Errorf("dispatch get of %d bytes: no value of the last dispatch is left", len(b))
	}
	n := binary.LittleEndian.Uint64(r.in)
	if n != uint64(len(b)) {
		return fmt.Errorf("dispatch get of %d bytes: the master sent %d bytes here (the variable has another size on this processor)", len(b), n)
	}
	if n > uint64(len(r.in)-8) {
		return fmt.Errorf("dispatch get of %d bytes: the message holds only %d", n, len(r.in)-8)
	}
	value := r.in[8 : 8+n]
	r.in = r.in[8+n:]
	if !bytes.Equal(b, value) {
		copy(b, value)
	}
	return nil
}
