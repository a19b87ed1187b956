/*
 * yardstick.h — what every program in bench/kernels shares: the clock, the
 * command line, bands of rows, and the RESULT line that the harness reads
 * (bench/internal/report: one line of JSON after "RESULT ").
 *
 * Each kernel is written once, in its own header (sor.h, jacobi.h, is.h),
 * and run three ways by three small programs: NAME_seq.c (sequential C),
 * NAME_svm.c (the TreadMarks calls, built with svmf cc) and NAME_mpi.c
 * (hand-written MPI, built with mpicc). All are built with -O2 and print
 * the same checksum for the same problem. Every timed part runs between two
 * barriers on rank 0 (in the sequential program: between two clock reads),
 * after the first iteration, as the TreadMarks study timed its programs:
 * the start, the allocation, the initialisation and the first iteration
 * are not timed, and neither is the check.
 */
#ifndef YARDSTICK_H
#define YARDSTICK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* KERNEL marks a kernel's hot functions: compiled out of line, each is
 * the same machine code in the sequential, the SVM and the MPI program.
 * Inlined, the compiler allocates the hot loop's registers for each
 * program's surroundings: red-black SOR's sequential program ran 0.229 s
 * where a second sequential program around the same inlined loop (and the
 * SVM program at one rank) ran 0.238 s, a difference of code, not of
 * memory or library. */
#define KERNEL __attribute__((noinline, unused)) static

/* arrays_apart sets arrays[0 .. count) to count zeroed arrays of size
 * bytes each, cut from one allocation, each starting 256 KiB further
 * modulo 32 MiB than the one before, and returns the allocation to free
 * (NULL without memory). Two arrays a kernel streams through together ran
 * up to 18 % slower on this project's machines when their starts were a
 * multiple of 32 MiB apart, as malloc puts two of Jacobi's or IS's arrays
 * (32 MiB and a page): the Jacobi and IS programs place their big arrays
 * so, as SVM's allocator places shared ones (dsm/rank/space.go). */
static inline void *arrays_apart(void **arrays, int count, size_t size) {
	size_t stride = (size + 4095) / 4096 * 4096 + (256 << 10);
	char *block = calloc((size_t)count, stride);
	if (block != NULL)
		for (int i = 0; i < count; i++) arrays[i] = block + stride * (size_t)i;
	return block;
}

/* now is a monotonic clock in seconds. */
static inline double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* arg_int returns argument i as an int of at least min, or exits with
 * status 2 and the usage line: a benchmark never runs a size it was not
 * asked for. */
static inline int arg_int(int argc, char **argv, int i, int min, const char *usage) {
	if (i >= argc) {
		fprintf(stderr, "usage: %s %s\n", argv[0], usage);
		exit(2);
	}
	char *end;
	long v = strtol(argv[i], &end, 10);
	if (*end != '\0' || end == argv[i] || v < min || v > 1L << 30) {
		fprintf(stderr, "%s: argument %d (%s) is not a number from %d to 2^30\nusage: %s %s\n", argv[0], i, argv[i], min, argv[0], usage);
		exit(2);
	}
	return (int)v;
}

/* band_lo is the first of rank r's rows when n rows are cut into np bands
 * of nearly equal size; rank r has rows band_lo(n, r, np) to
 * band_lo(n, r + 1, np) - 1, as the Go programs in bench/ cut them. */
static inline int band_lo(int n, int r, int np) {
	return (int)((int64_t)n * r / np);
}

/* print_result prints a line for people and the RESULT line for the
 * harness. variant is seq, svm or mpi; ranks is 0 for the sequential
 * program; ops is the number of operations timed (0 for a kernel); check
 * is "ok" or what was wrong, checksum a number or "" (neither with quotes
 * or backslashes: they go into JSON as they are). */
static inline void print_result(const char *program, const char *variant, const char *params, int ranks,
                         double seconds, long ops, const char *check, const char *checksum) {
	printf("%s %s (%s)", program, variant, params);
	if (ranks > 0) printf(" on %d rank%s", ranks, ranks == 1 ? "" : "s");
	printf(": %.6f s, check %s", seconds, check);
	if (checksum[0] != '\0') printf(", checksum %s", checksum);
	printf("\n");
	printf("RESULT {\"program\":\"%s\",\"variant\":\"%s\",\"params\":\"%s\",\"ranks\":%d,\"seconds\":%.9f,"
	       "\"ops\":%ld,\"check\":\"%s\",\"checksum\":\"%s\"}\n",
	       program, variant, params, ranks, seconds, ops, check, checksum);
	fflush(stdout);
}

#endif /* YARDSTICK_H */
