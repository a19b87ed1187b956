/* jacobi_mpi: the Jacobi stencil (jacobi.h) in hand-written MPI: every
 * rank keeps its band of rows of both arrays with a ghost row above and
 * below, and after each iteration swaps the boundary rows of the array it
 * wrote with its neighbours (MPI_Sendrecv). Rank 0 then gathers the bands
 * and checks them against a sequential run.
 *   mpirun -np N jacobi-mpi ROWS COLS ITERATIONS */
#include "bands_mpi.h"
#include "jacobi.h"

int main(int argc, char **argv) {
	struct jacobi p = jacobi_args(argc, argv);
	MPI_Init(&argc, &argv);
	struct band band = band_of(p.rows, "jacobi-mpi");
	int lo = band.lo, hi = band.hi, count = band.count;
	/* Local row k + 1 is global row lo + k. */
	size_t local = (size_t)(count + 2) * p.cols;
	void *arrays[2] = {NULL, NULL};
	if (arrays_apart(arrays, 2, local * sizeof(double)) == NULL) {
		fprintf(stderr, "jacobi-mpi: no memory for the band\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	double *a = arrays[0], *b = arrays[1];
	jacobi_init(&p, a + p.cols, b + p.cols, lo, count);
	exchange(a, p.cols, MPI_DOUBLE, &band);
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
			exchange(b, p.cols, MPI_DOUBLE, &band);
		} else {
			jacobi_rows(a1, b1, p.cols, last - first);
			exchange(a, p.cols, MPI_DOUBLE, &band);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double seconds = now() - start;

	/* Untimed: rank 0 gathers the bands and checks them. */
	double *all_a = NULL, *all_b = NULL;
	if (band.me == 0) {
		all_a = malloc(jacobi_bytes(&p));
		all_b = malloc(jacobi_bytes(&p));
		if (all_a == NULL || all_b == NULL) {
			fprintf(stderr, "jacobi-mpi: no memory for the check\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	gather(a, all_a, p.rows, p.cols, MPI_DOUBLE, &band, "jacobi-mpi");
	gather(b, all_b, p.rows, p.cols, MPI_DOUBLE, &band, "jacobi-mpi");
	int ok = 1;
	if (band.me == 0) {
		char params[128], check[256], checksum[64];
		jacobi_params(&p, params, sizeof params);
		ok = jacobi_check(&p, all_a, all_b, check, sizeof check);
		jacobi_checksum(&p, all_a, all_b, checksum, sizeof checksum);
		print_result("jacobi", "mpi", params, band.np, seconds, 0, check, checksum);
	}
	MPI_Finalize();
	return ok ? 0 : 1;
}
