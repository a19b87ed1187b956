/* The native calls of svm.h: allocation, sharing, locks, processor-set
 * barriers and shares, fetch-and-add, home placement, validate, statistics,
 * and the error message of a failed call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include "svm.h"

#define CHECK(call) do { if ((call) != 0) { char m[256]; svm_last_error(m, sizeof m); fprintf(stderr, "%s: %s\n", #call, m); exit(1); } } while (0)

static void want_error(int rc, const char *want) {
	char msg[256];
	size_t n = svm_last_error(msg, sizeof msg);
	if (rc != -1 || n == 0 || strstr(msg, want) == NULL) {
		fprintf(stderr, "want an error containing \"%s\", got %d \"%s\"\n", want, rc, msg);
		exit(1);
	}
}

int main(void) {
	want_error(svm_barrier(0), "svm_barrier: not joined");
	CHECK(svm_init());
	int me = svm_rank(), np = svm_nprocs();
	long *a;
	CHECK(svm_alloc(sizeof(long) * np, (void **)&a));
	if ((uintptr_t)a % svm_page_size() != 0) { fprintf(stderr, "svm_alloc is not page aligned\n"); return 1; }
	a[me] = 100 + me;
	CHECK(svm_barrier(0));
	for (int r = 0; r < np; r++)
		if (a[r] != 100 + r) { fprintf(stderr, "slot %d reads %ld\n", r, a[r]); return 1; }

	/* A list built by rank 0 with svm_malloc, handed over with svm_share. */
	char *text = NULL, *got = NULL;
	if (me == 0) {
		CHECK(svm_malloc(64, (void **)&text));
		strcpy(text, "made by rank 0");
	}
	CHECK(svm_share(0, text, (void **)&got));
	if (strcmp(got, "made by rank 0") != 0) { fprintf(stderr, "shared text reads %s\n", got); return 1; }

	/* Two halves of the job cross set barriers and shares at once. */
	int half[64], n = 0;
	for (int r = 0; r < np; r++)
		if ((r < np / 2) == (me < np / 2)) half[n++] = r;
	uint64_t v = 0;
	CHECK(svm_share_among(5, half, n, half[0], 1000 + half[0], &v));
	if (v != (uint64_t)(1000 + half[0])) { fprintf(stderr, "share among gave %lu\n", (unsigned long)v); return 1; }
	CHECK(svm_barrier_among(5, half, n));

	/* Fetch-and-add hands every value out once. */
	int64_t old;
	for (int k = 0; k < 50; k++) {
		CHECK(svm_fetch_add(7, 1, &old));
		CHECK(svm_lock(1));
		a[0] += 0; /* touch under the lock: nothing to check */
		CHECK(svm_unlock(1));
	}
	CHECK(svm_barrier(0));
	if (me == 0) {
		CHECK(svm_fetch_add(7, 0, &old));
		if (old != 50L * np) { fprintf(stderr, "counter 7 is %ld, want %ld\n", (long)old, 50L * np); return 1; }
	}

	/* read(2) into shared memory after validate. */
	char *buf;
	CHECK(svm_alloc(4096, (void **)&buf));
	CHECK(svm_validate(buf, 4096, 1));
	int fd = open("/proc/self/cmdline", O_RDONLY);
	if (fd < 0 || read(fd, buf, 100) <= 0) { perror("read into shared memory"); return 1; }
	close(fd);

	/* Pages placed one per rank, in reverse (an allocation's own guess is
	 * in rank order): each rank writes its own in place, so the writes make
	 * no diffs; every rank then reads every page. */
	long ps = svm_page_size();
	char *pages;
	CHECK(svm_alloc(ps * np, (void **)&pages));
	for (int r = 0; r < np; r++)
		CHECK(svm_set_home(pages + r * ps, ps, np - 1 - r));
	CHECK(svm_barrier(0));
	svm_stats before, after;
	CHECK(svm_get_stats(&before));
	memset(pages + (np - 1 - me) * ps, 'a' + me, ps);
	CHECK(svm_barrier(0));
	CHECK(svm_get_stats(&after));
	/* (With threads writing during calls, a home twins its pages too.) */
	const char *threads = getenv("SVM_THREADS");
	int funneled = threads == NULL || strcmp(threads, "multiple") != 0;
	if (funneled && after.diffs_created != before.diffs_created) { fprintf(stderr, "writes to a page homed here made %ld diffs\n", (long)(after.diffs_created - before.diffs_created)); return 1; }
	for (int r = 0; r < np; r++)
		if (pages[r * ps] != 'a' + np - 1 - r || pages[r * ps + ps - 1] != 'a' + np - 1 - r) { fprintf(stderr, "page %d reads %c\n", r, pages[r * ps]); return 1; }
	want_error(svm_set_home(pages, ps, np), "svm_set_home: set home: rank");
	want_error(svm_set_home(&ps, sizeof ps, 0), "not inside the shared region");

	want_error(svm_lock(-1), "svm_lock: lock -1 out of range");
	want_error(svm_unlock(2), "which rank");
	want_error(svm_barrier_among(1, half, 0), "empty processor set");
	want_error(svm_init(), "already joined");
	char tiny[4];
	size_t full = svm_last_error(tiny, sizeof tiny);
	if (full <= 3 || strlen(tiny) != 3) { fprintf(stderr, "svm_last_error truncation: %zu %zu\n", full, strlen(tiny)); return 1; }

	svm_stats s;
	CHECK(svm_get_stats(&s));
	CHECK(svm_barrier(0));
	if (me == 0) printf("native ok: %d ranks, %ld barriers, %ld messages sent\n", np, (long)s.barriers, (long)s.messages_sent);
	CHECK(svm_finalize());
	want_error(svm_finalize(), "not joined");
	return 0;
}
