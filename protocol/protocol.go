// Package protocol defines the messages that the ranks of an SVM job exchange —
// lock, barrier and diff traffic of the lazy release consistency protocol — and
// their wire encoding.
//
// It holds plain values and a codec only: no sockets, clocks or goroutines.
// The numeric values of MsgType and the field order of every message are part
// of the wire format: only append.
package protocol

//lint:file-ignore U1000 the _msgpack fields carry msgpack's struct tags (arrays, not maps)

import (
	"fmt"
	"slices"
)

// WireVersion names the encoding and the meaning of what nodes exchange: the
// messages here, the diffs inside them (package diff) and the daemons'
// frames. It changes with any of them; nodes of different wire versions
// refuse each other at the handshake (package peer) instead of misreading
// each other. Version 2: diffs' runs with one-byte headers.
const WireVersion = 2

// MsgType identifies a message kind on the wire. Values are part of the wire
// format: only append, never renumber.
type MsgType uint8

// The message kinds.
const (
	MsgLockRequest    MsgType = 1  // acquirer → lock manager
	MsgLockForward    MsgType = 2  // lock manager → last requester
	MsgLockGrant      MsgType = 3  // releaser → acquirer, with the intervals it lacks
	MsgBarrierArrive  MsgType = 4  // member → barrier manager, with new intervals
	MsgBarrierDepart  MsgType = 5  // barrier manager → member, with the intervals it lacks
	MsgDiffRequest    MsgType = 6  // faulting rank → writer: diffs for one or more pages
	MsgDiffResponse   MsgType = 7  // writer → faulting rank
	MsgAllocRequest   MsgType = 8  // rank → rank 0, which keeps the job's allocator
	MsgAllocReply     MsgType = 9  // rank 0 → rank
	MsgCounterRequest MsgType = 10 // rank → the counter's manager: fetch and add
	MsgCounterReply   MsgType = 11 // manager → rank: the counter's previous value
	MsgPageRequest    MsgType = 12 // rank → a page's home: whole pages, at versions named
	MsgPageResponse   MsgType = 13 // home → rank
	MsgHomeDiffs      MsgType = 14 // writer → home, at a release: the diffs of the home's pages
	MsgPagePush       MsgType = 15 // home → reader, at a barrier arrival: the pages it wrote that the reader fetched
	MsgPushStop       MsgType = 16 // reader → home: push these pages no more
)

var msgTypeNames = map[MsgType]string{
	MsgLockRequest:    "LockRequest",
	MsgLockForward:    "LockForward",
	MsgLockGrant:      "LockGrant",
	MsgBarrierArrive:  "BarrierArrive",
	MsgBarrierDepart:  "BarrierDepart",
	MsgDiffRequest:    "DiffRequest",
	MsgDiffResponse:   "DiffResponse",
	MsgAllocRequest:   "AllocRequest",
	MsgAllocReply:     "AllocReply",
	MsgCounterRequest: "CounterRequest",
	MsgCounterReply:   "CounterReply",
	MsgPageRequest:    "PageRequest",
	MsgPageResponse:   "PageResponse",
	MsgHomeDiffs:      "HomeDiffs",
	MsgPagePush:       "PagePush",
	MsgPushStop:       "PushStop",
}

// MsgTypes lists every message kind in wire order.
var MsgTypes = []MsgType{
	MsgLockRequest, MsgLockForward, MsgLockGrant,
	MsgBarrierArrive, MsgBarrierDepart,
	MsgDiffRequest, MsgDiffResponse,
	MsgAllocRequest, MsgAllocReply,
	MsgCounterRequest, MsgCounterReply,
	MsgPageRequest, MsgPageResponse, MsgHomeDiffs,
	MsgPagePush, MsgPushStop,
}

func (t MsgType) String() string {
	if name, ok := msgTypeNames[t]; ok {
		return name
	}
	return fmt.Sprintf("MsgType(%d)", uint8(t))
}

// Message is one protocol message.
type Message interface {
	Type() MsgType
}

