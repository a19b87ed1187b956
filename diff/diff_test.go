package diff

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// changed returns a copy of twin with the bytes at the given offsets changed.
func changed(twin []byte, offsets ...int) []byte {
	page := Twin(twin)
	for _, i := range offsets {
		page[i] ^= 0xA5
	}
	return page
}

// pattern returns n bytes that differ from their neighbours.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}

// rangeOf returns the offsets from lo up to but not including hi.
func rangeOf(lo, hi int) []int {
	var r []int
	for i := lo; i < hi; i++ {
		r = append(r, i)
	}
	return r
}

// everyOther returns the even offsets below n.
func everyOther(n int) []int {
	var r []int
	for i := 0; i < n; i += 2 {
		r = append(r, i)
	}
	return r
}

func TestCreateEdges(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		changed []int
	}{
		{name: "empty page", size: 0},
		{name: "unchanged page", size: 4096},
		{name: "unchanged odd page", size: 13},
		{name: "first byte", size: 16, changed: []int{0}},
		{name: "last byte", size: 16, changed: []int{15}},
		{name: "last byte of odd page", size: 13, changed: []int{12}},
		{name: "one-byte page", size: 1, changed: []int{0}},
		{name: "tail of odd page", size: 21, changed: rangeOf(14, 21)},
		{name: "whole page", size: 4096, changed: rangeOf(0, 4096)},
		{name: "whole odd page", size: 4099, changed: rangeOf(0, 4099)},
		{name: "every other byte", size: 64, changed: everyOther(64)},
		{name: "every other byte of odd page", size: 63, changed: everyOther(63)},
		{name: "run crossing a word boundary", size: 16, changed: rangeOf(6, 10)},
		{name: "run ending at a word boundary", size: 24, changed: rangeOf(3, 16)},
		{name: "run crossing several words", size: 4096, changed: rangeOf(5, 75)},
		{name: "runs one byte apart across words", size: 32, changed: []int{6, 7, 9, 10, 17}},
		{name: "run of 128 bytes", size: 300, changed: rangeOf(10, 138)},
		{name: "run of 129 bytes", size: 300, changed: rangeOf(10, 139)},
		{name: "gap of 128 bytes", size: 300, changed: []int{0, 129}},
		{name: "gap beyond a skip block", size: 4096, changed: []int{1, 700, 4095}},
		{name: "change after a skip block", size: 4096, changed: []int{256 + 8 + 3}},
		{name: "change in the tail after blocks", size: 4100, changed: []int{4098}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			twin := pattern(tt.size)
			page := changed(twin, tt.changed...)
			d, err := Create(twin, page)
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if want := refCreate(twin, page); !bytes.Equal(d, want) {
				t.Fatalf("Create = %x, want %x", []byte(d), want)
			}
			if len(tt.changed) == 0 && d != nil {
				t.Errorf("Create of an unchanged page = %x, want nil", []byte(d))
			}
			n, err := d.Changed()
			if err != nil || n != len(tt.changed) {
				t.Errorf("Changed = %d, %v; want %d, nil", n, err, len(tt.changed))
			}
			if err := d.Validate(tt.size); err != nil {
				t.Errorf("Validate(%d): %v", tt.size, err)
			}
			got := Twin(twin)
			if err := d.Apply(got); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if !bytes.Equal(got, page) {
				t.Errorf("Apply gave %x, want %x", got, page)
			}
		})
	}
}

