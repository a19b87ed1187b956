/*
 * Tmk.h — the TreadMarks 1.0 interface, for programs written for TreadMarks:
 * they compile unchanged against SVM (svmf cc prog.c, K&R C included) and
 * run as a job (svmf run -np 4 ./prog).
 *
 * Semantics are TreadMarks': lazy release consistency, shared memory from
 * Tmk_malloc and Tmk_sbrk visible to every process at the same address,
 * locks with condition variables, global barriers, Tmk_distribute and the
 * fork-join scheduler. A misused call (an id out of range, a job larger
 * than TMK_NPROCS, waiting on a condition without holding its lock) prints
 * "Tmk_<call>: <what was wrong>" on stderr and exits with status 1;
 * Tmk_malloc and Tmk_sbrk return NULL, after the message, when the shared
 * region is full. The README's TreadMarks table lists every call and where
 * SVM differs.
 *
 * Tmk_distribute copies a process's private data to the same private
 * address in every other process: addresses of globals agree across
 * processes when the program is linked non-PIE, which svmf cc does.
 *
 * Copyright the SVM authors. Licensed under the Apache License, Version 2.0.
 */
#ifndef TMK_H
#define TMK_H

#if !defined(__GNUC__)
#define __attribute__(x)
#endif

/* The largest job (Tmk_startup refuses a larger one); the pages of the
 * default shared region (svmf run -region 256M; Tmk_npages is the job's);
 * the barrier and lock ids of a job started with svmf run's defaults; the
 * condition variables of each lock. */
#define TMK_NPROCS 256
#define TMK_NPAGES 65536
#define TMK_NBARRIERS 64
#define TMK_NLOCKS 1024
#define TMK_NCONDS 4

/* Counts of this process's activity, brought up to date from SVM's
 * counters at every Tmk_barrier, Tmk_sched_start and Tmk_sched_fork of a
 * program that uses Tmk_stat. Each update adds what happened since the
 * last, so a program may zero them (after its initialisation, say). */
struct Tmk_stat {
	unsigned acquires;              /* Tmk_lock_acquire calls */
	unsigned acquire_time;          /* microseconds in them */
	unsigned arrivals;              /* barriers passed */
	unsigned broadcasts;            /* Tmk_lock_cond_broadcast calls */
	unsigned signals;               /* Tmk_lock_cond_signal calls */
	unsigned waits;                 /* Tmk_lock_cond_wait calls */
	unsigned bytes;                 /* protocol bytes sent */
	unsigned bytes_of_data;         /* bytes of the diffs created */
	unsigned cold_misses;           /* page faults (read and write) */
	unsigned messages;              /* protocol messages sent */
	unsigned messages_for_acquires; /* lock acquires that took messages */
	unsigned rexmits;               /* always 0: links are reliable */
	unsigned diffs;                 /* diffs created */
	unsigned twins;                 /* twins made */
	unsigned repos;                 /* always 0: see the README */
	unsigned total_diff_size;       /* the same as bytes_of_data */
};

/* The argument Tmk_sched_fork hands the forked function: pointers to
 * shared data and values, each worker getting its own copy. */
struct Tmk_sched_arg {
	int sharedLen;
	int byvalueLen;
	void *shared[15];
	union {
		short short_by_value;
		int int_by_value;
		long long_by_value;
		float float_by_value;
		double double_by_value;
	} byvalue[15];
};
typedef struct Tmk_sched_arg *Tmk_sched_arg_t;

/* This process's id, the number of processes, the page size and the pages
 * of the shared region, set by Tmk_startup: one struct, so that a Fortran
 * program reaches them as COMMON /TMK/ PROC_ID, NPROCS, PAGE_SIZE, NPAGES. */
struct Tmk {
	unsigned proc_id;
	unsigned nprocs;
	unsigned page_size;
	unsigned npages;
};

#ifdef __cplusplus
extern "C" {
#endif

extern struct Tmk tmk_;
#define Tmk_proc_id tmk_.proc_id
#define Tmk_nprocs tmk_.nprocs
#define Tmk_page_size tmk_.page_size
#define Tmk_npages tmk_.npages

extern struct Tmk_stat Tmk_stat;

/* Join the job. argc and argv are left alone. */
void Tmk_startup(int argc, char *const *argv);

/* Leave the job and exit the process with status. */
void Tmk_exit(int status) __attribute__((__noreturn__));

/* printf to stderr; Tmk_errexit then exits with status 1, which ends the
 * job with that status. */
void Tmk_err(const char *format, ...) __attribute__((__format__(__printf__, 1, 2)));
void Tmk_errexit(const char *format, ...) __attribute__((__format__(__printf__, 1, 2), __noreturn__));

/* Global barrier id (0 .. TMK_NBARRIERS-1), every process. */
void Tmk_barrier(unsigned id);

/* Locks 0 .. TMK_NLOCKS-1. */
void Tmk_lock_acquire(unsigned id);
void Tmk_lock_release(unsigned id);

/* Condition variables 0 .. TMK_NCONDS-1 of each lock. Wait, with the lock
 * held, releases it, sleeps until a signal or broadcast wakes it, and
 * returns holding the lock again, seeing what the waker wrote before it
 * woke it. Signal wakes the longest waiter, broadcast all of them; either
 * may be called with the lock held or not. Waiters loop on their
 * condition, as with TreadMarks: another process may take the lock first.
 * A waiter sleeps on fetch-and-add counter 2^30 + its process id. */
void Tmk_lock_cond_wait(unsigned lock_id, unsigned cond_id);
void Tmk_lock_cond_signal(unsigned lock_id, unsigned cond_id);
void Tmk_lock_cond_broadcast(unsigned lock_id, unsigned cond_id);

/* Copy size bytes of this process's private data at ptr to ptr in every
 * other process, where they are in place when that process leaves the next
 * Tmk_barrier. Any process may distribute; when two distribute the same
 * bytes before one barrier, the higher process id's copy is the one left. */
void Tmk_distribute(const void *ptr, int size);

/* Shared memory, 16-byte aligned, from this process alone. Tmk_sbrk's
 * memory is never freed; Tmk_sbrk(0) returns the end of the last block it
 * gave (NULL before the first). */
void *Tmk_malloc(unsigned size);
void Tmk_free(void *ptr);
void *Tmk_sbrk(unsigned incr);

/* Fork-join: every process calls Tmk_sched_start(manager). The manager's
 * call returns 1 once every process has joined; the others' calls run each
 * function the manager forks and return 0 at Tmk_sched_exit. The manager
 * forks with Tmk_sched_fork(func, arg), which runs func(arg) everywhere
 * (the workers get a copy of *arg, or NULL), and joins again with
 * Tmk_sched_start(manager) before the next fork or Tmk_sched_exit. Join
 * and fork order memory like a barrier. */
int Tmk_sched_start(unsigned manager);
void Tmk_sched_fork(void (*func)(Tmk_sched_arg_t arg), Tmk_sched_arg_t arg);
void Tmk_sched_exit(void);

#ifdef __cplusplus
}
#endif

#endif /* TMK_H */
