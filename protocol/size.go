package protocol

import "fmt"

// EncodedSize returns len(Encode(m)) without encoding m: what an engine
// counts for a message it hands over in memory to a rank it also hosts.
// Encoding only to count took an eighth of the engine's time in QSORT,
// whose messages carry many pages and diffs. Every message type must have
// a case here; TestEncodedSize checks each against Encode.
func EncodedSize(m Message) int {
	return 1 + bodySize(m)
}

// Each case adds 1 for the array header of the struct (fewer than 16
// fields) to the sizes of its fields, in order.
func bodySize(m Message) int {
	switch m := m.(type) {
	case *LockRequest:
		return 1 + uintSize(uint64(m.Lock)) + intSize(int64(m.Requester)) + vtSize(m.VT)
	case *LockGrant:
		return 1 + uintSize(uint64(m.Lock)) + arraySize(m.Intervals, intervalSize)
	case *BarrierArrive:
		return 1 + uintSize(uint64(m.Barrier)) + uintSize(uint64(m.Episode)) + arraySize(m.Members, intSizeOf) + vtSize(m.VT) +
			arraySize(m.Intervals, intervalSize) + uintSize(m.Metadata) + 1 + uintSize(m.Value) + arraySize(m.Homes, homeSize)
	case *BarrierDepart:
		return 1 + uintSize(uint64(m.Barrier)) + uintSize(uint64(m.Episode)) + arraySize(m.Intervals, intervalSize) + 1 + 1 +
			uintSize(m.Value) + arraySize(m.Homes, homeSize)
	case *DiffRequest:
		return 1 + uintSize(uint64(m.ID)) + arraySize(m.Pages, func(p PageIntervals) int {
			return 1 + uintSize(uint64(p.Page)) + arraySize(p.Intervals, idSize) + 1
		})
	case *DiffResponse:
		return 1 + uintSize(uint64(m.ID)) + arraySize(m.Pages, func(p PageDiffs) int {
			return 1 + uintSize(uint64(p.Page)) + bytesSize(p.Base) + arraySize(p.Diffs, func(d IntervalDiff) int {
				return 1 + idSize(d.Interval) + bytesSize(d.Diff)
			})
		})
	case *AllocRequest:
		return 1 + uintSize(uint64(m.ID)) + uintSize(uint64(m.Op)) + uintSize(m.Size) + uintSize(m.Addr)
	case *AllocReply:
		return 1 + uintSize(uint64(m.ID)) + uintSize(m.Addr) + stringSize(m.Err) + arraySize(m.Objects, uintSize)
	case *CounterRequest:
		return 1 + uintSize(uint64(m.ID)) + uintSize(uint64(m.Counter)) + intSize(m.Delta) + 1 + intSize(m.Until)
	case *CounterReply:
		return 1 + uintSize(uint64(m.ID)) + intSize(m.Value)
	case *PageRequest:
		return 1 + uintSize(uint64(m.ID)) + uintSize(uint64(m.Epoch)) + arraySize(m.Pages, func(p PageNeed) int {
			return 1 + uintSize(uint64(p.Page)) + arraySize(p.Need, idSize)
		})
	case *PageResponse:
		return 1 + uintSize(uint64(m.ID)) + arraySize(m.Pages, func(p PageCopy) int {
			return 1 + uintSize(uint64(p.Page)) + bytesSize(p.Data)
		})
	case *HomeDiffs:
		return 1 + idSize(m.Interval) + uintSize(uint64(m.Epoch)) + arraySize(m.Pages, func(p PageDiff) int {
			return 1 + uintSize(uint64(p.Page)) + bytesSize(p.Diff)
		})
	case *PagePush:
		return 1 + uintSize(uint64(m.Epoch)) + arraySize(m.Pages, func(p PushedPage) int {
			return 1 + uintSize(uint64(p.Page)) + vtSize(p.Holds) + bytesSize(p.Data)
		})
	case *PushStop:
		return 1 + arraySize(m.Pages, func(p uint32) int { return uintSize(uint64(p)) })
	}
	panic(fmt.Sprintf("protocol: no encoded size for %T", m))
}

// arraySize is the length of a slice encoded as an array (nil: the nil
// code), its elements' lengths given by elem.
func arraySize[T any](s []T, elem func(T) int) int {
	if s == nil {
		return 1
	}
	n := arrayLenSize(len(s))
	for _, e := range s {
		n += elem(e)
	}
	return n
}

// uintSize is the length of an unsigned integer in its shortest form.
func uintSize(v uint64) int {
	switch {
	case v <= 0x7f:
		return 1
	case v <= 0xff:
		return 2
	case v <= 0xffff:
		return 3
	case v <= 0xffffffff:
		return 5
	}
	return 9
}

// intSize is the length of a signed integer in its shortest form.
func intSize(v int64) int {
	switch {
	case v >= 0:
		return uintSize(uint64(v))
	case v >= -32:
		return 1
	case v >= -1<<7:
		return 2
	case v >= -1<<15:
		return 3
	case v >= -1<<31:
		return 5
	}
	return 9
}

func intSizeOf(v int) int { return intSize(int64(v)) }

// arrayLenSize is the length of an array header.
func arrayLenSize(n int) int {
	switch {
	case n < 16:
		return 1
	case n <= 0xffff:
		return 3
	}
	return 5
}

// bytesSize is the length of a bin (nil: the nil code).
func bytesSize(b []byte) int {
	switch {
	case b == nil:
		return 1
	case len(b) < 1<<8:
		return 2 + len(b)
	case len(b) < 1<<16:
		return 3 + len(b)
	}
	return 5 + len(b)
}

func stringSize(s string) int {
	switch {
	case len(s) < 32:
		return 1 + len(s)
	case len(s) < 1<<8:
		return 2 + len(s)
	case len(s) < 1<<16:
		return 3 + len(s)
	}
	return 5 + len(s)
}

func vtSize(vt VectorTime) int {
	return arraySize(vt, func(v uint32) int { return uintSize(uint64(v)) })
}

func idSize(id IntervalID) int {
	return 1 + intSize(int64(id.Rank)) + uintSize(uint64(id.Index))
}

func intervalSize(iv Interval) int {
	return 1 + idSize(iv.ID) + vtSize(iv.VT) + arraySize(iv.Pages, func(r PageRange) int {
		return 1 + uintSize(uint64(r.First)) + uintSize(uint64(r.Count))
	})
}

func homeSize(h HomeRange) int {
	return 1 + uintSize(uint64(h.First)) + uintSize(uint64(h.Count)) + intSize(int64(h.Rank)) + 1
}
