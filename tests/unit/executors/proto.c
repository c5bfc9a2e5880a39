/* The pool's frames: a round trip through a pipe, partial frames, and bytes that are no frame. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include <string.h>
#include <unistd.h>

#include "executors/proto.h"

Test(proto, round_trip_and_partial_frames)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	cr_assert_eq(exec_proto_write(fds[1], EXEC_FRAME_RESULT, "hello", 5), 0);
	unsigned char buf[EXEC_FRAME_HEADER + EXEC_FRAME_MAX];
	uint32_t type;
	const unsigned char *payload;
	cr_assert_eq(exec_proto_read(fds[0], buf, &type, &payload), 5);
	cr_expect_eq(type, EXEC_FRAME_RESULT);
	cr_expect_eq(memcmp(payload, "hello", 5), 0);
	uint32_t plen;
	for (size_t len = 0; len < EXEC_FRAME_HEADER + 5; len++)
		cr_expect_eq(exec_proto_parse(buf, len, &type, &payload, &plen), 0, "%zu", len);
	cr_expect_eq(exec_proto_parse(buf, EXEC_FRAME_HEADER + 5, &type, &payload, &plen), 17);
	close(fds[1]);
	cr_expect_eq(exec_proto_read(fds[0], buf, &type, &payload), ERR_NOTFOUND);
	close(fds[0]);
}

Test(proto, garbage_is_named)
{
	uint32_t type, plen;
	const unsigned char *payload;
	const unsigned char http[] = "HTTP/1.1 200 OK";
	cr_expect_eq(exec_proto_parse(http, 15, &type, &payload, &plen), ERR_INVAL);
	cr_expect_eq(exec_proto_parse(http, 1, &type, &payload, &plen), ERR_INVAL,
		     "a wrong first byte is garbage at once");
	unsigned char big[EXEC_FRAME_HEADER] = { 'S', 'P', 'X', '1', 2, 0, 0, 0, 0xff, 0xff, 0, 0 };
	cr_expect_eq(exec_proto_parse(big, sizeof(big), &type, &payload, &plen), ERR_INVAL);
	unsigned char badtype[EXEC_FRAME_HEADER] = { 'S', 'P', 'X', '1', 9, 0, 0, 0, 0, 0, 0, 0 };
	cr_expect_eq(exec_proto_parse(badtype, sizeof(badtype), &type, &payload, &plen), ERR_INVAL);
	cr_expect_neq(exec_proto_write(1, EXEC_FRAME_CASE, big, EXEC_FRAME_MAX + 1), 0);
}
