/* The bare upstream mirror in state_dir/mirror.git, shared by the poller and the workers. Each
 * caller opens its own libgit2 handle (libgit2 objects are not shared between threads). */
#ifndef RELAY_DAEMON_MIRROR_H
#define RELAY_DAEMON_MIRROR_H

#include <git2.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Writes state_dir/mirror.git into `out`; ERR_LIMIT when it does not fit. */
int mirror_path(char *out, size_t size, const char *state_dir);

/* Clears what a process killed inside libgit2 leaves in the mirror: a half-made mirror.git.new
 * and stale *.lock files (which would fail every later fetch). Only for the holder of the
 * state directory's lock (statedir.h), before any thread opens the mirror. */
int mirror_recover(const char *state_dir);

/* Opens the mirror, creating an empty bare repository the first time (atomically: made as
 * mirror.git.new, renamed in). */
int mirror_open(git_repository **out, const char *state_dir);

/* An anonymous remote for `url`, without url.*.insteadOf rewriting (the mirror's own config has
 * none, and libgit2 1.5 leaks the PCRE2 match data of that lookup at every remote). */
int mirror_remote(git_remote **out, git_repository *repo, const char *url);

/* Fetches `refspecs` ("+refs/heads/main:refs/heads/main") through `remote` into its mirror;
 * one fetch at a time in the process. A `stop` (may be NULL) that becomes true ends the wait
 * for another fetch and the fetch itself at its next progress report (ERR_IO). */
int mirror_fetch(git_remote *remote, char *const *refspecs, size_t n, const atomic_bool *stop);

/* Which of branches names[0..n) the upstream at `url` has (present[i]), from one listing of its
 * refs: a branch that is gone is told apart from an upstream that cannot be reached (ERR_IO,
 * "upstream path ... does not exist" or libgit2's reason). */
int mirror_heads(const char *url, git_repository *repo, char *const *names, size_t n,
		 bool *present);

/* The base of a pull request's head given its branch's tip: the tip when the head descends from
 * it, else their merge base, else none (base[0] = 0). (The poller's base is always the previous
 * tip.) */
void mirror_base(char base[41], git_repository *repo, const char *prev, const char *tip);

#endif
