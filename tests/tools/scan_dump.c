/* scan-dump: prints what the Python scanner (selector/scan.h) finds in each file named on the
 * command line, in the normalised text form that tests/tools/scan_ref.py prints from Python's
 * own parser, so that tests/tools/scan_compare.py can diff the two. Test-only: built for the
 * test suite, never installed. One fact a line (the format is in scan_ref.py):
 *
 *   file PATH
 *   skipped                       (not UTF-8: nothing else follows)
 *   class QUALNAME FIRST LAST deco=LINE
 *   base QUALNAME INDEX TEXT      (keyword arguments as kw=TEXT; whitespace removed)
 *   def QUALNAME FIRST LAST deco=LINE async=0|1 decorators=NAME,NAME
 *   import SCOPE level=N module=M name=N local=L
 *   instantiate device|parametrized CLASS LINE
 *   opinfo KIND FIRST LAST aten=NAME|- variant=NAME|- dtypes=D,D|- sfunc=NAME|- samples=S;S|-
 *          name=NAME
 *
 * With --time, prints instead the bytes scanned and the seconds the scanner took, the best of
 * five scans of each file (stderr). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "selector/scan.h"

/* Prints `s` without whitespace (spaces, tabs, newlines, backslash continuations kept). */
static void put_squeezed(const char *s)
{
	for (; s && *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\f')
			putchar(*s);
}

static const char *scope_of(const struct scan_file *f, int function)
{
	return function >= 0 && (size_t)function < f->n_functions ? f->functions[function].qualname
								  : "-";
}

static void dump(const struct scan_file *f)
{
	printf("file %s\n", f->path);
	if (f->skipped) {
		printf("skipped\n");
		return;
	}
	for (size_t i = 0; i < f->n_classes; i++) {
		const struct scan_class *c = &f->classes[i];
		printf("class %s %u %u deco=%u\n", c->qualname, c->first_line, c->last_line,
		       c->deco_line);
		for (size_t b = 0; b < c->n_bases; b++) {
			printf("base %s %zu ", c->qualname, b);
			if (c->bases[b].keyword)
				printf("%s=", c->bases[b].keyword);
			put_squeezed(c->bases[b].text);
			putchar('\n');
		}
	}
	for (size_t i = 0; i < f->n_functions; i++) {
		const struct scan_function *fn = &f->functions[i];
		printf("def %s %u %u deco=%u async=%d decorators=", fn->qualname, fn->first_line,
		       fn->last_line, fn->deco_line, fn->is_async ? 1 : 0);
		for (size_t d = 0; d < fn->n_decorators; d++) {
			printf("%s", d ? "," : "");
			put_squeezed(fn->decorators[d].name);
		}
		putchar('\n');
	}
	for (size_t i = 0; i < f->n_imports; i++) {
		const struct scan_import *im = &f->imports[i];
		/* a relative module keeps its dots (no module path given): print them from level */
		const char *m = im->module ? im->module : "";
		while (*m == '.')
			m++;
		printf("import %s level=%d module=%.*s%s name=%s local=%s\n",
		       scope_of(f, im->function), im->level, im->level, "..........", m,
		       im->name ? im->name : "-", im->local ? im->local : "-");
	}
	for (size_t i = 0; i < f->n_opinfos; i++) {
		const struct scan_opinfo *o = &f->opinfos[i];
		printf("opinfo %s %u %u aten=%s variant=%s dtypes=%s sfunc=%s samples=%s name=%s\n",
		       o->kind, o->first_line, o->last_line, o->aten_name ? o->aten_name : "-",
		       o->variant_test_name ? o->variant_test_name : "-",
		       o->dtypes ? o->dtypes : "-", o->sample_func ? o->sample_func : "-",
		       o->samples ? o->samples : "-", o->name);
	}
	for (size_t i = 0; i < f->n_globals; i++) {
		const struct scan_global *g = &f->globals[i];
		bool in_class = g->class_index >= 0 && (size_t)g->class_index < f->n_classes;
		printf("global %s %s %u\n", in_class ? f->classes[g->class_index].qualname : "-",
		       g->name, g->line);
	}
	for (size_t i = 0; i < f->n_instantiates; i++) {
		const struct scan_instantiate *in = &f->instantiates[i];
		printf("instantiate %s ",
		       in->kind == SCAN_INSTANTIATE_DEVICE_TYPE ? "device" : "parametrized");
		put_squeezed(in->class_name);
		printf(" %u\n", in->line);
	}
}

int main(int argc, char **argv)
{
	int first = 1;
	bool timing = argc > 1 && strcmp(argv[1], "--time") == 0;
	if (timing)
		first = 2;
	if (argc <= first) {
		fprintf(stderr, "usage: scan-dump [--time] FILE...\n");
		return 2;
	}
	size_t bytes = 0;
	double seconds = 0;
	for (int a = first; a < argc; a++) {
		char *data = NULL;
		size_t len = 0;
		if (fs_read_file(&data, &len, argv[a], PYTHON_FILE_MAX)) {
			fprintf(stderr, "scan-dump: %s\n", err_last());
			return 1;
		}
		/* --time: the best of five scans of each file */
		double best = 0;
		for (int rep = 0; rep < (timing ? 5 : 1); rep++) {
			struct timespec t0, t1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			struct scan_file *f = NULL;
			int rc = selector_scan(&f, argv[a], NULL, data, len);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (rc) {
				fprintf(stderr, "scan-dump: %s: %s\n", argv[a], err_last());
				free(data);
				return 1;
			}
			double s = (double)(t1.tv_sec - t0.tv_sec) +
				   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
			if (rep == 0 || s < best)
				best = s;
			if (!timing)
				dump(f);
			scan_file_destroy(f);
		}
		free(data);
		bytes += len;
		seconds += best;
	}
	if (timing)
		fprintf(stderr, "scan-dump: %zu bytes in %.6f s\n", bytes, seconds);
	return 0;
}
