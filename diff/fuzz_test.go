package diff

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// overlay returns a copy of base with b written over it at offset at modulo
// len(base), cut at the end of base.
func overlay(base, b []byte, at uint16) []byte {
	page := Twin(base)
	if len(page) > 0 {
		copy(page[int(at)%len(page):], b)
	}
	return page
}

// filled returns a page of n bytes that starts from seed.
func filled(n int, seed byte) []byte {
	page := make([]byte, n)
	for i := range page {
		page[i] = seed + byte(i*13)
	}
	return page
}

func FuzzCreate(f *testing.F) {
	page := pattern(64)
	f.Add([]byte{}, []byte{}, uint16(0))
	f.Add(pattern(13), []byte{0xff}, uint16(12))                       // odd page, last byte
	f.Add(page, []byte{0xff}, uint16(0))                               // first byte
	f.Add(page, []byte{0xff}, uint16(63))                              // last byte
	f.Add(page, bytes.Repeat([]byte{0xee}, 64), uint16(0))             // whole page
	f.Add(page, changed(page, everyOther(64)...), uint16(0))           // every other byte
	f.Add(page, []byte{0xa0, 0xa1, 0xa2, 0xa3}, uint16(6))             // run crossing words
	f.Add(pattern(4096), bytes.Repeat([]byte{0x01}, 300), uint16(900)) // long gap and run
	f.Fuzz(func(t *testing.T, twin, change []byte, at uint16) {
		page := overlay(twin, change, at)
		d, err := Create(twin, page)
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		if want := refCreate(twin, page); !bytes.Equal(d, want) {
			t.Fatalf("Create = %x, want %x", []byte(d), want)
		}
		got := Twin(twin)
		if err := d.Apply(got); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if !bytes.Equal(got, page) {
			t.Fatalf("Apply gave %x, want %x", got, page)
		}
		differ := 0
		for i := range page {
			if twin[i] != page[i] {
				differ++
			}
		}
		if n, err := d.Changed(); err != nil || n != differ {
			t.Fatalf("Changed = %d, %v; want %d, nil", n, err, differ)
		}
		prefix := []byte{1, 2, 3}
		a, err := AppendCreate(bytes.Clone(prefix), twin, page)
		if err != nil || !bytes.Equal(a, append(prefix, d...)) {
			t.Fatalf("AppendCreate = %x, %v; want %x, nil", []byte(a), err, append(prefix, d...))
		}
	})
}

func FuzzApply(f *testing.F) {
	f.Add([]byte{}, uint16(0), byte(0))
	f.Add([]byte{0x00, 9}, uint16(16), byte(1))
	f.Add([]byte{0xf0, 0x9c, 0x02, 9}, uint16(300), byte(2))
	f.Add([]byte{0x31, 1, 2, 0x10, 3}, uint16(7), byte(3))
	f.Add([]byte{0x00, 1, 0x00, 2}, uint16(16), byte(4))
	f.Add([]byte{0xf0, 0x80, 0x00, 1}, uint16(16), byte(5))
	f.Add([]byte{0xe2, 1, 2, 3}, uint16(16), byte(6))
	f.Add([]byte{0x02, 1, 2}, uint16(16), byte(7))
	f.Add([]byte{0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1}, uint16(16), byte(8))
	f.Add([]byte{0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 1}, uint16(16), byte(9))
	f.Fuzz(func(t *testing.T, raw []byte, size uint16, seed byte) {
		d := Diff(raw)
		n := int(size % 5000)
		want := filled(n, seed)
		wantErr := refApply(raw, want)
		got := filled(n, seed)
		err := d.Apply(got)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("Apply to %d bytes = %v, reference says %v", n, err, wantErr)
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("Apply error %v does not wrap ErrMalformed", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Apply gave %x, want %x", got, want)
		}
		if verr := d.Validate(n); (verr == nil) != (err == nil) {
			t.Fatalf("Validate(%d) = %v, but Apply = %v", n, verr, err)
		}
		unchecked := filled(n, seed)
		uerr := d.ApplyValidated(unchecked)
		if (uerr == nil) != (err == nil) || uerr != nil && !errors.Is(uerr, ErrMalformed) {
			t.Fatalf("ApplyValidated to %d bytes = %v, Apply = %v", n, uerr, err)
		}
		if err == nil && !bytes.Equal(unchecked, want) {
			t.Fatalf("ApplyValidated gave %x, want %x", unchecked, want)
		}
		runs, refErr := refDecode(raw, math.MaxInt)
		changed, cerr := d.Changed()
		if (cerr == nil) != (refErr == nil) {
			t.Fatalf("Changed error %v, reference says %v", cerr, refErr)
		}
		if cerr == nil {
			sum := 0
			for _, r := range runs {
				sum += len(r.data)
			}
			if changed != sum {
				t.Fatalf("Changed = %d, want %d", changed, sum)
			}
		}
	})
}