func TestCreateEncoding(t *testing.T) {
	// Expected encodings written out by hand, independent of refCreate.
	twin := make([]byte, 300)
	tests := []struct {
		name string
		page func([]byte)
		want []byte
	}{
		{"first byte", func(p []byte) { p[0] = 9 }, []byte{0x00, 9}},
		{"last byte", func(p []byte) { p[299] = 9 }, []byte{0xf0, 0x9c, 0x02, 9}},
		{"two runs", func(p []byte) { p[3], p[4], p[6] = 1, 2, 3 }, []byte{0x31, 1, 2, 0x10, 3}},
		{"run crossing a word", func(p []byte) { copy(p[6:], []byte{1, 2, 3, 4}) }, []byte{0x63, 1, 2, 3, 4}},
		{"gap of fourteen", func(p []byte) { p[14] = 9 }, []byte{0xe0, 9}},
		{"gap of fifteen", func(p []byte) { p[15] = 9 }, []byte{0xf0, 0x00, 9}},
		{"run of fifteen", func(p []byte) { copy(p, pattern(15)) }, append([]byte{0x0e}, pattern(15)...)},
		{"run of sixteen", func(p []byte) { copy(p, pattern(16)) }, append([]byte{0x0f, 0x00}, pattern(16)...)},
		{"long gap and long run", func(p []byte) { copy(p[100:], pattern(200)) }, append([]byte{0xff, 85, 0xb8, 0x01}, pattern(200)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := Twin(twin)
			tt.page(page)
			d, err := Create(twin, page)
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if !bytes.Equal(d, tt.want) {
				t.Errorf("Create = %x, want %x", []byte(d), tt.want)
			}
		})
	}
}

func TestCreateLengthMismatch(t *testing.T) {
	for _, sizes := range [][2]int{{8, 9}, {9, 8}, {0, 1}, {4096, 4095}} {
		_, err := Create(make([]byte, sizes[0]), make([]byte, sizes[1]))
		if err == nil {
			t.Errorf("Create of twin %d bytes, page %d bytes: got nil error, want one", sizes[0], sizes[1])
		}
	}
}

func TestAppendCreate(t *testing.T) {
	twin := pattern(100)
	page := changed(twin, 1, 2, 50)
	prefix := []byte("prefix")
	d, err := AppendCreate(bytes.Clone(prefix), twin, page)
	if err != nil {
		t.Fatalf("AppendCreate: %v", err)
	}
	want := append(bytes.Clone(prefix), refCreate(twin, page)...)
	if !bytes.Equal(d, want) {
		t.Errorf("AppendCreate = %x, want %x", []byte(d), want)
	}
	d, err = AppendCreate(bytes.Clone(prefix), twin, twin)
	if err != nil || !bytes.Equal(d, prefix) {
		t.Errorf("AppendCreate of an unchanged page = %q, %v; want %q, nil", d, err, prefix)
	}
}

func TestTwin(t *testing.T) {
	page := pattern(10)
	twin := Twin(page)
	if !bytes.Equal(twin, page) {
		t.Fatalf("Twin = %x, want %x", twin, page)
	}
	page[0]++
	if twin[0] == page[0] {
		t.Errorf("Twin shares memory with the page")
	}
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name string
		d    []byte
		size int
	}{
		{"truncated gap", []byte{0xf0}, 16},
		{"truncated long gap", []byte{0xf0, 0x80}, 16},
		{"missing data", []byte{0x00}, 16},
		{"truncated length", []byte{0x0f}, 16},
		{"truncated long length", []byte{0x0f, 0x80}, 16},
		{"truncated data", []byte{0x02, 1, 2}, 16},
		{"truncated second run", []byte{0x00, 1, 0x10}, 16},
		{"run beyond page", []byte{0xe2, 1, 2, 3}, 16},
		{"start beyond page", []byte{0xf0, 0x01, 1}, 16},
		{"gap beyond page", []byte{0xf0, 0x02, 1}, 16},
		{"long run beyond page", []byte{0x0f, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, 16},
		{"run on empty page", []byte{0x00, 1}, 0},
		{"second run beyond page", []byte{0x00, 1, 0xf0, 0x00, 1}, 16},
		{"zero gap after a run", []byte{0x00, 1, 0x00, 2}, 16},
		{"gap not shortest", []byte{0xf0, 0x80, 0x00, 1}, 16},
		{"length not shortest", []byte{0x0f, 0x81, 0x00, 1, 2}, 16},
		{"gap overflows", []byte{0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 1}, 16},
		{"gap of eleven bytes", []byte{0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0x01, 1}, 16},
		{"length overflows", []byte{0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 1}, 16},
		{"huge gap", []byte{0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1}, 16},
		{"huge length", []byte{0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1}, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diff(tt.d)
			if err := refApply(tt.d, make([]byte, tt.size)); err == nil {
				t.Fatalf("the reference accepts %x", tt.d)
			}
			err := d.Validate(tt.size)
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("Validate(%d) = %v, want an error wrapping ErrMalformed", tt.size, err)
			}
			page := pattern(tt.size)
			if err := d.Apply(page); !errors.Is(err, ErrMalformed) {
				t.Errorf("Apply = %v, want an error wrapping ErrMalformed", err)
			}
			if !bytes.Equal(page, pattern(tt.size)) {
				t.Errorf("Apply that failed wrote into the page")
			}
		})
	}
}

