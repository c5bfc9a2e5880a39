/* Files that must survive a crash are written whole or not at all: a temporary file beside the
 * target, every byte written and fsync()ed, rename() over the target, then the directory
 * fsync()ed so the rename itself is durable. If anything fails, the old file is untouched and
 * the temporary file is removed. After valkey's rdb.c and libgit2's filebuf.c. */
#ifndef COMMON_FSUTIL_H
#define COMMON_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

/* Writes `len` bytes of `data` to `path` atomically with permission bits `mode`. */
int fs_atomic_write(const char *path, const void *data, size_t len, mode_t mode);

/* The same, with the content produced by `writer`, which writes to `fd` (fs_write_all() helps)
 * and returns 0, or a negative code to abandon the write. */
typedef int (*fs_writer_fn)(int fd, void *ctx);
int fs_atomic_write_with(const char *path, mode_t mode, fs_writer_fn writer, void *ctx);

/* fsync()s the directory holding `path`, so that a rename or a new entry there is durable. */
int fs_fsync_dir_of(const char *path);

/* Removes `path` and everything below it, never following a symbolic link (a link is removed,
 * not its target); a missing path is not an error. */
int fs_remove_tree(const char *path);

/* write() until all `len` bytes are out, retrying on EINTR; ERR_IO on failure. */
int fs_write_all(int fd, const void *data, size_t len);

/* Reads a whole file into a malloc()ed, NUL-terminated buffer; ERR_LIMIT if it is larger than
 * `max` bytes. */
int fs_read_file(char **out, size_t *out_len, const char *path, size_t max);

#endif
