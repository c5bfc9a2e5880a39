/* The outbox sender: one thread that drains the store's outbox (store_ops.outbox_open) to the
 * configured targets (dashboard.crcr_url, dashboard.hud_url) through dashboard-client's drain
 * loop: claim (the attempt recorded first), post, settle; retries with backoff up to
 * dashboard.retry_max_s between attempts. The targets take turns: when one has nothing due,
 * its drain yields (its clock's sleep asks it to stop) and the next one goes. The same thread
 * runs retention (retention.c) on its timer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/log.h"
#include "daemon.h"
#include "dashboard-client/drain.h"
#include "dashboard-client/transport.h"
#include "job.h"
#include "retention.h"

#define OUTBOX_IDLE_MS 200

struct target {
	const char *name;
	enum dc_format format;
	struct dc_transport *t;
	unsigned gen; /* the configuration it was made from */
	bool warned;
};

/* The drain's clock: real time, but a sleep makes the drain yield instead. */
struct yield_clock {
	struct daemon *d;
	volatile sig_atomic_t yield;
	struct dc_clock real;
};

static int64_t yc_now(void *ctx)
{
	struct yield_clock *y = ctx;
	if (atomic_load(&y->d->stopping))
		y->yield = 1;
	return y->real.now_ms(y->real.ctx);
}

static void yc_sleep(void *ctx, int64_t ms)
{
	struct yield_clock *y = ctx;
	y->yield = 1;
}

static uint64_t yc_random(void *ctx)
{
	struct yield_clock *y = ctx;
	return y->real.random(y->real.ctx);
}

static int target_ready(struct target *tg, const struct cfg_ref *cfg)
{
	const struct config *c = &cfg->c;
	bool crcr = tg->format == DC_FORMAT_CRCR;
	const char *url = crcr ? c->crcr_url : c->hud_url;
	const char *tok = crcr ? c->crcr_token_file : c->hud_token_file;
	if (tg->t && tg->gen == cfg->gen)
		return 0;
	dc_transport_destroy(tg->t);
	tg->t = NULL;
	if (!url[0])
		return ERR_NOTFOUND;
	char *token = NULL;
	int rc = tok[0] ? dc_token_read_file(&token, tok)
			: err_set(ERR_INVAL, "dashboard.%s_token_file is not set", tg->name);
	struct dc_target_opts o = { .url = url,
				    .format = tg->format,
				    .token = token,
				    .user_agent = "spyre-ci/serve",
				    .connect_timeout_ms = 5000,
				    .timeout_ms = 30000 };
	if (rc == 0)
		rc = dc_transport_create(&tg->t, &o);
	dc_token_free(token);
	if (rc < 0) {
		if (!tg->warned)
			log_error("outbox: %s target not usable: %s", tg->name, err_last());
		tg->warned = true;
		return rc;
	}
	tg->gen = cfg->gen;
	tg->warned = false;
	return 0;
}

static void count(struct metrics *m, const struct dc_drain_stats *st)
{
	atomic_fetch_add(&m->outbox_posts, st->posts);
	atomic_fetch_add(&m->outbox_delivered, st->delivered + st->already);
	atomic_fetch_add(&m->outbox_retries, st->retries);
	atomic_fetch_add(&m->outbox_dead, st->dead);
}

/* One turn of one target: drains until nothing is due. */
static void turn(struct daemon *d, struct dc_outbox *ob, struct target *tg,
		 const struct cfg_ref *cfg)
{
	if (target_ready(tg, cfg) < 0)
		return;
	struct yield_clock y = { .d = d, .real = dc_clock_system() };
	struct dc_drain_opts o = {
		.policy = dc_retry_policy_default(),
		.clock = { yc_now, yc_sleep, yc_random, &y },
		.stop = &y.yield,
	};
	o.policy.max_ms = (int64_t)cfg->c.outbox_retry_max_s * 1000;
	if (o.policy.base_ms > o.policy.max_ms)
		o.policy.base_ms = o.policy.max_ms;
	struct dc_drain_stats st = { 0 };
	int rc = dc_drain(ob, tg->t, tg->name, &o, &st);
	count(&d->metrics, &st);
	if (rc < 0 && !y.yield)
		log_error("outbox: %s: %s", tg->name, err_last());
}

void *outbox_main(void *arg)
{
	struct daemon *d = arg;
	struct dc_outbox *ob = NULL; /* on s's connection: destroyed before s is closed */
	struct store *s = NULL;
	struct cfg_ref *cfg = daemon_cfg_get(d);
	int rc = store_sqlite_open(&s, cfg->c.state_dir);
	daemon_cfg_put(cfg);
	if (rc == 0)
		rc = s->ops->outbox_open(s, &ob);
	if (rc < 0) {
		log_error("outbox: %s", err_last());
		store_close(s);
		return NULL;
	}
	struct target tg[2] = { { .name = OUTBOX_TARGET_CRCR, .format = DC_FORMAT_CRCR },
				{ .name = OUTBOX_TARGET_HUD, .format = DC_FORMAT_HUD } };
	int64_t next_sweep = 0;
	while (!atomic_load(&d->stopping)) {
		cfg = daemon_cfg_get(d);
		for (int i = 0; i < 2 && !atomic_load(&d->stopping); i++)
			turn(d, ob, &tg[i], cfg);
		int64_t now = clock_wall_ms();
		if (now >= next_sweep) {
			retention_sweep(d, s, &cfg->c, now);
			next_sweep = now + RETENTION_INTERVAL_MS;
		}
		daemon_cfg_put(cfg);
		daemon_sleep(d, OUTBOX_IDLE_MS);
	}
	for (int i = 0; i < 2; i++)
		dc_transport_destroy(tg[i].t);
	dc_outbox_destroy(ob);
	store_close(s);
	return NULL;
}
