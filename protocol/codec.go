package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// A frame body on the wire is one byte of MsgType followed by the message's
// msgpack encoding (structs as arrays, integers in their shortest form, page
// and diff payloads as msgpack bin). Framing of bodies on a stream is the
// transport's business.

type codecState struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
	rd  bytes.Reader
	dec *msgpack.Decoder
}

var codecPool = sync.Pool{New: func() any {
	c := &codecState{}
	c.enc = msgpack.NewEncoder(&c.buf)
	c.enc.UseCompactInts(true)
	c.dec = msgpack.NewDecoder(&c.rd)
	return c
}}

// Encode returns the wire form of m.
func Encode(m Message) ([]byte, error) {
	return AppendEncode(nil, m)
}

// AppendEncode appends the wire form of m to dst.
func AppendEncode(dst []byte, m Message) ([]byte, error) {
	if m == nil {
		return dst, errors.New("encode: nil message")
	}
	c := codecPool.Get().(*codecState)
	defer codecPool.Put(c)
	c.buf.Reset()
	c.buf.WriteByte(byte(m.Type()))
	if err := c.enc.Encode(m); err != nil {
		return dst, fmt.Errorf("encode %v: %w", m.Type(), err)
	}
	return append(dst, c.buf.Bytes()...), nil
}

// Decode parses one wire body. Arbitrary input yields an error, never a panic.
// It checks the encoding only; Check validates the contents against a job.
func Decode(b []byte) (Message, error) {
	if len(b) == 0 {
		return nil, errors.New("decode: empty message")
	}
	var m Message
	switch t := MsgType(b[0]); t {
	case MsgLockRequest:
		m = &LockRequest{}
	case MsgLockForward:
		m = &LockRequest{Forwarded: true}
	case MsgLockGrant:
		m = &LockGrant{}
	case MsgBarrierArrive:
		m = &BarrierArrive{}
	case MsgBarrierDepart:
		m = &BarrierDepart{}
	case MsgDiffRequest:
		m = &DiffRequest{}
	case MsgDiffResponse:
		m = &DiffResponse{}
	case MsgAllocRequest:
		m = &AllocRequest{}
	case MsgAllocReply:
		m = &AllocReply{}
	case MsgCounterRequest:
		m = &CounterRequest{}
	case MsgCounterReply:
		m = &CounterReply{}
	case MsgPageRequest:
		m = &PageRequest{}
	case MsgPageResponse:
		m = &PageResponse{}
	case MsgHomeDiffs:
		m = &HomeDiffs{}
	case MsgPagePush:
		m = &PagePush{}
	case MsgPushStop:
		m = &PushStop{}
	default:
		return nil, fmt.Errorf("decode: unknown message type %d", b[0])
	}
	if err := ScanMsgpack(b[1:]); err != nil {
		return nil, fmt.Errorf("decode %v: %w", m.Type(), err)
	}
	c := codecPool.Get().(*codecState)
	defer codecPool.Put(c)
	c.rd.Reset(b[1:])
	c.dec.Reset(&c.rd)
	if err := c.dec.Decode(m); err != nil {
		return nil, fmt.Errorf("decode %v: %w", m.Type(), err)
	}
	if c.rd.Len() != 0 {
		return nil, fmt.Errorf("decode %v: %d trailing bytes", m.Type(), c.rd.Len())
	}
	return m, nil
}
