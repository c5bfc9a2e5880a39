/* The pool under injected faults: a case that segfaults, one that never returns, one that
 * allocates without bound, one that writes garbage to the pipe, one that exits mid-case, and
 * one that fails once then passes. Each gets its own outcome, the run completes, the results keep
 * the input order, and afterwards no child is left (waitpid) and no descriptor is left open
 * (/proc/self/fd). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executors/pool.h"

static char marker_dir[64];

static bool under_asan(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return true;
#endif
#endif
	return false;
}

static void fault_runner(const struct exec_case *c, struct exec_result *r, int reply_fd, void *ctx)
{
	(void)ctx;
	memcpy(r->id, c->id, sizeof(r->id));
	r->outcome = EXEC_PASSED;
	if (!strcmp(c->op, "segv")) {
		raise(SIGSEGV);
	} else if (!strcmp(c->op, "hang")) {
		for (;;)
			pause();
	} else if (!strcmp(c->op, "oom") && under_asan()) {
		r->outcome = EXEC_ERROR; /* no RLIMIT_AS under ASan (pool.c): do not eat the host */
		snprintf(r->message, sizeof(r->message), "out of memory (not tried under ASan)");
	} else if (!strcmp(c->op, "oom")) {
		void *head = NULL;
		size_t got = 0;
		for (;;) { /* a list of 16 MiB blocks until the address-space limit says no (the
			    * limit counts address space: nothing needs touching) */
			void **b = malloc((size_t)16 << 20);
			if (!b)
				break;
			*b = head;
			head = b;
			got++;
		}
		while (head) {
			void *next = *(void **)head;
			free(head);
			head = next;
		}
		r->outcome = EXEC_ERROR;
		snprintf(r->message, sizeof(r->message), "out of memory after %zu x 16 MiB", got);
	} else if (!strcmp(c->op, "garbage")) {
		(void)!write(reply_fd, "HTTP/1.1 200 OK\r\n\r\nhello", 24);
		pause();
	} else if (!strcmp(c->op, "exit")) {
		_exit(7);
	} else if (!strcmp(c->op, "fail_once")) {
		char path[128];
		snprintf(path, sizeof(path), "%s/%.16s", marker_dir, c->id);
		int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
		if (fd >= 0) {
			close(fd);
			r->outcome = EXEC_FAILED;
			snprintf(r->message, sizeof(r->message), "first attempt fails");
		}
	} else if (!strcmp(c->op, "fail")) {
		r->outcome = EXEC_FAILED;
	}
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	cr_assert_not_null(d);
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void make_case(struct exec_case *c, int i, const char *op)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%016x", i);
	snprintf(c->op, sizeof(c->op), "%s", op);
	snprintf(c->test_id, sizeof(c->test_id), "test/test_pool.py::TestPool::test_%s", op);
	c->mode = SPEC_MODE_MANDATORY_SUCCESS;
}

Test(pool, every_fault_gets_its_own_outcome, .timeout = 200)
{
	snprintf(marker_dir, sizeof(marker_dir), "/tmp/exec-pool-XXXXXX");
	cr_assert_not_null(mkdtemp(marker_dir));
	const char *ops[] = { "pass",    "segv", "pass",      "hang", "oom",
			      "garbage", "exit", "fail_once", "fail", "pass" };
	enum exec_outcome want[] = { EXEC_PASSED, EXEC_CRASHED, EXEC_PASSED,  EXEC_TIMED_OUT,
				     EXEC_ERROR,  EXEC_ERROR,   EXEC_CRASHED, EXEC_FLAKY,
				     EXEC_FAILED, EXEC_PASSED };
	/* The hang waits out the timeout twice (it is retried); the others must finish well
	 * within it. Short for the hang, generous for the rest: the hang runs in a second pool. */
	const size_t hang = 3;
	size_t n = sizeof(ops) / sizeof(ops[0]);
	struct exec_case cases[10];
	struct exec_result res[10];
	for (size_t i = 0; i < n; i++)
		make_case(&cases[i], (int)i, ops[i]);
	int fds_before = count_fds();
	struct exec_pool_opts o = {
		.jobs = 3,
		/* generous: the oom case must fail its allocations well within it even on a loaded
		 * machine with MALLOC_PERTURB_ (meson sets it) touching every byte; only the hang
		 * (in its own pool below) waits for its own, shorter timeout */
		.timeout_s = 5.0,
		.mem_bytes = (uint64_t)512 << 20,
		.retries = 1,
		.runner = fault_runner,
	};
	struct exec_case rest[10];
	struct exec_result rest_res[10];
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (i != hang)
			rest[k++] = cases[i];
	struct exec_pool_stats st, st_hang;
	cr_assert_eq(exec_pool_run(rest, k, &o, rest_res, &st), 0, "%s", "the run completes");
	struct exec_pool_opts oh = o;
	oh.timeout_s = 0.5;
	cr_assert_eq(exec_pool_run(&cases[hang], 1, &oh, &res[hang], &st_hang), 0, "%s",
		     "the hang's run completes");
	for (size_t i = 0, r = 0; i < n; i++)
		if (i != hang)
			res[i] = rest_res[r++];
	st.replaced += st_hang.replaced;
	for (size_t i = 0; i < n; i++) {
		cr_expect_str_eq(res[i].id, cases[i].id, "order: %zu", i);
		cr_expect_eq(res[i].outcome, want[i], "%s: %s (%s)", ops[i],
			     exec_outcome_name(res[i].outcome), res[i].message);
	}
	/* ASan catches the signal itself and reports: then it exits 1, or aborts with
	 * abort_on_error=1 (as .ci/run sets it) */
	cr_expect(under_asan() ? strstr(res[1].message, "exited with status 1") ||
				     strstr(res[1].message, "SIGABRT")
			       : strstr(res[1].message, "SIGSEGV") != NULL,
		  "%s", res[1].message);
	cr_expect(strstr(res[3].message, "no result within 0.5 s") != NULL, "%s", res[3].message);
	cr_expect(strstr(res[4].message, "out of memory") != NULL, "%s", res[4].message);
	cr_expect(strstr(res[5].message, "garbage on the pipe") != NULL, "%s", res[5].message);
	cr_expect(strstr(res[6].message, "status 7") != NULL, "%s", res[6].message);
	cr_expect_eq(res[7].first_outcome, EXEC_FAILED);
	cr_expect_eq(res[7].attempts, 2);
	cr_expect_eq(res[8].attempts, 2, "a failure is retried once");
	/* the segfault, the hang and the exit are retried too, and each replaces a worker */
	cr_expect_geq(st.replaced, 7, "replaced %zu", st.replaced);
	errno = 0;
	cr_expect_eq(waitpid(-1, NULL, WNOHANG), -1, "no child left");
	cr_expect_eq(errno, ECHILD);
	cr_expect_eq(count_fds(), fds_before, "no descriptor leaked");
	char cmd_path[256];
	for (size_t i = 0; i < n; i++) {
		snprintf(cmd_path, sizeof(cmd_path), "%s/%.16s", marker_dir, cases[i].id);
		unlink(cmd_path);
	}
	rmdir(marker_dir);
}

