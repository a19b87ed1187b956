package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/svmcluster/svm/protocol"
)

// TestTrafficByFlow: the counts kept by index come out per flow as a map
// would have kept them, in any order of types and peers, with no flow that
// carried nothing.
func TestTrafficByFlow(t *testing.T) {
	var tr traffic
	assert.Empty(t, tr.byFlow())
	want := map[Flow]FlowCount{}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		f := Flow{protocol.MsgTypes[rng.IntN(len(protocol.MsgTypes))], rng.IntN(9)}
		size := rng.IntN(5000)
		tr.count(f.Type, f.Peer, size)
		want[f] = FlowCount{Messages: want[f].Messages + 1, Bytes: want[f].Bytes + int64(size)}
	}
	assert.Equal(t, want, tr.byFlow())
	var messages, bytes int64
	for _, c := range want {
		messages, bytes = messages+c.Messages, bytes+c.Bytes
	}
	assert.Equal(t, messages, tr.messages)
	assert.Equal(t, bytes, tr.bytes)
}

// TestPageBits: bits set anywhere in a large region read back set, the
// others clear, and only the blocks holding a set bit are allocated.
func TestPageBits(t *testing.T) {
	const pages = 1<<28 + 5 // a 1 TiB region of 4 KiB pages, and a block's end
	b := newPageBits(pages)
	set := []uint32{0, 63, 64, bitsBlock - 1, bitsBlock, 5 * bitsBlock, pages - 1}
	for _, p := range set {
		b.set(p)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 10000 {
		p := uint32(rng.IntN(pages))
		assert.Equal(t, slices.Contains(set, p), b.has(p), "page %d", p)
	}
	for _, p := range set {
		assert.True(t, b.has(p), "page %d", p)
	}
	assert.False(t, b.has(1) || b.has(65) || b.has(bitsBlock+1) || b.has(pages-2))
	allocated := 0
	for _, blk := range b {
		if blk != nil {
			allocated++
		}
	}
	assert.Equal(t, 4, allocated, "the blocks of pages 0-4095, 4096-8191, 20480-24575 and the last")
}
