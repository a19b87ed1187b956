/* sor_svm: red-black SOR (sor.h) with the TreadMarks calls, as the
 * study's TreadMarks version: process 0 allocates both arrays in shared
 * memory and distributes the pointers; every process initialises and
 * updates its band of rows, with a barrier after each half-step. Process 0
 * then checks the shared result against a sequential run.
 *   svmf run -np N sor-svm ROWS COLS ITERATIONS */
#include "Tmk.h"
#include "sor.h"

float *red, *black; /* shared; process 0 distributes the pointers */

int main(int argc, char **argv) {
	struct sor p = sor_args(argc, argv);
	Tmk_startup(argc, argv);
	if (Tmk_proc_id == 0) {
		red = Tmk_malloc((unsigned)sor_bytes(&p));
		black = Tmk_malloc((unsigned)sor_bytes(&p));
		if (red == NULL || black == NULL) Tmk_exit(1); /* Tmk_malloc said why */
		Tmk_distribute(&red, sizeof red);
		Tmk_distribute(&black, sizeof black);
	}
	Tmk_barrier(0);
	int lo = band_lo(p.rows, (int)Tmk_proc_id, (int)Tmk_nprocs);
	int hi = band_lo(p.rows, (int)Tmk_proc_id + 1, (int)Tmk_nprocs);
	sor_init(&p, red + (size_t)lo * p.w, black + (size_t)lo * p.w, lo, hi - lo);
	Tmk_barrier(0);
	int first, last;
	sor_interior(&p, lo, hi, &first, &last);
	double start = 0;
	for (int it = 0; it < p.iters; it++) {
		if (it == 1) start = now();
		sor_rows(red + (size_t)first * p.w, black + (size_t)first * p.w, p.w, last - first);
		Tmk_barrier(0);
		sor_rows(black + (size_t)first * p.w, red + (size_t)first * p.w, p.w, last - first);
		Tmk_barrier(0);
	}
	double seconds = now() - start;
	int ok = 1;
	if (Tmk_proc_id == 0) {
		char params[128], check[256], checksum[64];
		sor_params(&p, params, sizeof params);
		ok = sor_check(&p, red, black, check, sizeof check);
		sor_checksum(&p, red, black, checksum, sizeof checksum);
		print_result("sor", "svm", params, (int)Tmk_nprocs, seconds, 0, check, checksum);
	}
	Tmk_barrier(0); /* the others stay until process 0 has read their rows */
	Tmk_exit(ok ? 0 : 1);
	return 0;
}
