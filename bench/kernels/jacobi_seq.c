/* jacobi_seq: the Jacobi stencil (jacobi.h) in one process, private
 * memory, no library: the sequential time.
 *   jacobi-seq ROWS COLS ITERATIONS */
#include "jacobi.h"

int main(int argc, char **argv) {
	struct jacobi p = jacobi_args(argc, argv);
	void *arrays[2] = {NULL, NULL}, *block = arrays_apart(arrays, 2, jacobi_bytes(&p));
	if (block == NULL) {
		fprintf(stderr, "jacobi-seq: no memory for the arrays\n");
		return 1;
	}
	double *a = arrays[0], *b = arrays[1];
	jacobi_init(&p, a, b, 0, p.rows);
	double start = 0;
	for (int it = 0; it < p.iters; it++) {
		if (it == 1) start = now();
		jacobi_iteration(&p, a, b, it);
	}
	double seconds = now() - start;
	char params[128], checksum[64];
	jacobi_params(&p, params, sizeof params);
	jacobi_checksum(&p, a, b, checksum, sizeof checksum);
	print_result("jacobi", "seq", params, 0, seconds, 0, "ok", checksum);
	free(block);
	return 0;
}
