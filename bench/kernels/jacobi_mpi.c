/* jacobi_mpi: the Jacobi stencil (jacobi.h) in hand-written MPI: every
 * rank keeps its band of rows of both arrays with a ghost row above and
 * below, and after each iteration swaps the boundary rows of the array it
 * wrote with its neighbours (MPI_Sendrecv). Rank 0 then gathers the bands
 * and checks them against a sequential run.
 *   mpirun -np N jacobi-mpi ROWS COLS ITERATIONS */
#include <mpi.h>

#include "jacobi.h"

/* exchange sends this band's first and last rows of x to the neighbours
 * and receives theirs into the ghost rows: row 0 and row count + 1. */
static void exchange(double *x, int cols, int count, int up, int down) {
	MPI_Sendrecv(x + cols, cols, MPI_DOUBLE, up, 0, x + (size_t)(count + 1) * cols, cols, MPI_DOUBLE, down, 0,
	             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Sendrecv(x + (size_t)count * cols, cols, MPI_DOUBLE, down, 1, x, cols, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
	             MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
	struct jacobi p = jacobi_args(argc, argv);
	MPI_Init(&argc, &argv);
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int lo = band_lo(p.rows, me, np), hi = band_lo(p.rows, me + 1, np), count = hi - lo;
	if (count < 1) {
		fprintf(stderr, "jacobi-mpi: %d rows for %d ranks: want a row per rank at least\n", p.rows, np);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int up = me > 0 ? me - 1 : MPI_PROC_NULL, down = me < np - 1 ? me + 1 : MPI_PROC_NULL;
	/* Local row k + 1 is global row lo + k. */
	size_t local = (size_t)(count + 2) * p.cols;
	double *a = calloc(local, sizeof(double)), *b = calloc(local, sizeof(double));
	if (a == NULL || b == NULL) {
		fprintf(stderr, "jacobi-mpi: no memory for the band\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	jacobi_init(&p, a + p.cols, b + p.cols, lo, count);
	exchange(a, p.cols, count, up, down);
	int first, last;
	jacobi_interior(&p, lo, hi, &first, &last);
	double *a1 = a + (size_t)(first - lo + 1) * p.cols, *b1 = b + (size_t)(first - lo + 1) * p.cols;
	double start = 0;
	for (int it = 0; it < p.iters; it++) {
		if (it == 1) {
			MPI_Barrier(MPI_COMM_WORLD);
			start = now();
		}
		if (it % 2 == 0) {
			jacobi_rows(b1, a1, p.cols, last - first);
			exchange(b, p.cols, count, up, down);
		} else {
			jacobi_rows(a1, b1, p.cols, last - first);
			exchange(a, p.cols, count, up, down);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double seconds = now() - start;

	/* Untimed: rank 0 gathers the bands and checks them. */
	double *all_a = NULL, *all_b = NULL;
	int *counts = NULL, *displs = NULL;
	if (me == 0) {
		all_a = malloc(jacobi_bytes(&p));
		all_b = malloc(jacobi_bytes(&p));
		counts = malloc(sizeof(int) * np);
		displs = malloc(sizeof(int) * np);
		if (all_a == NULL || all_b == NULL || counts == NULL || displs == NULL) {
			fprintf(stderr, "jacobi-mpi: no memory for the check\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		for (int r = 0; r < np; r++) {
			displs[r] = band_lo(p.rows, r, np) * p.cols;
			counts[r] = band_lo(p.rows, r + 1, np) * p.cols - displs[r];
		}
	}
	MPI_Gatherv(a + p.cols, count * p.cols, MPI_DOUBLE, all_a, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Gatherv(b + p.cols, count * p.cols, MPI_DOUBLE, all_b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	int ok = 1;
	if (me == 0) {
		char params[128], check[256], checksum[64];
		jacobi_params(&p, params, sizeof params);
		ok = jacobi_check(&p, all_a, all_b, check, sizeof check);
		jacobi_checksum(&p, all_a, all_b, checksum, sizeof checksum);
		print_result("jacobi", "mpi", params, np, seconds, 0, check, checksum);
	}
	MPI_Finalize();
	return ok ? 0 : 1;
}
