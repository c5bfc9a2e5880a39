/* HMAC-SHA256 and GitHub's `X-Hub-Signature-256: sha256=<hex>` signatures. The comparison is
 * constant-time (CRYPTO_memcmp), and a malformed header is told apart from a wrong signature,
 * because the relay answers them differently (400 and 401). */
#ifndef COMMON_HMAC_H
#define COMMON_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define HMAC_SHA256_LEN   32
#define HMAC_SIG_PREFIX   "sha256="
#define HMAC_SIG_TEXT_LEN (7 + 2 * HMAC_SHA256_LEN) /* "sha256=" + 64 hex */

int hmac_sha256(uint8_t out[HMAC_SHA256_LEN], const void *key, size_t key_len, const void *data,
		size_t data_len);

/* Parses "sha256=<64 hex digits>" (hex in either case) of exactly `len` bytes into the raw
 * digest. ERR_INVAL, naming the problem, for anything else. */
int hmac_sig_parse(uint8_t out[HMAC_SHA256_LEN], const char *header, size_t len);

/* Writes "sha256=<64 lowercase hex>" and a NUL into `out`. */
void hmac_sig_format(char out[HMAC_SIG_TEXT_LEN + 1], const uint8_t digest[HMAC_SHA256_LEN]);

/* 0 when `header` is the signature of `body` under `secret`; ERR_INVAL when the header is
 * malformed, ERR_AUTH when it is well-formed but wrong. The secret never reaches err_last(). */
int hmac_sig_verify(const void *secret, size_t secret_len, const void *body, size_t body_len,
		    const char *header, size_t header_len);

#endif
