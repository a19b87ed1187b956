/* sor_seq: red-black SOR (sor.h) in one process, private memory, no
 * library: the sequential time that speedups are measured against.
 *   sor-seq ROWS COLS ITERATIONS */
#include "sor.h"

int main(int argc, char **argv) {
	struct sor p = sor_args(argc, argv);
	float *red = malloc(sor_bytes(&p)), *black = malloc(sor_bytes(&p));
	if (red == NULL || black == NULL) {
		fprintf(stderr, "sor-seq: no memory for the matrix\n");
		return 1;
	}
	sor_init(&p, red, black, 0, p.rows);
	double start = 0;
	for (int it = 0; it < p.iters; it++) {
		if (it == 1) start = now();
		sor_iteration(&p, red, black);
	}
	double seconds = now() - start;
	char params[128], checksum[64];
	sor_params(&p, params, sizeof params);
	sor_checksum(&p, red, black, checksum, sizeof checksum);
	print_result("sor", "seq", params, 0, seconds, 0, "ok", checksum);
	free(red);
	free(black);
	return 0;
}