static volatile sig_atomic_t stop_flag;

static void stop_after(void *ctx, const struct exec_progress *p)
{
	(void)ctx;
	if (p->done >= 3)
		stop_flag = 1;
}

Test(pool, a_stop_request_keeps_what_finished, .timeout = 60)
{
	struct exec_case cases[8];
	struct exec_result res[8];
	for (int i = 0; i < 8; i++)
		make_case(&cases[i], i, i < 3 ? "pass" : "hang");
	int fds_before = count_fds();
	stop_flag = 0;
	struct exec_pool_opts o = { .jobs = 2,
				    .timeout_s = 30,
				    .runner = fault_runner,
				    .progress = stop_after,
				    .stop = &stop_flag };
	struct exec_pool_stats st;
	cr_assert_eq(exec_pool_run(cases, 8, &o, res, &st), 1);
	cr_expect(st.stopped);
	size_t finished = 0;
	for (int i = 0; i < 8; i++)
		finished += res[i].outcome != EXEC_NOT_RUN;
	cr_expect_eq(finished, 3);
	cr_expect_eq(res[0].outcome, EXEC_PASSED);
	errno = 0;
	cr_expect_eq(waitpid(-1, NULL, WNOHANG), -1);
	cr_expect_eq(count_fds(), fds_before);
}

static void noop_runner(const struct exec_case *c, struct exec_result *r, int fd, void *ctx)
{
	(void)fd, (void)ctx;
	memcpy(r->id, c->id, sizeof(r->id));
	r->outcome = EXEC_PASSED;
}

Test(pool, many_cases_keep_their_order)
{
	size_t n = 2000;
	struct exec_case *cases = calloc(n, sizeof(*cases));
	struct exec_result *res = calloc(n, sizeof(*res));
	for (size_t i = 0; i < n; i++)
		make_case(&cases[i], (int)i, "pass");
	struct exec_pool_opts o = { .jobs = 4, .runner = noop_runner };
	cr_assert_eq(exec_pool_run(cases, n, &o, res, NULL), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_str_eq(res[i].id, cases[i].id);
	free(cases);
	free(res);
}

/* The parent's own descriptors (a daemon's listening socket, its database files) are not the
 * workers': a worker holds its two pipes and stdio, nothing else. */
static void fds_runner(const struct exec_case *c, struct exec_result *r, int fd, void *ctx)
{
	int parents = *(const int *)ctx;
	memcpy(r->id, c->id, sizeof(r->id));
	r->outcome = fcntl(parents, F_GETFD) == -1 && errno == EBADF ? EXEC_PASSED : EXEC_FAILED;
	int open_fds = 0;
	for (int i = 0; i < 1024; i++)
		open_fds += fcntl(i, F_GETFD) != -1;
	if (open_fds > 5) /* stdin, stdout, stderr, the two pipes */
		r->outcome = EXEC_FAILED;
	snprintf(r->message, sizeof(r->message), "%d open, reply on %d", open_fds, fd);
}

Test(pool, workers_hold_no_descriptor_of_the_parent)
{
	int parents = open("/dev/null", O_RDONLY); /* without O_CLOEXEC, as a socket might be */
	cr_assert_geq(parents, 0);
	struct exec_case cases[3];
	struct exec_result res[3];
	for (int i = 0; i < 3; i++)
		make_case(&cases[i], i, "pass");
	struct exec_pool_opts o = { .jobs = 2, .runner = fds_runner, .runner_ctx = &parents };
	cr_assert_eq(exec_pool_run(cases, 3, &o, res, NULL), 0);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(res[i].outcome, EXEC_PASSED, "case %d: %s", i, res[i].message);
	close(parents);
}
