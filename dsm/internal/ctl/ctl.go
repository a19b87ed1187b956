// Package ctl is the control area an engine shares with each rank it hosts:
// a small memfd both map, so that each side learns what the other did
// without a call. Its first part, which the engine writes and the rank
// reads, holds which pages the rank must report written when writes are
// found without faults (asynchronous write protection): the pages it has
// mapped, but for those it writes untracked. The rank reads the kernel's
// record of written pages for those alone, so a report costs nothing for the
// pages a rank writes untracked, however many.
//
// Its second part, which both write, caches locks in the rank: a lock the
// protocol holds for the rank is taken and released by the application with
// one atomic operation while no other rank asks for it, and the pages it
// wrote meanwhile wait in a bitmap for the engine (see Lock's states).
//
// A page is tracked before the rank can write it tracked, and a rank's
// report follows the writes it reports (it reads the area, then the
// kernel's record, in the calling thread), so a tracked write is never
// missed; a page reported but not tracked costs only the time to look.
package ctl

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/protocol"
)

// Area is a mapped control area. Its tracked part: word 0 is one past the
// highest page ever tracked; then one bit per page, set while the page is
// tracked. Its shared part: word 0 is nonzero while the bitmap from word 2,
// one bit per page, holds written pages the engine has not taken; word 1
// counts the locks taken from the cache; then, from the next page, one
// 32-bit state per lock.
type Area struct {
	tracked, shared []byte
	words           []uint64 // the tracked part
	written         []uint64 // the shared part's flag, count and bitmap
	locks           []uint32
	runs            []Run // TakeWritten's scratch
}

// The states of a lock in the cache. The protocol holds a lock for the rank
// from the grant the engine answers a Lock call with (LockHeld) until the
// engine takes the lock away (LockAway): while the state is LockHeld or
// LockCached the application releases and takes it again with one atomic
// operation each, as if it had kept the lock all along, its writes
// meanwhile belonging to the interval the protocol closes when the lock
// leaves. When another rank asks for it, the engine takes a cached lock
// away, or marks a held one LockWanted, for the application's release to
// come to the engine.
const (
	LockAway   uint32 = iota // not held here: Lock calls the engine
	LockHeld                 // held by the application
	LockCached               // released by the application, still held here for the protocol
	LockWanted               // held by the application, and another rank waits: Unlock calls the engine
)

func roundUp(n int) int {
	ps := unix.Getpagesize()
	return (n + ps - 1) / ps * ps
}

// Size is the bytes of the tracked part of a control area for a region of
// pages pages.
func Size(pages int) int { return roundUp(8 * (1 + (pages+63)/64)) }

// sharedSize is the bytes of the shared part for pages pages and locks
// locks.
func sharedSize(pages, locks int) int { return bitmapSize(pages) + roundUp(4*locks) }

// bitmapSize is the bytes of the shared part's words before the locks.
func bitmapSize(pages int) int { return roundUp(8 * (2 + (pages+63)/64)) }

// Create makes the control area of a rank whose region has pages pages, in
// a job of locks locks, and returns it with its memfd, which the rank maps
// with Map.
func Create(pages, locks int) (*Area, int, error) {
	fd, err := unix.MemfdCreate("svm-control", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, -1, fmt.Errorf("control area: memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(Size(pages)+sharedSize(pages, locks))); err != nil {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("control area: %w", err)
	}
	a, err := mapArea(fd, pages, locks, unix.PROT_READ|unix.PROT_WRITE)
	if err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	return a, fd, nil
}

// Map maps the control area the engine sent for a region of pages pages
// and locks locks: the tracked part read-only, the shared part writable.
func Map(fd int, pages, locks int) (*Area, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("control area: %w", err)
	}
	if want := Size(pages) + sharedSize(pages, locks); st.Size != int64(want) {
		return nil, fmt.Errorf("control area of %d bytes for a region of %d pages and %d locks, want %d", st.Size, pages, locks, want)
	}
	return mapArea(fd, pages, locks, unix.PROT_READ)
}

