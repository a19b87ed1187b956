/*
 * jacobi.h — a 2-D Jacobi stencil, the kernel of jacobi_seq.c,
 * jacobi_svm.c and jacobi_mpi.c: two rows × cols arrays of doubles; each
 * iteration sets every interior element of one array to the mean of its
 * four neighbours in the other (even iterations a → b, odd ones b → a),
 * the boundary staying fixed. Each rank updates one band of rows.
 *
 * As in sor.h, a parallel run computes every element with the same
 * expression from the same values as the sequential one, so the checks
 * compare the results exactly.
 */
#ifndef JACOBI_H
#define JACOBI_H

#include <string.h>

#include "yardstick.h"

#define JACOBI_USAGE "ROWS COLS ITERATIONS  (at least 2 iterations: the first is not timed)"

struct jacobi {
	int rows, cols, iters;
};

/* jacobi_args reads the problem from the command line, or exits. */
static inline struct jacobi jacobi_args(int argc, char **argv) {
	struct jacobi p;
	p.rows = arg_int(argc, argv, 1, 3, JACOBI_USAGE);
	p.cols = arg_int(argc, argv, 2, 3, JACOBI_USAGE);
	p.iters = arg_int(argc, argv, 3, 2, JACOBI_USAGE);
	return p;
}

/* jacobi_params describes the problem for people. */
static inline void jacobi_params(const struct jacobi *p, char *buf, size_t n) {
	snprintf(buf, n, "%d × %d doubles, %d iterations", p->rows, p->cols, p->iters);
}

/* jacobi_bytes is the size of one array. */
static inline size_t jacobi_bytes(const struct jacobi *p) {
	return (size_t)p->rows * (size_t)p->cols * sizeof(double);
}

/* jacobi_init sets count rows of both arrays to the starting values, the
 * first being global row first; a and b point at that row. */
static inline void jacobi_init(const struct jacobi *p, double *a, double *b, int first, int count) {
	for (int k = 0; k < count; k++) {
		int i = first + k;
		for (int j = 0; j < p->cols; j++) {
			double v = (double)((i * 31 + j * 17) % 101) / 101;
			a[(size_t)k * p->cols + j] = v;
			b[(size_t)k * p->cols + j] = v;
		}
	}
}

/* jacobi_rows updates count rows of dst from src, keeping the first and
 * last column. dst and src point at the first row updated; the rows just
 * above and below those of src are read too. */
KERNEL void jacobi_rows(double *restrict dst, const double *restrict src, int cols, int count) {
	for (int k = 0; k < count; k++) {
		const double *up = src + (ptrdiff_t)(k - 1) * cols, *row = src + (ptrdiff_t)k * cols,
		             *down = src + (ptrdiff_t)(k + 1) * cols;
		double *out = dst + (ptrdiff_t)k * cols;
		for (int j = 1; j < cols - 1; j++)
			out[j] = (up[j] + down[j] + row[j - 1] + row[j + 1]) * 0.25;
	}
}

/* jacobi_interior narrows the rows [lo, hi) of a band to those updated:
 * the first and last rows are fixed. */
static inline void jacobi_interior(const struct jacobi *p, int lo, int hi, int *first, int *last) {
	*first = lo > 1 ? lo : 1;
	*last = hi < p->rows - 1 ? hi : p->rows - 1;
	if (*last < *first) *last = *first;
}

/* jacobi_checksum sums both arrays in order. */
static inline void jacobi_checksum(const struct jacobi *p, const double *a, const double *b, char *buf, size_t n) {
	double sum = 0;
	size_t size = (size_t)p->rows * p->cols;
	for (size_t i = 0; i < size; i++) sum += a[i];
	for (size_t i = 0; i < size; i++) sum += b[i];
	snprintf(buf, n, "%.17g", sum);
}

/* jacobi_iteration is iteration it over the whole arrays. */
static inline void jacobi_iteration(const struct jacobi *p, double *a, double *b, int it) {
	if (it % 2 == 0)
		jacobi_rows(b + p->cols, a + p->cols, p->cols, p->rows - 2);
	else
		jacobi_rows(a + p->cols, b + p->cols, p->cols, p->rows - 2);
}

/* jacobi_check compares a parallel run's result with a sequential run and
 * says "ok" or where they differ; it returns whether they agree. */
static inline int jacobi_check(const struct jacobi *p, const double *a, const double *b, char *check, size_t n) {
	size_t size = (size_t)p->rows * p->cols;
	double *sa = malloc(jacobi_bytes(p)), *sb = malloc(jacobi_bytes(p));
	if (sa == NULL || sb == NULL) {
		snprintf(check, n, "no memory for the sequential run");
		return 0;
	}
	jacobi_init(p, sa, sb, 0, p->rows);
	for (int it = 0; it < p->iters; it++) jacobi_iteration(p, sa, sb, it);
	snprintf(check, n, "ok");
	for (size_t i = 0; i < size; i++) {
		if (memcmp(&a[i], &sa[i], sizeof(double)) != 0 || memcmp(&b[i], &sb[i], sizeof(double)) != 0) {
			snprintf(check, n, "element %zu differs from the sequential run: a %g (want %g), b %g (want %g)", i, a[i],
			         sa[i], b[i], sb[i]);
			break;
		}
	}
	free(sa);
	free(sb);
	return strcmp(check, "ok") == 0;
}

#endif /* JACOBI_H */
