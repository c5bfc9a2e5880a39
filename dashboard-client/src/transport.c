/* The libcurl transport (see transport.h). The header list is built from our own nodes and
 * buffers rather than curl_slist_append(), so the Idempotency-Key can change per post without
 * copying the token again, and the token's buffer can be wiped when the handle goes. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "dashboard-client/transport.h"

#define AUTH_HEADER_MAX (DC_TOKEN_MAX + 64)

struct dc_transport {
	CURL *curl;
	enum dc_format format;
	long connects;
	struct curl_slist hdr[5];
	char auth[AUTH_HEADER_MAX];
	char idem[128];
	char errbuf[CURL_ERROR_SIZE];
	struct dc_response *resp; /* the post in flight */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int dc_transport_global_init(void)
{
	pthread_once(&global_once, global_init);
	return global_rc == CURLE_OK
		   ? 0
		   : err_set(ERR_GENERIC, "libcurl: %s", curl_easy_strerror(global_rc));
}

/* http:// or https://, no user:password@ in the authority (credentials go in token files, and
 * a URL is printed in messages), no control characters or spaces. */
static int check_url(const char *url)
{
	size_t len = strlen(url);
	if (len > DC_URL_MAX)
		return err_set(ERR_LIMIT, "the URL is longer than %d bytes", DC_URL_MAX);
	const char *rest = NULL;
	if (strncmp(url, "http://", 7) == 0)
		rest = url + 7;
	else if (strncmp(url, "https://", 8) == 0)
		rest = url + 8;
	if (!rest || !*rest)
		return err_set(ERR_INVAL, "the URL must start with http:// or https://");
	size_t auth_len = strcspn(rest, "/?#");
	if (memchr(rest, '@', auth_len))
		return err_set(ERR_INVAL, "the URL must not carry credentials (user@host): give "
					  "the token in a file or an environment variable");
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return err_set(ERR_INVAL,
				       "the URL contains a space or a control character");
	return 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct dc_transport *t = ctx;
	struct dc_response *r = t->resp;
	size_t len = size * n, room = DC_RESPONSE_KEEP_MAX - r->body_len;
	size_t take = len < room ? len : room;
	if (take) {
		char *p = realloc(r->body, r->body_len + take + 1);
		if (!p)
			return 0; /* ends the transfer with CURLE_WRITE_ERROR: retried */
		memcpy(p + r->body_len, data, take);
		r->body = p;
		r->body_len += take;
		p[r->body_len] = '\0';
	}
	return len; /* the rest is read and dropped: only the start is kept */
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct dc_transport *t = ctx;
	size_t len = size * n;
	static const char name[] = "retry-after:";
	if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		t->resp->retry_after[0] = '\0'; /* a new answer (after a 100 Continue, say) */
	} else if (len > sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0) {
		size_t v = sizeof(name) - 1, end = len;
		while (v < end && (data[v] == ' ' || data[v] == '\t'))
			v++;
		while (end > v && (data[end - 1] == '\r' || data[end - 1] == '\n'))
			end--;
		if (end - v <= DC_RETRY_AFTER_TEXT_MAX) {
			memcpy(t->resp->retry_after, data + v, end - v);
			t->resp->retry_after[end - v] = '\0';
		}
	}
	return len;
}

static int set_auth(struct dc_transport *t, const char *token)
{
	if (!token || !*token)
		return err_set(ERR_INVAL, "no token");
	if (strlen(token) > DC_TOKEN_MAX)
		return err_set(ERR_LIMIT, "the token is longer than %d bytes", DC_TOKEN_MAX);
	for (const char *p = token; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return err_set(ERR_INVAL, "the token contains a space, a control character "
						  "or a non-ASCII byte");
	if (t->format == DC_FORMAT_HUD)
		snprintf(t->auth, sizeof(t->auth), "x-hud-internal-bot: %s", token);
	else
		snprintf(t->auth, sizeof(t->auth), "Authorization: Bearer %s", token);
	return 0;
}

static int setup(struct dc_transport *t, const struct dc_target_opts *o)
{
	CURL *c = t->curl;
	CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (rc == CURLE_OK)                                                                \
			rc = curl_easy_setopt(c, opt, val);                                        \
	} while (0)
	SET(CURLOPT_URL, o->url);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000L);
	SET(CURLOPT_TIMEOUT_MS, o->timeout_ms > 0 ? o->timeout_ms : 30000L);
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	if (o->ca_file)
		SET(CURLOPT_CAINFO, o->ca_file);
	SET(CURLOPT_USERAGENT, o->user_agent ? o->user_agent : "spyre-ci");
	SET(CURLOPT_HTTPHEADER, &t->hdr[0]);
	SET(CURLOPT_POST, 1L);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, t);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, t);
	SET(CURLOPT_ERRORBUFFER, t->errbuf);
#undef SET
	return rc == CURLE_OK ? 0 : err_set(ERR_INVAL, "libcurl: %s", curl_easy_strerror(rc));
}

