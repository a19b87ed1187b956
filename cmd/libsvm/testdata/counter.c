/* A lock counter with TreadMarks calls: every process adds to a shared
 * counter under lock 0 and to its own slot; process 0 checks the sums. */
#include <stdio.h>
#include <stdlib.h>
#include "Tmk.h"

#define K 500

struct shared { long counter; long slots[TMK_NPROCS]; } *sh;

int main(int argc, char **argv) {
	Tmk_startup(argc, argv);
	if (Tmk_proc_id == 0) {
		sh = Tmk_malloc(sizeof *sh);
		sh->counter = 0;
		for (unsigned p = 0; p < Tmk_nprocs; p++) sh->slots[p] = 0;
		Tmk_distribute(&sh, sizeof sh);
	}
	Tmk_barrier(0);
	for (int k = 0; k < K; k++) {
		Tmk_lock_acquire(0);
		sh->counter++;
		Tmk_lock_release(0);
		sh->slots[Tmk_proc_id] += Tmk_proc_id + 1;
	}
	Tmk_barrier(0);
	if (Tmk_proc_id == 0) {
		long want = (long)K * Tmk_nprocs, slots = 0, want_slots = 0;
		for (unsigned p = 0; p < Tmk_nprocs; p++) {
			slots += sh->slots[p];
			want_slots += (long)K * (p + 1);
		}
		if (sh->counter != want || slots != want_slots) {
			fprintf(stderr, "counter: %ld (want %ld), slots %ld (want %ld)\n", sh->counter, want, slots, want_slots);
			return 1;
		}
		printf("counter ok: %ld\n", sh->counter);
	}
	Tmk_exit(0);
	return 0;
}
