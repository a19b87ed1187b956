/* The CPUs each thread of a rank may run on, after svm_init: one line per
 * rank, "rank R: CALLER | OTHER OTHER ...", the calling thread's list first,
 * then every other thread's (the Go runtime's), as the kernel writes them. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "svm.h"

/* cpus_of copies thread tid's Cpus_allowed_list into buf. */
static void cpus_of(long tid, char *buf, size_t n) {
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
	snprintf(buf, n, "unreadable");
	FILE *f = fopen(path, "r");
	if (f == NULL) return;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "Cpus_allowed_list: %63s", buf) == 1) break;
	fclose(f);
}

int main(void) {
	if (svm_init() != 0) {
		char m[256];
		svm_last_error(m, sizeof m);
		fprintf(stderr, "svm_init: %s\n", m);
		return 1;
	}
	char out[4096], cpus[64];
	long self = (long)gettid();
	cpus_of(self, cpus, sizeof cpus);
	int len = snprintf(out, sizeof out, "rank %d: %s |", svm_rank(), cpus);
	DIR *tasks = opendir("/proc/self/task");
	if (tasks == NULL) { perror("/proc/self/task"); return 1; }
	for (struct dirent *e; (e = readdir(tasks)) != NULL;) {
		long tid = atol(e->d_name);
		if (tid <= 0 || tid == self) continue;
		cpus_of(tid, cpus, sizeof cpus);
		len += snprintf(out + len, sizeof out - (size_t)len, " %s", cpus);
		if ((size_t)len >= sizeof out) break;
	}
	closedir(tasks);
	printf("%s\n", out);
	/* Every rank prints before any leaves. */
	if (svm_barrier(0) != 0 || svm_finalize() != 0) return 1;
	return 0;
}
