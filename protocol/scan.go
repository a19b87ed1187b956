package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ScanMsgpack checks that b is exactly one well-formed msgpack value whose
// declared array, map, string and binary lengths all fit in the bytes that
// follow them. Every pending element needs at least one byte, so the total
// number of elements declared at all nesting levels never exceeds len(b):
// whatever the decoder allocates afterwards is bounded by the input size.
// (msgpack v5.4's decoder trusts declared slice lengths and would allocate
// gigabytes for a five-byte input.) Call it before decoding untrusted bytes.
func ScanMsgpack(b []byte) error {
	pending := 1 // values still to read
	i := 0
	for pending > 0 {
		if i >= len(b) {
			return errors.New("truncated msgpack value")
		}
		c := b[i]
		i++
		pending--
		var skip, items int // payload bytes to skip; nested values to read
		switch {
		case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		case c >= 0x80 && c <= 0x8f:
			items = 2 * int(c&0x0f)
		case c >= 0x90 && c <= 0x9f:
			items = int(c & 0x0f)
		case c >= 0xa0 && c <= 0xbf:
			skip = int(c & 0x1f)
		default:
			var err error
			if skip, items, i, err = scanLong(b, c, i); err != nil {
				return err
			}
		}
		if skip > len(b)-i {
			return fmt.Errorf("msgpack payload of %d bytes at offset %d exceeds the input", skip, i)
		}
		i += skip
		pending += items
		if pending > len(b)-i {
			return fmt.Errorf("msgpack declares %d more values than the %d bytes left", pending, len(b)-i)
		}
	}
	if i != len(b) {
		return fmt.Errorf("%d trailing bytes", len(b)-i)
	}
	return nil
}

// scanLong reads the length of the msgpack value with code c whose length
// field starts at b[i].
func scanLong(b []byte, c byte, i int) (skip, items, next int, err error) {
	length := func(size int) (int, error) {
		if size > len(b)-i {
			return 0, errors.New("truncated msgpack length")
		}
		var n uint64
		switch size {
		case 1:
			n = uint64(b[i])
		case 2:
			n = uint64(binary.BigEndian.Uint16(b[i:]))
		case 4:
			n = uint64(binary.BigEndian.Uint32(b[i:]))
		}
		i += size
		if n > uint64(len(b)) {
			return 0, fmt.Errorf("msgpack length %d exceeds the input", n)
		}
		return int(n), nil
	}
	switch c {
	case 0xcc, 0xd0:
		skip = 1
	case 0xcd, 0xd1:
		skip = 2
	case 0xca, 0xce, 0xd2:
		skip = 4
	case 0xcb, 0xcf, 0xd3:
		skip = 8
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 with a type byte
		skip = 1 + 1<<(c-0xd4)
	case 0xc4, 0xd9: // bin8, str8
		skip, err = length(1)
	case 0xc5, 0xda:
		skip, err = length(2)
	case 0xc6, 0xdb:
		skip, err = length(4)
	case 0xc7, 0xc8, 0xc9: // ext8, ext16, ext32 with a type byte
		skip, err = length(1 << (c - 0xc7))
		skip++
	case 0xdc:
		items, err = length(2)
	case 0xdd:
		items, err = length(4)
	case 0xde:
		items, err = length(2)
		items *= 2
	case 0xdf:
		items, err = length(4)
		items *= 2
	default:
		err = fmt.Errorf("invalid msgpack code %#x", c)
	}
	return skip, items, i, err
}
