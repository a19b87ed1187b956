package protocol

import (
	"math/rand/v2"
	"testing"
)

func benchMessages() map[string]Message {
	rng := rand.New(rand.NewPCG(9, 9))
	page := make([]byte, 4096+3)
	for i := range page {
		page[i] = byte(rng.Uint32())
	}
	vt := make(VectorTime, 8)
	var ivs []Interval
	for r := range 7 {
		v := vt.Clone()
		v[r] = 100
		ivs = append(ivs, Interval{ID: IntervalID{Rank: r, Index: 100}, VT: v, Pages: []PageRange{{First: uint32(192 * r), Count: 192}}})
	}
	return map[string]Message{
		"lock-request":   &LockRequest{Lock: 3, Requester: 5, VT: vt},
		"barrier-depart": &BarrierDepart{Barrier: 0, Episode: 100, Intervals: ivs},
		"diff-response-4k": &DiffResponse{ID: 7, Pages: []PageDiffs{{Page: 191, Diffs: []IntervalDiff{
			{Interval: IntervalID{Rank: 1, Index: 100}, Diff: page}}}}},
	}
}

func BenchmarkEncode(b *testing.B) {
	for name, m := range benchMessages() {
		b.Run(name, func(b *testing.B) {
			buf, _ := Encode(m)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = AppendEncode(buf[:0], m)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for name, m := range benchMessages() {
		b.Run(name, func(b *testing.B) {
			buf, _ := Encode(m)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
