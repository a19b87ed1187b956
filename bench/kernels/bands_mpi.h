/*
 * bands_mpi.h — what the MPI kernels that cut a grid into bands of rows
 * share (sor_mpi.c, jacobi_mpi.c): each rank keeps its band with a ghost
 * row above and below, swaps boundary rows with its neighbours, and rank 0
 * gathers the bands for the check.
 */
#ifndef BANDS_MPI_H
#define BANDS_MPI_H

#include <mpi.h>

#include "yardstick.h"

/* band is this rank's part of a grid of rows: rows lo to hi - 1, count of
 * them, and the ranks above and below (MPI_PROC_NULL at the edges). */
struct band {
	int me, np, lo, hi, count, up, down;
};

/* band_of cuts rows into bands (band_lo) and returns this rank's, or
 * aborts the job when a rank would have no row. */
static inline struct band band_of(int rows, const char *prog) {
	struct band b;
	MPI_Comm_rank(MPI_COMM_WORLD, &b.me);
	MPI_Comm_size(MPI_COMM_WORLD, &b.np);
	b.lo = band_lo(rows, b.me, b.np);
	b.hi = band_lo(rows, b.me + 1, b.np);
	b.count = b.hi - b.lo;
	if (b.count < 1) {
		fprintf(stderr, "%s: %d rows for %d ranks: want a row per rank at least\n", prog, rows, b.np);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	b.up = b.me > 0 ? b.me - 1 : MPI_PROC_NULL;
	b.down = b.me < b.np - 1 ? b.me + 1 : MPI_PROC_NULL;
	return b;
}

/* exchange sends the band's first and last rows of x (rows of w elements
 * of type t, the band's first at row 1) to the neighbours and receives
 * theirs into the ghost rows: row 0 and row count + 1. */
static inline void exchange(void *x, int w, MPI_Datatype t, const struct band *b) {
	int size;
	MPI_Type_size(t, &size);
	char *rows = x;
	size_t row = (size_t)w * (size_t)size;
	MPI_Sendrecv(rows + row, w, t, b->up, 0, rows + (size_t)(b->count + 1) * row, w, t, b->down, 0,
	             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Sendrecv(rows + (size_t)b->count * row, w, t, b->down, 1, rows, w, t, b->up, 1, MPI_COMM_WORLD,
	             MPI_STATUS_IGNORE);
}

/* gather gathers every rank's band of x (rows of w elements of type t, the
 * first at row 1) into all, the whole grid of rows, on rank 0 (all is
 * NULL elsewhere). */
static inline void gather(const void *x, void *all, int rows, int w, MPI_Datatype t, const struct band *b,
                          const char *prog) {
	int size;
	MPI_Type_size(t, &size);
	int *counts = NULL, *displs = NULL;
	if (b->me == 0) {
		counts = malloc(sizeof(int) * b->np);
		displs = malloc(sizeof(int) * b->np);
		if (counts == NULL || displs == NULL) {
			fprintf(stderr, "%s: no memory for the check\n", prog);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		for (int r = 0; r < b->np; r++) {
			displs[r] = band_lo(rows, r, b->np) * w;
			counts[r] = band_lo(rows, r + 1, b->np) * w - displs[r];
		}
	}
	MPI_Gatherv((const char *)x + (size_t)w * (size_t)size, b->count * w, t, all, counts, displs, t, 0,
	            MPI_COMM_WORLD);
	free(counts);
	free(displs);
}

#endif
