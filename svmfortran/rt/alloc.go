package rt

import (
	"errors"
	"fmt"
)

// Shared variables of a subprogram are allocated when it starts, by the
// processor set running it, and freed before it returns; COMMON blocks are
// allocated when first named and freed at the end of the main program. Each
// starts on a page of its own (the paper's compiler-generated padding), so
// no two share a page at their starts.
//
// A block of more than a page starts at a cache line of that page that the
// master's previous 63 such blocks do not start at (colour). A loop nest
// runs through many arrays of one shape at the same index; arrays that all
// started at a page boundary would all map that index to the same set of
// the 8-way level-1 cache, and ten of them evict each other: shallow water
// (1025 x 1025 doubles, up to ten arrays a loop) ran 4-7 % slower at one
// rank than with its arrays shifted by a line each, as gfortran's static
// arrays, packed one after the other, happen to be.
const (
	cacheLine = 64
	colours   = 64
)

// SharedAlloc allocates size bytes, starting on a page of their own, for
// the active processor set: every member calls it and gets the same
// address. The master allocates; the address reaches the others with the
// ordering of a barrier.
func (r *Runtime) SharedAlloc(size int) (uintptr, error) {
	if size <= 0 {
		return 0, fmt.Errorf("shared allocation of %d bytes", size)
	}
	var addr uintptr
	if r.MyProcSet() == 0 {
		page := r.comm.PageSize()
		colour := 0
		if size > page {
			colour = r.coloured % colours * cacheLine
			r.coloured++
		}
		base, err := r.comm.Malloc(size + page - 1 + colour)
		if err != nil {
			// The others wait for an address: hand them 0, which they refuse.
			_, berr := r.broadcast(0)
			return 0, errors.Join(err, berr)
		}
		addr = (base+uintptr(page)-1)&^(uintptr(page)-1) + uintptr(colour)
		r.blocks[addr] = base
	}
	v, err := r.broadcast(uint64(addr))
	if err != nil {
		return 0, err
	}
	if v == 0 {
		return 0, fmt.Errorf("shared allocation of %d bytes failed on the processor set's master", size)
	}
	return uintptr(v), nil
}

// SharedFree frees a block from SharedAlloc: every member of the active set
// calls it; a barrier over the set comes first, so no member still uses it.
func (r *Runtime) SharedFree(addr uintptr) error {
	if err := r.Barrier(); err != nil {
		return err
	}
	if r.MyProcSet() != 0 {
		return nil
	}
	base, ok := r.blocks[addr]
	if !ok {
		return fmt.Errorf("shared free of %#x, which no shared allocation of this processor set's master returned", addr)
	}
	delete(r.blocks, addr)
	return r.comm.Free(base)
}

// Common returns COMMON block name of size bytes, allocating it for the
// active processor set when it is first named.
func (r *Runtime) Common(name string, size int) (uintptr, error) {
	if c, ok := r.commons[name]; ok {
		if c.size != size {
			return 0, fmt.Errorf("COMMON /%s/ is %d bytes here and %d bytes where it was first declared", name, size, c.size)
		}
		return c.addr, nil
	}
	addr, err := r.SharedAlloc(size)
	if err != nil {
		return 0, fmt.Errorf("COMMON /%s/: %w", name, err)
	}
	r.commons[name] = common{addr: addr, size: size}
	return addr, nil
}

// FreeCommons frees every COMMON block, at the end of the main program:
// every member of the active set calls it.
func (r *Runtime) FreeCommons() error {
	if err := r.Barrier(); err != nil {
		return err
	}
	for name, c := range r.commons {
		delete(r.commons, name)
		if r.MyProcSet() != 0 {
			continue
		}
		base := r.blocks[c.addr]
		delete(r.blocks, c.addr)
		if err := r.comm.Free(base); err != nil {
			return fmt.Errorf("COMMON /%s/: %w", name, err)
		}
	}
	return nil
}
