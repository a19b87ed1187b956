package rank

import (
	"fmt"
	"slices"

	"github.com/svmcluster/svm/protocol"
)

// Shared allocation and fetch-and-add counters, the job services of the
// protocol.
//
// Rank 0 keeps the job's allocator over the whole region (space.go):
// collective allocations (Alloc: every rank, in the same order, the same
// sizes, one address) and large private ones (Malloc) each take a round
// trip to it. Small private allocations, which programs that build lists
// and trees in shared memory make by the thousand, come from the rank's own
// supply: objects of a size class cut from chunks rank 0 hands out, or
// objects freed since, which rank 0 collects. A rank asks rank 0 only when
// its supply of a class runs out.
//
// Counter c is kept by rank c mod NProcs; FetchAdd adds to it there and
// returns the value it had, in one round trip (none at its keeper).
// WaitCounter parks the caller at the keeper until the counter has reached
// a value: the keeper answers when a FetchAdd gets it there, so a waiting
// rank sleeps instead of asking again and again.

const (
	// minClass and maxClass bound the small size classes, powers of two:
	// a Malloc of at most maxClass bytes (and a quarter chunk) is small.
	minClass = 16
	maxClass = 2048
	nClasses = 8 // 16, 32, ..., 2048
	// DefaultChunkSize is what rank 0 hands out at a time for small objects.
	DefaultChunkSize = 64 << 10
)

// class returns the size class of a small allocation of size bytes.
func class(size uint64) int {
	c := 0
	for uint64(minClass)<<c < size {
		c++
	}
	return c
}

func classSize(c int) uint64 { return minClass << c }

// jobAllocator is rank 0's: the region, the collective allocations so far,
// the chunks handed out for small objects, and the small objects freed.
type jobAllocator struct {
	space      *allocator
	collective []allocation
	// calls counts each rank's collective allocations.
	calls []int
	// chunks are the chunks handed out, by offset, and the class each is
	// cut in.
	chunks []chunk
	freed  [nClasses][]uint64
}

type allocation struct{ size, off uint64 }

type chunk struct {
	off   uint64
	class int
}

// objects is a rank's supply of small objects: free ones by class, and the
// ones it handed out (which it takes back itself when freed here).
type objects struct {
	free [nClasses][]uint64
	mine map[uint64]int
}

// allocOp is an allocation or counter call waiting for a reply.
type allocOp struct {
	id uint32
	// small: the call asked for small objects of class.
	small bool
	class int
	// size is the size an allocation asked for.
	size uint64
}

// Alloc allocates size bytes collectively: every rank calls it in the same
// order with the same sizes and gets the same address, page aligned. Ready
// reports Done with the address in Value, or Err.
func (r *Rank) Alloc(size uint64) error {
	return r.startAlloc(protocol.AllocCollective, size, 0)
}

// Malloc allocates size bytes for this rank alone, 16-byte aligned; small
// sizes come from the rank's own supply, at no message.
func (r *Rank) Malloc(size uint64) error {
	if size > 0 && size <= min(maxClass, r.cfg.ChunkSize/4) {
		c := class(size)
		if err := r.begin(op{kind: opAlloc}); err != nil {
			return err
		}
		if off, ok := r.takeObject(c); ok {
			r.finish(r.cfg.Base+off, nil)
			return nil
		}
		r.op.alloc.small, r.op.alloc.class = true, c
		r.request(protocol.AllocObjects, classSize(c), 0)
		return nil
	}
	return r.startAlloc(protocol.AllocMalloc, size, 0)
}

// Free returns memory from Alloc or Malloc: a small object this rank handed
// out goes back to its supply, anything else to rank 0.
func (r *Rank) Free(addr uint64) error {
	if addr >= r.cfg.Base {
		if c, ok := r.objects.mine[addr-r.cfg.Base]; ok {
			if err := r.begin(op{kind: opAlloc}); err != nil {
				return err
			}
			delete(r.objects.mine, addr-r.cfg.Base)
			r.objects.free[c] = append(r.objects.free[c], addr-r.cfg.Base)
			r.finish(0, nil)
			return nil
		}
	}
	return r.startAlloc(protocol.AllocFree, 0, addr)
}