func mapArea(fd, pages, locks, trackedProt int) (*Area, error) {
	tracked, err := unix.Mmap(fd, 0, Size(pages), trackedProt, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("control area: mmap: %w", err)
	}
	shared, err := unix.Mmap(fd, int64(Size(pages)), sharedSize(pages, locks), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(tracked)
		return nil, fmt.Errorf("control area: mmap: %w", err)
	}
	n := (pages + 63) / 64
	return &Area{
		tracked: tracked, shared: shared,
		words:   unsafe.Slice((*uint64)(unsafe.Pointer(&tracked[0])), 1+n),
		written: unsafe.Slice((*uint64)(unsafe.Pointer(&shared[0])), 2+n),
		locks:   unsafe.Slice((*uint32)(unsafe.Pointer(&shared[bitmapSize(pages)])), locks),
	}, nil
}

// Close unmaps the area.
func (a *Area) Close() {
	if a.tracked != nil {
		unix.Munmap(a.tracked)
		unix.Munmap(a.shared)
		*a = Area{}
	}
}

// Track marks page p tracked.
func (a *Area) Track(p uint32) {
	atomic.OrUint64(&a.words[1+p/64], 1<<(p%64))
	for {
		limit := atomic.LoadUint64(&a.words[0])
		if uint64(p) < limit || atomic.CompareAndSwapUint64(&a.words[0], limit, uint64(p)+1) {
			return
		}
	}
}

// Untrack marks page p not tracked.
func (a *Area) Untrack(p uint32) {
	atomic.AndUint64(&a.words[1+p/64], ^(uint64(1) << (p % 64)))
}

// Run is Count pages from First.
type Run struct {
	First, Count uint32
}

// Tracked appends to dst the runs of tracked pages, joining runs fewer than
// gap untracked pages apart (looking at a few pages too many costs less than
// another look).
func (a *Area) Tracked(dst []Run, gap uint32) []Run {
	limit := uint32(min(atomic.LoadUint64(&a.words[0]), uint64(len(a.words)-1)*64))
	for w := uint32(0); w*64 < limit; w++ {
		dst = appendRuns(dst, w*64, atomic.LoadUint64(&a.words[1+w]), gap)
	}
	return dst
}

// appendRuns appends the runs of set bits of word, whose bit 0 is page
// base, to dst, joining runs fewer than gap pages apart.
func appendRuns(dst []Run, base uint32, word uint64, gap uint32) []Run {
	for word != 0 {
		i := uint32(bits.TrailingZeros64(word))
		ones := uint32(bits.TrailingZeros64(^(word >> i)))
		first := base + i
		if n := len(dst); n > 0 && first <= dst[n-1].First+dst[n-1].Count+gap {
			dst[n-1].Count = first + ones - dst[n-1].First
		} else {
			dst = append(dst, Run{First: first, Count: ones})
		}
		if i+ones >= 64 {
			break
		}
		word &^= (uint64(1)<<ones - 1) << i
	}
	return dst
}

// TryLock takes lock id from the cache (the application's side), and counts
// it: it reports false unless the lock was LockCached.
func (a *Area) TryLock(id uint32) bool {
	if id >= uint32(len(a.locks)) || !atomic.CompareAndSwapUint32(&a.locks[id], LockCached, LockHeld) {
		return false
	}
	atomic.AddUint64(&a.written[1], 1)
	return true
}

// CachedLocks returns how many locks the application took from the cache.
func (a *Area) CachedLocks() int64 { return int64(atomic.LoadUint64(&a.written[1])) }

// TryUnlock releases lock id into the cache (the application's side), after
// AddWritten has recorded the pages written under it: it reports false if
// the lock is not LockHeld, when the release must go to the engine.
func (a *Area) TryUnlock(id uint32) bool {
	return id < uint32(len(a.locks)) && atomic.CompareAndSwapUint32(&a.locks[id], LockHeld, LockCached)
}

