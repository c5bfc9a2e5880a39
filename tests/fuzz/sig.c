/* Fuzz target: the X-Hub-Signature-256 header parser and verifier. The first byte picks the
 * split between header and body, so both parts vary. Invariants: parse and verify agree on
 * malformed input, and a signature we format ourselves always verifies. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/hmac.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t split = data[0] % (size < 100 ? size : 100);
	const char *header = (const char *)data + 1;
	size_t hlen = split;
	const uint8_t *body = data + 1 + split;
	size_t blen = size - 1 - split;
	static const char secret[] = "fuzz secret";

	uint8_t digest[HMAC_SHA256_LEN];
	int prc = hmac_sig_parse(digest, header, hlen);
	int vrc = hmac_sig_verify(secret, sizeof(secret) - 1, body, blen, header, hlen);
	if (prc != 0 && vrc != ERR_INVAL)
		abort();
	if (prc == 0 && vrc != 0 && vrc != ERR_AUTH)
		abort();

	uint8_t mac[HMAC_SHA256_LEN];
	char text[HMAC_SIG_TEXT_LEN + 1];
	if (hmac_sha256(mac, secret, sizeof(secret) - 1, body, blen) != 0)
		abort();
	hmac_sig_format(text, mac);
	if (hmac_sig_verify(secret, sizeof(secret) - 1, body, blen, text, strlen(text)) != 0)
		abort();
	return 0;
}