// FetchAdd adds delta to counter c and returns, in Value, the value it had.
func (r *Rank) FetchAdd(c uint32, delta int64) error {
	if err := r.begin(op{kind: opAlloc}); err != nil {
		return err
	}
	if mgr := protocol.CounterManager(c, r.cfg.NProcs); mgr != r.cfg.Rank {
		r.nextAllocID++
		r.op.alloc.id = r.nextAllocID
		r.send(mgr, &protocol.CounterRequest{ID: r.nextAllocID, Counter: c, Delta: delta})
		return nil
	}
	r.finish(uint64(r.addToCounter(c, delta)), nil)
	return nil
}

// WaitCounter waits until counter c is at least until and returns, in
// Value, the counter's value then.
func (r *Rank) WaitCounter(c uint32, until int64) error {
	if err := r.begin(op{kind: opAlloc}); err != nil {
		return err
	}
	if mgr := protocol.CounterManager(c, r.cfg.NProcs); mgr != r.cfg.Rank {
		r.nextAllocID++
		r.op.alloc.id = r.nextAllocID
		r.send(mgr, &protocol.CounterRequest{ID: r.nextAllocID, Counter: c, Wait: true, Until: until})
		return nil
	}
	r.awaitCounter(counterWaiter{rank: r.cfg.Rank, until: until}, c)
	return nil
}

// counterWaiter is a wait on a counter this rank keeps: rank's request id
// (none for this rank's own call) and the value it waits for.
type counterWaiter struct {
	rank  int
	id    uint32
	until int64
}

// awaitCounter answers w now if counter c has reached what it waits for,
// or parks it until a FetchAdd does.
func (r *Rank) awaitCounter(w counterWaiter, c uint32) {
	if v := r.counters[c]; v >= w.until {
		r.answerWait(w, v)
		return
	}
	r.counterWait[c] = append(r.counterWait[c], w)
}

func (r *Rank) answerWait(w counterWaiter, v int64) {
	if w.rank == r.cfg.Rank {
		r.finish(uint64(v), nil)
		return
	}
	r.send(w.rank, &protocol.CounterReply{ID: w.id, Value: v})
}

func (r *Rank) startAlloc(what protocol.AllocOp, size, addr uint64) error {
	if err := r.begin(op{kind: opAlloc}); err != nil {
		return err
	}
	r.op.alloc.size = size
	r.request(what, size, addr)
	return nil
}

// request asks rank 0 to allocate, or serves the request here at rank 0.
func (r *Rank) request(what protocol.AllocOp, size, addr uint64) {
	if r.cfg.Rank == 0 {
		r.allocated(r.serveAlloc(0, &protocol.AllocRequest{Op: what, Size: size, Addr: addr}))
		return
	}
	r.nextAllocID++
	r.op.alloc.id = r.nextAllocID
	r.send(0, &protocol.AllocRequest{ID: r.nextAllocID, Op: what, Size: size, Addr: addr})
}

// allocated finishes the outstanding allocation call with rank 0's answer.
func (r *Rank) allocated(rep *protocol.AllocReply) {
	if rep.Err != "" {
		r.finish(0, fmt.Errorf("%s", rep.Err))
		return
	}
	if !r.op.alloc.small {
		if rep.Addr != 0 {
			r.placeSpread(rep.Addr, r.op.alloc.size)
		}
		r.finish(rep.Addr, nil)
		return
	}
	c := r.op.alloc.class
	if rep.Addr != 0 {
		r.placeAt(rep.Addr, r.cfg.ChunkSize, r.cfg.Rank)
	}
	for _, a := range rep.Objects {
		r.objects.free[c] = append(r.objects.free[c], a-r.cfg.Base)
	}
	if rep.Addr != 0 {
		// A fresh chunk: cut it, lowest object handed out first.
		for off := rep.Addr - r.cfg.Base + r.cfg.ChunkSize - classSize(c); ; off -= classSize(c) {
			r.objects.free[c] = append(r.objects.free[c], off)
			if off == rep.Addr-r.cfg.Base {
				break
			}
		}
	}
	off, _ := r.takeObject(c) // the answer holds at least one
	r.finish(r.cfg.Base+off, nil)
}

