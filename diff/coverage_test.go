package diff

import (
	"math/rand/v2"
	"testing"
)

// TestCoverage checks Coverage against a byte map over random diffs.
func TestCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 2000 {
		size := 1 + rng.IntN(300)
		cov := NewCoverage(size)
		written := make([]bool, size)
		for range 1 + rng.IntN(4) {
			twin, page := make([]byte, size), make([]byte, size)
			for i := range page {
				if rng.IntN(3) == 0 {
					page[i] = 1
				}
			}
			d, err := Create(twin, page)
			if err != nil {
				t.Fatal(err)
			}
			if err := cov.Add(d); err != nil {
				t.Fatal(err)
			}
			for i, b := range page {
				written[i] = written[i] || b != 0
			}
		}
		n := 0
		for _, w := range written {
			if w {
				n++
			}
		}
		if cov.Len() != n {
			t.Fatalf("Len %d, want %d", cov.Len(), n)
		}
		twin, page := make([]byte, size), make([]byte, size)
		want := true
		for i := range page {
			if rng.IntN(4) == 0 {
				page[i] = 2
				want = want && written[i]
			}
		}
		d, _ := Create(twin, page)
		got, err := cov.Covers(d)
		if err != nil || got != want {
			t.Fatalf("Covers = %v, %v; want %v", got, err, want)
		}
	}
	if _, err := NewCoverage(8).Covers(Diff{0x0f, 0x05, 1}); err == nil {
		t.Fatal("a malformed diff must give an error")
	}
}
