/* The local pool (pool.h). One parent, N forked workers; each worker reads CASE frames from its
 * pipe and answers RESULT frames. The parent polls every worker's result pipe, enforces the
 * deadlines, and replaces a worker that crashed, hung or wrote garbage. */
#define _GNU_SOURCE /* pipe2 */
#include "executors/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "executors/adapters.h"
#include "executors/proto.h"
#include "pool_priv.h"

#if defined(__SANITIZE_ADDRESS__)
#define EXEC_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EXEC_UNDER_ASAN 1
#endif
#endif
#ifndef EXEC_UNDER_ASAN
#define EXEC_UNDER_ASAN 0
#endif

_Static_assert(sizeof(struct exec_case) <= EXEC_FRAME_MAX, "a case fits one frame");
_Static_assert(sizeof(struct exec_result) <= EXEC_FRAME_MAX, "a result fits one frame");

/* ---- the worker side ---- */

/* Closes every descriptor above stderr but the worker's two pipes: the parent's listening
 * socket, database files and the other workers' pipes are not the worker's to hold. A worker
 * still alive for a moment after its parent was killed would otherwise keep the parent's port
 * bound, and the restarted daemon could not listen. */
static void close_inherited(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	unsigned int ranges[3][2] = { { 3, (unsigned int)lo - 1 },
				      { (unsigned int)lo + 1, (unsigned int)hi - 1 },
				      { (unsigned int)hi + 1, ~0U } };
	for (int i = 0; i < 3; i++) {
		if (ranges[i][0] > ranges[i][1])
			continue;
		if (close_range(ranges[i][0], ranges[i][1], 0) == 0)
			continue;
		long max = sysconf(_SC_OPEN_MAX); /* a kernel without close_range (before 5.9) */
		for (long fd = ranges[i][0]; fd <= (long)ranges[i][1] && fd < max; fd++)
			close((int)fd);
	}
}

static void worker_setup(const struct pool *p, pid_t parent, int in, int out)
{
	signal(SIGINT, SIG_IGN); /* the parent decides when a worker stops */
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the parent */
	if (getppid() != parent)          /* it died before the line above */
		_exit(0);
	close_inherited(in, out);
#if !EXEC_UNDER_ASAN /* ASan's shadow memory is terabytes of address space */
	struct rlimit rl = { p->mem, p->mem };
	setrlimit(RLIMIT_AS, &rl);
#endif
}

/* Answers CASE frames from `in` on `out` until QUIT or end of file. */
static _Noreturn void serve_cases(int in, int out, exec_runner_fn runner, void *ctx,
				  const struct exec_adapters *adapters)
{
	static unsigned char buf[EXEC_FRAME_HEADER + EXEC_FRAME_MAX];
	for (;;) {
		uint32_t type;
		const unsigned char *payload;
		int n = exec_proto_read(in, buf, &type, &payload);
		if (n == ERR_NOTFOUND || (n >= 0 && type == EXEC_FRAME_QUIT))
			_exit(0);
		struct exec_case c;
		if (n != (int)sizeof(c) || type != EXEC_FRAME_CASE)
			_exit(3);
		memcpy(&c, payload, sizeof(c));
		struct exec_result r;
		memset(&r, 0, sizeof(r));
		if (exec_case_check(&c) != 0) {
			memcpy(r.id, c.id, sizeof(r.id) - 1);
			r.outcome = EXEC_ERROR;
			snprintf(r.message, sizeof(r.message), "%s", err_last());
		} else if (runner) {
			runner(&c, &r, out, ctx);
		} else {
			exec_case_run(&c, adapters, &r);
		}
		if (exec_proto_write(out, EXEC_FRAME_RESULT, &r, sizeof(r)) != 0)
			_exit(4);
	}
}

/* In the forked child: the pipes moved to EXEC_WORKER_FD and the one after it (without
 * close-on-exec), then the worker program. Only async-signal-safe calls: the parent may have
 * threads. */
