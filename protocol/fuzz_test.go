package protocol

import (
	"math/rand/v2"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode: it must return an error or a
// message that Check can judge and that re-encodes to a form decoding to the
// same message — never panic.
func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 64 {
		b, err := Encode(randMessage(rng, 1+rng.IntN(8), 1+rng.Uint32N(16)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0x06, 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		_ = Limits{NProcs: 8, Pages: 16, Locks: 1024, Barriers: 64}.Check(m)
		again, err := Encode(m)
		if err != nil {
			t.Fatalf("re-encoding a decoded %v: %v", m.Type(), err)
		}
		m2, err := Decode(again)
		if err != nil {
			t.Fatalf("decoding a re-encoded %v: %v", m.Type(), err)
		}
		b2, err := Encode(m2)
		if err != nil || string(b2) != string(again) {
			t.Fatalf("encoding is not stable for %v", m.Type())
		}
	})
}
