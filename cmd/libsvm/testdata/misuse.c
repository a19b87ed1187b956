/* TreadMarks calls misused, one per run (argv[1] names which): each must
 * end the job with "Tmk_<call>: <what was wrong>". */
#include <string.h>
#include "Tmk.h"

int value;

int main(int argc, char **argv) {
	const char *what = argc > 1 ? argv[1] : "";
	if (strcmp(what, "before-startup") == 0) {
		Tmk_barrier(0);
		return 0;
	}
	Tmk_startup(argc, argv);
	if (strcmp(what, "distribute-not-0") == 0 && Tmk_proc_id == 1) Tmk_distribute(&value, sizeof value);
	if (strcmp(what, "lock-range") == 0) Tmk_lock_acquire(1u << 20);
	if (strcmp(what, "release-unheld") == 0) Tmk_lock_release(3);
	if (strcmp(what, "barrier-range") == 0) Tmk_barrier(4096);
	Tmk_barrier(0);
	Tmk_exit(0);
	return 0;
}
