/* barrier_svm: the time of one Tmk_barrier, every process taking part,
 * after a few untimed ones; nothing is written between barriers, so this
 * is the synchronisation alone.
 *   svmf run -np N barrier-svm COUNT */
#include "Tmk.h"
#include "yardstick.h"

#define WARMUP 10

int main(int argc, char **argv) {
	int count = arg_int(argc, argv, 1, 1, "COUNT");
	Tmk_startup(argc, argv);
	for (int i = 0; i < WARMUP; i++) Tmk_barrier(0);
	double start = now();
	for (int i = 0; i < count; i++) Tmk_barrier(0);
	double seconds = now() - start;
	if (Tmk_proc_id == 0) {
		char params[64];
		snprintf(params, sizeof params, "%d barriers", count);
		print_result("barrier", "svm", params, (int)Tmk_nprocs, seconds, count, "ok", "");
	}
	Tmk_exit(0);
	return 0;
}
