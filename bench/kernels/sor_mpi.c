/* sor_mpi: red-black SOR (sor.h) in hand-written MPI, as the study's PVM
 * version: every rank keeps its band of rows of both colours with a ghost
 * row above and below, and after each half-step swaps the boundary rows of
 * the colour it wrote with its neighbours (MPI_Sendrecv). Rank 0 then
 * gathers the bands and checks them against a sequential run.
 *   mpirun -np N sor-mpi ROWS COLS ITERATIONS */
#include "bands_mpi.h"
#include "sor.h"

int main(int argc, char **argv) {
	struct sor p = sor_args(argc, argv);
	MPI_Init(&argc, &argv);
	struct band band = band_of(p.rows, "sor-mpi");
	int lo = band.lo, hi = band.hi, count = band.count;
	/* Local row k + 1 is global row lo + k. */
	size_t local = (size_t)(count + 2) * p.w;
	float *red = calloc(local, sizeof(float)), *black = calloc(local, sizeof(float));
	if (red == NULL || black == NULL) {
		fprintf(stderr, "sor-mpi: no memory for the band\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	sor_init(&p, red + p.w, black + p.w, lo, count);
	exchange(black, p.w, MPI_FLOAT, &band);
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
		exchange(red, p.w, MPI_FLOAT, &band);
		sor_rows(black1, red1, p.w, last - first);
		exchange(black, p.w, MPI_FLOAT, &band);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double seconds = now() - start;

	/* Untimed: rank 0 gathers the bands and checks them. */
	float *all_red = NULL, *all_black = NULL;
	if (band.me == 0) {
		all_red = malloc(sor_bytes(&p));
		all_black = malloc(sor_bytes(&p));
		if (all_red == NULL || all_black == NULL) {
			fprintf(stderr, "sor-mpi: no memory for the check\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	gather(red, all_red, p.rows, p.w, MPI_FLOAT, &band, "sor-mpi");
	gather(black, all_black, p.rows, p.w, MPI_FLOAT, &band, "sor-mpi");
	int ok = 1;
	if (band.me == 0) {
		char params[128], check[256], checksum[64];
		sor_params(&p, params, sizeof params);
		ok = sor_check(&p, all_red, all_black, check, sizeof check);
		sor_checksum(&p, all_red, all_black, checksum, sizeof checksum);
		print_result("sor", "mpi", params, band.np, seconds, 0, check, checksum);
	}
	MPI_Finalize();
	return ok ? 0 : 1;
}
