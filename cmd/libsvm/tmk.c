// The TreadMarks globals, the variadic calls and the calls whose C types Go
// cannot spell live in C: a program's Tmk_proc_id (tmk_.proc_id) must name
// a C object, which Go cannot export; Go cannot export a variadic function,
// a const pointer or a function pointer.
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "Tmk.h"
#include "_cgo_export.h"

struct Tmk tmk_;

void Tmk_err(const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fflush(stderr);
}

void Tmk_errexit(const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fflush(NULL);
	exit(1);
}

void Tmk_startup(int argc, char *const *argv) {
	(void)argc;
	(void)argv;
	svm_tmk_startup();
}

void Tmk_distribute(const void *ptr, int size) { svm_tmk_distribute((void *)ptr, size); }

void Tmk_sched_fork(void (*func)(Tmk_sched_arg_t), Tmk_sched_arg_t arg) {
	svm_tmk_sched_fork((uintptr_t)func, arg);
}

void Tmk_exit(int status) {
	svm_tmk_exit();
	fflush(NULL);
	exit(status);
}
