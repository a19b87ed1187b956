/*
 * is.h — the NAS integer sort kernel (IS), the kernel of is_seq.c, is_svm.c
 * and is_mpi.c, as bench/is runs it: 2^K keys in [0, 2^R) ranked by a
 * bucket count several times, the rank of a key being the number of keys
 * smaller than it. Each rank holds an equal share of the keys, counts them
 * into private buckets, combines its counts with the others' (the SVM
 * version adds them into shared buckets under a lock, the MPI version calls
 * MPI_Allreduce) and ranks its keys from the totals.
 *
 * The keys come from NAS's generator (bench/internal/nas) from seed
 * 314159265: key i is 2^R/4 times the sum of random numbers 4i+1 to 4i+4,
 * truncated; a rank finds the start of its share by jumping ahead. Before
 * iteration it (from 1), key it becomes it and key it + iterations becomes
 * 2^R - it, as in NAS. The keys are NAS's and bench/is's.
 */
#ifndef IS_H
#define IS_H

#include <string.h>

#include "yardstick.h"

#define IS_USAGE "KEYS_LOG2 RANGE_LOG2 ITERATIONS  (at least 2 iterations: the first is not timed)"

/* NAS's multiplier 5^13, IS's seed, and the generator's modulus 2^46. */
#define IS_A UINT64_C(1220703125)
#define IS_SEED UINT64_C(314159265)
#define IS_MASK ((UINT64_C(1) << 46) - 1)

struct is {
	int keys_log2, range_log2, iters;
	long keys;   /* 2^keys_log2 */
	int max_key; /* 2^range_log2: the number of buckets */
};

/* is_args reads the problem from the command line, or exits. */
static inline struct is is_args(int argc, char **argv) {
	struct is p;
	p.keys_log2 = arg_int(argc, argv, 1, 2, IS_USAGE);
	p.range_log2 = arg_int(argc, argv, 2, 2, IS_USAGE);
	p.iters = arg_int(argc, argv, 3, 2, IS_USAGE);
	if (p.keys_log2 > 30 || p.range_log2 > 28) {
		fprintf(stderr, "%s: at most 2^30 keys in [0, 2^28)\nusage: %s %s\n", argv[0], argv[0], IS_USAGE);
		exit(2);
	}
	p.keys = 1L << p.keys_log2;
	p.max_key = 1 << p.range_log2;
	if (2L * p.iters >= p.keys || p.iters >= p.max_key) {
		fprintf(stderr, "%s: %d iterations: want fewer than half the keys and fewer than the key range\n", argv[0],
		        p.iters);
		exit(2);
	}
	return p;
}

/* is_params describes the problem for people. */
static inline void is_params(const struct is *p, char *buf, size_t n) {
	snprintf(buf, n, "2^%d keys in [0, 2^%d), %d iterations", p->keys_log2, p->range_log2, p->iters);
}

/* is_mul is a·x mod 2^46. */
static inline uint64_t is_mul(uint64_t a, uint64_t x) {
	return a * x & IS_MASK;
}

/* is_pow is a^n mod 2^46. */
static inline uint64_t is_pow(uint64_t a, uint64_t n) {
	uint64_t r = 1;
	for (; n > 0; n >>= 1) {
		if (n & 1) r = is_mul(r, a);
		a = is_mul(a, a);
	}
	return r;
}

/* is_generate sets keys[0 .. count) to NAS's keys first, first+1, ... */
static inline void is_generate(const struct is *p, int32_t *keys, long first, long count) {
	uint64_t x = is_mul(IS_SEED, is_pow(IS_A, 4 * (uint64_t)first));
	int shift = 48 - p->range_log2;
	for (long j = 0; j < count; j++) {
		uint64_t sum = 0;
		for (int k = 0; k < 4; k++) {
			x = is_mul(IS_A, x);
			sum += x;
		}
		keys[j] = (int32_t)(sum >> shift);
	}
}

/* is_modify makes NAS's change before iteration it to keys[0 .. count),
 * the keys first, first+1, ... */
static inline void is_modify(const struct is *p, int32_t *keys, long first, long count, int it) {
	long at[2] = {it, (long)it + p->iters};
	int32_t value[2] = {it, p->max_key - it};
	for (int c = 0; c < 2; c++)
		if (at[c] >= first && at[c] < first + count) keys[at[c] - first] = value[c];
}

/* is_count counts keys[0 .. count) into counts[0 .. max_key). */
KERNEL void is_count(const struct is *p, const int32_t *keys, long count, int32_t *counts) {
	memset(counts, 0, sizeof(int32_t) * (size_t)p->max_key);
	for (long j = 0; j < count; j++) counts[keys[j]]++;
}

/* is_rank ranks keys[0 .. count) from the total counts: less[k] becomes
 * the number of keys smaller than k, ranks[j] the rank of keys[j]. */
KERNEL void is_rank(const struct is *p, const int32_t *keys, long count, int32_t *ranks, const int32_t *counts,
                    int32_t *less) {
	int32_t sum = 0;
	for (int k = 0; k < p->max_key; k++) {
		less[k] = sum;
		sum += counts[k];
	}
	for (long j = 0; j < count; j++) ranks[j] = less[keys[j]];
}

/* is_iteration is iteration it over all the keys, in private memory:
 * keys and ranks have p->keys elements, counts and less p->max_key. */
static inline void is_iteration(const struct is *p, int32_t *keys, int32_t *ranks, int32_t *counts, int32_t *less,
                                int it) {
	is_modify(p, keys, 0, p->keys, it);
	is_count(p, keys, p->keys, counts);
	is_rank(p, keys, p->keys, ranks, counts, less);
}

/* is_checksum is the sum of (i + 1) · rank of key i, mod 2^64. */
static inline void is_checksum(const struct is *p, const int32_t *ranks, char *buf, size_t n) {
	uint64_t sum = 0;
	for (long i = 0; i < p->keys; i++) sum += (uint64_t)(i + 1) * (uint64_t)ranks[i];
	snprintf(buf, n, "%llu", (unsigned long long)sum);
}

/* is_check compares a parallel run's ranks with a sequential run's and
 * says "ok" or where they differ; it returns whether they agree. */
static inline int is_check(const struct is *p, const int32_t *ranks, char *check, size_t n) {
	int32_t *keys = malloc(sizeof(int32_t) * (size_t)p->keys), *want = malloc(sizeof(int32_t) * (size_t)p->keys);
	int32_t *counts = malloc(sizeof(int32_t) * (size_t)p->max_key), *less = malloc(sizeof(int32_t) * (size_t)p->max_key);
	if (keys == NULL || want == NULL || counts == NULL || less == NULL) {
		snprintf(check, n, "no memory for the sequential run");
		return 0;
	}
	is_generate(p, keys, 0, p->keys);
	for (int it = 1; it <= p->iters; it++) is_iteration(p, keys, want, counts, less, it);
	snprintf(check, n, "ok");
	for (long i = 0; i < p->keys; i++) {
		if (ranks[i] != want[i]) {
			snprintf(check, n, "key %ld (%d) has rank %d, the sequential ranking %d", i, keys[i], ranks[i], want[i]);
			break;
		}
	}
	free(keys);
	free(want);
	free(counts);
	free(less);
	return strcmp(check, "ok") == 0;
}

#endif /* IS_H */
