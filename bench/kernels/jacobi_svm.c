/* jacobi_svm: the Jacobi stencil (jacobi.h) with the TreadMarks calls:
 * process 0 allocates both arrays in shared memory and distributes the
 * pointers; every process initialises and updates its band of rows, with
 * a barrier after each iteration (the next one writes the array this one
 * read). Process 0 then checks the shared result against a sequential run.
 *   svmf run -np N jacobi-svm ROWS COLS ITERATIONS */
#include "Tmk.h"
#include "jacobi.h"

double *a, *b; /* shared; process 0 distributes the pointers */

int main(int argc, char **argv) {
	struct jacobi p = jacobi_args(argc, argv);
	Tmk_startup(argc, argv);
	if (Tmk_proc_id == 0) {
		a = Tmk_malloc((unsigned)jacobi_bytes(&p));
		b = Tmk_malloc((unsigned)jacobi_bytes(&p));
		if (a == NULL || b == NULL) Tmk_exit(1); /* Tmk_malloc said why */
		Tmk_distribute(&a, sizeof a);
		Tmk_distribute(&b, sizeof b);
	}
	Tmk_barrier(0);
	int lo = band_lo(p.rows, (int)Tmk_proc_id, (int)Tmk_nprocs);
	int hi = band_lo(p.rows, (int)Tmk_proc_id + 1, (int)Tmk_nprocs);
	jacobi_init(&p, a + (size_t)lo * p.cols, b + (size_t)lo * p.cols, lo, hi - lo);
	Tmk_barrier(0);
	int first, last;
	jacobi_interior(&p, lo, hi, &first, &last);
	double *a1 = a + (size_t)first * p.cols, *b1 = b + (size_t)first * p.cols;
	double start = 0;
	for (int it = 0; it < p.iters; it++) {
		if (it == 1) start = now();
		if (it % 2 == 0)
			jacobi_rows(b1, a1, p.cols, last - first);
		else
			jacobi_rows(a1, b1, p.cols, last - first);
		Tmk_barrier(0);
	}
	double seconds = now() - start;
	int ok = 1;
	if (Tmk_proc_id == 0) {
		char params[128], check[256], checksum[64];
		jacobi_params(&p, params, sizeof params);
		ok = jacobi_check(&p, a, b, check, sizeof check);
		jacobi_checksum(&p, a, b, checksum, sizeof checksum);
		print_result("jacobi", "svm", params, (int)Tmk_nprocs, seconds, 0, check, checksum);
	}
	Tmk_barrier(0); /* the others stay until process 0 has read their rows */
	Tmk_exit(ok ? 0 : 1);
	return 0;
}
