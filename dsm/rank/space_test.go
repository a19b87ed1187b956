package rank

import (
	"maps"
	"math/rand/v2"
	"slices"
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

// aliased reports whether two large blocks start within aliasGuard of each
// other modulo aliasPeriod.
func aliased(a, b uint64) bool {
	d := (a - b) % aliasPeriod
	return d < aliasGuard || aliasPeriod-d < aliasGuard
}

// TestLargeBlocksApart: arrays allocated one after another, of the sizes
// that alias when packed (power-of-two arrays, 1025 x 1025 doubles), start
// apart modulo aliasPeriod, aligned as asked, without overlapping; small
// allocations between them are packed as before.
func TestLargeBlocksApart(t *testing.T) {
	a := newAllocator(1 << 30)
	type block struct{ off, size uint64 }
	var blocks []block
	add := func(size, align uint64) {
		off, err := a.alloc(size, align)
		require.NoError(t, err)
		require.Zero(t, off%align, "misaligned")
		for _, b := range blocks {
			require.True(t, off+size <= b.off || b.off+b.size <= off, "%d bytes at %#x overlap %#x", size, off, b.off)
			if size >= largeBlock && b.size >= largeBlock {
				require.False(t, aliased(off, b.off), "blocks at %#x and %#x alias", off, b.off)
			}
		}
		blocks = append(blocks, block{off, size})
	}
	for range 4 {
		add(32<<20, 4096) // the C Jacobi kernel's arrays
	}
	small, err := a.alloc(100, 16)
	require.NoError(t, err)
	assert.Equal(t, uint64(32<<20), small, "a small block takes the first fit: the gap before the second large block")
	for range 13 {
		add(1025*1025*8+4095, 16) // SVM-Fortran's page-aligned shared arrays
	}
	add(largeBlock-16, 16) // below largeBlock: first fit
	prev := blocks[len(blocks)-2]
	assert.Equal(t, alignUp(prev.off+prev.size, 16), blocks[len(blocks)-1].off, "a block below largeBlock is packed")
}

// TestLargeBlockFallsBackToFirstFit: where every place that fits aliases
// another large block, a large block still gets the first.
func TestLargeBlockFallsBackToFirstFit(t *testing.T) {
	a := newAllocator(64 << 20)
	first, err := a.alloc(32<<20, 4096)
	require.NoError(t, err)
	second, err := a.alloc(32<<20, 4096)
	require.NoError(t, err, "the only place left aliases the first block")
	assert.Equal(t, []uint64{0, 32 << 20}, []uint64{first, second})
}

// TestLargeBlocksRandom: random large and small allocations and frees in a
// region with room to spare: nothing overlaps, everything is aligned, and
// no two live large blocks alias. At most 40 blocks live at once: about 64
// large ones would leave no start 256 KiB from all the others modulo
// 32 MiB, and the allocator rightly falls back to first fit.
func TestLargeBlocksRandom(t *testing.T) {
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 2))
		a := newAllocator(4 << 30)
		live := map[uint64]uint64{}
		for range 400 {
			if len(live) >= 40 || len(live) > 0 && rng.IntN(3) == 0 {
				offs := slices.Sorted(maps.Keys(live))
				off := offs[rng.IntN(len(offs))]
				require.NoError(t, a.release(off))
				delete(live, off)
				continue
			}
			size := 1 + uint64(rng.IntN(4096))
			if rng.IntN(2) == 0 {
				size = largeBlock + uint64(rng.IntN(40<<20))
			}
			align := uint64(1) << (4 + rng.IntN(9))
			off, err := a.alloc(size, align)
			require.NoError(t, err, "seed %d", seed)
			require.Zero(t, off%align, "seed %d: misaligned", seed)
			for o, s := range live {
				require.True(t, off+size <= o || o+s <= off, "seed %d: overlap", seed)
				if size >= largeBlock && s >= largeBlock {
					require.False(t, aliased(off, o), "seed %d: blocks at %#x and %#x alias", seed, off, o)
				}
			}
			live[off] = size
		}
		for off := range live {
			require.NoError(t, a.release(off))
		}
		assert.Equal(t, []span{{0, 4 << 30}}, a.free, "seed %d: free list not coalesced", seed)
		assert.Empty(t, a.large, "seed %d: a freed large block still counts", seed)
	}
}
