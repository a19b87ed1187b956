package rt

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
)

// Critical sections and page locks take job locks from the runtime's
// ranges. Holds nest: a rank that already holds a lock (two names hashing
// to one lock, or overlapping page ranges) counts the hold instead of
// waiting for itself.

// CriticalBegin enters the critical section called name: one rank of the
// job at a time is inside sections of that name.
func (r *Runtime) CriticalBegin(name string) error {
	return r.hold(r.criticalLock(name))
}

// CriticalEnd leaves the critical section called name.
func (r *Runtime) CriticalEnd(name string) error {
	id := r.criticalLock(name)
	if r.held[id] == 0 {
		return fmt.Errorf("end of critical section %q, which this rank is not in", name)
	}
	return r.release(id)
}

func (r *Runtime) criticalLock(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	n := r.comm.Locks()
	lo, hi := n/2, 3*n/4
	return lo + int(h.Sum32()%uint32(hi-lo))
}

// PageLock locks the pages holding [addr, addr+size): every rank that page
// locks an overlapping range waits. Locks are taken in increasing order, so
// page locks of many pages cannot deadlock with each other.
func (r *Runtime) PageLock(addr uintptr, size int) error {
	ids, err := r.pageLocks(addr, size)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if err := r.hold(id); err != nil {
			errs := []error{err}
			for _, taken := range slices.Backward(ids[:i]) {
				errs = append(errs, r.release(taken))
			}
			return errors.Join(errs...)
		}
	}
	return nil
}

// PageUnlock releases the page locks of [addr, addr+size).
func (r *Runtime) PageUnlock(addr uintptr, size int) error {
	ids, err := r.pageLocks(addr, size)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if r.held[id] == 0 {
			return fmt.Errorf("page unlock of [%#x,+%d), which this rank has not page locked", addr, size)
		}
	}
	var errs []error
	for _, id := range slices.Backward(ids) {
		errs = append(errs, r.release(id))
	}
	return errors.Join(errs...)
}

func (r *Runtime) pageLocks(addr uintptr, size int) ([]int, error) {
	if size <= 0 {
		return nil, fmt.Errorf("page lock of %d bytes", size)
	}
	n := r.comm.Locks()
	lo, count := 3*n/4, n-3*n/4
	page := uintptr(r.comm.PageSize())
	var ids []int
	for p := addr / page; p <= (addr+uintptr(size)-1)/page; p++ {
		ids = append(ids, lo+int(p%uintptr(count)))
		if len(ids) == count {
			break // every page lock is taken
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func (r *Runtime) hold(id int) error {
	if r.held[id] > 0 {
		r.held[id]++
		return nil
	}
	if err := r.comm.Lock(id); err != nil {
		return err
	}
	r.held[id] = 1
	return nil
}

func (r *Runtime) release(id int) error {
	r.held[id]--
	if r.held[id] > 0 {
		return nil
	}
	delete(r.held, id)
	return r.comm.Unlock(id)
}