static _Noreturn void exec_worker(const char *exe, int in, int out)
{
	int a = fcntl(in, F_DUPFD_CLOEXEC, 10), b = fcntl(out, F_DUPFD_CLOEXEC, 10);
	if (a < 0 || b < 0 || dup2(a, EXEC_WORKER_FD) < 0 || dup2(b, EXEC_WORKER_FD + 1) < 0)
		_exit(5);
	char *argv[] = { (char *)exe, (char *)EXEC_WORKER_ARG, NULL };
	execv(exe, argv);
	_exit(6);
}

static _Noreturn void worker_main(const struct pool *p, pid_t parent, int in, int out)
{
	worker_setup(p, parent, in, out);
	if (p->o->worker_exe && !p->o->runner)
		exec_worker(p->o->worker_exe, in, out);
	serve_cases(in, out, p->o->runner, p->o->runner_ctx, p->o->adapters);
}

void exec_pool_worker_main(int in, int out)
{
	signal(SIGINT, SIG_IGN);
	/* the setup: the adapter table's source, in pieces, up to an empty SETUP frame */
	static unsigned char buf[EXEC_FRAME_HEADER + EXEC_FRAME_MAX];
	char *src = NULL;
	size_t len = 0;
	for (;;) {
		uint32_t type;
		const unsigned char *payload;
		int n = exec_proto_read(in, buf, &type, &payload);
		if (n == ERR_NOTFOUND)
			_exit(0);
		if (n < 0 || type != EXEC_FRAME_SETUP || len + (size_t)n > EXEC_ADAPTER_FILE_MAX)
			_exit(3);
		if (n == 0)
			break;
		char *p = realloc(src, len + (size_t)n);
		if (!p)
			_exit(7);
		src = p;
		memcpy(src + len, payload, (size_t)n);
		len += (size_t)n;
	}
	struct exec_adapters *adapters = NULL;
	if (src && exec_adapters_parse(&adapters, src, len, "adapters (from the pool)") != 0)
		_exit(8);
	free(src);
	serve_cases(in, out, NULL, NULL, adapters);
}

/* To a worker that is its own program: what it cannot inherit. 0, or -1 when it is gone. */
static int send_setup(const struct pool *p, int fd)
{
	size_t len;
	const char *src = exec_adapters_source(p->o->adapters, &len);
	for (size_t off = 0; off < len; off += EXEC_FRAME_MAX) {
		size_t k = len - off < EXEC_FRAME_MAX ? len - off : EXEC_FRAME_MAX;
		if (exec_proto_write(fd, EXEC_FRAME_SETUP, src + off, (uint32_t)k) != 0)
			return -1;
	}
	return exec_proto_write(fd, EXEC_FRAME_SETUP, NULL, 0) != 0 ? -1 : 0;
}

/* ---- the parent side ---- */

static int spawn(struct pool *p, int j)
{
	int down[2], up[2];
	struct worker *w = &p->w[j];
	if (pipe2(down, O_CLOEXEC) != 0)
		return err_set_errno(ERR_IO, "pool: pipe");
	if (pipe2(up, O_CLOEXEC) != 0) {
		close(down[0]), close(down[1]);
		return err_set_errno(ERR_IO, "pool: pipe");
	}
	fflush(NULL); /* a worker must not write the parent's buffered output again */
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(down[0]), close(down[1]), close(up[0]), close(up[1]);
		return err_set_errno(ERR_IO, "pool: fork");
	}
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		worker_main(p, parent, down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	fcntl(up[0], F_SETFL, fcntl(up[0], F_GETFL) | O_NONBLOCK);
	*w = (struct worker){ .pid = pid, .to = down[1], .from = up[0], .ci = -1 };
	p->st.spawned++;
	/* a worker gone before its setup is found out by its first case */
	if (p->o->worker_exe && !p->o->runner)
		(void)send_setup(p, w->to);
	return 0;
}

