/* sor_mpi: red-black SOR (sor.h) in hand-written MPI, as the study's PVM
 * version: every rank keeps its band of rows of both colours with a ghost
 * row above and below, and after each half-step swaps the boundary rows of
 * the colour it wrote with its neighbours (MPI_Sendrecv). Rank 0 then
 * gathers the bands and checks them against a sequential run.
 *   mpirun -np N sor-mpi ROWS COLS ITERATIONS */
#include <mpi.h>

#include "sor.h"

/* exchange sends this band's first and last rows of a to the neighbours
 * and receives theirs into the ghost rows: row 0 and row count + 1. */
static void exchange(float *a, int w, int count, int up, int down) {
	MPI_Sendrecv(a + w, w, MPI_FLOAT, up, 0, a + (size_t)(count + 1) * w, w, MPI_FLOAT, down, 0, MPI_COMM_WORLD,
	             MPI_STATUS_IGNORE);
	MPI_Sendrecv(a + (size_t)count * w, w, MPI_FLOAT, down, 1, a, w, MPI_FLOAT, up, 1, MPI_COMM_WORLD,
	             MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
	struct sor p = sor_args(argc, argv);
	MPI_Init(&argc, &argv);
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int lo = band_lo(p.rows, me, np), hi = band_lo(p.rows, me + 1, np), count = hi - lo;
	if (count < 1) {
		fprintf(stderr, "sor-mpi: %d rows for %d ranks: want a row per rank at least\n", p.rows, np);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int up = me > 0 ? me - 1 : MPI_PROC_NULL, down = me < np - 1 ? me + 1 : MPI_PROC_NULL;
	/* Local row k + 1 is global row lo + k. */
	size_t local = (size_t)(count + 2) * p.w;
	float *red = calloc(local, sizeof(float)), *black = calloc(local, sizeof(float));
	if (red == NULL || black == NULL) {
		fprintf(stderr, "sor-mpi: no memory for the band\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	sor_init(&p, red + p.w, black + p.w, lo, count);
	exchange(black, p.w, count, up, down);
	int first, last;
	sor_interior(&p, lo, hi, &first, &last);
	float *red1 = red + (size_t)(first - lo + 1) * p.w, *black1 = black + (size_t)(first - lo + 1) * p.w;
	double start = 0;
	for (int it = 0; it < p.iters; it++) {
		if (it == 1) {
			MPI_Barrier(MPI_COMM_WORLD);
			start = now();
		}
		sor_rows(red1, black1, p.w, last - first);
		exchange(red, p.w, count, up, down);
		sor_rows(black1, red1, p.w, last - first);
		exchange(black, p.w, count, up, down);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double seconds = now() - start;

	/* Untimed: rank 0 gathers the bands and checks them. */
	float *all_red = NULL, *all_black = NULL;
	int *counts = NULL, *displs = NULL;
	if (me == 0) {
		all_red = malloc(sor_bytes(&p));
		all_black = malloc(sor_bytes(&p));
		counts = malloc(sizeof(int) * np);
		displs = malloc(sizeof(int) * np);
		if (all_red == NULL || all_black == NULL || counts == NULL || displs == NULL) {
			fprintf(stderr, "sor-mpi: no memory for the check\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		for (int r = 0; r < np; r++) {
			displs[r] = band_lo(p.rows, r, np) * p.w;
			counts[r] = band_lo(p.rows, r + 1, np) * p.w - displs[r];
		}
	}
	MPI_Gatherv(red + p.w, count * p.w, MPI_FLOAT, all_red, counts, displs, MPI_FLOAT, 0, MPI_COMM_WORLD);
	MPI_Gatherv(black + p.w, count * p.w, MPI_FLOAT, all_black, counts, displs, MPI_FLOAT, 0, MPI_COMM_WORLD);
	int ok = 1;
	if (me == 0) {
		char params[128], check[256], checksum[64];
		sor_params(&p, params, sizeof params);
		ok = sor_check(&p, all_red, all_black, check, sizeof check);
		sor_checksum(&p, all_red, all_black, checksum, sizeof checksum);
		print_result("sor", "mpi", params, np, seconds, 0, check, checksum);
	}
	MPI_Finalize();
	return ok ? 0 : 1;
}
