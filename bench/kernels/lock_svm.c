/* lock_svm: the time of one Tmk_lock_acquire + Tmk_lock_release, nothing
 * written while the lock is held, so this is the synchronisation alone.
 *
 * uncontended: process 0 alone takes and releases lock 1 COUNT times
 * while the others wait at a barrier; after the untimed first rounds the
 * lock was last released here, which TreadMarks grants without a message.
 * contended: every process takes and releases lock 0 COUNT times at once,
 * so the lock passes from process to process; the figure is the whole
 * time over every process's acquisitions, the time of one hand-over.
 *   svmf run -np N lock-svm uncontended|contended COUNT */
#include <string.h>

#include "Tmk.h"
#include "yardstick.h"

#define WARMUP 10
#define USAGE "uncontended|contended COUNT"

int main(int argc, char **argv) {
	if (argc < 2 || (strcmp(argv[1], "uncontended") != 0 && strcmp(argv[1], "contended") != 0)) {
		fprintf(stderr, "usage: %s %s\n", argv[0], USAGE);
		return 2;
	}
	int contended = strcmp(argv[1], "contended") == 0;
	int count = arg_int(argc, argv, 2, 1, USAGE);
	Tmk_startup(argc, argv);
	unsigned lock = contended ? 0 : 1;
	int mine = contended || Tmk_proc_id == 0;
	Tmk_barrier(0);
	for (int i = 0; mine && i < WARMUP; i++) {
		Tmk_lock_acquire(lock);
		Tmk_lock_release(lock);
	}
	Tmk_barrier(0);
	double start = now();
	for (int i = 0; mine && i < count; i++) {
		Tmk_lock_acquire(lock);
		Tmk_lock_release(lock);
	}
	Tmk_barrier(0);
	double seconds = now() - start;
	if (Tmk_proc_id == 0) {
		char params[64];
		long ops = contended ? (long)count * Tmk_nprocs : count;
		snprintf(params, sizeof params, "%s, %ld acquires", argv[1], ops);
		print_result("lock", "svm", params, (int)Tmk_nprocs, seconds, ops, "ok", "");
	}
	Tmk_exit(0);
	return 0;
}
