/*
 * svm.h — SVM's C interface: shared memory across the processes (ranks) of
 * a job, kept coherent by lazy release consistency.
 *
 * Link with -lsvm -lpthread (svmf cc does both). Run the program as a job:
 *     svmf run -np 4 ./prog
 *
 * Every rank calls svm_init() first. Memory from svm_alloc (collective) or
 * svm_malloc (one rank) lies in a region mapped at the same address in every
 * rank, so pointers stored in it are valid everywhere. What a rank wrote
 * before svm_unlock(l) is visible to the next rank that takes lock l with
 * svm_lock(l); what every rank wrote before svm_barrier(b) is visible to all
 * after it.
 *
 * Every call returns 0 on success and -1 on failure (unless it says
 * otherwise); svm_last_error() then gives the message. Calls may be made
 * from any thread; they are serialized. As with TreadMarks (and MPI's
 * THREAD_FUNNELED), no thread may write shared memory while another is
 * inside a call: the engine then need not write-protect the pages written
 * since the last synchronisation around each call. A program whose threads
 * do write shared memory during calls runs with SVM_THREADS=multiple in
 * its environment. The coherence engine runs in another
 * process, so a rank that is stopped in a debugger stops nobody else's
 * faults but its own.
 *
 * A system call that writes into shared memory (read(2) into a shared
 * buffer) fails with EFAULT unless the buffer was made current first:
 * call svm_validate(buf, len, 1) before it.
 *
 * Copyright the SVM authors. Licensed under the Apache License, Version 2.0.
 */
#ifndef SVM_H
#define SVM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Join the job this process was started in (svmf run or svmd set its
 * environment: SVM_SOCKET, SVM_RANK) and map the shared region. */
int svm_init(void);

/* Leave the job and unmap the region. Shared memory must not be touched
 * after it; the engine keeps serving what this rank wrote. */
int svm_finalize(void);

/* This rank (0 .. svm_nprocs()-1), the job's size; -1 before svm_init. */
int svm_rank(void);
int svm_nprocs(void);

/* The size of a page of shared memory: the unit of coherence. */
size_t svm_page_size(void);

/* Allocate size bytes of shared memory, page aligned, into *out. Collective:
 * every rank calls it in the same order with the same size and gets the
 * same address. */
int svm_alloc(size_t size, void **out);

/* Allocate size bytes (16-byte aligned) for this rank alone; hand the
 * address to the others with svm_share. */
int svm_malloc(size_t size, void **out);

/* Return memory from svm_alloc or svm_malloc. */
int svm_free(void *ptr);

/* Collective: every rank calls it with the same root; *out is the pointer
 * root passed. Orders memory like a barrier. */
int svm_share(int root, void *ptr, void **out);

/* Locks 0 .. (job's lock count - 1), 1024 by default (svmf run --locks). */
int svm_lock(int id);
int svm_unlock(int id);

/* Barriers 0 .. (job's barrier count - 1), 64 by default (svmf run
 * --barriers): every rank calls svm_barrier(id). */
int svm_barrier(int id);

/* A barrier over a processor set: the n ranks in members (which include the
 * caller) call it with the same id and set; other ranks take no part. Sets
 * in use at the same time must use different ids unless they are disjoint. */
int svm_barrier_among(int id, int *members, int n);

/* Share among a processor set: every member calls it with the same id, set
 * and root; *out is the value root passed. A barrier over the set that
 * carries one value. */
int svm_share_among(int id, int *members, int n, int root, uint64_t value, uint64_t *out);

/* Add delta to shared counter c and store the value it had in *old.
 * Counters start at 0 and are updated atomically by one engine, in one round
 * trip; they order no memory. Self-scheduled loops take chunks from them. */
int svm_fetch_add(uint32_t counter, int64_t delta, int64_t *old);

/* Make [ptr, ptr+size) current now (writable if write != 0): before a system
 * call writes into shared memory, or to fetch a range in one go. */
int svm_validate(void *ptr, size_t size, int write);

/* Place the home of the pages holding [ptr, ptr+size) at rank home (the
 * home-based protocol: the home writes its pages in place, others send it
 * their diffs and fetch whole pages from it). Takes effect at the next
 * barrier of every rank; ranks that place one page at different homes before
 * the same barrier make it fail. Without placements a page's home moves to
 * the rank that alone wrote it between two barriers. */
int svm_set_home(void *ptr, size_t size, int home);

/* This rank's counters. Messages are protocol messages between ranks. */
typedef struct svm_stats {
	int64_t read_faults, write_faults, twins;
	int64_t diffs_created, diffs_applied, diff_bytes;
	int64_t messages_sent, messages_received, bytes_sent, bytes_received;
	int64_t lock_acquires_local, lock_acquires_remote, barriers, invalidations;
} svm_stats;
int svm_get_stats(svm_stats *out);

/* Copy the message of the last failed call in this process into buf (at most
 * len bytes, NUL-terminated) and return the message's full length; 0 when no
 * call has failed. */
size_t svm_last_error(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#include "svm_fortran.h"

#endif /* SVM_H */
