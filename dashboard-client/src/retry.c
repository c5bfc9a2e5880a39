/* What an answer means and when to try again: the classification of answers, the parser of
 * Retry-After (a server's text: bounded, strict, fuzzed), and exponential backoff with jitter. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "dashboard-client/retry.h"

static int64_t system_now(void *ctx)
{
	(void)ctx;
	return clock_wall_ms();
}

static void system_sleep(void *ctx, int64_t ms)
{
	(void)ctx;
	if (ms > 0)
		clock_sleep_ms((uint64_t)ms);
}

/* xorshift64*, seeded from the clocks and the pid: jitter needs spread, not secrecy. */
static uint64_t system_random(void *ctx)
{
	static _Thread_local uint64_t s;
	(void)ctx;
	if (s == 0)
		s = (clock_mono_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)clock_wall_ms()) | 1;
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	return s * 0x2545F4914F6CDD1DULL;
}

struct dc_clock dc_clock_system(void)
{
	return (struct dc_clock){ system_now, system_sleep, system_random, NULL };
}

struct dc_retry_policy dc_retry_policy_default(void)
{
	return (struct dc_retry_policy){
		.base_ms = 1000,
		.max_ms = 5 * 60 * 1000,
		.horizon_ms = 6 * 3600 * 1000LL,
	};
}

void dc_response_reset(struct dc_response *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

void dc_response_finish(struct dc_response *r)
{
	if (r)
		dc_response_reset(r);
}

const char *dc_verdict_name(enum dc_verdict v)
{
	switch (v) {
	case DC_VERDICT_DELIVERED:
		return "delivered";
	case DC_VERDICT_ALREADY:
		return "already recorded";
	case DC_VERDICT_RETRY:
		return "retry";
	case DC_VERDICT_PERMANENT:
		return "permanent";
	}
	return "?";
}

static bool contains_ci(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; i + n <= len; i++) {
		size_t j = 0;
		while (j < n && tolower((unsigned char)hay[i + j]) == needle[j])
			j++;
		if (j == n)
			return true;
	}
	return false;
}

bool dc_body_says_recorded(const char *body, size_t len)
{
	if (!body)
		return false;
	if (len > DC_RESPONSE_KEEP_MAX)
		len = DC_RESPONSE_KEEP_MAX;
	return contains_ci(body, len, "invalid state transition") ||
	       contains_ci(body, len, "already recorded");
}

enum dc_verdict dc_classify(const struct dc_response *r, bool sent_before)
{
	if (r->status == 0)
		return r->transport_fatal ? DC_VERDICT_PERMANENT : DC_VERDICT_RETRY;
	if (r->status >= 200 && r->status < 300)
		return DC_VERDICT_DELIVERED;
	if (r->status == 408 || r->status == 429 || r->status >= 500)
		return DC_VERDICT_RETRY;
	if (r->status == 400 && sent_before && dc_body_says_recorded(r->body, r->body_len))
		return DC_VERDICT_ALREADY;
	return DC_VERDICT_PERMANENT;
}

static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* A cursor over the header's text; every reader checks the bound. */
struct cur {
	const char *s;
	size_t len, at;
};

static bool lit(struct cur *c, const char *t)
{
	size_t n = strlen(t);
	if (c->len - c->at < n || memcmp(c->s + c->at, t, n) != 0)
		return false;
	c->at += n;
	return true;
}

/* Exactly `n` digits (or, with n < 0, one or two: asctime's day). */
static bool digits(struct cur *c, int n, int *out)
{
	int want = n < 0 ? 2 : n, got = 0, v = 0;
	while (got < want && c->at < c->len && isdigit((unsigned char)c->s[c->at])) {
		v = v * 10 + (c->s[c->at++] - '0');
		got++;
	}
	*out = v;
	return n < 0 ? got >= 1 : got == n;
}

static bool month(struct cur *c, int *out)
{
	for (int i = 0; i < 12; i++) {
		if (lit(c, months[i])) {
			*out = i;
			return true;
		}
	}
	return false;
}

/* Skips a day name up to and including `end` (", " or " "): its spelling is not checked
 * beyond letters, since the date itself decides the time. */
static bool day_name(struct cur *c, const char *end)
{
	size_t start = c->at;
	while (c->at < c->len && isalpha((unsigned char)c->s[c->at]))
		c->at++;
	return c->at - start >= 3 && c->at - start <= 9 && lit(c, end);
}

