/* The HTTP server on libmicrohttpd, one thread per connection (a handler may block on the
 * group commit without holding up other connections). Routes: POST /github/webhook
 * (webhook_http.c), POST /api/crcr/results (receiver.c), GET /healthz, /readyz, /metrics,
 * /api/jobs, /api/jobs/{id} (api.c), the dashboard pages and their JSON (pages*.c). */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/log.h"
#include "daemon.h"
#include "http_priv.h"
#include "route.h"

enum MHD_Result http__reply(struct MHD_Connection *c, unsigned status, const char *type,
			    const char *body, size_t len)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* Replies with a JSON value and drops the reference (stolen). */
enum MHD_Result http__reply_json(struct MHD_Connection *c, unsigned status, json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	if (!s)
		return http__reply(c, 500, "application/json", "{\"error\":\"out of memory\"}", 25);
	enum MHD_Result rc = http__reply(c, status, "application/json", s, strlen(s));
	free(s);
	return rc;
}

enum MHD_Result http__error(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return http__reply_json(c, status, json_pack("{s:s}", "error", msg));
}

static enum MHD_Result route(void *cls, struct MHD_Connection *c, const char *url,
			     const char *method, const char *version, const char *upload,
			     size_t *upload_size, void **con_cls)
{
	struct daemon *d = cls;
	if (!strcmp(url, "/github/webhook"))
		return http__webhook(d, c, method, upload, upload_size, con_cls);
	if (!strcmp(url, "/api/crcr/results"))
		return http__receiver(d, c, method, upload, upload_size, con_cls);
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return http__error(c, 405, "method not allowed");
	if (!strcmp(url, "/healthz"))
		return http__reply(c, 200, "application/json", "{\"ok\":true}", 11);
	if (!strcmp(url, "/readyz"))
		return http__readyz(d, c);
	if (!strcmp(url, "/metrics"))
		return http__metrics(d, c);
	if (!strcmp(url, "/api/jobs"))
		return http__jobs(d, c);
	if (!strncmp(url, "/api/jobs/", 10))
		return http__job(d, c, url + 10);
	bool handled = false;
	enum MHD_Result r = http__pages(d, c, url, &handled);
	if (handled)
		return r;
	return http__error(c, 404, "not found");
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct http_upload *u = *con_cls;
	if (u)
		u->destroy(u);
	*con_cls = NULL;
}

static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return route_unescape(s);
}

int http_start(struct daemon *d)
{
	struct cfg_ref *cfg = daemon_cfg_get(d);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(cfg->c.listen_port) };
	inet_pton(AF_INET, cfg->c.listen_host, &sa.sin_addr);
	unsigned limit = (unsigned)cfg->c.http_connections_max;
	daemon_cfg_put(cfg);
	d->http = MHD_start_daemon(
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, route,
	    d, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_CONNECTION_LIMIT, limit,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_NOTIFY_COMPLETED, completed, d,
	    MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_END);
	if (!d->http)
		return err_set(ERR_IO, "http: cannot listen on port %d", ntohs(sa.sin_port));
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d->http, MHD_DAEMON_INFO_BIND_PORT);
	d->port = info ? info->port : ntohs(sa.sin_port);
	return 0;
}

void http_stop(struct daemon *d)
{
	if (d->http)
		MHD_stop_daemon(d->http);
	d->http = NULL;
}
