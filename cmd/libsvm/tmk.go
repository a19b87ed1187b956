package main

/*
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "Tmk.h"

// Tmk_stat is linked only into programs that use it (tmkstat.c): a weak
// reference leaves it NULL elsewhere.
#pragma weak Tmk_stat
static struct Tmk_stat *tmk_stat(void) { return &Tmk_stat; }

static void tmk_call(uintptr_t fn, Tmk_sched_arg_t arg) { ((void (*)(Tmk_sched_arg_t))fn)(arg); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/svmcluster/svm/dsm"
)

// The TreadMarks interface of Tmk.h on the same node as svm.h's calls.
// TreadMarks calls return nothing: a failure is reported and ends the
// process, as the programs written for it expect.
//
// Tmk_startup allocates, collectively, the shared state of the calls that
// are more than one dsm call, each part on pages of its own:
//   - a distribute slot per process, [epoch, table address]: at its next
//     Tmk_barrier a process that called Tmk_distribute publishes a table of
//     (address, size, copy) there; after the barrier every other process
//     copies each object to its address; the publisher frees the copies
//     one barrier later, when every process has passed the barrier after
//     which it copied them.
//   - a condition slot per process, [lock+1 | cond<<32, ticket]: what the
//     process waits on, written and read under that lock. A waiter sleeps
//     in a counter wait (dsm.Node.WaitCounter) on its own wake counter; a
//     signaller picks the waiter with the lowest ticket, clears its slot and
//     adds one to its counter. The waiter then takes the lock again, after
//     the signaller releases it, and so sees what the signaller wrote.
//   - the fork slot, [function, has argument, struct Tmk_sched_arg], which
//     the scheduler's manager fills before a fork.
var tmk struct {
	sync.Mutex
	distSlots, condSlots, forkSlot dsm.Addr
	// pending are this process's objects not yet published; published
	// those of the last barrier, freed after the next.
	pending, published []distributed
	table              dsm.Addr // the published table, freed with them
	epoch              uint64   // the last epoch this process published
	applied            []uint64 // the last epoch applied, per process
	brk                uintptr  // the end of Tmk_sbrk's last block
	wakes              int64    // the wake-ups this process has waited for
	joined             bool     // as the scheduler's manager, may fork
	// counts are the Tmk_stat counts kept here; reported, the counts as
	// Tmk_stat last took them.
	counts, reported statCounts
}

type distributed struct {
	ptr, size uint64
	copy      dsm.Addr
}

const (
	tableEntry = 3 // words per distributed object in a table
	// wakeCounters + p is process p's wake counter: clear of the counters
	// of svm_fetch_add's programs and of the SVM-Fortran runtime (2^31 on).
	wakeCounters = 1 << 30
)

// fatal reports a failed TreadMarks call the way the interface says and
// exits, flushing C's stdio.
func fatal(call string, err error) {
	fmt.Fprintln(os.Stderr, message(call, err))
	C.fflush(nil)
	C.exit(1)
}

// pageRound rounds n up to a whole number of pages of size ps.
func pageRound(n, ps int) int { return (n + ps - 1) / ps * ps }

// svm_tmk_startup is Tmk_startup (tmk.c), which leaves argc and argv alone.
//
//export svm_tmk_startup
func svm_tmk_startup() {
	if err := join(); err != nil {
		fatal("Tmk_startup", err)
	}
	n, _ := joined()
	np, ps := n.NProcs(), n.PageSize()
	if np > C.TMK_NPROCS {
		fatal("Tmk_startup", fmt.Errorf("the job has %d processes; TreadMarks programs allow at most TMK_NPROCS = %d", np, C.TMK_NPROCS))
	}
	slots := pageRound(16*np, ps)
	state, err := n.Alloc(2*slots + pageRound(16+C.sizeof_struct_Tmk_sched_arg, ps))
	if err != nil {
		fatal("Tmk_startup", err)
	}
	tmk.Lock()
	tmk.distSlots, tmk.condSlots, tmk.forkSlot = state, state+dsm.Addr(slots), state+dsm.Addr(2*slots)
	tmk.applied = make([]uint64, np)
	tmk.Unlock()
	C.tmk_.proc_id = C.uint(n.Rank())
	C.tmk_.nprocs = C.uint(np)
	C.tmk_.page_size = C.uint(ps)
	C.tmk_.npages = C.uint(n.RegionSize() / ps)
}

// svm_tmk_exit leaves the job for Tmk_exit (tmk.c), which then exits.
//
//export svm_tmk_exit
func svm_tmk_exit() {
	if err := leave(); err != nil {
		fatal("Tmk_exit", err)
	}
}

// tmkNode returns the node or ends the process.
func tmkNode(call string) *dsm.Node {
	n, err := joined()
	if err != nil {
		fatal(call, errors.New("not started: call Tmk_startup first"))
	}
	return n
}

// sharedAlloc allocates for Tmk_malloc and Tmk_sbrk: NULL after a message
// when the region is full, as TreadMarks' calls do.
func sharedAlloc(call string, size int) unsafe.Pointer {
	a, err := tmkNode(call).Malloc(size)
	if err != nil {
		fmt.Fprintln(os.Stderr, message(call, err))
		return nil
	}
	var p unsafe.Pointer
	storeAddr(&p, a)
	return p
}

//export Tmk_malloc
func Tmk_malloc(size C.uint) unsafe.Pointer { return sharedAlloc("Tmk_malloc", int(size)) }

//export Tmk_sbrk
func Tmk_sbrk(incr C.uint) unsafe.Pointer {
	tmk.Lock()
	defer tmk.Unlock()
	if incr == 0 {
		var p unsafe.Pointer
		storeAddr(&p, dsm.Addr(tmk.brk))
		return p
	}
	p := sharedAlloc("Tmk_sbrk", int(incr))
	if p != nil {
		tmk.brk = uintptr(p) + uintptr(incr)
	}
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

// svm_tmk_distribute is Tmk_distribute (tmk.c), whose pointer is const.
//
//export svm_tmk_distribute
func svm_tmk_distribute(p unsafe.Pointer, size C.int) {
	n := tmkNode("Tmk_distribute")
	if p == nil || size <= 0 {
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
	defer refreshStat(n)
	tmk.Lock()
	defer tmk.Unlock()
	done, doneTable := tmk.published, tmk.table
	tmk.published, tmk.table = nil, 0
	if len(tmk.pending) > 0 {
		if err := publish(n); err != nil {
			fatal("Tmk_distribute", err)
		}
	}
	if err := n.Barrier(int(id)); err != nil {
		fatal("Tmk_barrier", err)
	}
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
	slots := dsm.Slice[uint64](tmk.distSlots, 2*n.NProcs())
	for p := range n.NProcs() {
		if p == n.Rank() || slots[2*p] == tmk.applied[p] {
			continue
		}
		tmk.applied[p] = slots[2*p]
		table := dsm.Addr(slots[2*p+1])
		count := int(dsm.Slice[uint64](table, 1)[0])
		entries := dsm.Slice[uint64](table, 1+tableEntry*count)[1:]
		for i := 0; i < len(entries); i += tableEntry {
			ptr, size, from := entries[i], entries[i+1], dsm.Addr(entries[i+2])
			copy(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), ptr)), size), dsm.Bytes(from, int(size)))
		}
	}
}

// publish writes this process's pending objects into a table and the table
// into its slot, for the barrier about to be crossed. tmk is locked.
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
	slot := dsm.Slice[uint64](tmk.distSlots+dsm.Addr(16*n.Rank()), 2)
	slot[0], slot[1] = tmk.epoch, uint64(table)
	tmk.published, tmk.pending, tmk.table = tmk.pending, nil, table
	return nil
}

//export Tmk_lock_acquire
func Tmk_lock_acquire(id C.uint) {
	start := time.Now()
	if err := tmkNode("Tmk_lock_acquire").Lock(int(id)); err != nil {
		fatal("Tmk_lock_acquire", err)
	}
	tmk.Lock()
	tmk.counts[statAcquires]++
	tmk.counts[statAcquireTime] += uint64(time.Since(start).Microseconds())
	tmk.Unlock()
}

//export Tmk_lock_release
func Tmk_lock_release(id C.uint) {
	if err := tmkNode("Tmk_lock_release").Unlock(int(id)); err != nil {
		fatal("Tmk_lock_release", err)
	}
}

// condNode checks a condition call's ids and returns the node.
func condNode(call string, lock, cond C.uint) *dsm.Node {
	n := tmkNode(call)
	if int64(lock) >= int64(n.Locks()) {
		fatal(call, fmt.Errorf("lock %d out of range [0,%d)", lock, n.Locks()))
	}
	if cond >= C.TMK_NCONDS {
		fatal(call, fmt.Errorf("condition %d out of range [0,%d) (TMK_NCONDS)", cond, C.TMK_NCONDS))
	}
	return n
}

// waitKey is what a condition slot holds while its process waits on
// condition cond of lock; the low half alone names the lock.
func waitKey(lock, cond C.uint) uint64 { return uint64(lock) + 1 | uint64(cond)<<32 }

//export Tmk_lock_cond_wait
func Tmk_lock_cond_wait(lock, cond C.uint) {
	const call = "Tmk_lock_cond_wait"
	n := condNode(call, lock, cond)
	if !n.Holds(int(lock)) {
		fatal(call, fmt.Errorf("process %d waits on condition %d of lock %d without holding the lock: acquire it first", n.Rank(), cond, lock))
	}
	slots := dsm.Slice[uint64](tmk.condSlots, 2*n.NProcs())
	var last uint64
	for p := range n.NProcs() {
		if uint32(slots[2*p]) == uint32(lock)+1 {
			last = max(last, slots[2*p+1])
		}
	}
	me := n.Rank()
	slots[2*me], slots[2*me+1] = waitKey(lock, cond), last+1
	tmk.Lock()
	tmk.counts[statWaits]++
	tmk.wakes++
	until := tmk.wakes
	tmk.Unlock()
	if err := n.Unlock(int(lock)); err != nil {
		fatal(call, err)
	}
	if _, err := n.WaitCounter(wakeCounters+uint32(me), until); err != nil {
		fatal(call, err)
	}
	if err := n.Lock(int(lock)); err != nil {
		fatal(call, err)
	}
}

// wake wakes the longest waiter on condition cond of lock, or all of them.
// The slots are read and written under the lock, taken here if the caller
// does not hold it; its release then passes on what the caller wrote.
func wake(call string, lock, cond C.uint, all bool, stat int) {
	n := condNode(call, lock, cond)
	tmk.Lock()
	tmk.counts[stat]++
	tmk.Unlock()
	held := n.Holds(int(lock))
	if !held {
		if err := n.Lock(int(lock)); err != nil {
			fatal(call, err)
		}
	}
	slots := dsm.Slice[uint64](tmk.condSlots, 2*n.NProcs())
	key := waitKey(lock, cond)
	for {
		next := -1
		for p := range n.NProcs() {
			if slots[2*p] == key && (next < 0 || slots[2*p+1] < slots[2*next+1]) {
				next = p
			}
		}
		if next < 0 {
			break
		}
		slots[2*next], slots[2*next+1] = 0, 0
		if _, err := n.FetchAdd(wakeCounters+uint32(next), 1); err != nil {
			fatal(call, err)
		}
		if !all {
			break
		}
	}
	if !held {
		if err := n.Unlock(int(lock)); err != nil {
			fatal(call, err)
		}
	}
}

//export Tmk_lock_cond_signal
func Tmk_lock_cond_signal(lock, cond C.uint) {
	wake("Tmk_lock_cond_signal", lock, cond, false, statSignals)
}

//export Tmk_lock_cond_broadcast
func Tmk_lock_cond_broadcast(lock, cond C.uint) {
	wake("Tmk_lock_cond_broadcast", lock, cond, true, statBroadcasts)
}

// The fork-join scheduler: a join and a fork are each a dsm Share from the
// manager, which orders memory like a barrier and costs no barrier id. The
// value the fork shares is the fork slot's address, or 0 at
// Tmk_sched_exit.

// schedShare is one join or fork with manager m.
func schedShare(call string, n *dsm.Node, m int, value dsm.Addr) dsm.Addr {
	v, err := n.Share(m, value)
	if err != nil {
		fatal(call, err)
	}
	return v
}

// forkArg is a worker's copy of the forked function's argument, in C's
// memory: it holds pointers, which Go's may not hand to C.
var forkArg C.Tmk_sched_arg_t

//export Tmk_sched_start
func Tmk_sched_start(manager C.uint) C.int {
	const call = "Tmk_sched_start"
	n := tmkNode(call)
	if int64(manager) >= int64(n.NProcs()) {
		fatal(call, fmt.Errorf("manager %d out of range [0,%d)", manager, n.NProcs()))
	}
	m := int(manager)
	schedShare(call, n, m, 0)
	refreshStat(n)
	if n.Rank() == m {
		tmk.Lock()
		tmk.joined = true
		tmk.Unlock()
		return 1
	}
	for {
		slot := schedShare(call, n, m, 0)
		if slot == 0 {
			return 0
		}
		words := dsm.Slice[uint64](slot, 2)
		var arg C.Tmk_sched_arg_t
		if words[1] != 0 {
			if forkArg == nil {
				forkArg = C.Tmk_sched_arg_t(C.malloc(C.sizeof_struct_Tmk_sched_arg))
			}
			*forkArg = dsm.Slice[C.struct_Tmk_sched_arg](slot+16, 1)[0]
			arg = forkArg
		}
		C.tmk_call(C.uintptr_t(words[0]), arg)
		schedShare(call, n, m, 0)
	}
}

// forkOrExit is the manager's fork (fn non-zero) or exit; it returns the
// node, or ends the process when the workers have not joined.
func forkOrExit(call string, fn uintptr, arg C.Tmk_sched_arg_t) *dsm.Node {
	n := tmkNode(call)
	tmk.Lock()
	joinedHere := tmk.joined
	tmk.joined = false
	tmk.Unlock()
	if !joinedHere {
		fatal(call, fmt.Errorf("process %d is not the manager of a join: call Tmk_sched_start(%d) first, which returns 1 once every process has joined", n.Rank(), n.Rank()))
	}
	value := dsm.Addr(0)
	if fn != 0 {
		words := dsm.Slice[uint64](tmk.forkSlot, 2)
		words[0], words[1] = uint64(fn), 0
		if arg != nil {
			words[1] = 1
			dsm.Slice[C.struct_Tmk_sched_arg](tmk.forkSlot+16, 1)[0] = *arg
		}
		value = tmk.forkSlot
	}
	schedShare(call, n, n.Rank(), value)
	refreshStat(n)
	return n
}

// svm_tmk_sched_fork is Tmk_sched_fork (tmk.c), with the function as an
// address.
//
//export svm_tmk_sched_fork
func svm_tmk_sched_fork(fn C.uintptr_t, arg unsafe.Pointer) {
	if fn == 0 {
		fatal("Tmk_sched_fork", errors.New("no function to fork (NULL): Tmk_sched_exit ends the workers"))
	}
	forkOrExit("Tmk_sched_fork", uintptr(fn), C.Tmk_sched_arg_t(arg))
	C.tmk_call(fn, C.Tmk_sched_arg_t(arg))
}

//export Tmk_sched_exit
func Tmk_sched_exit() { forkOrExit("Tmk_sched_exit", 0, nil) }

// The fields of struct Tmk_stat, in order.
const (
	statAcquires = iota
	statAcquireTime
	statArrivals
	statBroadcasts
	statSignals
	statWaits
	statBytes
	statBytesOfData
	statColdMisses
	statMessages
	statMessagesForAcquires
	statRexmits
	statDiffs
	statTwins
	statRepos
	statTotalDiffSize
	statFields
)

type statCounts [statFields]uint64

// refreshStat adds to the program's Tmk_stat, if it has one, what happened
// since the last refresh: so a program may zero it, or change it.
func refreshStat(n *dsm.Node) {
	p := C.tmk_stat()
	if p == nil {
		return
	}
	s := n.Stats()
	tmk.Lock()
	now := tmk.counts
	tmk.Unlock()
	now[statArrivals] = uint64(s.Barriers)
	now[statBytes] = uint64(s.BytesSent)
	now[statBytesOfData] = uint64(s.DiffBytes)
	now[statColdMisses] = uint64(s.ReadFaults + s.WriteFaults)
	now[statMessages] = uint64(s.MessagesSent)
	now[statMessagesForAcquires] = uint64(s.LockAcquiresRemote)
	now[statDiffs] = uint64(s.DiffsCreated)
	now[statTwins] = uint64(s.Twins)
	now[statTotalDiffSize] = uint64(s.DiffBytes)
	fields := (*[statFields]C.uint)(unsafe.Pointer(p))
	tmk.Lock()
	for i := range fields {
		fields[i] += C.uint(now[i] - tmk.reported[i])
	}
	tmk.reported = now
	tmk.Unlock()
}