func TestValidateNegativeSize(t *testing.T) {
	if err := Diff(nil).Validate(-1); err == nil {
		t.Errorf("Validate(-1) = nil, want an error")
	}
}

func TestEmptyAndSize(t *testing.T) {
	var d Diff
	if !d.Empty() || d.Size() != 0 {
		t.Errorf("nil diff: Empty = %v, Size = %d; want true, 0", d.Empty(), d.Size())
	}
	if err := d.Apply(nil); err != nil {
		t.Errorf("nil diff: Apply(nil) = %v, want nil", err)
	}
	d = Diff{0x02, 7, 8, 9}
	if d.Empty() || d.Size() != 4 {
		t.Errorf("Empty = %v, Size = %d; want false, 4", d.Empty(), d.Size())
	}
}

func TestMerge(t *testing.T) {
	base := pattern(64)
	tests := []struct {
		name           string
		earlier, later []int
	}{
		{"both empty", nil, nil},
		{"earlier empty", nil, []int{1, 2, 3}},
		{"later empty", []int{1, 2, 3}, nil},
		{"disjoint", []int{1, 2}, []int{10, 11}},
		{"touching", []int{1, 2}, []int{3, 4}},
		{"touching reversed", []int{3, 4}, []int{1, 2}},
		{"overlapping", rangeOf(0, 10), rangeOf(5, 20)},
		{"later inside earlier", rangeOf(0, 30), rangeOf(10, 12)},
		{"earlier inside later", rangeOf(10, 12), rangeOf(0, 30)},
		{"bridging", []int{1, 2, 5, 6}, []int{3, 4}},
		{"interleaved", everyOther(64), rangeOf(0, 64)[1:]},
		{"chain", []int{0, 1, 4, 5, 8, 9}, []int{2, 3, 6, 7, 10}},
		{"same positions", []int{7, 8}, []int{7, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// later's values differ from earlier's where both write.
			p1 := changed(base, tt.earlier...)
			p2 := Twin(base)
			for _, i := range tt.later {
				p2[i] ^= 0x3C
			}
			d1, _ := Create(base, p1)
			d2, _ := Create(base, p2)
			m, err := Merge(d1, d2)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			want := Twin(base)
			mustApply(t, d1, want)
			mustApply(t, d2, want)
			got := Twin(base)
			mustApply(t, m, got)
			if !bytes.Equal(got, want) {
				t.Errorf("applying Merge gave %x, want %x", got, want)
			}
			union := map[int]bool{}
			for _, i := range append(tt.earlier, tt.later...) {
				union[i] = true
			}
			if n, err := m.Changed(); err != nil || n != len(union) {
				t.Errorf("Merge changes %d bytes (%v), want %d", n, err, len(union))
			}
			if len(union) == 0 && m != nil {
				t.Errorf("Merge of empty diffs = %x, want nil", []byte(m))
			}
		})
	}
}

