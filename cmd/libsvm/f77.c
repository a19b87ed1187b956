// The Fortran 77 bindings of the TreadMarks calls: gfortran's names (lower
// case, one trailing underscore) with every argument by reference. The
// globals are COMMON /TMK/ (tmk_, see Tmk.h). Addresses of shared memory
// come back as INTEGER*8, for Cray pointers (svmf fc passes -fcray-pointer).
#include <stdint.h>
#include "Tmk.h"

void tmk_startup_(void) { Tmk_startup(0, 0); }

void tmk_exit_(int *status) { Tmk_exit(*status); }

void tmk_barrier_(unsigned *id) { Tmk_barrier(*id); }

void tmk_lock_acquire_(unsigned *id) { Tmk_lock_acquire(*id); }

void tmk_lock_release_(unsigned *id) { Tmk_lock_release(*id); }

void tmk_lock_cond_wait_(unsigned *lock, unsigned *cond) { Tmk_lock_cond_wait(*lock, *cond); }

void tmk_lock_cond_signal_(unsigned *lock, unsigned *cond) { Tmk_lock_cond_signal(*lock, *cond); }

void tmk_lock_cond_broadcast_(unsigned *lock, unsigned *cond) { Tmk_lock_cond_broadcast(*lock, *cond); }

void tmk_distribute_(void *data, int *size) { Tmk_distribute(data, *size); }

int64_t tmk_malloc_(unsigned *size) { return (int64_t)(intptr_t)Tmk_malloc(*size); }

void tmk_free_(int64_t *ptr) { Tmk_free((void *)(intptr_t)*ptr); }

int64_t tmk_sbrk_(unsigned *incr) { return (int64_t)(intptr_t)Tmk_sbrk(*incr); }

int tmk_sched_start_(unsigned *manager) { return Tmk_sched_start(*manager); }

// arg holds the address of a struct Tmk_sched_arg, or 0 for none; func is a
// subroutine taking that struct by reference.
void tmk_sched_fork_(void (*func)(Tmk_sched_arg_t), Tmk_sched_arg_t *arg) { Tmk_sched_fork(func, *arg); }

void tmk_sched_exit_(void) { Tmk_sched_exit(); }
