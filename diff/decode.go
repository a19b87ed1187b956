package diff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Apply writes the diff's bytes into page. It checks the whole diff before it
// writes anything, so on error page is left as it was. It returns an error
// if the diff is malformed or reaches beyond len(page).
func (d Diff) Apply(page []byte) error {
	if err := d.Validate(len(page)); err != nil {
		return err
	}
	return d.ApplyValidated(page)
}

// ApplyValidated writes into page a diff that Validate accepted for a page
// of len(page) bytes, without checking it first: one pass over the diff
// instead of two, for a diff checked as it arrived and applied to more than
// one copy. It never panics: on a diff Validate would refuse, it stops at
// the first malformed run, leaving page partly written, and returns the
// error.
func (d Diff) ApplyValidated(page []byte) error {
	dec := decoder{d: d, size: len(page)}
	for dec.headerRuns(page) {
		copy(page[dec.start:], dec.data())
	}
	return dec.err
}

// Merge returns one diff with the combined effect of applying earlier and
// then later: it writes the union of their byte positions, with later's
// values where both write. It returns an error if either diff is malformed.
func Merge(earlier, later Diff) (Diff, error) {
	e := decoder{d: earlier, size: math.MaxInt}
	l := decoder{d: later, size: math.MaxInt}
	e.next()
	l.next()
	var out Diff
	prev := 0 // end of the previous merged run
	for e.length > 0 || l.length > 0 {
		start := l.start
		if l.length == 0 || e.length > 0 && e.start < l.start {
			start = e.start
		}
		// Find the end of the merged run: runs of either diff that overlap
		// or touch it join it, since merged runs must not touch.
		ea, la := e, l
		end := start
		for {
			if ea.length > 0 && ea.start <= end {
				end = max(end, ea.end())
				ea.next()
			} else if la.length > 0 && la.start <= end {
				end = max(end, la.end())
				la.next()
			} else {
				break
			}
		}
		if out == nil {
			// The merged diff is never longer than the two together, and
			// appendHeader wants room for two uvarints more.
			out = make(Diff, 0, len(earlier)+len(later)+2*binary.MaxVarintLen64)
		}
		// The runs that joined cover [start, end) without holes: write
		// earlier's bytes, then later's over them.
		out = appendHeader(out, start-prev, end-start)
		n := len(out)
		out = out[:n+end-start]
		run := out[n:]
		for ; e.length > 0 && e.start < end; e.next() {
			copy(run[e.start-start:], e.data())
		}
		for ; l.length > 0 && l.start < end; l.next() {
			copy(run[l.start-start:], l.data())
		}
		prev = end
	}
	// A decoder stops at a malformed run as if the diff ended there.
	if e.err != nil {
		return nil, fmt.Errorf("merge earlier diff: %w", e.err)
	}
	if l.err != nil {
		return nil, fmt.Errorf("merge later diff: %w", l.err)
	}
	return out, nil
}

// Size is the encoded size of the diff in bytes.
func (d Diff) Size() int {
	return len(d)
}

// Changed returns the number of page bytes the diff writes. It returns an
// error if the diff is malformed.
func (d Diff) Changed() (int, error) {
	dec := decoder{d: d, size: math.MaxInt}
	changed := 0
	for dec.next() {
		changed += dec.length
	}
	return changed, dec.err
}

// Validate checks that the diff is well formed for a page of pageSize bytes.
func (d Diff) Validate(pageSize int) error {
	if pageSize < 0 {
		return fmt.Errorf("validate diff: negative page size %d", pageSize)
	}
	dec := decoder{d: d, size: pageSize}
	for dec.headerRuns(nil) {
	}
	return dec.err
}

// headerRuns walks the runs from the decoder's position on whose gap and
// length are in the header and that fit the page, most runs of most diffs,
// writing them into page unless it is nil, then decodes the next other run
// as next does, for the caller to handle. It is next for a caller that
// would only copy the short runs: they skip the decoder's general checks.
func (dec *decoder) headerRuns(page []byte) bool {
	d, off, pos := dec.d, dec.off, dec.start+dec.length
	for off < len(d) {
		h := d[off]
		gap, n := int(h>>4), int(h&0x0f)+1
		start := pos + gap
		if gap == inHeader || n > inHeader || gap == 0 && off > 0 || start+n > dec.size || off+1+n > len(d) {
			break
		}
		if page != nil {
			copy(page[start:start+n], d[off+1:off+1+n])
		}
		off, pos = off+1+n, start+n
	}
	dec.off, dec.start, dec.length = off, pos, 0
	return dec.next()
}

