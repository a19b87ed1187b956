package nas

import "testing"

func TestPowIsRepeatedMul(t *testing.T) {
	x := uint64(1)
	for n := range uint64(300) {
		if got := Pow(A, n); got != x {
			t.Fatalf("A^%d = %d, want %d", n, got, x)
		}
		x = Mul(A, x)
	}
}

// TestFirstNumbers pins the stream NAS's randlc produces from its usual
// seed (x1 = 5^13·314159265 mod 2^46, computed by hand with big integers).
func TestFirstNumbers(t *testing.T) {
	x := Mul(A, Seed)
	if want := uint64(1220703125 * 314159265 % (1 << 46)); x != want {
		t.Fatalf("first state %d, want %d", x, want)
	}
	if f := Float(x); f <= 0 || f >= 1 {
		t.Fatalf("Float(%d) = %v, outside (0, 1)", x, f)
	}
}
