/*
 * svm_fortran.h — the SVM-Fortran runtime (Berrendorf and Gerndt,
 * "Compiling SVM-Fortran for the Intel Paragon XP/S", sections 3 and 4):
 * the calls the SVM-Fortran compiler generates, also usable by hand from C
 * and, through the module svm, from Fortran. Included by svm.h.
 *
 * Call svm_init() first. Every rank runs the same declarations, so the
 * handles of arrangements and templates (1, 2, ... in declaration order)
 * agree across ranks. Arrays of coordinates and bounds have one element per
 * dimension, first (innermost) dimension first; strings are passed with
 * their length, as Fortran passes them.
 *
 * A misused call ends the program with "svm_<call>: <what was wrong>" on
 * stderr and exit status 1, as a Fortran run-time error does.
 *
 * The runtime keeps its ids out of the program's way: processor-set nesting
 * level k uses barrier id (barriers - 1 - k), at most 16 levels; critical
 * sections use lock ids [locks/2, 3*locks/4) and page locks
 * [3*locks/4, locks); dynamic loops use fetch-and-add counters from 2^31.
 *
 * Copyright the SVM authors. Licensed under the Apache License, Version 2.0.
 */
#ifndef SVM_FORTRAN_H
#define SVM_FORTRAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Distribution formats of one template dimension (svm_distribute). */
#define SVM_COLLAPSED 0     /* '*': not distributed */
#define SVM_BLOCK 1         /* BLOCK: ceil(N/P) consecutive elements each */
#define SVM_CYCLIC 2        /* CYCLIC(l): segments of l dealt round robin */
#define SVM_GENERAL_BLOCK 3 /* GENERAL_BLOCK: given block sizes */

/* Loop scheduling strategies (svm_loop_begin). */
#define SVM_SCHED_BLOCK 1        /* direct: BLOCK over the active set */
#define SVM_SCHED_CYCLIC 2       /* direct: CYCLIC(chunk) */
#define SVM_SCHED_ON_HOME 3      /* predefined: ON_HOME(T(I1+o1, ...)) */
#define SVM_SCHED_DYNAMIC 4      /* self scheduling, chunks from a shared counter */
#define SVM_SCHED_SEMI_DYNAMIC 5 /* dynamic once, recorded in a template, then reused */

/* --- Processor sets ------------------------------------------------------
 * The active processor set (APS) executes the current task; position 0 is
 * its master. Sets are kept locally on every rank: entering and leaving one
 * sends no message. */

/* NUMPROC(): the number of processors in the active set. */
int svm_numproc(void);
/* MYPROCSET(): this rank's position in the active set (0: the master). */
int svm_myprocset(void);
/* Make the active set's members at positions[0..n-1] (0-based) the active
 * set. Returns 1 on its members, which call svm_pset_leave at the end of its
 * work; 0 on the others, which go on in the current set. */
int svm_pset_enter(int *positions, int n);
void svm_pset_leave(void);
/* A barrier over the active set. */
void svm_pset_barrier(void);

/* Parallel sections: n sections placed on the active set — evenly, or on
 * consecutive positions of sizes[0..nsizes-1] processors (SECTION ON P);
 * nsizes 0 for even placement, which is also used when the sizes add up
 * to more than the active set. Then loop:
 *     while ((s = svm_section_next()) != 0) { run section s (1..n) }
 * Each section runs in its own derived set; the construct ends with a
 * barrier over the set. */
void svm_sections_begin(int n, int *sizes, int nsizes);
int svm_section_next(void);

/* Exclusive mode (the paper's Figure 4): the master sends continuation
 * codes, the other members wait for them. Ordered like a barrier over the
 * active set. */
void svm_dispatch_send(int code);
int svm_dispatch_recv(void);
/* Values that ride on a dispatch: private data the master set in exclusive
 * mode and the members read after they resume. Before svm_dispatch_send
 * the master adds the n bytes at p with svm_dispatch_put, as many times as
 * it has values; each member that svm_dispatch_recv resumes takes them, in
 * the same order and sizes, with svm_dispatch_get before it waits again. A
 * value of another size than the master's ends the program.
 * svm_dispatch_get writes memory only where it does not hold the value
 * already, so p may be a constant the program passed as an argument. */
void svm_dispatch_put(void *p, size_t n);
void svm_dispatch_get(void *p, size_t n);

/* --- Processor arrangements and templates --------------------------------- */