// Empty reports whether the diff changes nothing.
func (d Diff) Empty() bool {
	return len(d) == 0
}

// A decoder walks the runs of a diff and checks each one as it goes.
type decoder struct {
	d    Diff
	size int // page size that every run must fit in
	off  int // offset in d of the next run
	// The current run: page bytes [start, start+length) get the length
	// bytes of d at offset at. length is 0 before the first run and after
	// the last one.
	start, length, at int
	err               error
}

// next decodes the next run. It returns false at the end of the diff or at
// a malformed run; err tells the two apart.
func (dec *decoder) next() bool {
	pos := dec.start + dec.length // end of the previous run
	dec.length = 0
	if dec.off == len(dec.d) || dec.err != nil {
		return false
	}
	runOff := dec.off
	header := dec.d[dec.off]
	dec.off++
	gap, lenMinus1 := uint64(header>>4), uint64(header&0x0f)
	if gap == inHeader {
		v, n := uvarint(dec.d[dec.off:])
		if n == 0 {
			return dec.fail(runOff, "gap", uvarintError(dec.d[dec.off:]))
		}
		dec.off += n
		if v > uint64(dec.size) { // so that adding inHeader cannot wrap
			return dec.fail(runOff, "gap", fmt.Errorf("run starts beyond the page of %d bytes", dec.size))
		}
		gap += v
	}
	if gap == 0 && runOff != 0 {
		return dec.fail(runOff, "gap", errors.New("zero gap touches the previous run"))
	}
	if gap > uint64(dec.size-pos) {
		return dec.fail(runOff, "gap", fmt.Errorf("run starts beyond the page of %d bytes", dec.size))
	}
	pos += int(gap)
	if lenMinus1 == inHeader {
		v, n := uvarint(dec.d[dec.off:])
		if n == 0 {
			return dec.fail(runOff, "length", uvarintError(dec.d[dec.off:]))
		}
		dec.off += n
		if v > uint64(dec.size) {
			return dec.fail(runOff, "length", fmt.Errorf("run at page byte %d ends beyond the page of %d bytes", pos, dec.size))
		}
		lenMinus1 += v
	}
	if lenMinus1 >= uint64(dec.size-pos) {
		return dec.fail(runOff, "length", fmt.Errorf("run at page byte %d ends beyond the page of %d bytes", pos, dec.size))
	}
	length := int(lenMinus1) + 1
	if length > len(dec.d)-dec.off {
		return dec.fail(runOff, "data", fmt.Errorf("run of %d bytes has only %d in the diff", length, len(dec.d)-dec.off))
	}
	dec.start, dec.length, dec.at = pos, length, dec.off
	dec.off += length
	return true
}

// data returns the new bytes of the current run.
func (dec *decoder) data() []byte {
	return dec.d[dec.at : dec.at+dec.length]
}

// end returns the page offset just after the current run.
func (dec *decoder) end() int {
	return dec.start + dec.length
}

// uvarint decodes the shortest-form uvarint at the start of b and returns
// it with its length in bytes, or n == 0 if b does not start with one.
func uvarint(b []byte) (v uint64, n int) {
	v, n = binary.Uvarint(b)
	if n <= 0 || n > 1 && b[n-1] == 0 {
		return 0, 0
	}
	return v, n
}

// uvarintError says why b does not start with a shortest-form uvarint.
func uvarintError(b []byte) error {
	switch _, n := binary.Uvarint(b); {
	case n == 0:
		return errors.New("truncated uvarint")
	case n < 0:
		return errors.New("uvarint overflows 64 bits")
	default:
		return errors.New("uvarint not in shortest form")
	}
}

// fail records that the run at diff offset runOff is malformed and returns
// false.
func (dec *decoder) fail(runOff int, field string, err error) bool {
	dec.err = fmt.Errorf("%w: %s of the run at diff offset %d: %w", ErrMalformed, field, runOff, err)
	return false
}
