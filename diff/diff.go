// Package diff makes twins of shared pages and byte-exact run-length diffs
// between a twin and the page it was copied from, for the multiple-writer
// protocol of lazy release consistency: a rank copies a page into a twin
// before its first write in an interval, and later encodes what it changed as
// a diff that other ranks apply to their copies of the page.
//
// A diff never carries a byte that did not change. Two ranks that write
// neighbouring 1-, 2- or 4-byte elements of one page therefore never overwrite
// each other's writes, whichever order their diffs are applied in.
//
// The package is pure: it never does I/O, starts goroutines or keeps state,
// and it never panics on a malformed diff; it returns an error wrapping
// ErrMalformed instead.
//
// # Encoding
//
// The encoding is part of the wire format: a Diff is sent and stored as the
// same bytes. A diff is a sequence of runs and nothing else; a page that did
// not change gives an empty (nil) diff. Each run is
//
//	header [uvarint(gap-15)] [uvarint(length-16)] data
//
// where gap is the number of unchanged bytes between the end of the previous
// run (or the start of the page, for the first run) and the start of this
// run, and data is the run's length new bytes, length ≥ 1. The header byte
// holds both in its two halves: its high four bits are gap if gap < 15, else
// 15 and uvarint(gap-15) follows; its low four bits are length-1 if length ≤
// 15, else 15 and uvarint(length-16) follows. The uvarints are those of
// encoding/binary. Most runs of a page written in place (the changed low
// bytes of a number, a word, a short stretch) so take one header byte, and
// none takes more than a header of two uvarints would.
//
// The encoding is canonical: one change of a page has exactly one encoding.
// Runs are maximal, so a run ends exactly at the first byte that is equal in
// twin and page, and runs never touch: every run but the first has gap ≥ 1.
// A gap below 15 and a length below 16 are always in the header, and
// uvarints are in their shortest form. Validate, Apply, Changed and Merge
// reject diffs that break any of these rules, that are truncated, whose
// uvarints overflow 64 bits, or (Validate and Apply) whose runs reach beyond
// the page.
package diff

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// ErrMalformed is wrapped by every error about a diff that is not well formed.
var ErrMalformed = errors.New("malformed diff")

// Diff is the encoded, byte-exact difference between a twin and a page: the
// wire form and the stored form are the same bytes.
type Diff []byte

// Twin returns a copy of page to diff against later.
func Twin(page []byte) []byte {
	twin := make([]byte, len(page))
	copy(twin, page)
	return twin
}

// Create returns the diff that turns twin into page. It returns a nil Diff if
// the two are equal, and an error if their lengths differ.
func Create(twin, page []byte) (Diff, error) {
	return AppendCreate(nil, twin, page)
}

// AppendCreate is Create appending the encoding to dst, so callers can reuse
// buffers. It returns dst unchanged if twin and page are equal or on error.
func AppendCreate(dst []byte, twin, page []byte) (Diff, error) {
	if len(twin) != len(page) {
		return dst, fmt.Errorf("create diff: twin has %d bytes, page has %d", len(twin), len(page))
	}
	n := len(page)
	twin = twin[:n] // so the compiler knows len(twin) == n
	prev := 0       // end of the previous run
	for i := 0; ; {
		// Dense changes (a page of scattered small writes) have short
		// gaps and short runs: the word at hand usually holds the next
		// change and the run's end, found here without a call.
		start := i
		if n-i < 8 {
			start = nextChange(twin, page, i)
		} else if x := load64(twin, i) ^ load64(page, i); x != 0 {
			start += bits.TrailingZeros64(x) / 8
		} else {
			start = nextChange(twin, page, i+8)
		}
		if start == n {
			return dst, nil
		}
		end := start
		if n-start < 8 {
			end = runEnd(twin, page, start)
		} else if z := zeroBytes(load64(twin, start) ^ load64(page, start)); z != 0 {
			end += bits.TrailingZeros64(z) / 8
		} else {
			end = runEnd(twin, page, start+8)
		}
		if gap, length := start-prev, end-start; gap < inHeader && length <= inHeader {
			dst = append(dst, byte(gap<<4|(length-1)))
		} else {
			dst = appendHeader(dst, gap, length)
		}
		dst = append(dst, page[start:end]...)
		// twin[end] == page[end], so the next run starts after end and has
		// gap ≥ 1.
		prev, i = end, end
	}
}

