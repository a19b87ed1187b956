/* TreadMarks calls misused, one per run (argv[1] names which): each must
 * end the job with "Tmk_<call>: <what was wrong>". */
#include <string.h>
#include "Tmk.h"

int value;

void nothing(Tmk_sched_arg_t arg) { (void)arg; }

int main(int argc, char **argv) {
	const char *what = argc > 1 ? argv[1] : "";
	if (strcmp(what, "before-startup") == 0) {
		Tmk_barrier(0);
		return 0;
	}
	Tmk_startup(argc, argv);
	if (strcmp(what, "distribute-size") == 0) Tmk_distribute(&value, -4);
	if (strcmp(what, "lock-range") == 0) Tmk_lock_acquire(1u << 20);
	if (strcmp(what, "release-unheld") == 0) Tmk_lock_release(3);
	if (strcmp(what, "barrier-range") == 0) Tmk_barrier(4096);
	if (strcmp(what, "cond-range") == 0) Tmk_lock_cond_signal(0, 9);
	if (strcmp(what, "cond-lock-range") == 0) Tmk_lock_cond_broadcast(5000, 0);
	if (strcmp(what, "wait-unheld") == 0) Tmk_lock_cond_wait(2, 1);
	if (strcmp(what, "sched-range") == 0) Tmk_sched_start(99);
	if (strcmp(what, "fork-unjoined") == 0 && Tmk_proc_id == 0) Tmk_sched_fork(nothing, 0);
	if (strcmp(what, "errexit") == 0 && Tmk_proc_id == Tmk_nprocs - 1)
		Tmk_errexit("errexit: process %u gives up after %d tries\n", Tmk_proc_id, 3);
	Tmk_barrier(0);
	Tmk_exit(0);
	return 0;
}
