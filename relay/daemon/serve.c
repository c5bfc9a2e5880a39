/* The daemon's public entry points (daemon/serve.h). serve_run() loads the configuration,
 * starts the daemon and waits for signals in the calling thread. A handler (run by whichever
 * thread the kernel picks, including threads that libraries start before main(), such as
 * OpenBLAS's pool) only writes the signal's number to a pipe; the waiting thread reads it:
 * SIGTERM and SIGINT drain and return, SIGHUP reloads the configuration (a bad file is logged
 * and the running one stays). serve_start() and friends are the same daemon for a caller that
 * keeps its own signals (the demo). */
#include "daemon/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/log.h"
#include "config.h"
#include "daemon.h"
#include "pages.h"

int serve_config_check(const char *path)
{
	struct config cfg;
	int rc = config_load(&cfg, path);
	if (rc == 0)
		config_finish(&cfg);
	return rc;
}

void serve_config_reference(FILE *out)
{
	config_write_reference(out);
}

static int reload(struct daemon *d, const char *path)
{
	struct config next;
	if (config_load(&next, path) < 0) {
		log_error("reload refused, the running configuration stays: %s", err_last());
		return -1;
	}
	daemon_reload(d, &next);
	return 0;
}

static int sig_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	if (write(sig_pipe[1], &b, 1) < 0) {
		/* the pipe is full: a signal of each kind is already waiting */
	}
	errno = saved;
}

static int signals_install(void)
{
	if (sig_pipe[0] < 0 && pipe(sig_pipe) < 0)
		return err_set_errno(ERR_IO, "serve: pipe");
	fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK);
	fcntl(sig_pipe[0], F_SETFD, FD_CLOEXEC);
	fcntl(sig_pipe[1], F_SETFD, FD_CLOEXEC);
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void wait_signals(struct daemon *d, const char *path)
{
	for (;;) {
		unsigned char sig;
		ssize_t r = read(sig_pipe[0], &sig, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		if (sig == SIGHUP) {
			reload(d, path);
			continue;
		}
		log_info("signal %d: draining", sig);
		return;
	}
}

int serve_run(const char *path)
{
	struct config cfg;
	int rc = config_load(&cfg, path);
	if (rc < 0)
		return rc;
	enum log_level lvl;
	if (log_level_parse(&lvl, cfg.log_level) == 0 && log_get_level() == LOG_INFO)
		log_set_level(lvl);
	if ((rc = signals_install()) < 0) {
		config_finish(&cfg);
		return rc;
	}
	git_libgit2_init();
	struct daemon *d;
	rc = daemon_start(&d, &cfg, NULL); /* cfg is the daemon's (or freed) from here */
	if (rc == 0) {
		wait_signals(d, path);
		daemon_stop(d);
		log_info("stopped");
	}
	git_libgit2_shutdown();
	return rc;
}

/* ---- an embedded daemon ---- */

struct serve {
	struct daemon *d;
};

int serve_start(struct serve **out, const char *path)
{
	*out = NULL;
	struct serve *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(ERR_NOMEM, "out of memory");
	struct config cfg;
	int rc = config_load(&cfg, path);
	if (rc == 0) {
		git_libgit2_init();
		rc = daemon_start(&s->d, &cfg, NULL); /* cfg is the daemon's (or freed) */
		if (rc < 0)
			git_libgit2_shutdown();
	}
	if (rc < 0) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int serve_port(const struct serve *s)
{
	return s->d->port;
}

int64_t serve_job_for_head(struct serve *s, const char *head, char event[24])
{
	struct job_row rows[32];
	size_t n = 0;
	struct daemon *d = s->d;
	pthread_mutex_lock(&d->read_mu);
	int rc = d->read_store->ops->job_list(d->read_store, rows, &n, 32, 0);
	pthread_mutex_unlock(&d->read_mu);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++) /* newest first */
		if (!strcmp(rows[i].head, head)) {
			snprintf(event, 24, "%s", rows[i].event);
			return rows[i].id;
		}
	return 0;
}

json_t *serve_job_view(struct serve *s, int64_t id)
{
	return pages_job_json(s->d, id);
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	daemon_stop(s->d);
	git_libgit2_shutdown();
	free(s);
}