// Envelope is a message with its sender and receiver ranks, as the engines and
// the simulator route it.
type Envelope struct {
	From, To int
	Msg      Message
}

// VectorTime holds, for each rank, how many of that rank's intervals are
// known: entry r is the index of the newest known interval of rank r.
type VectorTime []uint32

// Clone returns a copy of v.
func (v VectorTime) Clone() VectorTime { return slices.Clone(v) }

// Covers reports whether the interval id is known at vector time v.
func (v VectorTime) Covers(id IntervalID) bool {
	return id.Rank < len(v) && id.Index <= v[id.Rank]
}

// Dominates reports whether v ≥ o entry by entry.
func (v VectorTime) Dominates(o VectorTime) bool {
	for i := range v {
		if v[i] < o[i] {
			return false
		}
	}
	return true
}

// Merge raises v to the entrywise maximum of v and o.
func (v VectorTime) Merge(o VectorTime) {
	for i := range v {
		v[i] = max(v[i], o[i])
	}
}

// Sum is the total number of intervals v covers; it grows along every
// happens-before chain, so sorting by it gives a linear extension of
// happens-before.
func (v VectorTime) Sum() uint64 {
	var s uint64
	for _, x := range v {
		s += uint64(x)
	}
	return s
}

// IntervalID names one interval: the Index-th interval (from 1) of rank Rank.
type IntervalID struct {
	_msgpack struct{} `msgpack:",as_array"`
	Rank     int
	Index    uint32
}

func (id IntervalID) String() string { return fmt.Sprintf("%d.%d", id.Rank, id.Index) }

// PageRange is Count consecutive pages starting at First.
type PageRange struct {
	_msgpack struct{} `msgpack:",as_array"`
	First    uint32
	Count    uint32
}

func (r PageRange) String() string {
	if r.Count == 1 {
		return fmt.Sprint(r.First)
	}
	return fmt.Sprintf("%d-%d", r.First, r.End()-1)
}

// End is one past the last page of the range.
func (r PageRange) End() uint64 { return uint64(r.First) + uint64(r.Count) }

// Interval is a closed interval of one rank with its write notices: the pages
// the rank modified during it.
type Interval struct {
	_msgpack struct{} `msgpack:",as_array"`
	ID       IntervalID
	// VT is the creator's vector time when the interval closed; VT[ID.Rank] == ID.Index.
	VT VectorTime
	// Pages are the write notices as sorted, disjoint, non-adjacent ranges.
	Pages []PageRange
}

// LockRequest asks for a lock. The acquirer sends it to the lock's manager
// (MsgLockRequest); the manager passes it on to the last requester
// (MsgLockForward). VT is the acquirer's vector time, so the granter can send
// exactly the intervals the acquirer lacks.
type LockRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	// Forwarded is carried by the message type, not the body.
	Forwarded bool `msgpack:"-"`
	Lock      uint32
	Requester int
	VT        VectorTime
}

// Type reports MsgLockForward for a forwarded request, MsgLockRequest otherwise.
func (m *LockRequest) Type() MsgType {
	if m.Forwarded {
		return MsgLockForward
	}
	return MsgLockRequest
}

// LockGrant passes a lock to the acquirer with the intervals it lacks.
type LockGrant struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Lock      uint32
	Intervals []Interval
}

// Type reports MsgLockGrant.
func (m *LockGrant) Type() MsgType { return MsgLockGrant }

// BarrierArrive tells a barrier manager that a member reached the barrier.
type BarrierArrive struct {
	_msgpack struct{} `msgpack:",as_array"`
	Barrier  uint32
	// Episode counts this member's completed crossings of this barrier.
	Episode uint32
	// Members is the sorted processor set taking part; empty means every rank.
	Members []int
	VT      VectorTime
	// Intervals are those the member knows and the manager may not.
	Intervals []Interval
	// Metadata is the member's protocol metadata in bytes (for garbage collection).
	Metadata uint64
	// Shares says the member hands Value to every member (one member at most).
	Shares bool
	Value  uint64
	// Homes are the home placements the member asked for since the last
	// barrier of every rank; they take effect when one completes.
	Homes []HomeRange
}

