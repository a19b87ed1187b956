package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/svmcluster/svm/protocol"
)

// SORConfig describes red-black successive over-relaxation as the TreadMarks
// study ran it: a Rows × Cols matrix of float32, a checkerboard kept as a red
// and a black array of Rows × Cols/2 each, divided into bands of rows, one
// per rank, as bench/sor lays them out (see there).
type SORConfig struct {
	NProcs   int
	Rows     int
	Cols     int
	PageSize int
	// NonZero starts every element nonzero (SOR-NonZero); otherwise the
	// edges are 1 and the interior 0 (SOR-Zero).
	NonZero bool
}

// SOR is a red-black SOR job laid out in shared memory.
type SOR struct {
	cfg      SORConfig
	rowBytes int
	black    int // byte offset of the black array; red starts at 0
}

// NewSOR lays out the two arrays.
func NewSOR(cfg SORConfig) (*SOR, error) {
	if cfg.Rows < 3 || cfg.Cols < 4 || cfg.Cols%2 != 0 || cfg.NProcs < 1 || cfg.Rows < cfg.NProcs {
		return nil, fmt.Errorf("sor: %d × %d matrix on %d ranks", cfg.Rows, cfg.Cols, cfg.NProcs)
	}
	rowBytes := cfg.Cols / 2 * 4
	return &SOR{cfg: cfg, rowBytes: rowBytes, black: cfg.Rows * rowBytes}, nil
}

// Pages is the size of the shared region the job needs.
func (s *SOR) Pages() int {
	return (2*s.black + s.cfg.PageSize - 1) / s.cfg.PageSize
}

// band is rank r's rows [lo, hi): bands begin at odd rows, as bench/sor's.
func (s *SOR) band(r int) (lo, hi int) {
	n, rows := s.cfg.NProcs, s.cfg.Rows
	lo, hi = r*rows/n, (r+1)*rows/n
	if r > 0 {
		lo |= 1
	}
	if r < n-1 {
		hi |= 1
	}
	return lo, hi
}

func (s *SOR) row(color, i int) int { return color*s.black + i*s.rowBytes }

// Init returns each rank's initialization of its own band of both arrays.
func (s *SOR) Init() [][]Op {
	ops := make([][]Op, s.cfg.NProcs)
	for r := range ops {
		lo, hi := s.band(r)
		for color := range 2 {
			data := make([]byte, (hi-lo)*s.rowBytes)
			for i := lo; i < hi; i++ {
				for j := range s.cfg.Cols / 2 {
					v := float32(0)
					switch {
					case s.cfg.NonZero:
						v = 1 + float32((i*7+j*13+color)%97)/97
					case i == 0 || i == s.cfg.Rows-1 || j == 0 || j == s.cfg.Cols/2-1:
						v = 1
					}
					binary.LittleEndian.PutUint32(data[(i-lo)*s.rowBytes+4*j:], math.Float32bits(v))
				}
			}
			ops[r] = append(ops[r], Op{Kind: OpWrite, Addr: s.row(color, lo), Data: data})
		}
		ops[r] = append(ops[r], Op{Kind: OpBarrier, ID: 0})
	}
	return ops
}

// Iterations returns n iterations: a red phase, a barrier, a black phase and
// a barrier. Each phase updates the interior of the rank's band of one color
// from the other color's rows, including the neighbours' boundary rows.
func (s *SOR) Iterations(n int) [][]Op {
	ops := make([][]Op, s.cfg.NProcs)
	for r := range ops {
		lo, hi := s.band(r)
		first, last := max(lo, 1), min(hi, s.cfg.Rows-1)
		for range n {
			for color := range 2 {
				other := 1 - color
				op := Op{
					Kind:   OpFunc,
					Name:   fmt.Sprintf("sor %s rows [%d,%d)", [...]string{"red", "black"}[color], first, last),
					Reads:  []Span{{s.row(other, first-1), (last - first + 2) * s.rowBytes}},
					Writes: []Span{{s.row(color, first), (last - first) * s.rowBytes}},
				}
				if first < last {
					op.Fn = func(m *Mem) { s.update(m, color, first, last) }
					ops[r] = append(ops[r], op)
				}
				ops[r] = append(ops[r], Op{Kind: OpBarrier, ID: 0})
			}
		}
	}
	return ops
}

