/* The HTML writer of html.h: escaping, the page frame and its inline style sheet. The style is
 * a single column that wraps on a phone; tables scroll sideways inside their own box rather
 * than widening the page. */
#include "html.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static int escape(struct buf *b, const char *s, size_t n)
{
	size_t run = 0;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *rep = NULL;
		switch (s[i]) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		case 0:
			rep = "";
			break;
		default:
			continue;
		}
		rc = buf_append(b, s + run, i - run);
		if (rc == 0)
			rc = buf_append_str(b, rep);
		run = i + 1;
	}
	return rc == 0 ? buf_append(b, s + run, n - run) : rc;
}

int html_text(struct buf *b, const char *s)
{
	return s ? escape(b, s, strlen(s)) : 0;
}

int html_text_cut(struct buf *b, const char *s, size_t max)
{
	if (!s)
		return 0;
	size_t n = strlen(s);
	if (n <= max)
		return escape(b, s, n);
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--; /* never inside a multi-byte character */
	int rc = escape(b, s, max);
	return rc == 0 ? buf_append_str(b, "\xe2\x80\xa6") : rc;
}

int html_attr(struct buf *b, const char *s)
{
	return html_text(b, s);
}

int html_url_value(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;
	for (; s && *s && rc == 0; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-_.~", c))
			rc = buf_append_char(b, (char)c);
		else
			rc = buf_appendf(b, "%%%c%c", hex[c >> 4], hex[c & 15]);
	}
	return rc;
}

static const char style[] =
    "body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}"
    "header{background:#1d2430;color:#fff;padding:.6em 1em;display:flex;flex-wrap:wrap;"
    "gap:.4em 1.2em;align-items:baseline}"
    "header b{font-size:1.1em}header a{color:#cfe3ff;text-decoration:none}"
    "main{padding:.8em 1em}"
    "h1{font-size:1.3em;margin:.3em 0}h2{font-size:1.1em;margin:1.2em 0 .4em}"
    ".box{overflow-x:auto;background:#fff;border:1px solid #d9dde3;border-radius:6px}"
    "table{border-collapse:collapse;width:100%}"
    "th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid #eceff3;"
    "vertical-align:top}th{background:#eef1f5;font-weight:600;white-space:nowrap}"
    "code,.mono{font-family:ui-monospace,monospace;font-size:.92em;word-break:break-all}"
    ".st{display:inline-block;padding:0 .5em;border-radius:1em;font-size:.85em;"
    "background:#e4e7ec}"
    ".st-reported,.st-passed,.st-success,.st-delivered,.st-sent{background:#d3f2dc}"
    ".st-failed,.st-failure,.st-dead{background:#fbd5d5}"
    ".st-running,.st-queued,.st-in_progress,.st-pending{background:#fff1c2}"
    ".st-awaiting{background:#dde7ff}"
    ".fail{border-left:4px solid #d33;background:#fff;padding:.5em .8em;margin:.6em 0}"
    ".bar{height:1.1em;background:#4a7bd0;border-radius:3px;min-width:2px}"
    ".muted{color:#5d6776}.num{text-align:right;font-variant-numeric:tabular-nums}"
    "form{margin:.4em 0}select,button{font:inherit}"
    "svg{max-width:100%;height:auto;background:#fff;border:1px solid #d9dde3;"
    "border-radius:6px}"
    ".charts{display:flex;flex-wrap:wrap;gap:1em}.charts svg{flex:1 1 30em}"
    "td.commit{min-width:18em}pre{white-space:pre-wrap;margin:.4em 0 0}";

int html_begin(struct buf *b, const char *title, int refresh_s)
{
	int rc = buf_append_str(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
				   "charset=\"utf-8\">\n<meta name=\"viewport\" "
				   "content=\"width=device-width,initial-scale=1\">\n");
	if (rc == 0 && refresh_s > 0)
		rc = buf_appendf(b, "<meta http-equiv=\"refresh\" content=\"%d\">\n", refresh_s);
	if (rc == 0)
		rc = buf_append_str(b, "<title>");
	if (rc == 0)
		rc = html_text(b, title);
	if (rc == 0)
		rc = buf_appendf(b,
				 " - spyre-ci</title>\n<style>%s</style></head>\n<body><header>"
				 "<b>spyre-ci</b><a href=\"/\">jobs</a><a href=\"/trends\">"
				 "trends</a><a href=\"/specs\">specs</a><a href=\"/api/dashboard\">"
				 "JSON</a></header>\n<main>\n",
				 style);
	return rc;
}

int html_end(struct buf *b)
{
	return buf_append_str(b, "</main></body></html>\n");
}

void html_time(char out[32], int64_t ms)
{
	if (ms <= 0) {
		strcpy(out, "-");
		return;
	}
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%d %H:%M:%SZ", &tm);
}