// The header byte's halves: a value of inHeader in either says the field
// follows as a uvarint, less inHeader for the gap and inHeader+1 for the
// length.
const inHeader = 15

// appendHeader appends the header of a run of length bytes that starts gap
// bytes after the previous run, and makes room for its data.
func appendHeader(dst []byte, gap, length int) []byte {
	if gap < inHeader && length <= inHeader && cap(dst)-len(dst) > length {
		return append(dst, byte(gap<<4|(length-1)))
	}
	dst = slices.Grow(dst, 1+2*binary.MaxVarintLen64+length)
	g, l := min(gap, inHeader), min(length-1, inHeader)
	dst = append(dst, byte(g<<4|l))
	if g == inHeader {
		dst = binary.AppendUvarint(dst, uint64(gap-inHeader))
	}
	if l == inHeader {
		dst = binary.AppendUvarint(dst, uint64(length-1-inHeader))
	}
	return dst
}

// Word masks for finding zero bytes in a 64-bit word: x has a zero byte iff
// (x - lowBits) &^ x & highBits != 0, and the lowest set bit of that
// expression is the high bit of x's lowest zero byte.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// skipBlock is the size of the blocks that nextChange compares with
// bytes.Equal, whose SIMD loop is faster than ours for long equal stretches.
const skipBlock = 512

// nextChange returns the offset of the first byte at or after i where twin
// and page differ, or len(page) if there is none. len(twin) must equal
// len(page).
func nextChange(twin, page []byte, i int) int {
	n := len(page)
	twin = twin[:n] // so the compiler knows len(twin) == n
	// Changes are often dense: look at one word before paying for a block
	// compare.
	if n-i >= 8 {
		if x := load64(twin, i) ^ load64(page, i); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
		i += 8
	}
	for n-i >= skipBlock && bytes.Equal(twin[i:i+skipBlock], page[i:i+skipBlock]) {
		i += skipBlock
	}
	if n-i < skipBlock && bytes.Equal(twin[i:], page[i:]) {
		return n
	}
	// The change is within the next skipBlock bytes.
	for ; n-i >= 8; i += 8 {
		if x := load64(twin, i) ^ load64(page, i); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n; i++ {
		if twin[i] != page[i] {
			return i
		}
	}
	return n
}

// runEnd returns the offset of the first byte at or after i that is equal in
// twin and page, or len(page) if there is none. len(twin) must equal
// len(page).
func runEnd(twin, page []byte, i int) int {
	n := len(page)
	twin = twin[:n] // so the compiler knows len(twin) == n
	// Most runs are short: look at one word before the loop for long ones.
	if n-i >= 8 {
		if z := zeroBytes(load64(twin, i) ^ load64(page, i)); z != 0 {
			return i + bits.TrailingZeros64(z)/8
		}
		i += 8
	}
	// Four words at a time while no byte is equal, for a long run.
	for n-i >= 32 {
		t, p := twin[i:i+32:i+32], page[i:i+32:i+32]
		x0 := load64(t, 0) ^ load64(p, 0)
		x1 := load64(t, 8) ^ load64(p, 8)
		x2 := load64(t, 16) ^ load64(p, 16)
		x3 := load64(t, 24) ^ load64(p, 24)
		z := (x0-lowBits)&^x0 | (x1-lowBits)&^x1 | (x2-lowBits)&^x2 | (x3-lowBits)&^x3
		if z&highBits != 0 {
			break
		}
		i += 32
	}
	for ; n-i >= 8; i += 8 {
		if z := zeroBytes(load64(twin, i) ^ load64(page, i)); z != 0 {
			return i + bits.TrailingZeros64(z)/8
		}
	}
	for ; i < n && twin[i] != page[i]; i++ {
	}
	return i
}

// zeroBytes returns the high bit of x's lowest zero byte and perhaps of
// bytes above it, nothing else: nonzero iff x has a zero byte, and its
// lowest set bit marks the lowest.
func zeroBytes(x uint64) uint64 { return (x - lowBits) &^ x & highBits }

// load64 returns the 8 bytes of b at offset i as a little-endian word, so that
// byte i+k is bits 8k to 8k+7.
func load64(b []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(b[i : i+8])
}