/* Closes the worker's pipes and waits for it; its wait status. */
static int reap(struct worker *w)
{
	int status = 0;
	if (w->to >= 0)
		close(w->to);
	if (w->from >= 0)
		close(w->from);
	w->to = w->from = -1;
	while (w->pid > 0 && waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
		;
	w->pid = -1;
	return status;
}

static const char *signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{ SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" },   { SIGABRT, "SIGABRT" },
		{ SIGILL, "SIGILL" },   { SIGFPE, "SIGFPE" },   { SIGKILL, "SIGKILL" },
		{ SIGTERM, "SIGTERM" }, { SIGINT, "SIGINT" },   { SIGPIPE, "SIGPIPE" },
		{ SIGXCPU, "SIGXCPU" }, { SIGTRAP, "SIGTRAP" }, { SIGSYS, "SIGSYS" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return "signal";
}

void exec__status_text(char *buf, size_t size, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, size, "worker killed by %s (%s)", signal_name(WTERMSIG(status)),
			 strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status))
		snprintf(buf, size, "worker exited with status %d mid-case", WEXITSTATUS(status));
	else
		snprintf(buf, size, "worker ended (wait status %#x)", status);
}

/* The worker in slot j is gone or unusable: its case (if any) gets `outcome`, it is replaced. */
static int dispatch(struct pool *p, int j);

static int lose_worker(struct pool *p, int j, enum exec_outcome outcome, const char *why,
		       bool kill_it)
{
	struct worker *w = &p->w[j];
	long ci = w->ci;
	if (kill_it && w->pid > 0)
		kill(w->pid, SIGKILL);
	int status = reap(w);
	p->st.replaced++;
	if (ci >= 0) {
		struct exec_result r;
		memset(&r, 0, sizeof(r));
		memcpy(r.id, p->cases[ci].id, sizeof(r.id));
		r.outcome = outcome;
		r.atol = p->cases[ci].atol;
		r.rtol = p->cases[ci].rtol;
		r.seconds = clock_elapsed_s(w->started, clock_mono_ns());
		if (why)
			snprintf(r.message, sizeof(r.message), "%s", why);
		else
			exec__status_text(r.message, sizeof(r.message), status);
		pool__finish_case(p, (size_t)ci, &r);
	}
	int rc = spawn(p, j);
	return rc ? rc : dispatch(p, j);
}

static int dispatch(struct pool *p, int j)
{
	size_t ci;
	if (!pool__next(p, &ci))
		return 0;
	struct worker *w = &p->w[j];
	w->ci = (long)ci;
	w->n = 0;
	w->started = clock_mono_ns();
	w->deadline = w->started + (uint64_t)(p->timeout_s * 1e9);
	if (exec_proto_write(w->to, EXEC_FRAME_CASE, &p->cases[ci], sizeof(p->cases[ci])) != 0)
		return lose_worker(p, j, EXEC_CRASHED, NULL, true); /* it died while idle */
	return 0;
}

/* A whole frame arrived from worker j. */
static int take_frame(struct pool *p, int j, uint32_t type, const unsigned char *payload,
		      uint32_t len)
{
	struct worker *w = &p->w[j];
	struct exec_result r;
	char why[EXEC_MESSAGE_MAX];
	if (type != EXEC_FRAME_RESULT || len != sizeof(r))
		snprintf(why, sizeof(why), "garbage on the pipe: a frame of type %u, %u bytes",
			 type, len);
	else if (memcpy(&r, payload, sizeof(r)), exec_result_check(&r) != 0)
		snprintf(why, sizeof(why), "garbage on the pipe: %s", err_last());
	else if (w->ci < 0 || memcmp(r.id, p->cases[w->ci].id, sizeof(r.id)) != 0)
		snprintf(why, sizeof(why), "garbage on the pipe: a result for another case");
	else {
		long ci = w->ci;
		w->ci = -1;
		pool__finish_case(p, (size_t)ci, &r);
		return dispatch(p, j);
	}
	return lose_worker(p, j, EXEC_ERROR, why, true);
}

