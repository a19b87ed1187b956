package main

import (
	"math"
	"math/bits"
)

// plan is a radix-2 FFT of one length n, unnormalized as in NAS FT: the
// forward transform uses exp(-2πi/n), the inverse exp(+2πi/n).
type plan struct {
	n     int
	roots []complex128 // exp(-2πik/n) for k < n/2
	rev   []int        // the bit-reversal permutation
	line  []complex128 // a column, gathered
}

func newPlan(n int) *plan {
	p := &plan{n: n, roots: make([]complex128, n/2), rev: make([]int, n), line: make([]complex128, n)}
	for k := range p.roots {
		sin, cos := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		p.roots[k] = complex(cos, sin)
	}
	shift := 64 - bits.TrailingZeros(uint(n))
	for i := range p.rev {
		p.rev[i] = int(bits.Reverse64(uint64(i)) >> shift)
	}
	return p
}

// transform replaces a (n elements) by its transform.
func (p *plan) transform(a []complex128, inverse bool) {
	for i, j := range p.rev {
		if i < j {
			a[i], a[j] = a[j], a[i]
		}
	}
	for size := 2; size <= p.n; size *= 2 {
		half, stride := size/2, p.n/size
		for start := 0; start < p.n; start += size {
			for k := range half {
				w := p.roots[k*stride]
				if inverse {
					w = complex(real(w), -imag(w))
				}
				u, v := a[start+k], a[start+k+half]*w
				a[start+k], a[start+k+half] = u+v, u-v
			}
		}
	}
}

// The arrays are n × n × n, laid out [plane][row][column].

// rows transforms every row of planes [lo, hi) of a.
func (p *plan) rows(a []complex128, lo, hi int, inverse bool) {
	n := p.n
	for r := lo * n; r < hi*n; r++ {
		p.transform(a[r*n:(r+1)*n], inverse)
	}
}

// columns transforms every column of planes [lo, hi) of a.
func (p *plan) columns(a []complex128, lo, hi int, inverse bool) {
	n := p.n
	for pl := lo; pl < hi; pl++ {
		plane := a[pl*n*n : (pl+1)*n*n]
		for c := range n {
			for r := range n {
				p.line[r] = plane[r*n+c]
			}
			p.transform(p.line, inverse)
			for r := range n {
				plane[r*n+c] = p.line[r]
			}
		}
	}
}
