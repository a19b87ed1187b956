/* Every call of the TreadMarks 1.0 header, written the way TreadMarks
 * programs are (K&R definitions, implicit int, globals distributed):
 *   1. Tmk_sbrk by the last process, the pointer handed out with
 *      Tmk_distribute from that (non-zero) process;
 *   2. a bounded buffer, producers and consumers on condition variables;
 *   3. a work queue fed in batches, workers woken by broadcasts;
 *   4. the fork-join scheduler squaring blocks of a shared array;
 *   5. Tmk_malloc/Tmk_free, Tmk_stat, Tmk_err, Tmk_page_size, Tmk_npages.
 * Process 0 checks each answer against the same computed sequentially and
 * prints "tmkall ok: N processes, work W, squares S". */
#include <stdio.h>
#include <string.h>
#include "Tmk.h"

#define CAP 2      /* bounded buffer slots */
#define ITEMS 40   /* items each process produces and consumes */
#define TASKS 300  /* work queue tasks */
#define BATCH 25
#define N 4096     /* scheduler array */

#define BUF_LOCK 1
#define NOT_FULL 0
#define NOT_EMPTY 1
#define QUEUE_LOCK 2
#define WORK 2
#define SUM_LOCK 3

struct buffer { int count, in, out; long items[CAP]; long produced, consumed; };
struct queue { int head, tail, done; int tasks[TASKS]; long total; };

struct buffer *buf;
struct queue *q;
long *table;     /* from Tmk_sbrk, filled by the last process */
double *squares; /* from Tmk_malloc, computed by the forked function */
unsigned tablen;

static fail(what, got, want)
	char *what;
	long got, want;
{
	Tmk_errexit("tmkall: %s is %ld, want %ld\n", what, got, want);
}

long work(t)
	int t;
{
	return (long)t * t % 1009 + t;
}

produce(v)
	long v;
{
	Tmk_lock_acquire(BUF_LOCK);
	while (buf->count == CAP)
		Tmk_lock_cond_wait(BUF_LOCK, NOT_FULL);
	buf->items[buf->in] = v;
	buf->in = (buf->in + 1) % CAP;
	buf->count++;
	buf->produced += v;
	Tmk_lock_cond_signal(BUF_LOCK, NOT_EMPTY);
	Tmk_lock_release(BUF_LOCK);
}

long consume()
{
	long v;

	Tmk_lock_acquire(BUF_LOCK);
	while (buf->count == 0)
		Tmk_lock_cond_wait(BUF_LOCK, NOT_EMPTY);
	v = buf->items[buf->out];
	buf->out = (buf->out + 1) % CAP;
	buf->count--;
	buf->consumed += v;
	Tmk_lock_release(BUF_LOCK);
	/* The signal comes after the release: TreadMarks allows it. */
	Tmk_lock_cond_signal(BUF_LOCK, NOT_FULL);
	return v;
}

void square_block(arg)
	Tmk_sched_arg_t arg;
{
	double *a = arg->shared[0];
	int n = arg->byvalue[0].int_by_value, i;
	int lo = n * Tmk_proc_id / Tmk_nprocs, hi = n * (Tmk_proc_id + 1) / Tmk_nprocs;

	for (i = lo; i < hi; i++)
		a[i] = (double)i * i;
}

