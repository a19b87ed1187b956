package link

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/svmcluster/svm/protocol"
)

// randomRequest fills every field, nil and empty lists included, so a
// field the coding drops or misplaces changes the request.
func randomRequest(rng *rand.Rand) Request {
	r := Request{
		Op:       Op(rng.IntN(256)),
		Rank:     rng.IntN(1<<20) - 1<<19,
		ID:       rng.Uint32(),
		Size:     rng.Uint64(),
		Addr:     rng.Uint64(),
		Root:     rng.IntN(1<<20) - 1<<19,
		Write:    rng.IntN(2) == 1,
		Delta:    rng.Int64() - rng.Int64(),
		Funneled: rng.IntN(2) == 1,
		Bound:    rng.IntN(2) == 1,
		CPU:      rng.IntN(4096),
	}
	if n := rng.IntN(4) - 1; n >= 0 {
		r.Members = make([]int, n)
		for i := range r.Members {
			r.Members[i] = rng.IntN(1 << 16)
		}
	}
	if n := rng.IntN(40) - 1; n >= 0 {
		r.Written = make([]protocol.PageRange, n)
		for i := range r.Written {
			r.Written[i] = protocol.PageRange{First: rng.Uint32(), Count: rng.Uint32()}
		}
	}
	if rng.IntN(2) == 1 {
		r.Local = &LocalCounts{Barriers: rng.Int64(), LockAcquires: rng.Int64()}
	}
	return r
}

// TestRequestRoundTrip: a request comes out of its coding as it went in,
// over the wire and from msgpack alone.
func TestRequestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	app, eng := pair(t)
	for range 2000 {
		want := randomRequest(rng)
		body, err := msgpack.Marshal(want)
		require.NoError(t, err)
		var got Request
		require.NoError(t, msgpack.Unmarshal(body, &got))
		require.Equal(t, want, got)

		require.NoError(t, app.Send(want))
		got = Request{}
		_, err = eng.Recv(&got)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

// TestLegacyRequest: an application built against an older libsvm sends
// its requests as maps of the fields; the engine still reads them.
func TestLegacyRequest(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	for range 200 {
		want := randomRequest(rng)
		body, err := msgpack.Marshal((*legacyRequest)(&want))
		require.NoError(t, err)
		got := randomRequest(rng) // a request read into before
		require.NoError(t, msgpack.Unmarshal(body, &got))
		// omitempty sends an empty list as none.
		if len(want.Members) == 0 {
			want.Members = nil
		}
		if len(want.Written) == 0 {
			want.Written = nil
		}
		require.Equal(t, want, got)
	}
}

// TestBadRequests: a request of the wrong shape is refused with what was
// wrong, not read into a different request.
func TestBadRequests(t *testing.T) {
	enc := func(vs ...any) []byte {
		b, err := msgpack.Marshal(vs)
		require.NoError(t, err)
		return b
	}
	fields := func(op any, written any) []any {
		return []any{op, 0, 1, 0, 0, 0, false, nil, 0, false, written, nil, false, 0}
	}
	for _, c := range []struct {
		name string
		body []byte
		err  string
	}{
		{"too few fields", enc(9, 0, 1), "a request of 3 fields, not 14"},
		{"op beyond a byte", enc(fields(256, nil)...), "request's op 256 exceeds 255"},
		{"odd written list", enc(fields(9, []int{1, 2, 3})...), "written pages as 3 numbers, not first, count pairs"},
		{"negative op", enc(fields(-1, nil)...), "request's op is negative (-1)"},
		{"negative page", enc(fields(9, []int{-5, 2})...), "request's first written page is negative (-5)"},
		{"page beyond 32 bits", enc(fields(9, []int{1, 1 << 32})...), "request's count of written pages 4294967296 exceeds 4294967295"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r Request
			assert.EqualError(t, msgpack.Unmarshal(c.body, &r), c.err)
		})
	}
}

// BenchmarkBarrierRequest codes a barrier's request with the thirty
// written ranges of a shallow-water step.
func BenchmarkBarrierRequest(b *testing.B) {
	r := Request{Op: OpBarrier, ID: 63, Members: []int{0, 1}}
	for i := range 30 {
		r.Written = append(r.Written, protocol.PageRange{First: uint32(i * 1000), Count: 3})
	}
	b.ReportAllocs()
	for b.Loop() {
		body, err := msgpack.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		if err := protocol.ScanMsgpack(body); err != nil {
			b.Fatal(err)
		}
		var got Request
		if err := msgpack.Unmarshal(body, &got); err != nil {
			b.Fatal(err)
		}
	}
}