static bool hms(struct cur *c, struct tm *tm)
{
	return digits(c, 2, &tm->tm_hour) && lit(c, ":") && digits(c, 2, &tm->tm_min) &&
	       lit(c, ":") && digits(c, 2, &tm->tm_sec);
}

/* IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT",
 * asctime "Sun Nov  6 08:49:37 1994". */
static bool http_date(struct cur *c, struct tm *tm)
{
	size_t start = c->at;
	if (day_name(c, ", ")) {
		size_t after = c->at;
		if (digits(c, 2, &tm->tm_mday) && lit(c, " ") && month(c, &tm->tm_mon) &&
		    lit(c, " ") && digits(c, 4, &tm->tm_year) && lit(c, " ") && hms(c, tm) &&
		    lit(c, " GMT")) {
			tm->tm_year -= 1900;
			return true;
		}
		c->at = after;
		if (digits(c, 2, &tm->tm_mday) && lit(c, "-") && month(c, &tm->tm_mon) &&
		    lit(c, "-") && digits(c, 2, &tm->tm_year) && lit(c, " ") && hms(c, tm) &&
		    lit(c, " GMT")) {
			/* RFC 9110: a two-digit year more than 50 years ahead is in the past. */
			tm->tm_year += tm->tm_year < 70 ? 100 : 0;
			return true;
		}
		return false;
	}
	c->at = start;
	if (day_name(c, " ") && month(c, &tm->tm_mon) && lit(c, " ")) {
		if (c->at < c->len && c->s[c->at] == ' ')
			c->at++;
		if (digits(c, -1, &tm->tm_mday) && lit(c, " ") && hms(c, tm) && lit(c, " ") &&
		    digits(c, 4, &tm->tm_year)) {
			tm->tm_year -= 1900;
			return true;
		}
	}
	return false;
}

static bool tm_in_range(const struct tm *tm)
{
	return tm->tm_mday >= 1 && tm->tm_mday <= 31 && tm->tm_hour <= 23 && tm->tm_min <= 59 &&
	       tm->tm_sec <= 60;
}

int dc_retry_after_parse(int64_t *out_ms, const char *text, size_t len, int64_t now_ms)
{
	*out_ms = 0;
	while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t'))
		len--;
	while (len > 0 && (*text == ' ' || *text == '\t')) {
		text++;
		len--;
	}
	if (len == 0 || len > DC_RETRY_AFTER_TEXT_MAX)
		return err_set(ERR_INVAL, "Retry-After is empty or longer than %d bytes",
			       DC_RETRY_AFTER_TEXT_MAX);
	if (isdigit((unsigned char)text[0])) {
		int64_t s = 0;
		for (size_t i = 0; i < len; i++) {
			if (!isdigit((unsigned char)text[i]))
				return err_set(ERR_INVAL,
					       "Retry-After is neither seconds nor a date");
			if (s <= DC_RETRY_AFTER_MAX_S)
				s = s * 10 + (text[i] - '0');
		}
		*out_ms = (s > DC_RETRY_AFTER_MAX_S ? DC_RETRY_AFTER_MAX_S : s) * 1000;
		return 0;
	}
	struct tm tm = { 0 };
	struct cur c = { text, len, 0 };
	if (!http_date(&c, &tm) || c.at != len || !tm_in_range(&tm))
		return err_set(ERR_INVAL, "Retry-After is neither seconds nor an HTTP-date");
	time_t when = timegm(&tm);
	if (when == (time_t)-1)
		return err_set(ERR_INVAL, "Retry-After names an impossible date");
	int64_t delta = (int64_t)when * 1000 - now_ms;
	if (delta < 0)
		delta = 0;
	if (delta > (int64_t)DC_RETRY_AFTER_MAX_S * 1000)
		delta = (int64_t)DC_RETRY_AFTER_MAX_S * 1000;
	*out_ms = delta;
	return 0;
}

int64_t dc_backoff_ms(const struct dc_retry_policy *p, int attempts, uint64_t rnd)
{
	int64_t d = p->base_ms > 0 ? p->base_ms : 1;
	for (int i = 1; i < attempts && d < p->max_ms; i++)
		d *= 2;
	if (d > p->max_ms)
		d = p->max_ms;
	int64_t half = d / 2;
	return d - half + (half > 0 ? (int64_t)(rnd % (uint64_t)(half + 1)) : 0);
}
