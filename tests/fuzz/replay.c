/* Replays every file of the given corpus directories (or single files) through the target's
 * LLVMFuzzerTestOneInput, so the normal test suite, built with gcc, exercises every seed and
 * every crash reproducer ever saved. A crash fails the test the way it failed the fuzzer.
 * A corpus directory may hold a file named SEEDS listing more seed directories (one path a line,
 * relative to the corpus directory; # starts a comment): test fixtures that double as seeds are
 * named there rather than copied. scripts/fuzz.sh reads the same list. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fsutil.h"
#include "fuzz.h"

#define REPLAY_INPUT_MAX (4u << 20)

static int replay_file(const char *path)
{
	char *data = NULL;
	size_t len = 0;
	if (fs_read_file(&data, &len, path, REPLAY_INPUT_MAX) != 0) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		return -1;
	}
	LLVMFuzzerTestOneInput((const uint8_t *)data, len);
	free(data);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, int *count);

#define SEEDS_LINE_MAX 1024

/* The directories a corpus's SEEDS file names, each replayed like the corpus itself. */
static int replay_seeds(const char *dir, const char *seeds, int *count)
{
	FILE *f = fopen(seeds, "r");
	if (!f) {
		fprintf(stderr, "replay: cannot read %s\n", seeds);
		return -1;
	}
	char line[SEEDS_LINE_MAX], path[4096];
	int rc = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, line);
		struct stat st;
		if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "replay: %s names '%s', which is not a directory\n", seeds,
				line);
			rc = -1;
			continue;
		}
		if (replay_dir(path, count) != 0)
			rc = -1;
	}
	fclose(f);
	return rc;
}

static int replay_dir(const char *dir, int *count)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: cannot open %s\n", dir);
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				abort();
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	int rc = 0;
	char path[4096];
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (strcmp(names[i], "SEEDS") == 0) {
			if (replay_seeds(dir, path, count) != 0)
				rc = -1;
			free(names[i]);
			continue;
		}
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			free(names[i]); /* subdirectories are corpora of their own: SEEDS names them
					 */
			continue;
		}
		if (replay_file(path) != 0)
			rc = -1;
		else
			(*count)++;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0, rc = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
			rc = 1;
		} else if (S_ISDIR(st.st_mode)) {
			rc |= replay_dir(argv[i], &count) ? 1 : 0;
		} else {
			rc |= replay_file(argv[i]) ? 1 : (count++, 0);
		}
	}
	printf("replayed %d inputs\n", count);
	if (count == 0) {
		fprintf(stderr, "replay: no inputs found: a corpus must not be empty\n");
		return 1;
	}
	return rc;
}
