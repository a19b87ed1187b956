// Package ctl is the control area an engine shares with each rank it hosts:
// a small memfd both map, which the engine writes and the rank reads without
// a call. It holds which pages the rank must report written when writes are
// found without faults (asynchronous write protection): the pages it has
// mapped, but for those it writes untracked. The rank reads the kernel's
// record of written pages for those alone, so a report costs nothing for the
// pages a rank writes untracked, however many.
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
)

// Area is a mapped control area. Word 0 is one past the highest page ever
// tracked; then one bit per page, set while the page is tracked.
type Area struct {
	mem   []byte
	words []uint64
}

// Size is the bytes of a control area for a region of pages pages.
func Size(pages int) int {
	size := 8 * (1 + (pages+63)/64)
	ps := unix.Getpagesize()
	return (size + ps - 1) / ps * ps
}

// Create makes the control area of a rank whose region has pages pages, and
// returns it with its memfd, which the rank maps with Map.
func Create(pages int) (*Area, int, error) {
	fd, err := unix.MemfdCreate("svm-control", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, -1, fmt.Errorf("control area: memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(Size(pages))); err != nil {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("control area: %w", err)
	}
	a, err := mapArea(fd, pages, unix.PROT_READ|unix.PROT_WRITE)
	if err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	return a, fd, nil
}

// Map maps, read-only, the control area the engine sent for a region of
// pages pages.
func Map(fd int, pages int) (*Area, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("control area: %w", err)
	}
	if st.Size != int64(Size(pages)) {
		return nil, fmt.Errorf("control area of %d bytes for a region of %d pages, want %d", st.Size, pages, Size(pages))
	}
	return mapArea(fd, pages, unix.PROT_READ)
}

func mapArea(fd, pages, prot int) (*Area, error) {
	mem, err := unix.Mmap(fd, 0, Size(pages), prot, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("control area: mmap: %w", err)
	}
	words := unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), len(mem)/8)
	return &Area{mem: mem, words: words[:1+(pages+63)/64]}, nil
}

// Close unmaps the area.
func (a *Area) Close() {
	if a.mem != nil {
		unix.Munmap(a.mem)
		a.mem, a.words = nil, nil
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
		word := atomic.LoadUint64(&a.words[1+w])
		for word != 0 {
			i := uint32(bits.TrailingZeros64(word))
			ones := uint32(bits.TrailingZeros64(^(word >> i)))
			first := w*64 + i
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
	}
	return dst
}
