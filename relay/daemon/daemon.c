/* Starting, reloading and stopping the daemon's threads. Start order: the state directory's
 * lock (and, holding it, the mirror cleared of what a killed daemon left), store (migrated), the
 * group-commit writer, HTTP, poller, workers. Stop order is the reverse of intake: HTTP stops
 * first (MHD waits for the handlers, each of which waits for its commit), then the writer
 * commits what is queued, then the poller and the workers finish or release their jobs. */
#include "daemon.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "mirror.h"
#include "statedir.h"

struct cfg_ref *daemon_cfg_get(struct daemon *d)
{
	pthread_mutex_lock(&d->cfg_mu);
	struct cfg_ref *r = d->cfg;
	atomic_fetch_add(&r->refs, 1);
	pthread_mutex_unlock(&d->cfg_mu);
	return r;
}

void daemon_cfg_put(struct cfg_ref *r)
{
	if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
		config_finish(&r->c);
		free(r);
	}
}

static struct cfg_ref *ref_new(struct config *cfg)
{
	struct cfg_ref *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->c = *cfg; /* the snapshot owns the strings from here */
	memset(cfg, 0, sizeof(*cfg));
	atomic_init(&r->refs, 1);
	static atomic_uint gens;
	r->gen = atomic_fetch_add(&gens, 1) + 1;
	return r;
}

void daemon_sleep(struct daemon *d, int64_t ms)
{
	struct timespec ts;
	clock_deadline(&ts, ms);
	pthread_mutex_lock(&d->wake_mu);
	if (!atomic_load(&d->stopping))
		pthread_cond_timedwait(&d->wake, &d->wake_mu, &ts);
	pthread_mutex_unlock(&d->wake_mu);
}

static void wake_all(struct daemon *d)
{
	pthread_mutex_lock(&d->wake_mu);
	pthread_cond_broadcast(&d->wake);
	pthread_mutex_unlock(&d->wake_mu);
}

static int start_threads(struct daemon *d, const struct config *c)
{
	atomic_store(&d->poll_enabled, c->poll_interval_s > 0);
	if (c->poll_interval_s > 0) {
		if (pthread_create(&d->poller, NULL, poller_main, d) != 0)
			return err_set(ERR_GENERIC, "cannot start the poller thread");
		d->poller_started = true;
	}
	if (pthread_create(&d->outbox, NULL, outbox_main, d) != 0)
		return err_set(ERR_GENERIC, "cannot start the outbox thread");
	d->outbox_started = true;
	for (int i = 0; i < c->workers && i < 64; i++) {
		if (pthread_create(&d->workers[i], NULL, worker_main, d) != 0)
			return err_set(ERR_GENERIC, "cannot start worker %d", i);
		d->n_workers++;
	}
	return 0;
}

int daemon_start(struct daemon **out, struct config *cfg, const struct worker_seams *seams)
{
	*out = NULL;
	struct daemon *d = calloc(1, sizeof(*d));
	if (!d) {
		config_finish(cfg);
		return err_set(ERR_NOMEM, "out of memory");
	}
	pthread_mutex_init(&d->cfg_mu, NULL);
	pthread_mutex_init(&d->read_mu, NULL);
	pthread_mutex_init(&d->wake_mu, NULL);
	pthread_cond_init(&d->wake, NULL);
	d->lock_fd = -1;
	if (seams)
		d->seams = *seams;
	if (!(d->cfg = ref_new(cfg))) {
		config_finish(cfg);
		free(d);
		return err_set(ERR_NOMEM, "out of memory");
	}
	const struct config *c = &d->cfg->c;
	struct store *w = NULL;
	int rc = statedir_lock(&d->lock_fd, c->state_dir, STATEDIR_WAIT_MS);
	if (rc == 0)
		rc = mirror_recover(c->state_dir);
	if (rc == 0)
		rc = store_sqlite_open(&d->read_store, c->state_dir);
	if (rc == 0)
		rc = store_sqlite_open(&w, c->state_dir);
	if (rc == 0)
		rc = intake_create(&d->intake, w, &d->metrics); /* w is the writer's now */
	if (rc == 0)
		rc = http_start(d);
	if (rc == 0)
		rc = start_threads(d, c);
	if (rc < 0) {
		daemon_stop(d);
		return rc;
	}
	log_info("serving on %s:%d, state in %s, %d worker(s), poll every %d s", c->listen_host,
		 d->port, c->state_dir, c->workers, c->poll_interval_s);
	*out = d;
	return 0;
}

void daemon_reload(struct daemon *d, struct config *cfg)
{
	struct cfg_ref *cur = daemon_cfg_get(d);
	config_keep_fixed(cfg, &cur->c);
	bool poll_was = cur->c.poll_interval_s > 0, poll_now = cfg->poll_interval_s > 0;
	if (poll_was != poll_now) {
		log_warn("upstream.poll_interval_s cannot turn the poller on or off without a "
			 "restart; keeping it %s",
			 poll_was ? "on" : "off");
		if (!poll_now)
			cfg->poll_interval_s = cur->c.poll_interval_s;
	}
	daemon_cfg_put(cur);
	struct cfg_ref *next = ref_new(cfg);
	if (!next) {
		config_finish(cfg);
		log_error("reload: out of memory; the running configuration stays");
		return;
	}
	enum log_level lvl;
	if (log_level_parse(&lvl, next->c.log_level) == 0)
		log_set_level(lvl);
	pthread_mutex_lock(&d->cfg_mu);
	struct cfg_ref *old = d->cfg;
	d->cfg = next;
	pthread_mutex_unlock(&d->cfg_mu);
	daemon_cfg_put(old);
	wake_all(d);
	log_info("configuration reloaded from %s", next->c.path);
}

void daemon_stop(struct daemon *d)
{
	if (!d)
		return;
	atomic_store(&d->stopping, true);
	d->exec_stop = 1;
	http_stop(d);
	intake_destroy(d->intake);
	wake_all(d);
	if (d->poller_started)
		pthread_join(d->poller, NULL);
	for (int i = 0; i < d->n_workers; i++)
		pthread_join(d->workers[i], NULL);
	if (d->outbox_started)
		pthread_join(d->outbox, NULL);
	store_close(d->read_store);
	statedir_unlock(d->lock_fd);
	daemon_cfg_put(d->cfg);
	pthread_mutex_destroy(&d->cfg_mu);
	pthread_mutex_destroy(&d->read_mu);
	pthread_mutex_destroy(&d->wake_mu);
	pthread_cond_destroy(&d->wake);
	free(d);
}
