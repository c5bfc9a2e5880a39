/* Tests of common/fsutil: atomic replacement, and the old file surviving a failed write. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fsutil.h"

static char dir[256];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/spyre-ci-fsutil-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		char p[512];
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
				unlink(p);
			}
		closedir(d);
	}
	rmdir(dir);
}

static int count_entries(void)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	char *s = NULL;
	cr_assert_eq(fs_read_file(&s, NULL, path, 1 << 20), 0, "%s", err_last());
	return s;
}

TestSuite(fsutil, .init = make_dir, .fini = remove_dir);

Test(fsutil, creates_and_replaces)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/report.json", dir);
	cr_assert_eq(fs_atomic_write(path, "first", 5, 0644), 0, "%s", err_last());
	char *s = slurp(path);
	cr_expect_str_eq(s, "first");
	free(s);
	cr_assert_eq(fs_atomic_write(path, "second!", 7, 0600), 0);
	s = slurp(path);
	cr_expect_str_eq(s, "second!");
	free(s);
	struct stat st;
	stat(path, &st);
	cr_expect_eq(st.st_mode & 0777, 0600);
	cr_expect_eq(count_entries(), 1, "no temporary file is left behind");
}

static int write_half_then_fail(int fd, void *ctx)
{
	(void)ctx;
	int rc = fs_write_all(fd, "partial-new-cont", 16);
	if (rc)
		return rc;
	return err_set(ERR_IO, "simulated failure half-way");
}

Test(fsutil, failed_writer_leaves_old_file_intact)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/state", dir);
	cr_assert_eq(fs_atomic_write(path, "old contents", 12, 0644), 0);
	cr_expect_eq(fs_atomic_write_with(path, 0644, write_half_then_fail, NULL), ERR_IO);
	cr_expect(strstr(err_last(), "simulated failure") != NULL, "%s", err_last());
	char *s = slurp(path);
	cr_expect_str_eq(s, "old contents");
	free(s);
	cr_expect_eq(count_entries(), 1, "the temporary file is removed");
}

Test(fsutil, real_write_error_part_way_leaves_old_file_intact)
{
	/* A file-size limit makes the kernel refuse the write part-way (EFBIG), a real fault. The
	 * test runs in its own process, so the limit stays here. */
	char path[300];
	snprintf(path, sizeof(path), "%s/big", dir);
	cr_assert_eq(fs_atomic_write(path, "small old", 9, 0644), 0);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = { 4096, 4096 };
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	size_t n = 1 << 20;
	char *big = malloc(n);
	memset(big, 'z', n);
	cr_expect_eq(fs_atomic_write(path, big, n, 0644), ERR_IO);
	cr_expect(strstr(err_last(), "write failed") != NULL, "%s", err_last());
	free(big);
	char *s = slurp(path);
	cr_expect_str_eq(s, "small old");
	free(s);
	cr_expect_eq(count_entries(), 1);
}

Test(fsutil, missing_directory_is_an_error)
{
	cr_expect_eq(fs_atomic_write("/nonexistent-dir-xyz/file", "x", 1, 0644), ERR_IO);
	cr_expect(strstr(err_last(), "temporary") != NULL);
}

Test(fsutil, read_file_bounds)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/r", dir);
	cr_assert_eq(fs_atomic_write(path, "0123456789", 10, 0644), 0);
	char *s = NULL;
	size_t len = 0;
	cr_expect_eq(fs_read_file(&s, &len, path, 10), 0, "exactly the limit is fine");
	cr_expect_eq(len, 10);
	free(s);
	s = NULL;
	cr_expect_eq(fs_read_file(&s, &len, path, 9), ERR_LIMIT);
	cr_expect_null(s);
	cr_expect_eq(fs_read_file(&s, &len, "/nonexistent-file-xyz", 9), ERR_NOTFOUND);
	cr_expect_eq(fs_read_file(&s, &len, dir, 9), ERR_INVAL);
	snprintf(path, sizeof(path), "%s/empty", dir);
	cr_assert_eq(fs_atomic_write(path, "", 0, 0644), 0);
	cr_expect_eq(fs_read_file(&s, &len, path, 9), 0);
	cr_expect_eq(len, 0);
	cr_expect_str_eq(s, "");
	free(s);
}
