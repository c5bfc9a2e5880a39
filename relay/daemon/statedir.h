/* The state directory's owner: one daemon at a time holds state_dir/daemon.lock (flock), so
 * that what a dead daemon left half-done there (the mirror's lock files) is known to be stale
 * and can be cleared. A second daemon on the same directory is refused, naming the holder. */
#ifndef RELAY_DAEMON_STATEDIR_H
#define RELAY_DAEMON_STATEDIR_H

/* Takes the lock, creating the directory and the file as needed, and writes our pid into it.
 * A lock held by another process is waited for up to `wait_ms` (the children of a daemon just
 * killed may hold it a moment longer), then ERR_BADSTATE naming its pid. On success *fd is the
 * lock's descriptor (close-on-exec), to keep open for as long as the daemon runs. */
int statedir_lock(int *fd, const char *state_dir, int wait_ms);

/* Releases the lock (closes fd; -1 is ignored). */
void statedir_unlock(int fd);

#endif
