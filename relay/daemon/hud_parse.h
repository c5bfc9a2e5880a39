/* The HUD results envelope (docs/contracts.md) as the built-in receiver reads it: parsed
 * and checked field by field, every string bounded, so that the store gets a hud_record whose
 * fields are all present and sane. Kept apart from the HTTP code so that a fuzz target drives it
 * (tests/fuzz/hud_envelope.c). */
#ifndef RELAY_DAEMON_HUD_PARSE_H
#define RELAY_DAEMON_HUD_PARSE_H

#include <jansson.h>
#include <stddef.h>

#include "common/limits.h"
#include "store_dash.h"

struct hud_msg {
	json_t *env; /* owned; the record's strings point into it */
	struct hud_record rec;
	char record_key[RECEIVER_FIELD_MAX * 6]; /* HUD's record key */
	char key[RECEIVER_FIELD_MAX * 7];        /* record key + "#" + status */
};

/* Parses `body`; `idem_key` (the request's Idempotency-Key, or NULL) becomes the message's key,
 * else record key and status. 0 with `m` filled, or ERR_INVAL with the reason in `why` (then
 * `m` holds nothing to free, though hud_msg_finish() is always safe). */
int hud_msg_parse(struct hud_msg *m, const char *body, size_t len, const char *idem_key, char *why,
		  size_t why_size);
void hud_msg_finish(struct hud_msg *m);

#endif
