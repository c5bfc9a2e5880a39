/* HMAC-SHA256 through OpenSSL, and GitHub signature headers; see hmac.h. */
#include "common/hmac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

#include "common/err.h"
#include "common/num.h"

int hmac_sha256(uint8_t out[HMAC_SHA256_LEN], const void *key, size_t key_len, const void *data,
		size_t data_len)
{
	unsigned int len = 0;
	static const uint8_t empty[1];
	if (key_len > INT32_MAX)
		return err_set(ERR_LIMIT, "HMAC key too long");
	if (!HMAC(EVP_sha256(), key_len ? key : empty, (int)key_len,
		  data_len ? data : (const void *)empty, data_len, out, &len) ||
	    len != HMAC_SHA256_LEN)
		return err_set(ERR_GENERIC, "HMAC-SHA256 failed in libcrypto");
	return 0;
}

int hmac_sig_parse(uint8_t out[HMAC_SHA256_LEN], const char *header, size_t len)
{
	const size_t plen = sizeof(HMAC_SIG_PREFIX) - 1;
	if (len < plen || memcmp(header, HMAC_SIG_PREFIX, plen) != 0)
		return err_set(ERR_INVAL, "signature does not start with \"sha256=\"");
	if (len != HMAC_SIG_TEXT_LEN)
		return err_set(ERR_INVAL, "signature has %zu hex digits, expected %d", len - plen,
			       2 * HMAC_SHA256_LEN);
	for (size_t i = 0; i < HMAC_SHA256_LEN; i++) {
		int hi = num_hexval(header[plen + 2 * i]);
		int lo = num_hexval(header[plen + 2 * i + 1]);
		if (hi < 0 || lo < 0)
			return err_set(ERR_INVAL, "signature has a non-hex character at offset %zu",
				       plen + 2 * i + (hi < 0 ? 0 : 1));
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

void hmac_sig_format(char out[HMAC_SIG_TEXT_LEN + 1], const uint8_t digest[HMAC_SHA256_LEN])
{
	static const char hex[] = "0123456789abcdef";
	memcpy(out, HMAC_SIG_PREFIX, 7);
	for (size_t i = 0; i < HMAC_SHA256_LEN; i++) {
		out[7 + 2 * i] = hex[digest[i] >> 4];
		out[7 + 2 * i + 1] = hex[digest[i] & 15];
	}
	out[HMAC_SIG_TEXT_LEN] = '\0';
}

int hmac_sig_verify(const void *secret, size_t secret_len, const void *body, size_t body_len,
		    const char *header, size_t header_len)
{
	uint8_t given[HMAC_SHA256_LEN];
	uint8_t want[HMAC_SHA256_LEN];
	int rc = hmac_sig_parse(given, header, header_len);
	if (rc)
		return rc;
	rc = hmac_sha256(want, secret, secret_len, body, body_len);
	if (rc)
		return rc;
	rc = CRYPTO_memcmp(given, want, HMAC_SHA256_LEN) == 0
		 ? 0
		 : err_set(ERR_AUTH, "signature does not match the body");
	OPENSSL_cleanse(want, sizeof(want));
	return rc;
}
