/* A small HTML writer for the dashboard pages: every text that did not come from this program
 * goes through html_text() or html_attr(), which escape it (test ids, commit messages and
 * failure messages are upstream-controlled). The page frame carries its own CSS inline: no
 * external asset, no script. */
#ifndef RELAY_DAEMON_HTML_H
#define RELAY_DAEMON_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* Appends `s` escaped for element content (& < > " '); NULL appends nothing. */
int html_text(struct buf *b, const char *s);
/* The same, at most `max` bytes of `s` (cut on a UTF-8 boundary, with an ellipsis). */
int html_text_cut(struct buf *b, const char *s, size_t max);
/* Appends `s` escaped for a double-quoted attribute value. */
int html_attr(struct buf *b, const char *s);
/* Appends `s` percent-encoded for a URL query value. */
int html_url_value(struct buf *b, const char *s);

/* The page frame: doctype, viewport, title, the inline style sheet, a navigation bar. When
 * `refresh_s` > 0 the page reloads itself every refresh_s seconds (meta refresh, no script). */
int html_begin(struct buf *b, const char *title, int refresh_s);
int html_end(struct buf *b);

/* Formats a wall-clock time in ms as "2026-12-03 04:42:18Z" (UTC); 0 gives "-". */
void html_time(char out[32], int64_t ms);

#endif
