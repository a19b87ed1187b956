/* is_seq: the integer sort (is.h) in one process, private memory, no
 * library: the sequential time. Its check is NAS's full verification: the
 * keys placed by their ranks (equal keys in index order) are sorted.
 *   is-seq KEYS_LOG2 RANGE_LOG2 ITERATIONS */
#include "is.h"

/* verify places the keys by rank and says "ok" if they come out sorted. */
static int verify(const struct is *p, const int32_t *keys, const int32_t *less, char *check, size_t n) {
	int32_t *next = malloc(sizeof(int32_t) * (size_t)p->max_key), *sorted = malloc(sizeof(int32_t) * (size_t)p->keys);
	if (next == NULL || sorted == NULL) {
		snprintf(check, n, "no memory for the verification");
		return 0;
	}
	memcpy(next, less, sizeof(int32_t) * (size_t)p->max_key);
	for (long i = 0; i < p->keys; i++) sorted[next[keys[i]]++] = keys[i];
	snprintf(check, n, "ok");
	for (long i = 1; i < p->keys; i++) {
		if (sorted[i - 1] > sorted[i]) {
			snprintf(check, n, "the keys placed by rank are out of order at position %ld: %d before %d", i,
			         sorted[i - 1], sorted[i]);
			break;
		}
	}
	free(next);
	free(sorted);
	return strcmp(check, "ok") == 0;
}

int main(int argc, char **argv) {
	struct is p = is_args(argc, argv);
	void *arrays[2] = {NULL, NULL};
	int32_t *counts = malloc(sizeof(int32_t) * (size_t)p.max_key), *less = malloc(sizeof(int32_t) * (size_t)p.max_key);
	if (arrays_apart(arrays, 2, sizeof(int32_t) * (size_t)p.keys) == NULL || counts == NULL || less == NULL) {
		fprintf(stderr, "is-seq: no memory for the keys\n");
		return 1;
	}
	int32_t *keys = arrays[0], *ranks = arrays[1];
	is_generate(&p, keys, 0, p.keys);
	double start = 0;
	for (int it = 1; it <= p.iters; it++) {
		if (it == 2) start = now();
		is_iteration(&p, keys, ranks, counts, less, it);
	}
	double seconds = now() - start;
	char params[128], check[256], checksum[64];
	is_params(&p, params, sizeof params);
	int ok = verify(&p, keys, less, check, sizeof check);
	is_checksum(&p, ranks, checksum, sizeof checksum);
	print_result("is", "seq", params, 0, seconds, 0, check, checksum);
	return ok ? 0 : 1;
}
