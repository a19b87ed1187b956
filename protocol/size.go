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

func bodySize(m Message) int {
	switch m := m.(type) {
	case *LockRequest:
		return 1 + uintSize(uint64(m.Lock)) + intSize(int64(m.Requester)) + vtSize(m.VT)
	case *LockGrant:
		return 1 + uintSize(uint64(m.Lock)) + intervalsSize(m.Intervals)
	case *BarrierArrive:
		n := 1 + uintSize(uint64(m.Barrier)) + uintSize(uint64(m.Episode)) + intsSize(m.Members) + vtSize(m.VT) +
			intervalsSize(m.Intervals) + uintSize(m.Metadata) + 1 + uintSize(m.Value)
		return n + homesSize(m.Homes)
	case *BarrierDepart:
		return 1 + uintSize(uint64(m.Barrier)) + uintSize(uint64(m.Episode)) + intervalsSize(m.Intervals) + 1 + 1 +
			uintSize(m.Value) + homesSize(m.Homes)
	case *DiffRequest:
		n := 1 + uintSize(uint64(m.ID))
		if m.Pages == nil {
			return n + 1
		}
		n += arrayLenSize(len(m.Pages))
		for _, p := range m.Pages {
			n += 1 + uintSize(uint64(p.Page)) + idsSize(p.Intervals) + 1
		}
		return n
	case *DiffResponse:
		n := 1 + uintSize(uint64(m.ID))
		if m.Pages == nil {
			return n + 1
		}
		n += arrayLenSize(len(m.Pages))
		for _, p := range m.Pages {
			n += 1 + uintSize(uint64(p.Page)) + bytesSize(p.Base)
			if p.Diffs == nil {
				n++
				continue
			}
			n += arrayLenSize(len(p.Diffs))
			for _, d := range p.Diffs {
				n += 1 + idSize(d.Interval) + bytesSize(d.Diff)
			}
		}
		return n
	case *AllocRequest:
		return 1 + uintSize(uint64(m.ID)) + uintSize(uint64(m.Op)) + uintSize(m.Size) + uintSize(m.Addr)
	case *AllocReply:
		n := 1 + uintSize(uint64(m.ID)) + uintSize(m.Addr) + stringSize(m.Err)
		if m.Objects == nil {
			return n + 1
		}
		n += arrayLenSize(len(m.Objects))
		for _, o := range m.Objects {
			n += uintSize(o)
		}
		return n
	case *CounterRequest:
		return 1 + uintSize(uint64(m.ID)) + uintSize(uint64(m.Counter)) + intSize(m.Delta) + 1 + intSize(m.Until)
	case *CounterReply:
		return 1 + uintSize(uint64(m.ID)) + intSize(m.Value)
	case *PageRequest:
		n := 1 + uintSize(uint64(m.ID)) + uintSize(uint64(m.Epoch))
		if m.Pages == nil {
			return n + 1
		}
		n += arrayLenSize(len(m.Pages))
		for _, p := range m.Pages {
			n += 1 + uintSize(uint64(p.Page)) + idsSize(p.Need)
		}
		return n
	case *PageResponse:
		n := 1 + uintSize(uint64(m.ID))
		if m.Pages == nil {
			return n + 1
		}
		n += arrayLenSize(len(m.Pages))
		for _, p := range m.Pages {
			n += 1 + uintSize(uint64(p.Page)) + bytesSize(p.Data)
		}
		return n
	case *HomeDiffs:
		n := 1 + idSize(m.Interval) + uintSize(uint64(m.Epoch))
		if m.Pages == nil {
			return n + 1
		}
		n += arrayLenSize(len(m.Pages))
		for _, p := range m.Pages {
			n += 1 + uintSize(uint64(p.Page)) + bytesSize(p.Diff)
		}
		return n
	case *PagePush:
		n := 1 + uintSize(uint64(m.Epoch))
		if m.Pages == nil {
			return n + 1
		}
		n += arrayLenSize(len(m.Pages))
		for _, p := range m.Pages {
			n += 1 + uintSize(uint64(p.Page)) + vtSize(p.Holds) + bytesSize(p.Data)
		}
		return n
	case *PushStop:
		if m.Pages == nil {
			return 2
		}
		n := 1 + arrayLenSize(len(m.Pages))
		for _, p := range m.Pages {
			n += uintSize(uint64(p))
		}
		return n
	}
	panic(fmt.Sprintf("protocol: no encoded size for %T", m))
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
	if vt == nil {
		return 1
	}
	n := arrayLenSize(len(vt))
	for _, v := range vt {
		n += uintSize(uint64(v))
	}
	return n
}

func intsSize(vs []int) int {
	if vs == nil {
		return 1
	}
	n := arrayLenSize(len(vs))
	for _, v := range vs {
		n += intSize(int64(v))
	}
	return n
}

func idSize(id IntervalID) int {
	return 1 + intSize(int64(id.Rank)) + uintSize(uint64(id.Index))
}

func idsSize(ids []IntervalID) int {
	if ids == nil {
		return 1
	}
	n := arrayLenSize(len(ids))
	for _, id := range ids {
		n += idSize(id)
	}
	return n
}

func intervalsSize(ivs []Interval) int {
	if ivs == nil {
		return 1
	}
	n := arrayLenSize(len(ivs))
	for _, iv := range ivs {
		n += 1 + idSize(iv.ID) + vtSize(iv.VT)
		if iv.Pages == nil {
			n++
			continue
		}
		n += arrayLenSize(len(iv.Pages))
		for _, r := range iv.Pages {
			n += 1 + uintSize(uint64(r.First)) + uintSize(uint64(r.Count))
		}
	}
	return n
}

func homesSize(hs []HomeRange) int {
	if hs == nil {
		return 1
	}
	n := arrayLenSize(len(hs))
	for _, h := range hs {
		n += 1 + uintSize(uint64(h.First)) + uintSize(uint64(h.Count)) + intSize(int64(h.Rank)) + 1
	}
	return n
}
