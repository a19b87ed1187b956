package diff

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

const benchPageSize = 4096

// benchPages returns a twin and pages changed from it in the ways the
// benchmarks measure.
func benchPages() (twin []byte, pages []struct {
	name string
	page []byte
}) {
	twin = pattern(benchPageSize)
	full := Twin(twin)
	for i := range full {
		full[i] = ^full[i]
	}
	return twin, []struct {
		name string
		page []byte
	}{
		{"unchanged", Twin(twin)},
		{"one-word", changed(twin, rangeOf(2000, 2008)...)},
		{"every-other-byte", changed(twin, everyOther(benchPageSize)...)},
		{"every-other-word", changed(twin, sparse(0, benchPageSize)...)},
		{"full", full},
		{"shuffled-int32", shuffled(twin)},
	}
}

// shuffled returns a copy of twin with about half its 4-byte elements
// replaced by random values, as a partition step of quicksort on random
// integers leaves a page: runs of one or a few elements, gaps of a few
// bytes, now and then one of 15 or more.
func shuffled(twin []byte) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	page := Twin(twin)
	for i := 0; i+4 <= len(page); i += 4 {
		if rng.IntN(2) == 0 {
			binary.LittleEndian.PutUint32(page[i:], rng.Uint32())
		}
	}
	return page
}

func BenchmarkCreate(b *testing.B) {
	twin, pages := benchPages()
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(benchPageSize)
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				d, err := AppendCreate(buf[:0], twin, p.page)
				if err != nil {
					b.Fatal(err)
				}
				buf = d
			}
		})
	}
}

func BenchmarkApply(b *testing.B) {
	twin, pages := benchPages()
	for _, apply := range []struct {
		name string
		fn   func(Diff, []byte) error
	}{{"Apply", Diff.Apply}, {"ApplyValidated", Diff.ApplyValidated}} {
		for _, p := range pages[1:] {
			b.Run(apply.name+"/"+p.name, func(b *testing.B) {
				d, err := Create(twin, p.page)
				if err != nil {
					b.Fatal(err)
				}
				page := Twin(twin)
				b.SetBytes(benchPageSize)
				b.ReportAllocs()
				for b.Loop() {
					if err := apply.fn(d, page); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkMerge(b *testing.B) {
	twin := pattern(benchPageSize)
	cases := []struct {
		name           string
		earlier, later []int
	}{
		// Two runs of half a page that overlap by a quarter page.
		{"half-overlap-runs", rangeOf(0, 2048), rangeOf(1024, 3072)},
		// Every other 4-byte element of the first three quarters, and of the
		// last three quarters shifted by one element.
		{"half-overlap-sparse", sparse(0, 3072), sparse(1028, 4096)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			d1, err := Create(twin, changed(twin, c.earlier...))
			if err != nil {
				b.Fatal(err)
			}
			d2, err := Create(twin, changed(twin, c.later...))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(benchPageSize)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Merge(d1, d2); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// sparse returns the offsets of every other 4-byte element in [lo, hi).
func sparse(lo, hi int) []int {
	var r []int
	for i := lo; i+4 <= hi; i += 8 {
		r = append(r, rangeOf(i, i+4)...)
	}
	return r
}
