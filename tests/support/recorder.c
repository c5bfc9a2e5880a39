/* The recording server of recorder.h, on libmicrohttpd with a thread per connection (so a
 * hanging answer holds only its own connection). */
#include "recorder.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REC_BODY_MAX (4u << 20)
#define REC_FAULTS   64
#define REC_TEXT_MAX 256

struct fault {
	enum rec_fault kind;
	int count, param;
	char text[REC_TEXT_MAX];
};

struct recorder {
	struct MHD_Daemon *d;
	int port;
	pthread_mutex_t mu;
	struct rec_request *reqs;
	size_t n, cap;
	struct fault faults[REC_FAULTS];
	size_t nfaults;
	char req_name[64], req_value[512];
	bool dedup;
	unsigned long conns;
	unsigned long open; /* connections not closed yet */
	volatile int stopping;
};

/* One request being received. */
struct upload {
	char *body;
	size_t len;
	bool too_big;
};

static void copy_header(struct MHD_Connection *c, const char *name, char *out, size_t size)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
	snprintf(out, size, "%s", v ? v : "");
}

static enum MHD_Result answer(struct MHD_Connection *c, int status, const char *body,
			      const char *retry_after)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "application/json");
	if (retry_after)
		MHD_add_response_header(resp, "Retry-After", retry_after);
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* Sends the first bytes of a 200 answer, then fails the stream: MHD closes the connection. */
static ssize_t half_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)cls;
	static const char part[] = "{\"ok\":tr";
	if (pos == 0 && max >= sizeof(part) - 1) {
		memcpy(buf, part, sizeof(part) - 1);
		return (ssize_t)(sizeof(part) - 1);
	}
	return MHD_CONTENT_READER_END_WITH_ERROR;
}

static enum MHD_Result answer_half(struct MHD_Connection *c)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_callback(64, 64, half_reader, NULL, NULL);
	if (!resp)
		return MHD_NO;
	enum MHD_Result rc = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return rc;
}

static struct fault take_fault(struct recorder *r)
{
	struct fault f = { .kind = REC_OK };
	if (r->nfaults > 0) {
		f = r->faults[0];
		if (--r->faults[0].count <= 0) {
			memmove(r->faults, r->faults + 1, (r->nfaults - 1) * sizeof(r->faults[0]));
			r->nfaults--;
		}
	}
	return f;
}

static int accepted_locked(struct recorder *r, const char *idem)
{
	int n = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->reqs[i].accepted && strcmp(r->reqs[i].idem, idem) == 0)
			n++;
	return n;
}

static void sleep_ms(struct recorder *r, int ms)
{
	for (int slept = 0; slept < ms && !r->stopping; slept += 10) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* Records the request and decides the answer; called once the whole body is in. */
static enum MHD_Result finish(struct recorder *r, struct MHD_Connection *c, const char *url,
			      const char *method, struct upload *u)
{
	struct rec_request q = { 0 };
	snprintf(q.method, sizeof(q.method), "%s", method);
	snprintf(q.path, sizeof(q.path), "%s", url);
	copy_header(c, "Idempotency-Key", q.idem, sizeof(q.idem));
	copy_header(c, "Authorization", q.auth, sizeof(q.auth));
	if (!q.auth[0])
		copy_header(c, "x-hud-internal-bot", q.auth, sizeof(q.auth));
	copy_header(c, "User-Agent", q.agent, sizeof(q.agent));
	copy_header(c, "Content-Type", q.ctype, sizeof(q.ctype));
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	q.conn = ci ? (unsigned long)(uintptr_t)ci->socket_context : 0;
	q.body = u->body;
	q.body_len = u->len;
	u->body = NULL;

	pthread_mutex_lock(&r->mu);
	struct fault f = { .kind = REC_OK };
	const char *hv =
	    r->req_name[0] ? MHD_lookup_connection_value(c, MHD_HEADER_KIND, r->req_name) : NULL;
	if (u->too_big)
		q.status = 413;
	else if (r->req_name[0] && (!hv || strcmp(hv, r->req_value) != 0))
		q.status = 401;
	else if ((f = take_fault(r)).kind == REC_500)
		q.status = 500;
	else if (f.kind == REC_429)
		q.status = 429;
	else if (f.kind == REC_400)
		q.status = 400;
	else if (f.kind == REC_401)
		q.status = 401;
	else if (r->dedup && q.idem[0] && accepted_locked(r, q.idem) > 0)
		q.status = 400;
	else {
		q.status = f.kind == REC_CLOSE ? 0 : 200;
		q.accepted = true;
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->reqs = realloc(r->reqs, r->cap * sizeof(*r->reqs));
		if (!r->reqs)
			abort();
	}
	q.seq = (int)r->n;
	r->reqs[r->n++] = q;
	pthread_mutex_unlock(&r->mu);

	switch (q.status) {
	case 413:
		return answer(c, 413, "{\"detail\":\"too large\"}", NULL);
	case 401:
		return answer(c, 401, "{\"detail\":\"bad credentials\"}", NULL);
	case 500:
		return answer(c, 500, "{\"detail\":\"internal error\"}", NULL);
	case 429:
		return answer(c, 429, "{\"detail\":\"rate limit exceeded\"}", f.text);
	case 400:
		if (f.kind == REC_400)
			return answer(c, 400, f.text, NULL);
		return answer(c, 400,
			      "{\"detail\":\"callback rejected: invalid state transition\"}", NULL);
	case 0:
		return answer_half(c);
	default:
		if (f.kind == REC_HANG)
			sleep_ms(r, f.param);
		return answer(c, 200, "{\"ok\":true,\"status\":\"recorded\"}", NULL);
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_size, void **con_cls)
{
	(void)version;
	struct recorder *r = cls;
	struct upload *u = *con_cls;
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return MHD_NO;
		*con_cls = u;
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (u->len + *upload_size > REC_BODY_MAX) {
			u->too_big = true;
		} else {
			char *p = realloc(u->body, u->len + *upload_size + 1);
			if (!p)
				return MHD_NO;
			memcpy(p + u->len, upload_data, *upload_size);
			u->body = p;
			u->len += *upload_size;
			p[u->len] = '\0';
		}
		*upload_size = 0;
		return MHD_YES;
	}
	return finish(r, c, url, method, u);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	struct upload *u = *con_cls;
	if (u) {
		free(u->body);
		free(u);
		*con_cls = NULL;
	}
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	(void)c;
	struct recorder *r = cls;
	pthread_mutex_lock(&r->mu);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = (void *)(uintptr_t)++r->conns;
		r->open++;
	} else if (r->open > 0) {
		r->open--;
	}
	pthread_mutex_unlock(&r->mu);
}

