package main

/*
#include "svm.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/svmcluster/svm/dsm"
	"github.com/svmcluster/svm/dsm/launch"
)

// The calls of svm.h, one to one onto package dsm.

//export svm_init
func svm_init() C.int { return status("svm_init", join()) }

func join() error {
	mu.Lock()
	defer mu.Unlock()
	if node != nil {
		return errors.New("already joined")
	}
	var opts []dsm.Option
	if os.Getenv("SVM_THREADS") != "multiple" {
		opts = append(opts, dsm.Funneled())
	}
	n, err := dsm.Join(context.Background(), opts...)
	if err != nil {
		return err
	}
	// This call runs on the program's thread, locked to it. Failing, the
	// job only runs slower: said, not fatal.
	if err := launch.ReleaseOtherThreads(); err != nil {
		fmt.Fprintf(os.Stderr, "svm_init: %v (the library's threads stay on the rank's CPU)\n", err)
	}
	node = n
	return nil
}

//export svm_finalize
func svm_finalize() C.int { return status("svm_finalize", leave()) }

func leave() error {
	mu.Lock()
	n := node
	node = nil
	mu.Unlock()
	if n == nil {
		return errNotJoined
	}
	return n.Close()
}

//export svm_rank
func svm_rank() C.int {
	n, err := joined()
	if err != nil {
		status("svm_rank", err)
		return -1
	}
	return C.int(n.Rank())
}

//export svm_nprocs
func svm_nprocs() C.int {
	n, err := joined()
	if err != nil {
		status("svm_nprocs", err)
		return -1
	}
	return C.int(n.NProcs())
}

//export svm_page_size
func svm_page_size() C.size_t {
	n, err := joined()
	if err != nil {
		status("svm_page_size", err)
		return 0
	}
	return C.size_t(n.PageSize())
}

// allocate runs alloc for one of the allocation calls and stores the address.
func allocate(call string, size C.size_t, out *unsafe.Pointer, alloc func(*dsm.Node, int) (dsm.Addr, error)) C.int {
	if out == nil {
		return status(call, errors.New("out is NULL"))
	}
	n, err := joined()
	if err != nil {
		return status(call, err)
	}
	if size > C.size_t(^uint(0)>>1) {
		return status(call, errors.New("size does not fit an int"))
	}
	a, err := alloc(n, int(size))
	if err != nil {
		return status(call, err)
	}
	storeAddr(out, a)
	return 0
}

//export svm_alloc
func svm_alloc(size C.size_t, out *unsafe.Pointer) C.int {
	return allocate("svm_alloc", size, out, (*dsm.Node).Alloc)
}

//export svm_malloc
func svm_malloc(size C.size_t, out *unsafe.Pointer) C.int {
	return allocate("svm_malloc", size, out, (*dsm.Node).Malloc)
}

//export svm_free
func svm_free(p unsafe.Pointer) C.int {
	n, err := joined()
	if err == nil {
		err = n.Free(dsm.Addr(p))
	}
	return status("svm_free", err)
}

//export svm_share
func svm_share(root C.int, p unsafe.Pointer, out *unsafe.Pointer) C.int {
	if out == nil {
		return status("svm_share", errors.New("out is NULL"))
	}
	n, err := joined()
	if err != nil {
		return status("svm_share", err)
	}
	a, err := n.Share(int(root), dsm.Addr(p))
	if err != nil {
		return status("svm_share", err)
	}
	storeAddr(out, a)
	return 0
}

// withNode runs f on the process's node and records its error under call.
func withNode(call string, f func(*dsm.Node) error) C.int {
	n, err := joined()
	if err == nil {
		err = f(n)
	}
	return status(call, err)
}

//export svm_lock
func svm_lock(id C.int) C.int {
	return withNode("svm_lock", func(n *dsm.Node) error { return n.Lock(int(id)) })
}

//export svm_unlock
func svm_unlock(id C.int) C.int {
	return withNode("svm_unlock", func(n *dsm.Node) error { return n.Unlock(int(id)) })
}

//export svm_barrier
func svm_barrier(id C.int) C.int {
	return withNode("svm_barrier", func(n *dsm.Node) error { return n.Barrier(int(id)) })
}

//export svm_barrier_among
func svm_barrier_among(id C.int, members *C.int, count C.int) C.int {
	return withNode("svm_barrier_among", func(n *dsm.Node) error {
		set, err := cInts(members, count)
		if err != nil {
			return err
		}
		return n.BarrierAmong(int(id), set)
	})
}

//export svm_share_among
func svm_share_among(id C.int, members *C.int, count C.int, root C.int, value C.uint64_t, out *C.uint64_t) C.int {
	return withNode("svm_share_among", func(n *dsm.Node) error {
		if out == nil {
			return errors.New("out is NULL")
		}
		set, err := cInts(members, count)
		if err != nil {
			return err
		}
		v, err := n.ShareAmong(int(id), set, int(root), uint64(value))
		*out = C.uint64_t(v)
		return err
	})
}

//export svm_fetch_add
func svm_fetch_add(counter C.uint32_t, delta C.int64_t, old *C.int64_t) C.int {
	return withNode("svm_fetch_add", func(n *dsm.Node) error {
		if old == nil {
			return errors.New("old is NULL")
		}
		v, err := n.FetchAdd(uint32(counter), int64(delta))
		*old = C.int64_t(v)
		return err
	})
}

//export svm_set_home
func svm_set_home(p unsafe.Pointer, size C.size_t, home C.int) C.int {
	return withNode("svm_set_home", func(n *dsm.Node) error {
		return n.SetHome(dsm.Addr(uintptr(p)), int(size), int(home))
	})
}

//export svm_validate
func svm_validate(p unsafe.Pointer, size C.size_t, write C.int) C.int {
	return withNode("svm_validate", func(n *dsm.Node) error {
		return n.Validate(dsm.Addr(p), int(size), write != 0)
	})
}

//export svm_get_stats
func svm_get_stats(out *C.svm_stats) C.int {
	return withNode("svm_get_stats", func(n *dsm.Node) error {
		if out == nil {
			return errors.New("out is NULL")
		}
		s := n.Stats()
		*out = C.svm_stats{
			read_faults: C.int64_t(s.ReadFaults), write_faults: C.int64_t(s.WriteFaults), twins: C.int64_t(s.Twins),
			diffs_created: C.int64_t(s.DiffsCreated), diffs_applied: C.int64_t(s.DiffsApplied), diff_bytes: C.int64_t(s.DiffBytes),
			messages_sent: C.int64_t(s.MessagesSent), messages_received: C.int64_t(s.MessagesReceived),
			bytes_sent: C.int64_t(s.BytesSent), bytes_received: C.int64_t(s.BytesReceived),
			lock_acquires_local: C.int64_t(s.LockAcquiresLocal), lock_acquires_remote: C.int64_t(s.LockAcquiresRemote),
			barriers: C.int64_t(s.Barriers), invalidations: C.int64_t(s.Invalidations),
		}
		return nil
	})
}

//export svm_last_error
func svm_last_error(buf *C.char, n C.size_t) C.size_t { return lastErrorInto(buf, n) }

// storeAddr stores a shared-memory address into a C void* variable. The
// memory is not Go's: the address is written as the integer it is.
func storeAddr(out *unsafe.Pointer, a dsm.Addr) { *(*uintptr)(unsafe.Pointer(out)) = uintptr(a) }