func TestMergeMalformed(t *testing.T) {
	good := Diff{0x00, 1}
	bad := []Diff{{0xf0}, {0x00}, {0x00, 1, 0x00, 2}, {0xf0, 0x80, 0x00, 1}}
	for _, b := range bad {
		if _, err := Merge(b, good); !errors.Is(err, ErrMalformed) {
			t.Errorf("Merge(%x, good) = %v, want an error wrapping ErrMalformed", []byte(b), err)
		}
		if _, err := Merge(good, b); !errors.Is(err, ErrMalformed) {
			t.Errorf("Merge(good, %x) = %v, want an error wrapping ErrMalformed", []byte(b), err)
		}
		if _, err := Merge(b, nil); !errors.Is(err, ErrMalformed) {
			t.Errorf("Merge(%x, nil) = %v, want an error wrapping ErrMalformed", []byte(b), err)
		}
	}
	// A malformed run far after everything else must still be found.
	late := Diff{0x00, 1, 0xf0, 85, 1, 0x00, 1}
	if _, err := Merge(good, late); err == nil {
		t.Errorf("Merge(good, %x) = nil error, want one", []byte(late))
	}
}

func mustApply(t *testing.T, d Diff, page []byte) {
	t.Helper()
	if err := d.Apply(page); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

// TestDisjointWriters checks the property the protocol relies on: diffs of
// writers that write disjoint aligned elements of one page, applied in any
// order, give the page with all the writes done.
func TestDisjointWriters(t *testing.T) {
	iterations := 1000
	if testing.Short() {
		iterations = 50
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{4096, 64, 61, 8, 3}
	for it := range iterations {
		n := sizes[it%len(sizes)]
		k := 2 + rng.IntN(7)
		base := make([]byte, n)
		for i := range base {
			base[i] = byte(rng.IntN(4)) // few values, so writes often keep some bytes
		}
		pages := make([][]byte, k)
		for w := range pages {
			pages[w] = Twin(base)
		}
		want := Twin(base)
		// Carve the page into aligned 1-, 2-, 4- and 8-byte elements and let
		// at most one writer write each.
		for pos := 0; pos < n; {
			size := 1 << rng.IntN(4)
			for pos%size != 0 || pos+size > n {
				size /= 2
			}
			if w := rng.IntN(k + 1); w < k {
				for i := pos; i < pos+size; i++ {
					v := byte(rng.IntN(4))
					pages[w][i] = v
					want[i] = v
				}
			}
			pos += size
		}
		diffs := make([]Diff, k)
		for w := range diffs {
			d, err := Create(base, pages[w])
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			diffs[w] = d
		}
		check := func(order []int) {
			got := Twin(base)
			merged := Diff(nil)
			for _, w := range order {
				mustApply(t, diffs[w], got)
				m, err := Merge(merged, diffs[w])
				if err != nil {
					t.Fatalf("Merge: %v", err)
				}
				merged = m
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("iteration %d: %d writers on %d bytes in order %v: got %x, want %x", it, k, n, order, got, want)
			}
			got = Twin(base)
			mustApply(t, merged, got)
			if !bytes.Equal(got, want) {
				t.Fatalf("iteration %d: merged diffs of %d writers in order %v: got %x, want %x", it, k, order, got, want)
			}
		}
		if k <= 4 {
			permutations(k, check)
		} else {
			order := make([]int, k)
			for range 24 {
				for i := range order {
					order[i] = i
				}
				rng.Shuffle(k, func(i, j int) { order[i], order[j] = order[j], order[i] })
				check(order)
			}
		}
	}
}

// permutations calls f with every ordering of 0..k-1 (Heap's algorithm).
func permutations(k int, f func([]int)) {
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	var generate func(m int)
	generate = func(m int) {
		if m <= 1 {
			f(order)
			return
		}
		for i := range m - 1 {
			generate(m - 1)
			if m%2 == 0 {
				order[i], order[m-1] = order[m-1], order[i]
			} else {
				order[0], order[m-1] = order[m-1], order[0]
			}
		}
		generate(m - 1)
	}
	generate(k)
}

func TestPermutations(t *testing.T) {
	seen := map[[4]int]bool{}
	permutations(4, func(o []int) { seen[[4]int(o)] = true })
	if len(seen) != 24 {
		t.Errorf("permutations(4) gave %d distinct orders, want 24", len(seen))
	}
}