func FuzzMerge(f *testing.F) {
	page := pattern(64)
	f.Add(page, []byte{1, 2}, uint16(0), []byte{3, 4}, uint16(2), []byte{})
	f.Add(page, bytes.Repeat([]byte{0}, 10), uint16(0), bytes.Repeat([]byte{1}, 15), uint16(5), []byte{})
	f.Add(page, changed(page, everyOther(64)...), uint16(0), bytes.Repeat([]byte{9}, 64), uint16(0), []byte{})
	f.Add(page, []byte{1, 1, 9, 9, 1, 1}, uint16(10), []byte{7, 7}, uint16(12), []byte{})
	f.Add(pattern(13), []byte{1}, uint16(12), []byte{2}, uint16(0), []byte{})
	f.Add(page, []byte{1}, uint16(0), []byte{}, uint16(0), []byte{0xf0})
	f.Add(page, []byte{1}, uint16(0), []byte{}, uint16(0), []byte{0x00, 1, 0x00, 2})
	f.Add(page, []byte{1}, uint16(0), []byte{}, uint16(0), []byte{0x51, 8, 8})
	f.Fuzz(func(t *testing.T, base, a []byte, atA uint16, b []byte, atB uint16, raw []byte) {
		d1, err := Create(base, overlay(base, a, atA))
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		d2, err := Create(base, overlay(base, b, atB))
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		checkMerge(t, base, d1, d2)

		// An arbitrary diff: Merge fails exactly when it is malformed, and
		// merges correctly when it fits the page.
		rawOK := refWellFormed(raw)
		for _, pair := range [][2]Diff{{raw, d2}, {d1, raw}} {
			m, err := Merge(pair[0], pair[1])
			if (err == nil) != rawOK {
				t.Fatalf("Merge(%x, %x) error %v, but raw well formed is %v", []byte(pair[0]), []byte(pair[1]), err, rawOK)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("Merge error %v does not wrap ErrMalformed", err)
			}
			if err == nil && m.Validate(len(base)) == nil {
				checkMerge(t, base, pair[0], pair[1])
			}
		}
	})
}

// checkMerge checks that Merge(d1, d2) applied to base gives the same page as
// d1 then d2, writes exactly the union of their bytes, and is canonical.
func checkMerge(t *testing.T, base []byte, d1, d2 Diff) {
	t.Helper()
	m, err := Merge(d1, d2)
	if err != nil {
		t.Fatalf("Merge(%x, %x): %v", []byte(d1), []byte(d2), err)
	}
	want := Twin(base)
	if err := d1.Apply(want); err != nil {
		t.Fatalf("Apply earlier: %v", err)
	}
	if err := d2.Apply(want); err != nil {
		t.Fatalf("Apply later: %v", err)
	}
	got := Twin(base)
	if err := m.Apply(got); err != nil {
		t.Fatalf("Apply Merge(%x, %x) = %x: %v", []byte(d1), []byte(d2), []byte(m), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Merge(%x, %x) = %x gave %x, want %x", []byte(d1), []byte(d2), []byte(m), got, want)
	}
	written := make([]bool, len(base))
	for _, d := range []Diff{d1, d2} {
		runs, err := refDecode(d, len(base))
		if err != nil {
			t.Fatalf("reference decode: %v", err)
		}
		for _, r := range runs {
			for k := range r.data {
				written[r.start+k] = true
			}
		}
	}
	// The canonical diff of exactly these positions: mark them in a twin that
	// differs from the merged page everywhere they were written.
	twin := Twin(got)
	for i, w := range written {
		if w {
			twin[i] = ^got[i]
		}
	}
	canon := refCreate(twin, got)
	if !bytes.Equal(m, canon) {
		t.Fatalf("Merge(%x, %x) = %x, want canonical %x", []byte(d1), []byte(d2), []byte(m), canon)
	}
	if len(m) > len(d1)+len(d2) {
		t.Fatalf("Merge(%x, %x) = %x is longer than the two together", []byte(d1), []byte(d2), []byte(m))
	}
	if len(canon) == 0 && m != nil {
		t.Fatalf("Merge of empty diffs = %x, want nil", []byte(m))
	}
}