// update computes rows [first, last) of one color from the other, leaving the
// first and last column fixed: red[i][j] from black[i±1][j], black[i][j] and
// black[i][j-1] (even rows) or black[i][j+1] (odd rows); black likewise with
// the parities swapped.
func (s *SOR) update(m *Mem, color, first, last int) {
	other := 1 - color
	src := m.Load(s.row(other, first-1), (last-first+2)*s.rowBytes)
	dst := make([]byte, (last-first)*s.rowBytes)
	at := func(b []byte, i, j int) float32 {
		return math.Float32frombits(binary.LittleEndian.Uint32(b[i*s.rowBytes+4*j:]))
	}
	cur := m.Load(s.row(color, first), len(dst))
	copy(dst, cur)
	w := s.cfg.Cols / 2
	for i := range last - first {
		for j := 1; j < w-1; j++ {
			side := j - 1 + 2*((first+i+color)%2) // j-1 or j+1
			v := (at(src, i, j) + at(src, i+2, j) + at(src, i+1, j) + at(src, i+1, side)) * 0.25
			binary.LittleEndian.PutUint32(dst[i*s.rowBytes+4*j:], math.Float32bits(v))
		}
	}
	m.Store(s.row(color, first), dst)
}

// SORResult is what a simulated SOR run sent in its measured iterations.
type SORResult struct {
	Config     SORConfig
	Iterations int
	Stats      Stats
}

// RunSOR simulates red-black SOR with the home-based protocol or the homeless
// one: each rank initializes its band, warmup iterations run unmeasured (the
// study excluded the first), then iterations are counted. Every value read
// is checked as in any simulation.
func RunSOR(cfg SORConfig, warmup, iterations int, prefetch, homes bool) (SORResult, error) {
	job, err := NewSOR(cfg)
	if err != nil {
		return SORResult{}, err
	}
	if iterations < 1 || warmup < 0 {
		return SORResult{}, fmt.Errorf("sor: %d iterations after %d warm-up", iterations, warmup)
	}
	s, err := New(Config{
		NProcs: cfg.NProcs, Pages: job.Pages(), PageSize: cfg.PageSize, Locks: 1, Barriers: 1,
		GCThreshold: 1 << 40, Prefetch: prefetch, Homes: homes,
	})
	if err != nil {
		return SORResult{}, err
	}
	run := func(ops [][]Op) error {
		for r, o := range ops {
			s.Enqueue(r, o...)
		}
		if err := s.Run(false); err != nil {
			return errors.New(s.Failure())
		}
		return nil
	}
	if err := run(job.Init()); err != nil {
		return SORResult{}, err
	}
	if err := run(job.Iterations(warmup)); err != nil {
		return SORResult{}, err
	}
	s.ResetStats()
	if err := run(job.Iterations(iterations)); err != nil {
		return SORResult{}, err
	}
	return SORResult{Config: cfg, Iterations: iterations, Stats: s.Stats()}, nil
}

func (r SORResult) String() string {
	msgs, bytes := r.Stats.Total()
	n := int64(r.Config.NProcs)
	barrierMsgs := r.Stats.Messages[protocol.MsgBarrierArrive] + r.Stats.Messages[protocol.MsgBarrierDepart]
	return r.Stats.String() + fmt.Sprintf(
		"per iteration: %.1f messages, %.1f KB\nbarrier messages per barrier: %d (2(n-1) = %d)\n",
		float64(msgs)/float64(r.Iterations), float64(bytes)/1024/float64(r.Iterations),
		barrierMsgs/int64(2*r.Iterations), 2*(n-1))
}
