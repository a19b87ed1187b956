package diff

import (
	"errors"
	"math"
)

// This file holds a deliberately simple, byte-by-byte reference for the
// encoding, written without encoding/binary, to check the real code against.

// refRun is one decoded run: page bytes [start, start+len(data)) get data.
type refRun struct {
	start int
	data  []byte
}

// refCreate returns the canonical diff that turns twin into page, one byte at
// a time.
func refCreate(twin, page []byte) []byte {
	var out []byte
	prev := 0
	i := 0
	for i < len(page) {
		if twin[i] == page[i] {
			i++
			continue
		}
		j := i
		for j < len(page) && twin[j] != page[j] {
			j++
		}
		out = refAppendHeader(out, i-prev, j-i)
		out = append(out, page[i:j]...)
		prev = j
		i = j
	}
	return out
}

// refAppendHeader appends a run's header: a byte with the gap in its high
// half and the length less one in its low half, each replaced by 15 and
// followed by a uvarint of the rest when it does not fit below 15.
func refAppendHeader(b []byte, gap, length int) []byte {
	g, l := gap, length-1
	if g > 15 {
		g = 15
	}
	if l > 15 {
		l = 15
	}
	b = append(b, byte(g*16+l))
	if g == 15 {
		b = refAppendUvarint(b, uint64(gap-15))
	}
	if l == 15 {
		b = refAppendUvarint(b, uint64(length-1-15))
	}
	return b
}

// refAppendUvarint appends v in base 128, low group first, with the high bit
// of each byte but the last set.
func refAppendUvarint(b []byte, v uint64) []byte {
	for v >= 128 {
		b = append(b, byte(v%128)+128)
		v /= 128
	}
	return append(b, byte(v))
}

// refUvarint decodes a shortest-form uvarint at the start of b and returns it
// with its length in bytes.
func refUvarint(b []byte) (uint64, int, error) {
	var v uint64
	for n := 0; n < len(b); n++ {
		c := uint64(b[n])
		if n == 9 && c > 1 {
			return 0, 0, errors.New("overflow")
		}
		v += (c % 128) << (7 * n)
		if c < 128 {
			if n > 0 && c == 0 {
				return 0, 0, errors.New("not shortest")
			}
			return v, n + 1, nil
		}
	}
	return 0, 0, errors.New("truncated")
}

// refField completes a field of a run from its half of the header: 15 says
// that a uvarint at *off holds the rest.
func refField(d []byte, off *int, half uint64, size int) (uint64, error) {
	if half < 15 {
		return half, nil
	}
	v, n, err := refUvarint(d[*off:])
	if err != nil {
		return 0, err
	}
	*off += n
	if v > uint64(size) {
		return 0, errors.New("beyond page")
	}
	return half + v, nil
}

// refDecode decodes d into runs for a page of size bytes, checking every rule
// of the encoding.
func refDecode(d []byte, size int) ([]refRun, error) {
	var runs []refRun
	pos := uint64(0)
	off := 0
	for off < len(d) {
		header := d[off]
		off++
		gap, err := refField(d, &off, uint64(header/16), size)
		if err != nil {
			return nil, err
		}
		if gap == 0 && len(runs) > 0 {
			return nil, errors.New("zero gap")
		}
		lenMinus1, err := refField(d, &off, uint64(header%16), size)
		if err != nil {
			return nil, err
		}
		// pos ≤ size ≤ MaxInt, so these sums cannot wrap around in uint64
		// unless the values themselves are huge, which the checks catch first.
		if gap > uint64(size) || pos+gap > uint64(size) {
			return nil, errors.New("gap beyond page")
		}
		pos += gap
		if lenMinus1 >= uint64(size) || pos+lenMinus1+1 > uint64(size) {
			return nil, errors.New("run beyond page")
		}
		length := int(lenMinus1) + 1
		if off+length > len(d) {
			return nil, errors.New("truncated data")
		}
		runs = append(runs, refRun{int(pos), d[off : off+length]})
		off += length
		pos += uint64(length)
	}
	return runs, nil
}

// refApply applies d to page one byte at a time, or returns an error and
// leaves page alone.
func refApply(d, page []byte) error {
	runs, err := refDecode(d, len(page))
	if err != nil {
		return err
	}
	for _, r := range runs {
		for k, c := range r.data {
			page[r.start+k] = c
		}
	}
	return nil
}

// refWellFormed reports whether d is well formed for a page of any size.
func refWellFormed(d []byte) bool {
	_, err := refDecode(d, math.MaxInt)
	return err == nil
}
