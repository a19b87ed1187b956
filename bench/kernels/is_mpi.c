/* is_mpi: the integer sort (is.h) in hand-written MPI: each rank counts
 * its keys into private buckets, MPI_Allreduce sums the buckets of all
 * ranks into every rank, and each ranks its keys from the totals. Rank 0
 * then gathers the ranks and checks them against a sequential run.
 *   mpirun -np N is-mpi KEYS_LOG2 RANGE_LOG2 ITERATIONS */
#include <mpi.h>

#include "is.h"

int main(int argc, char **argv) {
	struct is p = is_args(argc, argv);
	MPI_Init(&argc, &argv);
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	long lo = (long)((int64_t)p.keys * me / np), count = (long)((int64_t)p.keys * (me + 1) / np) - lo;
	void *arrays[2] = {NULL, NULL};
	int32_t *counts = malloc(sizeof(int32_t) * (size_t)p.max_key), *totals = malloc(sizeof(int32_t) * (size_t)p.max_key);
	int32_t *less = malloc(sizeof(int32_t) * (size_t)p.max_key);
	if (arrays_apart(arrays, 2, sizeof(int32_t) * (size_t)(count + 1)) == NULL || counts == NULL || totals == NULL ||
	    less == NULL) {
		fprintf(stderr, "is-mpi: no memory for the keys\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int32_t *keys = arrays[0], *ranks = arrays[1];
	is_generate(&p, keys, lo, count);
	double start = 0;
	for (int it = 1; it <= p.iters; it++) {
		if (it == 2) {
			MPI_Barrier(MPI_COMM_WORLD);
			start = now();
		}
		is_modify(&p, keys, lo, count, it);
		is_count(&p, keys, count, counts);
		MPI_Allreduce(counts, totals, p.max_key, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
		is_rank(&p, keys, count, ranks, totals, less);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double seconds = now() - start;

	/* Untimed: rank 0 gathers the ranks and checks them. */
	int32_t *all_ranks = NULL;
	int *rcounts = NULL, *displs = NULL;
	if (me == 0) {
		all_ranks = malloc(sizeof(int32_t) * (size_t)p.keys);
		rcounts = malloc(sizeof(int) * np);
		displs = malloc(sizeof(int) * np);
		if (all_ranks == NULL || rcounts == NULL || displs == NULL) {
			fprintf(stderr, "is-mpi: no memory for the check\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		for (int r = 0; r < np; r++) {
			displs[r] = (int)((int64_t)p.keys * r / np);
			rcounts[r] = (int)((int64_t)p.keys * (r + 1) / np) - displs[r];
		}
	}
	MPI_Gatherv(ranks, (int)count, MPI_INT32_T, all_ranks, rcounts, displs, MPI_INT32_T, 0, MPI_COMM_WORLD);
	int ok = 1;
	if (me == 0) {
		char params[128], check[256], checksum[64];
		is_params(&p, params, sizeof params);
		ok = is_check(&p, all_ranks, check, sizeof check);
		is_checksum(&p, all_ranks, checksum, sizeof checksum);
		print_result("is", "mpi", params, np, seconds, 0, check, checksum);
	}
	MPI_Finalize();
	return ok ? 0 : 1;
}
