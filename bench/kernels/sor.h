/*
 * sor.h — red-black successive over-relaxation, the kernel of sor_seq.c,
 * sor_svm.c and sor_mpi.c, laid out as the TreadMarks study ran it and as
 * bench/sor does: a rows × cols float matrix kept as a red and a black
 * array of rows × cols/2, each rank updating one band of rows, a red
 * half-step (red from black) then a black one. Every element starts
 * nonzero (bench/sor -nonzero, the study's SOR-NonZero), so every update
 * changes every element: no page stays as it was.
 *
 * An update reads only the other colour, so a parallel run computes every
 * element with the same expression from the same values as the sequential
 * one: the results agree bit for bit, and the checks compare them exactly.
 */
#ifndef SOR_H
#define SOR_H

#include <string.h>

#include "yardstick.h"

#define SOR_USAGE "ROWS COLS ITERATIONS  (COLS even; at least 2 iterations: the first is not timed)"

struct sor {
	int rows, cols, iters;
	int w; /* the width of each colour's array: cols / 2 */
};

/* sor_args reads the problem from the command line, or exits. */
static inline struct sor sor_args(int argc, char **argv) {
	struct sor p;
	p.rows = arg_int(argc, argv, 1, 3, SOR_USAGE);
	p.cols = arg_int(argc, argv, 2, 4, SOR_USAGE);
	p.iters = arg_int(argc, argv, 3, 2, SOR_USAGE);
	if (p.cols % 2 != 0) {
		fprintf(stderr, "usage: %s %s\n", argv[0], SOR_USAGE);
		exit(2);
	}
	p.w = p.cols / 2;
	return p;
}

/* sor_params describes the problem for people. */
static inline void sor_params(const struct sor *p, char *buf, size_t n) {
	snprintf(buf, n, "%d × %d floats, nonzero, %d iterations", p->rows, p->cols, p->iters);
}

/* sor_bytes is the size of one colour's array. */
static inline size_t sor_bytes(const struct sor *p) {
	return (size_t)p->rows * (size_t)p->w * sizeof(float);
}

/* sor_init sets count rows of both colours, the first being global row
 * first; red and black point at that row. */
static inline void sor_init(const struct sor *p, float *red, float *black, int first, int count) {
	for (int k = 0; k < count; k++) {
		int i = first + k;
		for (int j = 0; j < p->w; j++) {
			red[(size_t)k * p->w + j] = 1 + (float)((i * 7 + j * 13) % 97) / 97;
			black[(size_t)k * p->w + j] = 1 + (float)((i * 7 + j * 13 + 1) % 97) / 97;
		}
	}
}

/* sor_rows updates count rows of dst from src, the other colour, keeping
 * the first and last column. dst and src point at the first row updated;
 * the rows just above and below those of src are read too. */
KERNEL void sor_rows(float *restrict dst, const float *restrict src, int w, int count) {
	for (int k = 0; k < count; k++) {
		const float *up = src + (ptrdiff_t)(k - 1) * w, *row = src + (ptrdiff_t)k * w, *down = src + (ptrdiff_t)(k + 1) * w;
		float *out = dst + (ptrdiff_t)k * w;
		for (int j = 1; j < w - 1; j++)
			out[j] = (up[j] + down[j] + row[j - 1] + row[j + 1]) * 0.25f;
	}
}

/* sor_interior narrows the rows [lo, hi) of a band to those updated: the
 * first and last rows of the matrix are fixed. */
static inline void sor_interior(const struct sor *p, int lo, int hi, int *first, int *last) {
	*first = lo > 1 ? lo : 1;
	*last = hi < p->rows - 1 ? hi : p->rows - 1;
	if (*last < *first) *last = *first;
}

/* sor_iteration is one iteration over the whole matrix. */
static inline void sor_iteration(const struct sor *p, float *red, float *black) {
	sor_rows(red + p->w, black + p->w, p->w, p->rows - 2);
	sor_rows(black + p->w, red + p->w, p->w, p->rows - 2);
}

/* sor_checksum sums both arrays in order, in double precision. */
static inline void sor_checksum(const struct sor *p, const float *red, const float *black, char *buf, size_t n) {
	double sum = 0;
	size_t size = (size_t)p->rows * p->w;
	for (size_t i = 0; i < size; i++) sum += red[i];
	for (size_t i = 0; i < size; i++) sum += black[i];
	snprintf(buf, n, "%.17g", sum);
}

/* sor_check compares a parallel run's result with a sequential run and
 * says "ok" or where they differ; it returns whether they agree. */
static inline int sor_check(const struct sor *p, const float *red, const float *black, char *check, size_t n) {
	size_t size = (size_t)p->rows * p->w;
	float *sr = malloc(sor_bytes(p)), *sb = malloc(sor_bytes(p));
	if (sr == NULL || sb == NULL) {
		snprintf(check, n, "no memory for the sequential run");
		return 0;
	}
	sor_init(p, sr, sb, 0, p->rows);
	for (int it = 0; it < p->iters; it++) sor_iteration(p, sr, sb);
	snprintf(check, n, "ok");
	for (size_t i = 0; i < size; i++) {
		if (memcmp(&red[i], &sr[i], sizeof(float)) != 0 || memcmp(&black[i], &sb[i], sizeof(float)) != 0) {
			snprintf(check, n, "element %zu differs from the sequential run: red %g (want %g), black %g (want %g)", i,
			         red[i], sr[i], black[i], sb[i]);
			break;
		}
	}
	free(sr);
	free(sb);
	return strcmp(check, "ok") == 0;
}

#endif /* SOR_H */
