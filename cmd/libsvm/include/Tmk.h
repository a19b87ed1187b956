/*
 * Tmk.h — the TreadMarks interface, for programs written for TreadMarks:
 * they compile unchanged against SVM (svmf cc prog.c) and run as a job
 * (svmf run -np 4 ./prog).
 *
 * Semantics are TreadMarks': lazy release consistency, shared memory from
 * Tmk_malloc visible to every process at the same address, locks and global
 * barriers. A misused call (lock out of range, a job larger than TMK_NPROCS,
 * Tmk_distribute on a rank other than 0) prints "Tmk_<call>: <what was
 * wrong>" on stderr and exits with status 1; Tmk_malloc returns NULL, after
 * the message, when the shared region is full.
 *
 * Tmk_distribute copies rank 0's private data to the same private address in
 * every other rank: addresses of globals agree across ranks when the program
 * is linked non-PIE, which svmf cc does.
 *
 * Copyright the SVM authors. Licensed under the Apache License, Version 2.0.
 */
#ifndef TMK_H
#define TMK_H

#ifdef __cplusplus
extern "C" {
#endif

/* The largest job (Tmk_startup refuses a larger one), and the lock and
 * barrier ids of a job started with svmf run's defaults. */
#define TMK_NPROCS 256
#define TMK_NLOCKS 1024
#define TMK_NBARRIERS 64

/* This process's id and the number of processes, set by Tmk_startup. */
extern unsigned Tmk_proc_id;
extern unsigned Tmk_nprocs;

/* Join the job. argc and argv are left alone. */
void Tmk_startup(int argc, char **argv);

/* Leave the job and exit the process with status. */
void Tmk_exit(int status);

/* Shared memory, 16-byte aligned, from this process alone. */
void *Tmk_malloc(unsigned size);
void Tmk_free(void *ptr);

/* Rank 0 only: copy size bytes of private data at ptr to ptr in every other
 * process, where they are in place when that process leaves the next
 * Tmk_barrier. */
void Tmk_distribute(void *ptr, unsigned size);

/* Global barrier id (0 .. TMK_NBARRIERS-1), every process. */
void Tmk_barrier(unsigned id);

/* Locks 0 .. TMK_NLOCKS-1. */
void Tmk_lock_acquire(unsigned id);
void Tmk_lock_release(unsigned id);

#ifdef __cplusplus
}
#endif

#endif /* TMK_H */
