/* The running daemon: what its threads share. libmicrohttpd serves HTTP on its own threads
 * (http.c: validate, persist through the group commit in intake.c, answer); one poller thread
 * fetches upstream (poller.c); N worker threads claim jobs (worker.c). Each thread has its own
 * store handle; the configuration is a reference-counted snapshot swapped by SIGHUP. */
#ifndef RELAY_DAEMON_DAEMON_H
#define RELAY_DAEMON_DAEMON_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "config.h"
#include "intake.h"
#include "metrics.h"
#include "store.h"
#include "worker.h"

struct cfg_ref {
	struct config c;
	atomic_int refs;
	unsigned gen; /* 1 for the first configuration, +1 per reload */
};

struct daemon {
	pthread_mutex_t cfg_mu;
	struct cfg_ref *cfg;

	struct metrics metrics;
	struct intake *intake;
	pthread_mutex_t read_mu; /* guards read_store, used by GET handlers */
	struct store *read_store;
	struct MHD_Daemon *http;
	int port; /* the bound port */

	atomic_bool stopping;
	pthread_mutex_t wake_mu;
	pthread_cond_t wake; /* poller and workers sleep on it; stop and reload signal it */

	pthread_t poller;
	bool poller_started;
	atomic_int poll_failures;
	atomic_bool poll_enabled;

	pthread_t workers[64];
	int n_workers;
	struct worker_seams seams;
	pthread_t outbox; /* the outbox sender (outbox.c), which runs retention too */
	bool outbox_started;
	volatile sig_atomic_t exec_stop; /* set on stop: the pools end their cases */
	int lock_fd;                     /* the state directory's lock (statedir.h), or -1 */
};

/* Starts everything `cfg` asks for; takes `cfg` (zeroed on return). */
int daemon_start(struct daemon **out, struct config *cfg, const struct worker_seams *seams);
/* Swaps in a new configuration (keeping the keys SIGHUP cannot change); takes `cfg`. */
void daemon_reload(struct daemon *d, struct config *cfg);
/* Stops accepting, commits what was accepted, lets workers release their jobs, frees. */
void daemon_stop(struct daemon *d);

/* A reference to the current configuration; give it back with daemon_cfg_put(). */
struct cfg_ref *daemon_cfg_get(struct daemon *d);
void daemon_cfg_put(struct cfg_ref *r);

/* Sleeps up to `ms` or until stop/reload wakes the sleeper. */
void daemon_sleep(struct daemon *d, int64_t ms);

/* http.c */
int http_start(struct daemon *d);
void http_stop(struct daemon *d);

/* poller.c: the thread body, and one fetch-and-enqueue round (for tests) */
void *poller_main(void *arg);
/* outbox.c: the sender thread's body */
void *outbox_main(void *arg);

#endif
