package protocol

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncodedSize: EncodedSize is the length of the encoding, for random
// messages of every type and for the values at each boundary of the
// encoding's integer, string, bin and array forms.
func TestEncodedSize(t *testing.T) {
	check := func(m Message) {
		t.Helper()
		b, err := Encode(m)
		require.NoError(t, err)
		require.Equal(t, len(b), EncodedSize(m), "%v %+v", m.Type(), m)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	seen := map[MsgType]bool{}
	for range 20000 {
		m := randMessage(rng, 1+rng.IntN(70), 1+rng.Uint32N(200))
		seen[m.Type()] = true
		check(m)
	}
	for _, typ := range MsgTypes {
		assert.True(t, seen[typ], "no random %v", typ)
	}

	uints := []uint64{0, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64}
	ints := []int64{0, -1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64, 127, 128, math.MaxInt64}
	lengths := []int{0, 1, 15, 16, 31, 32, 255, 256, 65535, 65536}
	for _, u := range uints {
		check(&AllocRequest{ID: uint32(u), Op: AllocFree, Size: u, Addr: u})
		check(&BarrierDepart{Barrier: uint32(u), Value: u})
	}
	for _, i := range ints {
		check(&CounterRequest{Delta: i, Until: i})
		check(&LockRequest{Requester: int(i)})
		check(&HomeDiffs{Interval: IntervalID{Rank: int(i)}})
	}
	for _, n := range lengths {
		check(&PageResponse{Pages: []PageCopy{{Data: make([]byte, n)}}})
		check(&AllocReply{Err: string(make([]byte, n)), Objects: make([]uint64, n)})
		check(&PushStop{Pages: make([]uint32, n)})
		check(&BarrierArrive{Members: make([]int, n), VT: make(VectorTime, n), Homes: make([]HomeRange, min(n, 300))})
		check(&DiffResponse{Pages: []PageDiffs{{Diffs: make([]IntervalDiff, min(n, 300)), Base: make([]byte, n)}}})
	}
	check(&PageResponse{Pages: []PageCopy{{Data: make([]byte, 1<<17)}}})
	// Empty, not nil: an array or bin of length 0.
	check(&PageResponse{Pages: []PageCopy{}})
	check(&LockGrant{Intervals: []Interval{{VT: VectorTime{}, Pages: []PageRange{}}}})
	check(&PagePush{Pages: []PushedPage{{Holds: VectorTime{}, Data: []byte{}}}})
}