int dc_transport_create(struct dc_transport **out, const struct dc_target_opts *o)
{
	*out = NULL;
	int rc = dc_transport_global_init();
	if (rc == 0)
		rc = check_url(o->url);
	if (rc)
		return rc;
	struct dc_transport *t = calloc(1, sizeof(*t));
	if (!t)
		return err_set(ERR_NOMEM, "out of memory");
	t->format = o->format;
	rc = set_auth(t, o->token);
	if (rc == 0 && !(t->curl = curl_easy_init()))
		rc = err_set(ERR_NOMEM, "libcurl: cannot create a handle");
	static const char *fixed[] = { "Content-Type: application/json", "Accept: application/json",
				       "Expect:" };
	for (int i = 0; i < 3; i++)
		t->hdr[i].data = (char *)fixed[i];
	t->hdr[3].data = t->auth;
	t->hdr[4].data = t->idem;
	for (int i = 0; i < 4; i++)
		t->hdr[i].next = &t->hdr[i + 1];
	if (rc == 0)
		rc = setup(t, o);
	if (rc) {
		dc_transport_destroy(t);
		return rc;
	}
	*out = t;
	return 0;
}

void dc_transport_destroy(struct dc_transport *t)
{
	if (!t)
		return;
	if (t->curl)
		curl_easy_cleanup(t->curl);
	explicit_bzero(t->auth, sizeof(t->auth));
	free(t);
}

/* Failures that waiting cannot heal: the request is wrong or the peer is not who it says. */
static bool fatal_code(CURLcode c)
{
	switch (c) {
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_NOT_BUILT_IN:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_CRL_BADFILE:
		return true;
	default:
		return false;
	}
}

int dc_transport_post(struct dc_transport *t, const char *key, const char *body, size_t len,
		      struct dc_response *resp)
{
	dc_response_reset(resp);
	if (strlen(key) + 18 > sizeof(t->idem) || strpbrk(key, "\r\n"))
		return err_set(ERR_INVAL, "a bad idempotency key");
	snprintf(t->idem, sizeof(t->idem), "Idempotency-Key: %s", key);
	t->resp = resp;
	t->errbuf[0] = '\0';
	CURLcode rc = curl_easy_setopt(t->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(t->curl, CURLOPT_POSTFIELDS, body);
	if (rc != CURLE_OK)
		return err_set(ERR_GENERIC, "libcurl: %s", curl_easy_strerror(rc));
	rc = curl_easy_perform(t->curl);
	long connects = 0;
	if (curl_easy_getinfo(t->curl, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK)
		t->connects += connects;
	t->resp = NULL;
	if (rc != CURLE_OK) {
		resp->status = 0; /* a partial answer is no answer */
		resp->transport_error = (int)rc;
		resp->transport_fatal = fatal_code(rc);
		snprintf(resp->error, sizeof(resp->error), "%s",
			 t->errbuf[0] ? t->errbuf : curl_easy_strerror(rc));
		return 0;
	}
	curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &resp->status);
	return 0;
}

long dc_transport_connects(const struct dc_transport *t)
{
	return t->connects;
}

/* Keeps the token's bytes (printable ASCII) between surrounding whitespace; refuses a second
 * line, since a token is one header value. */
static int token_from_text(char **out, char *text, size_t len, const char *where)
{
	size_t a = 0, b = len;
	while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\n' || text[a] == '\r'))
		a++;
	while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\n' ||
			 text[b - 1] == '\r'))
		b--;
	if (a == b)
		return err_set(ERR_INVAL, "%s: the token is empty", where);
	if (b - a > DC_TOKEN_MAX)
		return err_set(ERR_LIMIT, "%s: the token is longer than %d bytes", where,
			       DC_TOKEN_MAX);
	for (size_t i = a; i < b; i++)
		if ((unsigned char)text[i] <= 0x20 || (unsigned char)text[i] >= 0x7f)
			return err_set(ERR_INVAL,
				       "%s: the token must be one line of printable ASCII without "
				       "spaces",
				       where);
	*out = malloc(b - a + 1);
	if (!*out)
		return err_set(ERR_NOMEM, "out of memory");
	memcpy(*out, text + a, b - a);
	(*out)[b - a] = '\0';
	return 0;
}

int dc_token_read_file(char **out, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	*out = NULL;
	int rc = fs_read_file(&text, &len, path, DC_TOKEN_MAX + 64);
	if (rc)
		return err_prefix("token file");
	rc = token_from_text(out, text, len, path);
	explicit_bzero(text, len);
	free(text);
	return rc;
}

int dc_token_read_env(char **out, const char *name)
{
	*out = NULL;
	const char *v = getenv(name);
	if (!v)
		return err_set(ERR_NOTFOUND, "the environment variable %s is not set", name);
	size_t len = strlen(v);
	char *copy = strdup(v);
	if (!copy)
		return err_set(ERR_NOMEM, "out of memory");
	char where[160];
	snprintf(where, sizeof(where), "$%s", name);
	int rc = token_from_text(out, copy, len, where);
	explicit_bzero(copy, len);
	free(copy);
	return rc;
}

void dc_token_free(char *token)
{
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
}
