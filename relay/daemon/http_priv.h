/* Private to the HTTP files: the reply helpers and the route handlers. */
#ifndef RELAY_DAEMON_HTTP_PRIV_H
#define RELAY_DAEMON_HTTP_PRIV_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>

struct daemon;

/* The per-request state of an upload route starts with this, so that http.c frees any kind. */
struct http_upload {
	void (*destroy)(void *self);
};

enum MHD_Result http__reply(struct MHD_Connection *c, unsigned status, const char *type,
			    const char *body, size_t len);
enum MHD_Result http__reply_json(struct MHD_Connection *c, unsigned status, json_t *v);
enum MHD_Result http__error(struct MHD_Connection *c, unsigned status, const char *msg);

enum MHD_Result http__webhook(struct daemon *d, struct MHD_Connection *c, const char *method,
			      const char *upload, size_t *upload_size, void **con_cls);
void http__webhook_free(void *ctx);
enum MHD_Result http__receiver(struct daemon *d, struct MHD_Connection *c, const char *method,
			       const char *upload, size_t *upload_size, void **con_cls);
/* pages*.c: GET / , /jobs/{id}, /trends, /specs and their /api/ twins; MHD_NO when `url` is
 * none of them (*handled false). */
enum MHD_Result http__pages(struct daemon *d, struct MHD_Connection *c, const char *url,
			    bool *handled);

enum MHD_Result http__readyz(struct daemon *d, struct MHD_Connection *c);
enum MHD_Result http__metrics(struct daemon *d, struct MHD_Connection *c);
enum MHD_Result http__jobs(struct daemon *d, struct MHD_Connection *c);
enum MHD_Result http__job(struct daemon *d, struct MHD_Connection *c, const char *id);

#endif