main(argc, argv)
	int argc;
	char **argv;
{
	int i, k;
	long mine, want, sum;
	double dsum;
	struct Tmk_sched_arg arg;

	Tmk_startup(argc, argv);
	if (Tmk_page_size != 4096 || Tmk_npages == 0)
		fail("Tmk_page_size", (long)Tmk_page_size, 4096L);

	/* 1. Tmk_sbrk and Tmk_distribute from the last process. */
	if (Tmk_proc_id == Tmk_nprocs - 1) {
		tablen = 1000;
		table = Tmk_sbrk(tablen * sizeof *table);
		if ((char *)Tmk_sbrk(0) != (char *)(table + tablen))
			fail("Tmk_sbrk(0) - end", (long)((char *)Tmk_sbrk(0) - (char *)(table + tablen)), 0L);
		for (i = 0; i < tablen; i++)
			table[i] = 3L * i + Tmk_nprocs;
		buf = Tmk_malloc(sizeof *buf);
		memset(buf, 0, sizeof *buf);
		q = Tmk_malloc(sizeof *q);
		memset(q, 0, sizeof *q);
		Tmk_distribute(&table, sizeof table);
		Tmk_distribute(&tablen, sizeof tablen);
		Tmk_distribute(&buf, sizeof buf);
		Tmk_distribute(&q, sizeof q);
	}
	Tmk_barrier(0);
	for (i = 0, sum = 0; i < tablen; i++)
		sum += table[i];
	if (sum != 3L * 999 * 1000 / 2 + 1000L * Tmk_nprocs)
		fail("the distributed table's sum", sum, 3L * 999 * 1000 / 2 + 1000L * Tmk_nprocs);

	/* 2. Producers and consumers: each process alternates, so at most one
	 * item per process is outstanding and the buffer fills and empties. */
	for (k = 0; k < ITEMS; k++) {
		produce((long)Tmk_proc_id * 1000 + k + 1);
		consume();
	}
	Tmk_barrier(1);
	want = 0;
	for (i = 0; i < Tmk_nprocs; i++)
		for (k = 0; k < ITEMS; k++)
			want += (long)i * 1000 + k + 1;
	if (Tmk_proc_id == 0) {
		if (buf->produced != want)
			fail("produced", buf->produced, want);
		if (buf->consumed != want)
			fail("consumed", buf->consumed, want);
	}

	/* 3. A work queue: process 0 feeds it in batches and broadcasts; every
	 * process works until it is empty and done. */
	if (Tmk_proc_id == 0) {
		for (i = 0; i < TASKS; i += BATCH) {
			Tmk_lock_acquire(QUEUE_LOCK);
			for (k = i; k < i + BATCH && k < TASKS; k++)
				q->tasks[q->tail++] = k;
			Tmk_lock_cond_broadcast(QUEUE_LOCK, WORK);
			Tmk_lock_release(QUEUE_LOCK);
		}
		Tmk_lock_acquire(QUEUE_LOCK);
		q->done = 1;
		Tmk_lock_release(QUEUE_LOCK);
		Tmk_lock_cond_broadcast(QUEUE_LOCK, WORK);
	}
	mine = 0;
	for (;;) {
		int t;

		Tmk_lock_acquire(QUEUE_LOCK);
		while (q->head == q->tail && !q->done)
			Tmk_lock_cond_wait(QUEUE_LOCK, WORK);
		if (q->head == q->tail) {
			Tmk_lock_release(QUEUE_LOCK);
			break;
		}
		t = q->tasks[q->head++];
		Tmk_lock_release(QUEUE_LOCK);
		mine += work(t);
	}
	Tmk_lock_acquire(SUM_LOCK);
	q->total += mine;
	Tmk_lock_release(SUM_LOCK);
	Tmk_barrier(2);
	for (i = 0, want = 0; i < TASKS; i++)
		want += work(i);
	if (Tmk_proc_id == 0 && q->total != want)
		fail("the work queue's total", q->total, want);

	/* 4. Fork-join: the manager forks square_block onto every process. */
	if (Tmk_proc_id == 0) {
		squares = Tmk_malloc(N * sizeof *squares);
		Tmk_distribute(&squares, sizeof squares);
	}
	Tmk_barrier(3);
	if (Tmk_sched_start(0)) {
		memset(&arg, 0, sizeof arg);
		arg.sharedLen = 1;
		arg.shared[0] = squares;
		arg.byvalueLen = 1;
		arg.byvalue[0].int_by_value = N;
		Tmk_sched_fork(square_block, &arg);
		Tmk_sched_start(0);
		for (i = 0, dsum = 0; i < N; i++)
			dsum += squares[i];
		if (dsum != (double)(N - 1) * N * (2 * N - 1) / 6)
			fail("the sum of squares", (long)dsum, (long)((double)(N - 1) * N * (2 * N - 1) / 6));
		Tmk_sched_exit();
		Tmk_free(squares);
	}

	/* 5. Tmk_stat, brought up to date by the barrier. */
	Tmk_barrier(4);
	if (Tmk_stat.arrivals < 5)
		fail("Tmk_stat.arrivals", (long)Tmk_stat.arrivals, 5L);
	if (Tmk_stat.acquires == 0 || Tmk_stat.waits + Tmk_stat.signals + Tmk_stat.broadcasts == 0)
		fail("Tmk_stat.acquires", (long)Tmk_stat.acquires, 1L);
	if (Tmk_proc_id == 0) {
		Tmk_err("tmkall: process 0 saw %u barriers\n", Tmk_stat.arrivals);
		printf("tmkall ok: %u processes, work %ld, squares %.0f\n", Tmk_nprocs, q->total, dsum);
		fflush(stdout);
	}
	Tmk_exit(0);
}
