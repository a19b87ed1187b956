/* barrier_mpi: the time of one MPI_Barrier, the reference for
 * barrier_svm.c, measured the same way.
 *   mpirun -np N barrier-mpi COUNT */
#include <mpi.h>

#include "yardstick.h"

#define WARMUP 10

int main(int argc, char **argv) {
	int count = arg_int(argc, argv, 1, 1, "COUNT");
	MPI_Init(&argc, &argv);
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	for (int i = 0; i < WARMUP; i++) MPI_Barrier(MPI_COMM_WORLD);
	double start = now();
	for (int i = 0; i < count; i++) MPI_Barrier(MPI_COMM_WORLD);
	double seconds = now() - start;
	if (me == 0) {
		char params[64];
		snprintf(params, sizeof params, "%d barriers", count);
		print_result("barrier", "mpi", params, np, seconds, count, "ok", "");
	}
	MPI_Finalize();
	return 0;
}
