/* Red-black SOR written only with TreadMarks calls, as the TreadMarks
 * programs were: process 0 allocates the grid and distributes the pointer
 * and the coefficients it computed; every process relaxes a band of rows;
 * process 0 checks the result against a sequential run in private memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "Tmk.h"

#define M 128 /* rows */
#define N 256 /* columns */
#define ITERS 20

float *grid;         /* shared, (M+2) x N */
float weights[4];    /* private: process 0 computes them, then distributes */

static float *at(float *g, int i, int j) { return &g[i * N + j]; }

static void init(float *g) {
	for (int i = 0; i < M + 2; i++)
		for (int j = 0; j < N; j++)
			*at(g, i, j) = (i == 0 || i == M + 1 || j == 0 || j == N - 1) ? 1.0f + (float)(i % 7) / 7.0f : 0.0f;
}

static void relax(float *g, int color, int first, int last) {
	for (int i = first; i <= last; i++)
		for (int j = 1 + (i + color) % 2; j < N - 1; j += 2)
			*at(g, i, j) = weights[0] * *at(g, i - 1, j) + weights[1] * *at(g, i + 1, j) +
			               weights[2] * *at(g, i, j - 1) + weights[3] * *at(g, i, j + 1);
}

int main(int argc, char **argv) {
	Tmk_startup(argc, argv);
	if (Tmk_proc_id == 0) {
		grid = Tmk_malloc(sizeof(float) * (M + 2) * N);
		if (grid == NULL) return 1;
		init(grid);
		for (int k = 0; k < 4; k++) weights[k] = 0.25f - 0.01f * (float)k + 0.015f;
		Tmk_distribute(&grid, sizeof grid);
		Tmk_distribute(weights, sizeof weights);
	}
	Tmk_barrier(0);
	int band = (M + Tmk_nprocs - 1) / Tmk_nprocs;
	int first = 1 + Tmk_proc_id * band, last = first + band - 1;
	if (last > M) last = M;
	for (int it = 0; it < ITERS; it++) {
		relax(grid, 0, first, last);
		Tmk_barrier(1);
		relax(grid, 1, first, last);
		Tmk_barrier(2);
	}
	if (Tmk_proc_id == 0) {
		float *seq = malloc(sizeof(float) * (M + 2) * N);
		init(seq);
		for (int it = 0; it < ITERS; it++) {
			relax(seq, 0, 1, M);
			relax(seq, 1, 1, M);
		}
		double sum = 0;
		for (int i = 0; i < (M + 2) * N; i++) {
			if (seq[i] != grid[i]) {
				fprintf(stderr, "sor: element %d is %g, sequentially %g\n", i, grid[i], seq[i]);
				return 1;
			}
			sum += grid[i];
		}
		printf("sor ok: %d processes, checksum %.6f\n", Tmk_nprocs, sum);
		Tmk_free(grid);
	}
	Tmk_exit(0);
	return 0;
}