struct recorder *recorder_start(void)
{
	struct recorder *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->mu, NULL);
	r->dedup = true;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
				NULL, NULL, on_request, r, MHD_OPTION_SOCK_ADDR, &sa,
				MHD_OPTION_NOTIFY_COMPLETED, on_done, r,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, r,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
	const union MHD_DaemonInfo *di =
	    r->d ? MHD_get_daemon_info(r->d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
	if (!di) {
		recorder_stop(r);
		return NULL;
	}
	r->port = di->port;
	return r;
}

void recorder_stop(struct recorder *r)
{
	if (!r)
		return;
	r->stopping = 1;
	if (r->d)
		MHD_stop_daemon(r->d);
	for (size_t i = 0; i < r->n; i++)
		free(r->reqs[i].body);
	free(r->reqs);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

int recorder_port(const struct recorder *r)
{
	return r->port;
}

void recorder_url(const struct recorder *r, const char *path, char *out, size_t size)
{
	snprintf(out, size, "http://127.0.0.1:%d%s", r->port, path);
}

void recorder_fail(struct recorder *r, enum rec_fault f, int count, int param, const char *text)
{
	pthread_mutex_lock(&r->mu);
	if (r->nfaults < REC_FAULTS && count > 0) {
		struct fault *x = &r->faults[r->nfaults++];
		x->kind = f;
		x->count = count;
		x->param = param;
		snprintf(x->text, sizeof(x->text), "%s", text ? text : "");
	}
	pthread_mutex_unlock(&r->mu);
}

void recorder_require(struct recorder *r, const char *name, const char *value)
{
	pthread_mutex_lock(&r->mu);
	snprintf(r->req_name, sizeof(r->req_name), "%s", name ? name : "");
	snprintf(r->req_value, sizeof(r->req_value), "%s", value ? value : "");
	pthread_mutex_unlock(&r->mu);
}

void recorder_dedup(struct recorder *r, bool on)
{
	pthread_mutex_lock(&r->mu);
	r->dedup = on;
	pthread_mutex_unlock(&r->mu);
}

size_t recorder_count(struct recorder *r)
{
	pthread_mutex_lock(&r->mu);
	size_t n = r->n;
	pthread_mutex_unlock(&r->mu);
	return n;
}

struct rec_request recorder_get(struct recorder *r, size_t i)
{
	pthread_mutex_lock(&r->mu);
	struct rec_request q = i < r->n ? r->reqs[i] : (struct rec_request){ .seq = -1 };
	pthread_mutex_unlock(&r->mu);
	return q;
}

int recorder_wait_idle(struct recorder *r, int timeout_ms)
{
	for (int waited = 0;; waited += 5) {
		pthread_mutex_lock(&r->mu);
		unsigned long open = r->open;
		pthread_mutex_unlock(&r->mu);
		if (open == 0)
			break;
		if (waited >= timeout_ms)
			return -1;
		usleep(5000);
	}
	usleep(20000); /* a closed connection's thread still frees its memory on its way out */
	return 0;
}

unsigned long recorder_connections(struct recorder *r)
{
	pthread_mutex_lock(&r->mu);
	unsigned long n = r->conns;
	pthread_mutex_unlock(&r->mu);
	return n;
}

int recorder_accepted(struct recorder *r, const char *idem)
{
	pthread_mutex_lock(&r->mu);
	int n = accepted_locked(r, idem);
	pthread_mutex_unlock(&r->mu);
	return n;
}