// placeSpread guesses the homes of the pages wholly inside a new block
// [addr, addr+size): one run of them per rank, in rank order, the layout
// of an array split in bands or distributed by blocks, which the ranks
// then initialise in place. The guess is soft (see protocol.HomeRange).
func (r *Rank) placeSpread(addr, size uint64) {
	first, end, ok := r.wholePages(addr, size)
	if !ok {
		return
	}
	n, nprocs := uint64(end-first), uint64(r.cfg.NProcs)
	for i := range nprocs {
		lo, hi := first+uint32(n*i/nprocs), first+uint32(n*(i+1)/nprocs)
		if hi > lo {
			r.placements = append(r.placements, protocol.HomeRange{First: lo, Count: hi - lo, Rank: int(i), Soft: true})
		}
	}
}

// placeAt guesses rank home as the home of the pages wholly inside
// [addr, addr+size): a chunk of small objects that rank cuts and fills.
func (r *Rank) placeAt(addr, size uint64, home int) {
	if first, end, ok := r.wholePages(addr, size); ok {
		r.placements = append(r.placements, protocol.HomeRange{First: first, Count: end - first, Rank: home, Soft: true})
	}
}

// wholePages returns the pages [first, end) wholly inside [addr,
// addr+size), and whether there are any (and homes to place).
func (r *Rank) wholePages(addr, size uint64) (first, end uint32, ok bool) {
	if !r.cfg.Homes || addr < r.cfg.Base {
		return 0, 0, false
	}
	ps := uint64(r.cfg.PageSize)
	lo, hi := (addr-r.cfg.Base+ps-1)/ps, (addr-r.cfg.Base+size)/ps
	if hi <= lo || hi > uint64(r.cfg.Pages) {
		return 0, 0, false
	}
	return uint32(lo), uint32(hi), true
}

func (r *Rank) takeObject(c int) (uint64, bool) {
	free := r.objects.free[c]
	if len(free) == 0 {
		return 0, false
	}
	off := free[len(free)-1]
	r.objects.free[c] = free[:len(free)-1]
	if r.objects.mine == nil {
		r.objects.mine = make(map[uint64]int)
	}
	r.objects.mine[off] = c
	return off, true
}

// finish completes the outstanding allocation or counter call with its
// value (an address, or a counter's previous value) or its error.
func (r *Rank) finish(value uint64, err error) {
	r.out.Value, r.out.Err = value, err
	r.done()
}

