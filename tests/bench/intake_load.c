/* The load generator (see intake_load.h). Each connection is a thread with a blocking socket;
 * every delivery has a new id and a new tip (the after field), and its own HMAC. */
#include "intake_load.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/hmac.h"

#define BODY_BYTES 8192

struct conn {
	int port, index;
	double interval_ns;
	uint64_t start_ns, end_ns;
	const char *secret, *tag;
	double *lat_ms;
	size_t n, cap, ok, errors;
};

static int dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* An 8 KB push body whose tip is derived from (conn, seq). */
static size_t make_body(char *out, int conn, size_t seq)
{
	int n = snprintf(
	    out, BODY_BYTES,
	    "{\"ref\":\"refs/heads/main\",\"before\":\"%040d\",\"after\":\"%08x%032zx\","
	    "\"repository\":{\"full_name\":\"pytorch/pytorch\"},\"commits\":[{\"message\":\"",
	    0, (unsigned)conn, seq);
	memset(out + n, 'x', BODY_BYTES - (size_t)n - 4);
	memcpy(out + BODY_BYTES - 4, "\"}]}", 4);
	return BODY_BYTES;
}

/* Reads one response; returns the status or -1. */
static int read_response(int fd, char *buf, size_t cap)
{
	size_t have = 0;
	char *end = NULL;
	while (!(end = have ? strstr(buf, "\r\n\r\n") : NULL)) {
		ssize_t r = read(fd, buf + have, cap - 1 - have);
		if (r <= 0)
			return -1;
		have += (size_t)r;
		buf[have] = 0;
	}
	const char *cl = strcasestr(buf, "Content-Length:");
	size_t body = cl ? strtoul(cl + 15, NULL, 10) : 0;
	size_t need = (size_t)(end + 4 - buf) + body;
	while (have < need) {
		ssize_t r = read(fd, buf + have, cap - 1 - have);
		if (r <= 0)
			return -1;
		have += (size_t)r;
	}
	return atoi(buf + 9);
}

static int send_one(struct conn *c, int fd, char *req, char *body, size_t seq)
{
	size_t blen = make_body(body, c->index, seq);
	uint8_t mac[HMAC_SHA256_LEN];
	char sig[HMAC_SIG_TEXT_LEN + 1];
	hmac_sha256(mac, c->secret, strlen(c->secret), body, blen);
	hmac_sig_format(sig, mac);
	int h = snprintf(req, 1024,
			 "POST /github/webhook HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			 "Content-Type: application/json\r\nX-GitHub-Event: push\r\n"
			 "X-GitHub-Delivery: %s-%d-%zu\r\nX-Hub-Signature-256: %s\r\n"
			 "Content-Length: %zu\r\n\r\n",
			 c->tag, c->index, seq, sig, blen);
	memcpy(req + h, body, blen);
	size_t len = (size_t)h + blen, off = 0;
	while (off < len) {
		ssize_t w = write(fd, req + off, len - off);
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	char resp[4096];
	return read_response(fd, resp, sizeof(resp));
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	char *req = malloc(1024 + BODY_BYTES), *body = malloc(BODY_BYTES + 1);
	int fd = dial(c->port);
	for (size_t seq = 0; fd >= 0; seq++) {
		uint64_t due = c->start_ns + (uint64_t)(seq * c->interval_ns);
		if (due >= c->end_ns)
			break;
		uint64_t now = clock_mono_ns();
		if (due > now) {
			struct timespec ts = { (time_t)((due - now) / 1000000000u),
					       (long)((due - now) % 1000000000u) };
			nanosleep(&ts, NULL);
		}
		int st = send_one(c, fd, req, body, seq);
		if (st < 0) {
			c->errors++;
			close(fd);
			fd = dial(c->port);
			continue;
		}
		if (st >= 200 && st < 300)
			c->ok++;
		else
			c->errors++;
		if (c->n == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 1024;
			c->lat_ms = realloc(c->lat_ms, c->cap * sizeof(double));
		}
		c->lat_ms[c->n++] = (double)(clock_mono_ns() - due) / 1e6;
	}
	if (fd >= 0)
		close(fd);
	free(req);
	free(body);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int load_run(struct load_result *out, int port, double rate, double seconds, int conns,
	     const char *secret, const char *tag)
{
	struct conn *c = calloc((size_t)conns, sizeof(*c));
	pthread_t *t = calloc((size_t)conns, sizeof(*t));
	uint64_t start = clock_mono_ns() + 20000000u;
	for (int i = 0; i < conns; i++) {
		c[i] = (struct conn){ .port = port,
				      .index = i,
				      .secret = secret,
				      .tag = tag,
				      .interval_ns = 1e9 * conns / rate,
				      .start_ns = start + (uint64_t)(1e9 * i / rate),
				      .end_ns = start + (uint64_t)(seconds * 1e9) };
		pthread_create(&t[i], NULL, conn_main, &c[i]);
	}
	size_t total = 0;
	for (int i = 0; i < conns; i++) {
		pthread_join(t[i], NULL);
		total += c[i].n;
	}
	double elapsed = (double)(clock_mono_ns() - start) / 1e9;
	double *all = malloc((total + 1) * sizeof(double));
	size_t k = 0;
	*out = (struct load_result){ .offered = rate };
	for (int i = 0; i < conns; i++) {
		memcpy(all + k, c[i].lat_ms, c[i].n * sizeof(double));
		k += c[i].n;
		out->ok += c[i].ok;
		out->errors += c[i].errors;
		free(c[i].lat_ms);
	}
	qsort(all, total, sizeof(double), cmp_double);
	out->sent = total;
	out->sustained = out->ok / elapsed;
	out->p50_ms = total ? all[total / 2] : 0;
	out->p99_ms = total ? all[(size_t)(total * 0.99)] : 0;
	free(all);
	free(c);
	free(t);
	return 0;
}
