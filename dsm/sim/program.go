package sim

import (
	"math/rand/v2"
	"slices"
)

// ProgramConfig shapes a random data-race-free program.
type ProgramConfig struct {
	NProcs   int
	PageSize int
	Phases   int
	// Ops is roughly how many steps each rank takes per phase.
	Ops      int
	Locks    uint32
	Barriers uint32
}

// Program is one op list per rank over a region of Pages pages: its data,
// then HeapPages pages for its allocations.
type Program struct {
	Pages, HeapPages int
	Ops              [][]Op
}

// The allocations random programs make: private ones of up to maxSmall
// bytes, cut from chunks of SimChunkSize, and larger ones up to maxLarge;
// heapBytes holds them all.
const (
	SimChunkSize = 256
	maxSmall     = SimChunkSize / 4
	maxLarge     = 300
	heapBytes    = 32 << 10
)

// item is shared data protected by a lock.
type item struct {
	kind  OpKind // OpAdd (counter), OpWrite (record) or OpProduce (mailbox)
	addr  int    // counter, record or mailbox flag
	addr2 int    // mailbox data
	len   int    // record or mailbox data length
	lock  uint32
}

// array is barrier-phased data: element j of a phase has one writer.
type array struct {
	base, elem, n int
}

func (a array) addr(j int) int { return a.base + j*a.elem }

type generator struct {
	rng    *rand.Rand
	pc     ProgramConfig
	items  []item
	arrays []array
	locks  []uint32
	pages  int
	ops    [][]Op
	// wakes counts the wake-ups each rank has been sent (handoffs).
	wakes []int
}

// wakeCounter is the first of the counters handoffs wake ranks with, one
// per rank, past the ones ranks take tickets from.
const wakeCounter = 3

// Random returns a random data-race-free program: lock-protected counters,
// records and producer–consumer mailboxes (migratory data), and arrays of 1-,
// 4- and 8-byte elements that ranks write interleaved between barriers (false
// sharing), some phases split into processor sets with their own barriers.
// Ranks also allocate and free shared memory, take tickets from
// fetch-and-add counters and wake each other through them. It ends with a barrier after which every rank
// validates and reads the whole data.
func Random(rng *rand.Rand, pc ProgramConfig) Program {
	g := &generator{rng: rng, pc: pc, ops: make([][]Op, pc.NProcs), wakes: make([]int, pc.NProcs)}
	size := g.layout()
	pages := (size + pc.PageSize - 1) / pc.PageSize
	g.pages = pages
	// The data is the job's first collective allocation.
	g.all(Op{Kind: OpAlloc, Len: pages * pc.PageSize, Addr: 0})
	for ph := range pc.Phases {
		if rng.IntN(3) == 0 {
			g.allocations()
		}
		if rng.IntN(3) == 0 {
			g.handoffs()
		}
		ids := rng.Perm(int(pc.Barriers))
		if rng.IntN(4) == 0 {
			g.place()
		}
		switch rng.IntN(3) {
		case 0:
			g.phase(ph, false)
		case 1:
			g.phase(ph, true)
		default:
			// The sets' barriers may still be in use when the first rank
			// reaches the closing barrier: their ids must differ from it.
			g.groupPhase(ph, uint32(ids[1]), uint32(ids[2]))
		}
		g.all(Op{Kind: OpBarrier, ID: uint32(ids[0])})
	}
	g.all(Op{Kind: OpBarrier, ID: g.barrierID()})
	g.all(Op{Kind: OpValidate, Addr: 0, Len: pages})
	g.all(Op{Kind: OpRead, Addr: 0, Len: pages * pc.PageSize})
	return Program{Pages: pages, HeapPages: (heapBytes + pc.PageSize - 1) / pc.PageSize, Ops: g.ops}
}

// allocations has each rank allocate and free a few private objects, small
// and large, and take tickets from counters.
func (g *generator) allocations() {
	for r := range g.ops {
		for range g.rng.IntN(4) {
			switch k := g.rng.IntN(6); {
			case k < 3:
				g.ops[r] = append(g.ops[r], Op{Kind: OpMalloc, Len: 1 + g.rng.IntN(maxSmall)})
			case k < 4:
				g.ops[r] = append(g.ops[r], Op{Kind: OpMalloc, Len: maxSmall + 1 + g.rng.IntN(maxLarge-maxSmall)})
			case k < 5:
				g.ops[r] = append(g.ops[r], Op{Kind: OpFree, Addr: g.rng.IntN(64)})
			default:
				g.ops[r] = append(g.ops[r], Op{Kind: OpFetchAdd, ID: uint32(g.rng.IntN(3))})
			}
		}
	}
}

