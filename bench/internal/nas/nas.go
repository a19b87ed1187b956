// Package nas is the pseudo-random generator of the NAS Parallel Benchmarks
// (randlc, vranlc): x(k+1) = a·x(k) mod 2^46 with a = 5^13, each number
// returned as x(k)·2^-46 in (0, 1). NAS computes it in double precision with
// the product split in halves, which is exact; 64-bit integers give the same
// numbers, since 2^46 divides 2^64 and the low 64 bits of a product are
// exact. Jumping ahead n numbers is a multiplication by a^n mod 2^46, which
// lets every rank of a job start its share of a stream where it begins.
package nas

const (
	// A is the multiplier of every NAS benchmark, 5^13.
	A = 1220703125
	// Seed is the seed of IS and FT.
	Seed = 314159265

	mask = 1<<46 - 1
)

// Mul returns a·x mod 2^46: the next state after x is Mul(A, x).
func Mul(a, x uint64) uint64 { return a * x & mask }

// Pow returns a^n mod 2^46.
func Pow(a, n uint64) uint64 {
	r := uint64(1)
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			r = Mul(r, a)
		}
		a = Mul(a, a)
	}
	return r
}

// Float is the number state x stands for, x·2^-46.
func Float(x uint64) float64 { return float64(x) * 0x1p-46 }