// Type reports MsgBarrierArrive.
func (m *BarrierArrive) Type() MsgType { return MsgBarrierArrive }

// BarrierDepart releases a member from a barrier with the intervals it lacks.
type BarrierDepart struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Barrier   uint32
	Episode   uint32
	Intervals []Interval
	// GC asks every rank to validate its pages and drop the protocol history
	// that is now known everywhere.
	GC bool
	// Shared says Value is the value a member shared at this barrier.
	Shared bool
	Value  uint64
	// Homes are the placements every member asked for, merged, in order:
	// every rank applies them as it leaves a barrier of every rank.
	Homes []HomeRange
}

// HomeRange places the home of Count pages from First at rank Rank. A soft
// placement is a first guess (where an allocation's pages are likely used):
// a page one rank alone writes still moves to that rank later, and any
// other placement of the page overrides it.
type HomeRange struct {
	_msgpack struct{} `msgpack:",as_array"`
	First    uint32
	Count    uint32
	Rank     int
	Soft     bool
}

// Type reports MsgBarrierDepart.
func (m *BarrierDepart) Type() MsgType { return MsgBarrierDepart }

// DiffRequest asks a writer for the diffs of the named intervals of each page.
type DiffRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	ID       uint32
	Pages    []PageIntervals
}

// PageIntervals names the intervals whose diffs of Page are wanted, and
// with Base asks for the responder's copy of the page too (from its keeper,
// by a rank that dropped its own copy at a garbage collection).
type PageIntervals struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Page      uint32
	Intervals []IntervalID
	Base      bool
}

// Type reports MsgDiffRequest.
func (m *DiffRequest) Type() MsgType { return MsgDiffRequest }

// DiffResponse answers a DiffRequest with the same ID.
type DiffResponse struct {
	_msgpack struct{} `msgpack:",as_array"`
	ID       uint32
	Pages    []PageDiffs
}

// PageDiffs carries diffs of one page, and the page itself if asked.
type PageDiffs struct {
	_msgpack struct{} `msgpack:",as_array"`
	Page     uint32
	Diffs    []IntervalDiff
	Base     []byte
}

// IntervalDiff is the diff one interval made to a page, in the encoding of
// package diff.
type IntervalDiff struct {
	_msgpack struct{} `msgpack:",as_array"`
	Interval IntervalID
	Diff     []byte
}

// Type reports MsgDiffResponse.
func (m *DiffResponse) Type() MsgType { return MsgDiffResponse }

// AllocOp is what an AllocRequest asks.
type AllocOp uint8

// The allocation requests.
const (
	AllocCollective AllocOp = 1 // Alloc: every rank, same order, same sizes
	AllocMalloc     AllocOp = 2 // Malloc: this rank alone
	AllocFree       AllocOp = 3 // Free
	// AllocObjects asks for small objects of Size bytes: a fresh chunk to
	// cut them from (AllocReply.Addr), objects freed since (Objects), or both.
	AllocObjects AllocOp = 4
)

// AllocRequest asks rank 0, which keeps the job's allocator, to allocate or
// free shared memory.
type AllocRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	ID       uint32
	Op       AllocOp
	Size     uint64
	Addr     uint64
}

// Type reports MsgAllocRequest.
func (m *AllocRequest) Type() MsgType { return MsgAllocRequest }

// AllocReply answers the AllocRequest with the same ID: the address, or
// what was wrong.
type AllocReply struct {
	_msgpack struct{} `msgpack:",as_array"`
	ID       uint32
	Addr     uint64
	Err      string
	// Objects are freed small objects handed out again (AllocObjects).
	Objects []uint64
}

// Type reports MsgAllocReply.
func (m *AllocReply) Type() MsgType { return MsgAllocReply }