// handoffs has a few ranks wake others, each waiter sleeping until its
// counter has reached the wake-ups sent to it. Every rank sends its wake-ups
// before it waits for its own, so no rank waits for one that waits for it.
func (g *generator) handoffs() {
	n := g.pc.NProcs
	if n < 2 {
		return
	}
	waits := make([][]Op, n)
	for range 1 + g.rng.IntN(3) {
		w, s := g.rng.IntN(n), g.rng.IntN(n-1)
		if s >= w {
			s++
		}
		g.wakes[w]++
		c := uint32(wakeCounter + w)
		g.ops[s] = append(g.ops[s], Op{Kind: OpFetchAdd, ID: c})
		waits[w] = append(waits[w], Op{Kind: OpWaitCounter, ID: c, Len: g.wakes[w]})
	}
	for r, ops := range waits {
		g.ops[r] = append(g.ops[r], ops...)
	}
}

func (g *generator) all(op Op) {
	for r := range g.ops {
		g.ops[r] = append(g.ops[r], op)
	}
}

func (g *generator) barrierID() uint32 { return uint32(g.rng.IntN(int(g.pc.Barriers))) }

// layout places the shared data and returns the bytes used.
func (g *generator) layout() int {
	ps := g.pc.PageSize
	nLocks := 1 + g.rng.IntN(int(min(8, g.pc.Locks)))
	for range nLocks {
		g.locks = append(g.locks, uint32(g.rng.IntN(int(g.pc.Locks))))
	}
	slices.Sort(g.locks)
	g.locks = slices.Compact(g.locks)
	lock := func() uint32 { return g.locks[g.rng.IntN(len(g.locks))] }
	addr := 0
	for range 2 + g.rng.IntN(10) {
		g.items = append(g.items, item{kind: OpAdd, addr: addr, lock: lock()})
		addr += 8
	}
	for range 2 + g.rng.IntN(10) {
		addr += g.rng.IntN(16)
		n := 1 + g.rng.IntN(ps*3/2)
		g.items = append(g.items, item{kind: OpWrite, addr: addr, len: n, lock: lock()})
		addr += n
	}
	for range 1 + g.rng.IntN(4) {
		addr = (addr + 7) &^ 7
		n := 1 + g.rng.IntN(ps)
		g.items = append(g.items, item{kind: OpProduce, addr: addr, addr2: addr + 8, len: n, lock: lock()})
		addr += 8 + n
	}
	for _, elem := range []int{1, 4, 8} {
		addr = (addr + 7) &^ 7
		n := (ps * (1 + g.rng.IntN(4))) / elem
		g.arrays = append(g.arrays, array{base: addr, elem: elem, n: n})
		addr += n * elem
	}
	return addr
}

// phase adds one barrier phase: every rank works on locked items and either
// writes and reads the array elements it owns in this phase, or (readOnly)
// only reads any element.
func (g *generator) phase(ph int, readOnly bool) {
	n := g.pc.NProcs
	for r := range n {
		for range g.pc.Ops {
			switch k := g.rng.IntN(10); {
			case k < 3:
				g.locked(r)
			case k < 4:
				g.validate(r)
			default:
				a := g.arrays[g.rng.IntN(len(g.arrays))]
				if readOnly {
					j := g.rng.IntN(a.n)
					g.ops[r] = append(g.ops[r], Op{Kind: OpRead, Addr: a.addr(j), Len: a.elem})
					continue
				}
				// Element j belongs to rank (j+ph) mod n in phase ph.
				first := ((r-ph)%n + n) % n
				if first >= a.n {
					continue
				}
				j := first + n*g.rng.IntN((a.n-first+n-1)/n)
				g.element(r, a, j)
			}
		}
	}
}

