package engine

import (
	"math/rand/v2"
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
