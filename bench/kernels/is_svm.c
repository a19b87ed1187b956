/* is_svm: the integer sort (is.h) with the TreadMarks calls, as the
 * study's TreadMarks version and bench/is: each process counts its keys
 * into private buckets, adds them into shared buckets under a lock, waits
 * at a barrier and ranks its keys from the shared totals.
 *
 * The shared counts must start from zero in every iteration without a
 * second barrier: there are two shared arrays, used in alternate
 * iterations, each with a word naming the iteration that last wrote it.
 * The first process to take the lock in an iteration finds an older
 * iteration there and stores its counts instead of adding them. An array
 * is reused two iterations later, after a barrier that every reader of its
 * previous counts has passed.
 *
 * After the timed part every process writes its ranks into a shared array
 * and process 0 checks them against a sequential run.
 *   svmf run -np N is-svm KEYS_LOG2 RANGE_LOG2 ITERATIONS */
#include "Tmk.h"
#include "is.h"

#define BUCKET_LOCK 0

int32_t *buckets[2]; /* shared: max_key counts, then the iteration that wrote them */
int32_t *all_ranks;  /* shared: every key's rank, for the check */

int main(int argc, char **argv) {
	struct is p = is_args(argc, argv);
	Tmk_startup(argc, argv);
	if (Tmk_proc_id == 0) {
		for (int b = 0; b < 2; b++) {
			buckets[b] = Tmk_malloc(sizeof(int32_t) * (unsigned)(p.max_key + 1));
			if (buckets[b] == NULL) Tmk_exit(1); /* Tmk_malloc said why */
			buckets[b][p.max_key] = 0;
		}
		all_ranks = Tmk_malloc(sizeof(int32_t) * (unsigned)p.keys);
		if (all_ranks == NULL) Tmk_exit(1);
		Tmk_distribute(buckets, sizeof buckets);
		Tmk_distribute(&all_ranks, sizeof all_ranks);
	}
	Tmk_barrier(0);
	long lo = (long)((int64_t)p.keys * Tmk_proc_id / Tmk_nprocs);
	long count = (long)((int64_t)p.keys * (Tmk_proc_id + 1) / Tmk_nprocs) - lo;
	void *arrays[2] = {NULL, NULL};
	int32_t *counts = malloc(sizeof(int32_t) * (size_t)p.max_key), *less = malloc(sizeof(int32_t) * (size_t)p.max_key);
	if (arrays_apart(arrays, 2, sizeof(int32_t) * (size_t)(count + 1)) == NULL || counts == NULL || less == NULL) {
		fprintf(stderr, "is-svm: no memory for the keys\n");
		Tmk_exit(1);
	}
	int32_t *keys = arrays[0], *ranks = arrays[1];
	is_generate(&p, keys, lo, count);
	Tmk_barrier(0);
	double start = 0;
	for (int it = 1; it <= p.iters; it++) {
		if (it == 2) start = now();
		is_modify(&p, keys, lo, count, it);
		is_count(&p, keys, count, counts);
		int32_t *shared = buckets[it % 2];
		Tmk_lock_acquire(BUCKET_LOCK);
		if (shared[p.max_key] != it) {
			memcpy(shared, counts, sizeof(int32_t) * (size_t)p.max_key);
			shared[p.max_key] = it;
		} else {
			for (int k = 0; k < p.max_key; k++) shared[k] += counts[k];
		}
		Tmk_lock_release(BUCKET_LOCK);
		Tmk_barrier(0);
		is_rank(&p, keys, count, ranks, shared, less);
	}
	double seconds = now() - start;
	memcpy(all_ranks + lo, ranks, sizeof(int32_t) * (size_t)count);
	Tmk_barrier(0);
	int ok = 1;
	if (Tmk_proc_id == 0) {
		char params[128], check[256], checksum[64];
		is_params(&p, params, sizeof params);
		ok = is_check(&p, all_ranks, check, sizeof check);
		is_checksum(&p, all_ranks, checksum, sizeof checksum);
		print_result("is", "svm", params, (int)Tmk_nprocs, seconds, 0, check, checksum);
	}
	Tmk_barrier(0); /* the others stay until process 0 has read their ranks */
	Tmk_exit(ok ? 0 : 1);
	return 0;
}
