/* The state directory's lock (statedir.h). */
#include "statedir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"

static void holder(int fd, char *out, size_t size)
{
	char buf[32] = { 0 };
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	snprintf(out, size, "%s", buf[0] ? buf : "unknown");
}

int statedir_lock(int *fd, const char *state_dir, int wait_ms)
{
	*fd = -1;
	char path[PATH_TEXT_MAX];
	if (snprintf(path, sizeof(path), "%s/daemon.lock", state_dir) >= (int)sizeof(path))
		return err_set(ERR_LIMIT, "state directory: path longer than PATH_TEXT_MAX");
	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
		return err_set_errno(ERR_IO, "state directory: cannot create %s", state_dir);
	int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (f < 0)
		return err_set_errno(ERR_IO, "state directory: cannot open %s", path);
	bool told = false;
	for (int waited = 0;; waited += 100) {
		if (flock(f, LOCK_EX | LOCK_NB) == 0)
			break;
		int e = errno;
		char pid[32];
		holder(f, pid, sizeof(pid));
		if (e != EWOULDBLOCK) {
			errno = e;
			int rc = err_set_errno(ERR_IO, "state directory: cannot lock %s", path);
			close(f);
			return rc;
		}
		if (waited >= wait_ms) {
			close(f);
			return err_set(ERR_BADSTATE,
				       "state directory %s is in use by another spyre-ci (pid %s)",
				       state_dir, pid);
		}
		if (!told)
			log_info("state directory %s is locked by pid %s; waiting up to %d ms",
				 state_dir, pid, wait_ms);
		told = true;
		clock_sleep_ms(100);
	}
	char line[32];
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
	if (ftruncate(f, 0) < 0 || pwrite(f, line, (size_t)n, 0) != n) {
		int rc = err_set_errno(ERR_IO, "state directory: cannot write %s", path);
		close(f);
		return rc;
	}
	*fd = f;
	return 0;
}

void statedir_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}