// serveAlloc runs rank from's allocation request on the job's allocator
// (at rank 0).
func (r *Rank) serveAlloc(from int, m *protocol.AllocRequest) *protocol.AllocReply {
	ja := r.job
	rep := &protocol.AllocReply{ID: m.ID}
	fail := func(format string, args ...any) *protocol.AllocReply {
		rep.Err = fmt.Sprintf(format, args...)
		return rep
	}
	switch m.Op {
	case protocol.AllocCollective:
		if m.Size == 0 {
			return fail("allocation of 0 bytes")
		}
		k := ja.calls[from]
		if k < len(ja.collective) {
			if prev := ja.collective[k]; prev.size != m.Size {
				return fail("collective allocation #%d: rank %d asks %d bytes where another rank asked %d", k+1, from, m.Size, prev.size)
			}
		} else {
			ps := uint64(r.cfg.PageSize)
			off, err := ja.space.alloc((m.Size+ps-1)&^(ps-1), ps)
			if err != nil {
				return fail("%v", err)
			}
			ja.collective = append(ja.collective, allocation{size: m.Size, off: off})
		}
		ja.calls[from]++
		rep.Addr = r.cfg.Base + ja.collective[k].off
	case protocol.AllocMalloc:
		off, err := ja.space.alloc(m.Size, minClass)
		if err != nil {
			return fail("%v", err)
		}
		rep.Addr = r.cfg.Base + off
	case protocol.AllocObjects:
		c := class(m.Size)
		if m.Size != classSize(c) || m.Size > min(maxClass, r.cfg.ChunkSize/4) {
			return fail("small objects of %d bytes: not a size class", m.Size)
		}
		n := min(len(ja.freed[c]), int(r.cfg.ChunkSize/minClass))
		rep.Objects = slices.Clone(ja.freed[c][len(ja.freed[c])-n:])
		for i := range rep.Objects {
			rep.Objects[i] += r.cfg.Base
		}
		ja.freed[c] = ja.freed[c][:len(ja.freed[c])-n]
		if n == 0 {
			off, err := ja.space.alloc(r.cfg.ChunkSize, r.cfg.ChunkSize)
			if err != nil {
				return fail("%v", err)
			}
			i, _ := slices.BinarySearchFunc(ja.chunks, off, func(ch chunk, off uint64) int { return cmpUint(ch.off, off) })
			ja.chunks = slices.Insert(ja.chunks, i, chunk{off: off, class: c})
			rep.Addr = r.cfg.Base + off
		}
	case protocol.AllocFree:
		if m.Addr < r.cfg.Base {
			return fail("address %#x is below the shared region at %#x", m.Addr, r.cfg.Base)
		}
		off := m.Addr - r.cfg.Base
		if i, found := slices.BinarySearchFunc(ja.chunks, off, func(ch chunk, off uint64) int { return cmpUint(ch.off, off) }); found || i > 0 {
			if !found {
				i--
			}
			ch := ja.chunks[i]
			if off < ch.off+r.cfg.ChunkSize {
				if (off-ch.off)%classSize(ch.class) != 0 {
					return fail("address %#x is not the start of an allocation", m.Addr)
				}
				ja.freed[ch.class] = append(ja.freed[ch.class], off)
				return rep
			}
		}
		if err := ja.space.release(off); err != nil {
			return fail("%v", err)
		}
	default:
		return fail("unknown allocation op %d", m.Op)
	}
	return rep
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// addToCounter adds delta to counter c, answers the waits it satisfies and
// returns the value the counter had.
func (r *Rank) addToCounter(c uint32, delta int64) int64 {
	v := r.counters[c]
	r.counters[c] = v + delta
	if waits := r.counterWait[c]; len(waits) > 0 {
		kept := waits[:0]
		for _, w := range waits {
			if v+delta >= w.until {
				r.answerWait(w, v+delta)
			} else {
				kept = append(kept, w)
			}
		}
		if len(kept) == 0 {
			delete(r.counterWait, c)
		} else {
			r.counterWait[c] = kept
		}
	}
	return v
}

// stepAlloc handles the allocation and counter messages.
func (r *Rank) stepAlloc(from int, m protocol.Message) error {
	switch m := m.(type) {
	case *protocol.AllocRequest:
		if r.cfg.Rank != 0 {
			return fmt.Errorf("allocation request from rank %d, but rank 0 allocates", from)
		}
		r.send(from, r.serveAlloc(from, m))
	case *protocol.AllocReply:
		if r.op.kind != opAlloc || r.op.alloc.id != m.ID {
			return fmt.Errorf("allocation reply %d from rank %d answers no request", m.ID, from)
		}
		if from != 0 {
			return fmt.Errorf("allocation reply from rank %d, but rank 0 allocates", from)
		}
		if r.op.alloc.small && m.Err == "" && m.Addr == 0 && len(m.Objects) == 0 {
			return fmt.Errorf("allocation reply %d from rank %d holds no object", m.ID, from)
		}
		r.allocated(m)
	case *protocol.CounterRequest:
		if mgr := protocol.CounterManager(m.Counter, r.cfg.NProcs); mgr != r.cfg.Rank {
			return fmt.Errorf("counter %d request from rank %d, but rank %d keeps it", m.Counter, from, mgr)
		}
		if m.Wait {
			r.awaitCounter(counterWaiter{rank: from, id: m.ID, until: m.Until}, m.Counter)
			return nil
		}
		r.send(from, &protocol.CounterReply{ID: m.ID, Value: r.addToCounter(m.Counter, m.Delta)})
	case *protocol.CounterReply:
		if r.op.kind != opAlloc || r.op.alloc.id != m.ID {
			return fmt.Errorf("counter reply %d from rank %d answers no request", m.ID, from)
		}
		r.finish(uint64(m.Value), nil)
	}
	return nil
}
