package main

/*
#include <stdio.h>
#include <stdlib.h>
#include "Tmk.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/svmcluster/svm/dsm"
)

// The TreadMarks interface of Tmk.h on the same node as svm.h's calls.
// TreadMarks calls return nothing: a failure is reported and ends the
// process, as the programs written for it expect.

// tmk is the state behind Tmk_distribute.
//
// Rank 0 copies each distributed object into shared memory when it is
// called; at its next Tmk_barrier it publishes a table of (address, size,
// copy) in a slot every rank allocated at start-up. After the barrier the
// other ranks copy each object to its address; rank 0 frees the copies one
// barrier later, when every rank has passed the barrier after which it
// copied them.
var tmk struct {
	sync.Mutex
	slot dsm.Addr // [epoch, table address]
	// pending are rank 0's objects not yet published; published those of
	// the last barrier, freed after the next.
	pending, published []distributed
	table              dsm.Addr // the published table, freed with them
	epoch              uint64   // last epoch published (rank 0) or applied
}

type distributed struct {
	ptr, size uint64
	copy      dsm.Addr
}

const tableEntry = 3 // words per distributed object in the table

// fatal reports a failed TreadMarks call the way the interface says and
// exits, flushing C's stdio.
func fatal(call string, err error) {
	fmt.Fprintln(os.Stderr, message(call, err))
	C.fflush(nil)
	C.exit(1)
}

//export Tmk_startup
func Tmk_startup(argc C.int, argv **C.char) {
	if err := join(); err != nil {
		fatal("Tmk_startup", err)
	}
	n, _ := joined()
	if n.NProcs() > C.TMK_NPROCS {
		fatal("Tmk_startup", fmt.Errorf("the job has %d processes; TreadMarks programs allow at most TMK_NPROCS = %d", n.NProcs(), C.TMK_NPROCS))
	}
	slot, err := n.Alloc(16)
	if err != nil {
		fatal("Tmk_startup", err)
	}
	tmk.Lock()
	tmk.slot = slot
	tmk.Unlock()
	C.Tmk_proc_id = C.uint(n.Rank())
	C.Tmk_nprocs = C.uint(n.NProcs())
}

//export Tmk_exit
func Tmk_exit(code C.int) {
	if err := leave(); err != nil {
		fatal("Tmk_exit", err)
	}
	C.fflush(nil)
	C.exit(code)
}

// tmkNode returns the node or ends the process.
func tmkNode(call string) *dsm.Node {
	n, err := joined()
	if err != nil {
		fatal(call, errors.New("not started: call Tmk_startup first"))
	}
	return n
}

//export Tmk_malloc
func Tmk_malloc(size C.uint) unsafe.Pointer {
	n := tmkNode("Tmk_malloc")
	a, err := n.Malloc(int(size))
	if err != nil {
		fmt.Fprintf(os.Stderr, "Tmk_malloc: %v\n", err)
		return nil
	}
	var p unsafe.Pointer
	storeAddr(&p, a)
	return p
}

//export Tmk_free
func Tmk_free(p unsafe.Pointer) {
	if p == nil {
		return
	}
	if err := tmkNode("Tmk_free").Free(dsm.Addr(p)); err != nil {
		fatal("Tmk_free", err)
	}
}

//export Tmk_distribute
func Tmk_distribute(p unsafe.Pointer, size C.uint) {
	n := tmkNode("Tmk_distribute")
	if n.Rank() != 0 {
		fatal("Tmk_distribute", fmt.Errorf("called by process %d: only process 0 distributes", n.Rank()))
	}
	if p == nil || size == 0 {
		fatal("Tmk_distribute", fmt.Errorf("nothing to distribute (%p, %d bytes)", p, size))
	}
	c, err := n.Malloc(int(size))
	if err != nil {
		fatal("Tmk_distribute", err)
	}
	copy(dsm.Bytes(c, int(size)), cBytes(p, int(size)))
	tmk.Lock()
	tmk.pending = append(tmk.pending, distributed{ptr: uint64(uintptr(p)), size: uint64(size), copy: c})
	tmk.Unlock()
}

//export Tmk_barrier
func Tmk_barrier(id C.uint) {
	n := tmkNode("Tmk_barrier")
	tmk.Lock()
	defer tmk.Unlock()
	var done []distributed
	var doneTable dsm.Addr
	if n.Rank() == 0 {
		done, doneTable = tmk.published, tmk.table
		tmk.published, tmk.table = nil, 0
		if len(tmk.pending) > 0 {
			if err := publish(n); err != nil {
				fatal("Tmk_distribute", err)
			}
		}
	}
	if err := n.Barrier(int(id)); err != nil {
		fatal("Tmk_barrier", err)
	}
	if n.Rank() == 0 {
		for _, d := range done {
			if err := n.Free(d.copy); err != nil {
				fatal("Tmk_distribute", err)
			}
		}
		if doneTable != 0 {
			if err := n.Free(doneTable); err != nil {
				fatal("Tmk_distribute", err)
			}
		}
		return
	}
	slot := dsm.Slice[uint64](tmk.slot, 2)
	if slot[0] == tmk.epoch {
		return
	}
	tmk.epoch = slot[0]
	words := dsm.Slice[uint64](dsm.Addr(slot[1]), 1)
	entries := dsm.Slice[uint64](dsm.Addr(slot[1]), 1+tableEntry*int(words[0]))[1:]
	for i := 0; i < len(entries); i += tableEntry {
		ptr, size, from := entries[i], entries[i+1], dsm.Addr(entries[i+2])
		copy(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), ptr)), size), dsm.Bytes(from, int(size)))
	}
}

// publish writes rank 0's pending objects into a table and the table into
// the slot, for the barrier about to be crossed. tmk is locked.
func publish(n *dsm.Node) error {
	table, err := n.Malloc(8 * (1 + tableEntry*len(tmk.pending)))
	if err != nil {
		return err
	}
	words := dsm.Slice[uint64](table, 1+tableEntry*len(tmk.pending))
	words[0] = uint64(len(tmk.pending))
	for i, d := range tmk.pending {
		copy(words[1+tableEntry*i:], []uint64{d.ptr, d.size, uint64(d.copy)})
	}
	tmk.epoch++
	slot := dsm.Slice[uint64](tmk.slot, 2)
	slot[0], slot[1] = tmk.epoch, uint64(table)
	tmk.published, tmk.pending, tmk.table = tmk.pending, nil, table
	return nil
}

//export Tmk_lock_acquire
func Tmk_lock_acquire(id C.uint) {
	if err := tmkNode("Tmk_lock_acquire").Lock(int(id)); err != nil {
		fatal("Tmk_lock_acquire", err)
	}
}

//export Tmk_lock_release
func Tmk_lock_release(id C.uint) {
	if err := tmkNode("Tmk_lock_release").Unlock(int(id)); err != nil {
		fatal("Tmk_lock_release", err)
	}
}