// groupPhase splits the ranks into two processor sets that work apart, each
// with its own barriers: set s owns the elements j with j mod 2 == s, and
// within a set ownership rotates at every set barrier.
func (g *generator) groupPhase(ph int, ids ...uint32) {
	n := g.pc.NProcs
	perm := g.rng.Perm(n)
	cut := 1 + g.rng.IntN(max(1, n-1))
	if n == 1 {
		cut = 1
	}
	sets := [][]int{slices.Sorted(slices.Values(perm[:cut])), slices.Sorted(slices.Values(perm[cut:]))}
	subs := 1 + g.rng.IntN(3)
	for s, set := range sets {
		if len(set) == 0 {
			continue
		}
		members := set
		if len(set) == n {
			members = nil
		}
		for sub := range subs {
			for pos, r := range set {
				for range g.pc.Ops / 2 {
					if g.rng.IntN(4) == 0 {
						g.locked(r)
						continue
					}
					a := g.arrays[g.rng.IntN(len(g.arrays))]
					// Set-local index k is element j = 2k+s; its owner in
					// this sub-phase is set[(k+sub+ph) mod len(set)].
					first := ((pos-sub-ph)%len(set) + len(set)) % len(set)
					k := first + len(set)*g.rng.IntN(max(1, a.n/2/len(set)))
					if j := 2*k + s; j < a.n {
						g.element(r, a, j)
					}
				}
				g.ops[r] = append(g.ops[r], Op{Kind: OpBarrier, ID: ids[s], Members: members})
			}
		}
	}
}

// element writes or reads element j of a, which rank r owns now.
func (g *generator) element(r int, a array, j int) {
	if g.rng.IntN(2) == 0 {
		data := make([]byte, a.elem)
		for i := range data {
			data[i] = byte(g.rng.IntN(255) + 1)
		}
		g.ops[r] = append(g.ops[r], Op{Kind: OpWrite, Addr: a.addr(j), Data: data})
		return
	}
	g.ops[r] = append(g.ops[r], Op{Kind: OpRead, Addr: a.addr(j), Len: a.elem})
}

// locked adds a critical section: acquire one lock and work on items it protects.
func (g *generator) locked(r int) {
	l := g.locks[g.rng.IntN(len(g.locks))]
	var mine []item
	for _, it := range g.items {
		if it.lock == l {
			mine = append(mine, it)
		}
	}
	if len(mine) == 0 {
		return
	}
	g.ops[r] = append(g.ops[r], Op{Kind: OpLock, ID: l})
	for range 1 + g.rng.IntN(3) {
		it := mine[g.rng.IntN(len(mine))]
		switch it.kind {
		case OpAdd:
			g.ops[r] = append(g.ops[r], Op{Kind: OpAdd, Addr: it.addr})
		case OpWrite:
			g.ops[r] = append(g.ops[r], Op{Kind: OpRead, Addr: it.addr, Len: it.len})
			off := g.rng.IntN(it.len)
			data := make([]byte, 1+g.rng.IntN(it.len-off))
			for i := range data {
				data[i] = byte(g.rng.Uint32())
			}
			g.ops[r] = append(g.ops[r], Op{Kind: OpWrite, Addr: it.addr + off, Data: data})
		case OpProduce:
			if g.rng.IntN(2) == 0 {
				data := make([]byte, it.len)
				for i := range data {
					data[i] = byte(g.rng.Uint32())
				}
				g.ops[r] = append(g.ops[r], Op{Kind: OpProduce, Addr: it.addr, Addr2: it.addr2, Data: data})
			} else {
				g.ops[r] = append(g.ops[r], Op{Kind: OpConsume, Addr: it.addr, Addr2: it.addr2, Len: it.len})
			}
		}
	}
	g.ops[r] = append(g.ops[r], Op{Kind: OpUnlock, ID: l})
}

// place has one rank, or every rank alike, place the homes of a few page
// ranges; they take effect at the phase's closing barrier.
func (g *generator) place() {
	n := g.pc.NProcs
	var ops []Op
	for range 1 + g.rng.IntN(3) {
		first := g.rng.IntN(g.pages)
		ops = append(ops, Op{Kind: OpSetHome, Addr: first, Len: 1 + g.rng.IntN(min(8, g.pages-first)), ID: uint32(g.rng.IntN(n))})
	}
	if g.rng.IntN(2) == 0 {
		for r := range n {
			g.ops[r] = append(g.ops[r], ops...)
		}
		return
	}
	r := g.rng.IntN(n)
	g.ops[r] = append(g.ops[r], ops...)
}

// validate adds a Validate of a few pages; it touches no values, so it is
// race-free anywhere.
func (g *generator) validate(r int) {
	first := g.rng.IntN(g.pages)
	n := 1 + g.rng.IntN(min(4, g.pages-first))
	g.ops[r] = append(g.ops[r], Op{Kind: OpValidate, Addr: first, Len: n, Write: g.rng.IntN(2) == 0})
}
