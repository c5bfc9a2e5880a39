/* The pool's frames (proto.h). */
#include "executors/proto.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fsutil.h"

static void put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int exec_proto_write(int fd, uint32_t type, const void *payload, uint32_t len)
{
	unsigned char buf[EXEC_FRAME_HEADER + EXEC_FRAME_MAX];
	if (len > EXEC_FRAME_MAX)
		return err_set(ERR_LIMIT, "a frame of %u bytes (at most %d)", len, EXEC_FRAME_MAX);
	memcpy(buf, EXEC_FRAME_MAGIC, 4);
	put_u32(buf + 4, type);
	put_u32(buf + 8, len);
	if (len)
		memcpy(buf + EXEC_FRAME_HEADER, payload, len);
	return fs_write_all(fd, buf, EXEC_FRAME_HEADER + (size_t)len);
}

int exec_proto_parse(const unsigned char *buf, size_t len, uint32_t *type,
		     const unsigned char **payload, uint32_t *plen)
{
	size_t have = len < 4 ? len : 4;
	if (memcmp(buf, EXEC_FRAME_MAGIC, have) != 0)
		return err_set(ERR_INVAL, "not a frame: bad magic %02x%02x%02x%02x", buf[0],
			       have > 1 ? buf[1] : 0, have > 2 ? buf[2] : 0, have > 3 ? buf[3] : 0);
	if (len < EXEC_FRAME_HEADER)
		return 0;
	uint32_t t = get_u32(buf + 4), n = get_u32(buf + 8);
	if (t < EXEC_FRAME_CASE || t > EXEC_FRAME_SETUP)
		return err_set(ERR_INVAL, "not a frame: type %u", t);
	if (n > EXEC_FRAME_MAX)
		return err_set(ERR_INVAL, "a frame of %u bytes (at most %d)", n, EXEC_FRAME_MAX);
	if (len < EXEC_FRAME_HEADER + (size_t)n)
		return 0;
	*type = t;
	*payload = buf + EXEC_FRAME_HEADER;
	*plen = n;
	return (int)(EXEC_FRAME_HEADER + n);
}

static int read_exact(int fd, unsigned char *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_set_errno(ERR_IO, "reading a frame");
		if (r == 0)
			return got == 0 ? ERR_NOTFOUND
					: err_set(ERR_INVAL, "end of file inside a frame");
		got += (size_t)r;
	}
	return 0;
}

int exec_proto_read(int fd, unsigned char *buf, uint32_t *type, const unsigned char **payload)
{
	int rc = read_exact(fd, buf, EXEC_FRAME_HEADER);
	if (rc)
		return rc;
	uint32_t plen = 0;
	rc = exec_proto_parse(buf, EXEC_FRAME_HEADER, type, payload, &plen);
	if (rc < 0)
		return rc;
	*type = get_u32(buf + 4); /* checked by the parse above */
	uint32_t n = get_u32(buf + 8);
	if (n && (rc = read_exact(fd, buf + EXEC_FRAME_HEADER, n)) != 0)
		return rc == ERR_NOTFOUND ? err_set(ERR_INVAL, "end of file inside a frame") : rc;
	*payload = buf + EXEC_FRAME_HEADER;
	return (int)n;
}