// CounterRequest asks the engine of a counter's manager (rank Counter mod
// the job's size) to add Delta to the counter and return the value it had:
// the shared counter of self-scheduled loops, in one round trip. Counters
// start at 0 and order no memory. With Wait, the manager adds nothing and
// answers, with the counter's value, once it is at least Until: a rank
// sleeps there until others have added enough (libsvm's condition
// variables park a waiter this way).
type CounterRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	ID       uint32
	Counter  uint32
	Delta    int64
	Wait     bool
	Until    int64
}

// Type reports MsgCounterRequest.
func (m *CounterRequest) Type() MsgType { return MsgCounterRequest }

// CounterReply answers the CounterRequest with the same ID.
type CounterReply struct {
	_msgpack struct{} `msgpack:",as_array"`
	ID       uint32
	Value    int64
}

// Type reports MsgCounterReply.
func (m *CounterReply) Type() MsgType { return MsgCounterReply }

// CounterManager returns the rank whose engine keeps counter c in a job of
// nprocs ranks.
func CounterManager(c uint32, nprocs int) int { return int(c % uint32(nprocs)) }

// PageRequest asks a page's home for whole pages. Need names, for each page,
// the newest interval of each writer whose writes the copy must hold (the
// write notices the requester has not applied); the home answers once its
// copy holds them all.
type PageRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	ID       uint32
	Pages    []PageNeed
	// Epoch counts the barriers of every rank the requester has left: homes
	// move only there, so a rank that has left fewer holds the request
	// until it has left as many.
	Epoch uint32
}

// PageNeed is one page of a PageRequest.
type PageNeed struct {
	_msgpack struct{} `msgpack:",as_array"`
	Page     uint32
	Need     []IntervalID
}

// Type reports MsgPageRequest.
func (m *PageRequest) Type() MsgType { return MsgPageRequest }

// PageResponse answers the PageRequest with the same ID, page for page.
type PageResponse struct {
	_msgpack struct{} `msgpack:",as_array"`
	ID       uint32
	Pages    []PageCopy
}

// PageCopy is the home's copy of a page.
type PageCopy struct {
	_msgpack struct{} `msgpack:",as_array"`
	Page     uint32
	Data     []byte
}

// Type reports MsgPageResponse.
func (m *PageResponse) Type() MsgType { return MsgPageResponse }

// HomeDiffs carries to a home the diffs that the writer's interval Interval
// made to pages the receiver is home of. A writer sends them as it closes the
// interval, one message per home, before any message that could make the
// interval known: every transport delivers one sender's messages to one
// receiver in order.
type HomeDiffs struct {
	_msgpack struct{} `msgpack:",as_array"`
	Interval IntervalID
	Pages    []PageDiff
	// Epoch: as in PageRequest.
	Epoch uint32
}

// PageDiff is the diff of one page, in the encoding of package diff.
type PageDiff struct {
	_msgpack struct{} `msgpack:",as_array"`
	Page     uint32
	Diff     []byte
}

// Type reports MsgHomeDiffs.
func (m *HomeDiffs) Type() MsgType { return MsgHomeDiffs }

// PagePush carries, as a home arrives at a barrier of every rank, its copies
// of the pages it wrote since the last one to a rank that fetched them: the
// rank takes them in place of a request as it leaves the barrier, if they
// hold every write notice it has of them. Epoch is the number of barriers
// of every rank the home had left: the push is for leaving the next one.
type PagePush struct {
	_msgpack struct{} `msgpack:",as_array"`
	Epoch    uint32
	Pages    []PushedPage
}

// PushedPage is a home's copy of a page and what it holds: each rank's
// intervals up to Holds[rank].
type PushedPage struct {
	_msgpack struct{} `msgpack:",as_array"`
	Page     uint32
	Holds    VectorTime
	Data     []byte
}

// Type reports MsgPagePush.
func (m *PagePush) Type() MsgType { return MsgPagePush }

// PushStop tells a home to push the pages no more: the rank no longer keeps
// them mapped. It fetches them again, and so asks for pushes again, when it
// uses them.
type PushStop struct {
	_msgpack struct{} `msgpack:",as_array"`
	Pages    []uint32
}

// Type reports MsgPushStop.
func (m *PushStop) Type() MsgType { return MsgPushStop }
