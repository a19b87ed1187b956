package sim

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// OpKind is what a simulated program step does.
type OpKind uint8

// The op kinds.
const (
	// OpRead loads Len bytes at Addr (checked against the reference).
	OpRead OpKind = iota + 1
	// OpWrite stores Data at Addr.
	OpWrite
	// OpAdd increments the little-endian uint64 at Addr.
	OpAdd
	// OpProduce: if the uint64 flag at Addr is 0, store Data at Addr2 and set
	// the flag to 1.
	OpProduce
	// OpConsume: if the flag at Addr is 1, load Len bytes at Addr2 and clear
	// the flag.
	OpConsume
	// OpFunc runs Fn over the spans Reads and Writes.
	OpFunc
	OpLock
	OpUnlock
	// OpBarrier waits at barrier ID over Members (nil: every rank).
	OpBarrier
	// OpValidate validates Len pages from page Addr (writable if Write).
	OpValidate
	// OpSetHome places the home of Len pages from page Addr at rank ID.
	OpSetHome
	// OpAlloc allocates Len bytes collectively; the address must be Addr.
	OpAlloc
	// OpMalloc allocates Len bytes for the rank alone; OpFree frees a live
	// private allocation of any rank, the Addr-th oldest (modulo how many).
	OpMalloc
	OpFree
	// OpFetchAdd adds 1 to counter ID.
	OpFetchAdd
	// OpWaitCounter waits until counter ID is at least Len.
	OpWaitCounter
)

// Op is one step of a simulated program.
type Op struct {
	Kind    OpKind
	ID      uint32
	Members []int
	Addr    int
	Addr2   int
	Len     int
	Data    []byte
	Write   bool
	Reads   []Span
	Writes  []Span
	Fn      func(*Mem)
	Name    string // for traces of OpFunc
}

// Span is Len bytes at Addr.
type Span struct{ Addr, Len int }

func (op *Op) String() string {
	switch op.Kind {
	case OpRead:
		return fmt.Sprintf("read [%#x,+%d)", op.Addr, op.Len)
	case OpWrite:
		return fmt.Sprintf("write [%#x,+%d) %s", op.Addr, len(op.Data), short(op.Data))
	case OpAdd:
		return fmt.Sprintf("add [%#x]", op.Addr)
	case OpProduce:
		return fmt.Sprintf("produce flag=%#x data=[%#x,+%d)", op.Addr, op.Addr2, len(op.Data))
	case OpConsume:
		return fmt.Sprintf("consume flag=%#x data=[%#x,+%d)", op.Addr, op.Addr2, op.Len)
	case OpFunc:
		return op.Name
	case OpLock:
		return fmt.Sprintf("lock %d", op.ID)
	case OpUnlock:
		return fmt.Sprintf("unlock %d", op.ID)
	case OpBarrier:
		if op.Members == nil {
			return fmt.Sprintf("barrier %d", op.ID)
		}
		return fmt.Sprintf("barrier %d over %v", op.ID, op.Members)
	case OpValidate:
		return fmt.Sprintf("validate pages [%d,+%d) write=%v", op.Addr, op.Len, op.Write)
	case OpSetHome:
		return fmt.Sprintf("set home of pages [%d,+%d) at rank %d", op.Addr, op.Len, op.ID)
	case OpAlloc:
		return fmt.Sprintf("alloc %d bytes", op.Len)
	case OpMalloc:
		return fmt.Sprintf("malloc %d bytes", op.Len)
	case OpFree:
		return fmt.Sprintf("free private allocation #%d", op.Addr)
	case OpFetchAdd:
		return fmt.Sprintf("fetch-add counter %d", op.ID)
	case OpWaitCounter:
		return fmt.Sprintf("wait until counter %d reaches %d", op.ID, op.Len)
	}
	return fmt.Sprintf("OpKind(%d)", op.Kind)
}

type pageNeed struct {
	page int
	perm perm
}

// pages lists the pages an access op touches, in order, with the permission
// each needs.
func (op *Op) pages(pageSize int) []pageNeed {
	var reads, writes []Span
	switch op.Kind {
	case OpRead:
		reads = []Span{{op.Addr, op.Len}}
	case OpWrite:
		writes = []Span{{op.Addr, len(op.Data)}}
	case OpAdd:
		writes = []Span{{op.Addr, 8}}
	case OpProduce:
		writes = []Span{{op.Addr, 8}, {op.Addr2, len(op.Data)}}
	case OpConsume:
		writes = []Span{{op.Addr, 8}}
		reads = []Span{{op.Addr2, op.Len}}
	case OpFunc:
		reads, writes = op.Reads, op.Writes
	}
	need := map[int]perm{}
	mark := func(spans []Span, p perm) {
		for _, sp := range spans {
			if sp.Len <= 0 {
				continue
			}
			for pg := sp.Addr / pageSize; pg <= (sp.Addr+sp.Len-1)/pageSize; pg++ {
				need[pg] = max(need[pg], p)
			}
		}
	}
	mark(reads, permRead)
	mark(writes, permWrite)
	out := make([]pageNeed, 0, len(need))
	for pg, p := range need {
		out = append(out, pageNeed{pg, p})
	}
	slices.SortFunc(out, func(a, b pageNeed) int { return a.page - b.page })
	return out
}

// run performs an access op once its pages are mapped.
func (op *Op) run(m *Mem) {
	switch op.Kind {
	case OpRead:
		m.Load(op.Addr, op.Len)
	case OpWrite:
		m.Store(op.Addr, op.Data)
	case OpAdd:
		v := binary.LittleEndian.Uint64(m.Load(op.Addr, 8))
		m.Store(op.Addr, binary.LittleEndian.AppendUint64(nil, v+1))
	case OpProduce:
		if binary.LittleEndian.Uint64(m.Load(op.Addr, 8)) == 0 {
			m.Store(op.Addr2, op.Data)
			m.Store(op.Addr, binary.LittleEndian.AppendUint64(nil, 1))
		}
	case OpConsume:
		if binary.LittleEndian.Uint64(m.Load(op.Addr, 8)) == 1 {
			m.Load(op.Addr2, op.Len)
			m.Store(op.Addr, make([]byte, 8))
		}
	case OpFunc:
		op.Fn(m)
	}
}