static int drain(struct pool *p, int j)
{
	struct worker *w = &p->w[j];
	for (;;) {
		ssize_t got = read(w->from, w->buf + w->n, sizeof(w->buf) - w->n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (got <= 0) /* end of file: the worker is gone */
			return lose_worker(p, j, EXEC_CRASHED, NULL, false);
		w->n += (size_t)got;
		uint32_t type, len;
		const unsigned char *payload;
		int used = exec_proto_parse(w->buf, w->n, &type, &payload, &len);
		if (used < 0) {
			char why[EXEC_MESSAGE_MAX];
			snprintf(why, sizeof(why), "garbage on the pipe: %s", err_last());
			return lose_worker(p, j, EXEC_ERROR, why, true);
		}
		if (used > 0) {
			if ((size_t)used != w->n)
				return lose_worker(p, j, EXEC_ERROR,
						   "garbage on the pipe: bytes after a result",
						   true);
			w->n = 0;
			return take_frame(p, j, type, payload, len);
		}
	}
}

static int check_deadlines(struct pool *p)
{
	uint64_t now = clock_mono_ns();
	for (int j = 0; j < p->nw; j++) {
		if (p->w[j].ci < 0 || now < p->w[j].deadline)
			continue;
		char why[EXEC_MESSAGE_MAX];
		snprintf(why, sizeof(why), "no result within %g s: the worker was killed",
			 p->timeout_s);
		int rc = lose_worker(p, j, EXEC_TIMED_OUT, why, true);
		if (rc)
			return rc;
	}
	return 0;
}

static int poll_once(struct pool *p)
{
	struct pollfd fds[EXEC_JOBS_MAX];
	for (int j = 0; j < p->nw; j++) /* retries queued since a worker went idle */
		if (p->w[j].ci < 0 && p->w[j].pid > 0 && pool__pending(p)) {
			int rc = dispatch(p, j);
			if (rc)
				return rc;
		}
	uint64_t now = clock_mono_ns(), next = now + 200000000ull; /* look at the stop flag */
	for (int j = 0; j < p->nw; j++) {
		fds[j] = (struct pollfd){ .fd = p->w[j].from, .events = POLLIN };
		if (p->w[j].ci >= 0 && p->w[j].deadline < next)
			next = p->w[j].deadline;
	}
	int ms = next > now ? (int)((next - now) / 1000000) + 1 : 0;
	int n = poll(fds, (nfds_t)p->nw, ms);
	if (n < 0 && errno != EINTR)
		return err_set_errno(ERR_IO, "pool: poll");
	for (int j = 0; n > 0 && j < p->nw; j++) {
		if (!fds[j].revents)
			continue;
		int rc = p->w[j].ci >= 0
			     ? drain(p, j)
			     : lose_worker(p, j, EXEC_ERROR,
					   "garbage on the pipe from an idle worker", true);
		if (rc)
			return rc;
	}
	return check_deadlines(p);
}

/* Ends every worker: with `force`, SIGTERM, then SIGKILL after the grace period. */
static void stop_workers(struct pool *p, bool force)
{
	for (int j = 0; j < p->nw; j++) {
		if (p->w[j].pid <= 0)
			continue;
		if (force)
			kill(p->w[j].pid, SIGTERM);
		else
			exec_proto_write(p->w[j].to, EXEC_FRAME_QUIT, NULL, 0);
	}
	uint64_t until = clock_mono_ns() + (uint64_t)EXEC_STOP_GRACE_MS * 1000000;
	for (int j = 0; j < p->nw; j++) {
		struct worker *w = &p->w[j];
		while (w->pid > 0 && waitpid(w->pid, NULL, WNOHANG) == 0 && clock_mono_ns() < until)
			clock_sleep_ms(5);
		if (w->pid > 0 && waitpid(w->pid, NULL, WNOHANG) == 0)
			kill(w->pid, SIGKILL);
		reap(w);
	}
}

int exec_pool_run(const struct exec_case *cases, size_t n, const struct exec_pool_opts *opts,
		  struct exec_result *results, struct exec_pool_stats *stats)
{
	struct pool p;
	int rc = pool__init(&p, cases, n, opts, results);
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigaction(SIGPIPE, &ign, &old); /* a dead worker's pipe is an outcome, not our death */
	for (int j = 0; rc == 0 && j < p.nw; j++)
		rc = spawn(&p, j);
	for (int j = 0; rc == 0 && j < p.nw; j++)
		rc = dispatch(&p, j);
	while (rc == 0 && p.done < n && !(opts->stop && *opts->stop))
		rc = poll_once(&p);
	p.st.stopped = p.done < n && opts->stop && *opts->stop;
	stop_workers(&p, p.st.stopped || rc != 0);
	sigaction(SIGPIPE, &old, NULL);
	if (stats)
		*stats = p.st;
	pool__finish(&p);
	return rc ? rc : p.st.stopped;
}
