/* Tests of common/hmac: GitHub's published test vector, RFC 4231, and malformed signatures. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "common/hmac.h"

static const char gh_secret[] = "It's a Secret to Everybody";
static const char gh_body[] = "Hello, World!";
static const char gh_sig[] =
    "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

Test(hmac, github_test_vector)
{
	uint8_t d[HMAC_SHA256_LEN];
	cr_assert_eq(hmac_sha256(d, gh_secret, strlen(gh_secret), gh_body, strlen(gh_body)), 0);
	char text[HMAC_SIG_TEXT_LEN + 1];
	hmac_sig_format(text, d);
	cr_expect_str_eq(text, gh_sig);
	cr_expect_eq(hmac_sig_verify(gh_secret, strlen(gh_secret), gh_body, strlen(gh_body), gh_sig,
				     strlen(gh_sig)),
		     0);
}

Test(hmac, rfc4231_case2)
{
	uint8_t d[HMAC_SHA256_LEN];
	const char *data = "what do ya want for nothing?";
	cr_assert_eq(hmac_sha256(d, "Jefe", 4, data, strlen(data)), 0);
	char text[HMAC_SIG_TEXT_LEN + 1];
	hmac_sig_format(text, d);
	cr_expect_str_eq(text,
			 "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

Test(hmac, empty_body_and_key)
{
	uint8_t d[HMAC_SHA256_LEN];
	cr_assert_eq(hmac_sha256(d, "", 0, "", 0), 0);
	char text[HMAC_SIG_TEXT_LEN + 1];
	hmac_sig_format(text, d);
	cr_expect_str_eq(text,
			 "sha256=b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

Test(hmac, uppercase_hex_accepted)
{
	char up[sizeof(gh_sig)];
	memcpy(up, gh_sig, sizeof(gh_sig));
	for (char *p = up + 7; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	cr_expect_eq(
	    hmac_sig_verify(gh_secret, strlen(gh_secret), gh_body, strlen(gh_body), up, strlen(up)),
	    0);
}

Test(hmac, wrong_signature_is_auth_error)
{
	char bad[sizeof(gh_sig)];
	memcpy(bad, gh_sig, sizeof(gh_sig));
	bad[sizeof(gh_sig) - 2] = bad[sizeof(gh_sig) - 2] == '7' ? '8' : '7';
	cr_expect_eq(hmac_sig_verify(gh_secret, strlen(gh_secret), gh_body, strlen(gh_body), bad,
				     strlen(bad)),
		     ERR_AUTH);
	cr_expect_eq(hmac_sig_verify("other", 5, gh_body, strlen(gh_body), gh_sig, strlen(gh_sig)),
		     ERR_AUTH);
	cr_expect_eq(hmac_sig_verify(gh_secret, strlen(gh_secret), "Hello, World?", 13, gh_sig,
				     strlen(gh_sig)),
		     ERR_AUTH);
	cr_expect(strstr(err_last(), "Secret") == NULL, "the secret never reaches the error text");
}

Test(hmac, malformed_signatures_are_invalid)
{
	uint8_t d[HMAC_SHA256_LEN];
	const char *bad[] = {
		"",
		"sha256=",
		"sha1=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		"SHA256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		"sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e1",
		"sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e177",
		"sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e1g",
		"sha256= 57107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		" sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		"sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17 ",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(hmac_sig_parse(d, bad[i], strlen(bad[i])), ERR_INVAL, "'%s'", bad[i]);
		cr_expect_eq(hmac_sig_verify(gh_secret, strlen(gh_secret), gh_body, strlen(gh_body),
					     bad[i], strlen(bad[i])),
			     ERR_INVAL, "'%s'", bad[i]);
	}
	cr_expect(strstr(err_last(), "hex digits") != NULL || strstr(err_last(), "sha256") != NULL,
		  "%s", err_last());
}

Test(hmac, embedded_nul_in_header_is_invalid)
{
	uint8_t d[HMAC_SHA256_LEN];
	char h[sizeof(gh_sig)];
	memcpy(h, gh_sig, sizeof(gh_sig));
	h[20] = '\0';
	cr_expect_eq(hmac_sig_parse(d, h, strlen(gh_sig)), ERR_INVAL);
}