/* PROCESSORS name(extents[0], ..., extents[rank-1]); returns its handle.
 * Arrangement index i (column-major) is position i of the active set. */
int svm_processors(char *name, int namelen, int rank, int *extents);

/* Give up an arrangement or a template (when the unit declaring it
 * returns); its handle may be given out again. */
void svm_release_processors(int p);
void svm_release_template(int t);

/* TEMPLATE name(:, ...) of the given rank: state empty; returns its handle. */
int svm_template(char *name, int namelen, int rank);
/* CREATE: bounds lo..hi per dimension; empty -> declared. */
void svm_template_create(int t, int *lo, int *hi);
/* DEFINE: new bounds for an empty or declared template -> declared. */
void svm_template_define(int t, int *lo, int *hi);
/* UNDEF: defined -> declared (the distribution is dropped). */
void svm_template_undef(int t);
/* DESTROY: -> empty. */
void svm_template_destroy(int t);

/* DISTRIBUTE template t onto arrangement p over the active set: formats[d]
 * and segments[d] (CYCLIC's l) per template dimension; non-collapsed
 * dimensions map in order onto p's dimensions. sizes holds the block sizes
 * of the GENERAL_BLOCK dimensions, one per processor of the arrangement
 * dimension, dimension after dimension (NULL if none). Declared or
 * defined -> defined. */
void svm_distribute(int t, int p, int *formats, int *segments, int *sizes);
/* REDISTRIBUTE: the same, for a defined template, anywhere in the program. */
void svm_redistribute(int t, int p, int *formats, int *segments, int *sizes);
/* Indirect: DISTRIBUTE (I) ONTO P(MAP(I)) for a rank-1 template onto a
 * rank-1 arrangement: map[i] is the processor (1..extent) of element lo+i. */
void svm_distribute_indirect(int t, int p, int *map);
/* Linked: DISTRIBUTE (I) ONTO HOME(H(f(I))): element lo+i of rank-1
 * template t goes to the owner of H's element targets[i*rank(H) ..]. */
void svm_distribute_linked(int t, int home, int *targets);
/* The lower and upper bound of dimension dim (1-based) of a template. */
int svm_template_lbound(int t, int dim);
int svm_template_ubound(int t, int dim);
/* The rank owning an element (where it is known locally), and whether this
 * rank owns it (1/0). */
int svm_owner(int t, int *coords);
int svm_owns(int t, int *coords);

/* --- Parallel loops --------------------------------------------------------
 * Every member of the active set runs:
 *     h = svm_loop_begin(strategy, ndims, lo, hi, chunk, t, offsets);
 *     while (svm_loop_next(h, blo, bhi)) for each i in blo..bhi ...
 * svm_loop_next fills one box (blo[d]..bhi[d] per dimension) of this rank's
 * iterations; when it returns 0 the loop has ended with a barrier over the
 * set. Direct and dynamic strategies split the outermost (last) dimension.
 * chunk: CYCLIC's and the dynamic strategies' chunk (0: 1). t: ON_HOME's and
 * SEMI_DYNAMIC's template (0 otherwise). offsets: ON_HOME's, or NULL. */
int svm_loop_begin(int strategy, int ndims, int *lo, int *hi, int chunk, int t, int *offsets);
int svm_loop_next(int h, int *lo, int *hi);

/* --- Synchronization ---------------------------------------------------- */

/* Critical sections, by name: one rank of the job inside a name at a time. */
void svm_critical_begin(char *name, int namelen);
void svm_critical_end(char *name, int namelen);
/* Page locks: lock the pages holding [ptr, ptr+size). */
void svm_page_lock(void *ptr, size_t size);
void svm_page_unlock(void *ptr, size_t size);

/* --- Shared data -------------------------------------------------------- */

/* Shared variables of a subprogram: allocated by every member of the active
 * set (same address everywhere, starting on a page of its own: a block of
 * more than a page at a cache line of that page that differs from block to
 * block), freed by every member with a barrier over the set first. */
void *svm_shared_alloc(size_t size);
void svm_shared_free(void *ptr);
/* COMMON /name/: allocated for the active set when first named, the same
 * block on later calls; svm_commons_free frees them all at the end of the
 * main program. */
void *svm_common(char *name, int namelen, size_t size);
void svm_commons_free(void);

#ifdef __cplusplus
}
#endif

#endif /* SVM_FORTRAN_H */
