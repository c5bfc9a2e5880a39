/* Crash-safe file writes and bounded file reads; see fsutil.h. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"

int fs_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return err_set_errno(ERR_IO, "write failed");
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int fs_fsync_dir_of(const char *path)
{
	char copy[PATH_TEXT_MAX];
	snprintf(copy, sizeof(copy), "%s", path);
	const char *dir = dirname(copy);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return err_set_errno(ERR_IO, "cannot open directory %s", dir);
	int rc = 0;
	if (fsync(dfd) != 0)
		rc = err_set_errno(ERR_IO, "fsync of directory %s failed", dir);
	close(dfd);
	return rc;
}

int fs_atomic_write_with(const char *path, mode_t mode, fs_writer_fn writer, void *ctx)
{
	char tmp[PATH_TEXT_MAX];
	if (strlen(path) + 16 > sizeof(tmp))
		return err_set(ERR_LIMIT, "path too long: %.64s...", path);
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0)
		return err_set_errno(ERR_IO, "cannot create a temporary file beside %s", path);
	int rc = 0;
	if (fchmod(fd, mode) != 0) {
		rc = err_set_errno(ERR_IO, "chmod of %s failed", tmp);
		goto fail;
	}
	rc = writer(fd, ctx);
	if (rc) {
		err_prefix("writing %s", path);
		goto fail;
	}
	if (fsync(fd) != 0) {
		rc = err_set_errno(ERR_IO, "fsync of %s failed", tmp);
		goto fail;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = err_set_errno(ERR_IO, "close of %s failed", tmp);
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		rc = err_set_errno(ERR_IO, "rename of %s to %s failed", tmp, path);
		goto fail;
	}
	return fs_fsync_dir_of(path);
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return rc ? rc : ERR_IO;
}

struct bytes {
	const void *data;
	size_t len;
};

static int write_bytes(int fd, void *ctx)
{
	const struct bytes *b = ctx;
	return fs_write_all(fd, b->data, b->len);
}

int fs_atomic_write(const char *path, const void *data, size_t len, mode_t mode)
{
	struct bytes b = { data, len };
	return fs_atomic_write_with(path, mode, write_bytes, &b);
}

int fs_read_file(char **out, size_t *out_len, const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set_errno(errno == ENOENT ? ERR_NOTFOUND : ERR_IO, "cannot open %s",
				     path);
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return err_set(ERR_INVAL, "%s is a directory", path);
	}
	struct buf b;
	buf_init(&b, max);
	int rc = 0;
	char chunk[64 * 1024];
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = err_set_errno(ERR_IO, "read of %s failed", path);
			break;
		}
		if (r == 0)
			break;
		rc = buf_append(&b, chunk, (size_t)r);
		if (rc == ERR_LIMIT)
			rc = err_set(ERR_LIMIT, "%s is larger than the limit of %zu bytes", path,
				     max);
		if (rc)
			break;
	}
	close(fd);
	if (rc) {
		buf_finish(&b);
		return rc;
	}
	if (out_len)
		*out_len = b.len;
	*out = buf_detach(&b);
	return 0;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

int fs_remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : err_set_errno(ERR_IO, "cannot stat %s", path);
	if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		return err_set_errno(ERR_IO, "cannot remove %s", path);
	return 0;
}
