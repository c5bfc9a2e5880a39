/* git as the floor of the selector's benchmarks (git_floor.h). */
#include "git_floor.h"

#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"

extern char **environ;

double bench_git(const char *const *argv, char **out, size_t *len, size_t *lines)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -2;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	uint64_t t0 = clock_mono_ns();
	pid_t pid;
	int src = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (src != 0) {
		close(fds[0]);
		return -1;
	}
	size_t cap = out ? 1 << 20 : 1 << 16, n = 0, nl = 0;
	char *b = malloc(cap);
	for (ssize_t k = 1; b && k > 0;) {
		if (out && n + 1 >= cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
		}
		size_t at = out ? n : 0;
		k = read(fds[0], b + at, cap - at - 1);
		for (ssize_t i = 0; i < k; i++)
			nl += b[at + (size_t)i] == '\n';
		n += k > 0 ? (size_t)k : 0;
	}
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	double s = clock_elapsed_s(t0, clock_mono_ns());
	if (!b || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(b);
		return -2;
	}
	if (lines)
		*lines = nl;
	if (out) {
		b[n] = 0;
		*out = b;
		*len = n;
	} else {
		free(b);
	}
	return s;
}
