package rank

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAllocatorRandom checks the allocator against a byte map: allocations
// never overlap, stay aligned and inside the region, and freeing everything
// gives back one free span.
func TestAllocatorRandom(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		const size = 1 << 13
		a := newAllocator(size)
		owner := make([]int, size) // 0: free, else allocation number
		live := map[uint64]int{}
		next := 1
		for range 2000 {
			if len(live) > 0 && rng.IntN(3) == 0 {
				for off, id := range live {
					require.NoError(t, a.release(off))
					for i := range owner {
						if owner[i] == id {
							owner[i] = 0
						}
					}
					delete(live, off)
					break
				}
				continue
			}
			n := 1 + uint64(rng.IntN(600))
			align := uint64(1) << rng.IntN(10)
			off, err := a.alloc(n, align)
			if err != nil {
				continue // full: fine
			}
			require.Zero(t, off%align, "seed %d: misaligned", seed)
			require.LessOrEqual(t, off+n, uint64(size))
			for i := off; i < off+n; i++ {
				require.Zero(t, owner[i], "seed %d: overlap at %d", seed, i)
				owner[i] = next
			}
			live[off] = next
			next++
		}
		for off := range live {
			require.NoError(t, a.release(off))
		}
		assert.Equal(t, []span{{0, size}}, a.free, "seed %d: free list not coalesced", seed)
	}
}

func TestAllocatorErrors(t *testing.T) {
	a := newAllocator(4096)
	_, err := a.alloc(0, 16)
	assert.ErrorContains(t, err, "0 bytes")
	off, err := a.alloc(4096, 4096)
	require.NoError(t, err)
	_, err = a.alloc(1, 16)
	assert.ErrorContains(t, err, "no 1 free bytes")
	assert.ErrorContains(t, a.release(off+16), "not the start of an allocation")
	require.NoError(t, a.release(off))
	assert.ErrorContains(t, a.release(off), "not the start")
}