// Wanted reports whether lock id is LockWanted (the application's side):
// its release goes to the engine, so the application need not report its
// written pages into the area first; the call does.
func (a *Area) Wanted(id uint32) bool {
	return id < uint32(len(a.locks)) && atomic.LoadUint32(&a.locks[id]) == LockWanted
}

// AddWritten records written pages for the engine (the application's side).
func (a *Area) AddWritten(runs []protocol.PageRange) {
	if len(runs) == 0 {
		return
	}
	bitmap := a.written[2:]
	for _, r := range runs {
		// A word's worth of the run at a time.
		for p, end := uint64(r.First), min(r.End(), uint64(len(bitmap))*64); p < end; {
			n := min(end-p, 64-p%64)
			atomic.OrUint64(&bitmap[p/64], (^uint64(0)>>(64-n))<<(p%64))
			p += n
		}
	}
	// After the bits: the engine clears the flag before it takes them.
	atomic.StoreUint64(&a.written[0], 1)
}

// TakeWritten appends to dst the runs of pages AddWritten recorded before
// it, and clears them (the engine's side). It looks no further than the
// highest page ever tracked: the application reports tracked pages and the
// untracked ones between them.
func (a *Area) TakeWritten(dst []protocol.PageRange) []protocol.PageRange {
	if atomic.SwapUint64(&a.written[0], 0) == 0 {
		return dst
	}
	bitmap := a.written[2:]
	limit := min(atomic.LoadUint64(&a.words[0]), uint64(len(bitmap))*64)
	for w := 0; uint64(w)*64 < limit; w++ {
		if atomic.LoadUint64(&bitmap[w]) == 0 {
			continue
		}
		for _, r := range appendRuns(a.runs[:0], uint32(w)*64, atomic.SwapUint64(&bitmap[w], 0), 0) {
			if n := len(dst); n > 0 && dst[n-1].End() == uint64(r.First) {
				dst[n-1].Count += r.Count
			} else {
				dst = append(dst, protocol.PageRange{First: r.First, Count: r.Count})
			}
		}
	}
	return dst
}

// SetHeld records that the application holds lock id, granted through the
// engine (the engine's side); wanted: another rank waits for it already.
func (a *Area) SetHeld(id uint32, wanted bool) {
	v := LockHeld
	if wanted {
		v = LockWanted
	}
	atomic.StoreUint32(&a.locks[id], v)
}

// TakeAway answers another rank's wish for lock id, which the protocol holds
// here (the engine's side): it takes a cached lock away and reports true,
// when the engine releases it in the application's place; a held one it
// marks LockWanted, for the application's Unlock to come to the engine.
func (a *Area) TakeAway(id uint32) bool {
	for {
		switch v := atomic.LoadUint32(&a.locks[id]); v {
		case LockCached:
			if atomic.CompareAndSwapUint32(&a.locks[id], v, LockAway) {
				return true
			}
		case LockHeld:
			if atomic.CompareAndSwapUint32(&a.locks[id], v, LockWanted) {
				return false
			}
		default:
			return false
		}
	}
}

// Unlocking takes lock id away for an Unlock call (the engine's side): the
// application holds it (LockWanted, or LockHeld if it released it with a
// call); otherwise the call is a misuse, and Unlocking reports the state.
func (a *Area) Unlocking(id uint32) error {
	if id >= uint32(len(a.locks)) {
		return fmt.Errorf("lock %d out of range [0,%d)", id, len(a.locks))
	}
	for {
		switch v := atomic.LoadUint32(&a.locks[id]); v {
		case LockHeld, LockWanted:
			if atomic.CompareAndSwapUint32(&a.locks[id], v, LockAway) {
				return nil
			}
		case LockCached:
			return fmt.Errorf("unlock of lock %d, which the application released already", id)
		case LockAway:
			return fmt.Errorf("unlock of lock %d, which the application does not hold", id)
		default:
			return fmt.Errorf("lock %d in an unknown state %d", id, v)
		}
	}
}
