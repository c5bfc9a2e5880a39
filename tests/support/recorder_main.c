/* recorder-server: the recorder (recorder.h) as a program, for the CLI checks. Writes its port
 * to --port-file once listening, serves until SIGTERM or SIGINT, then writes every request it
 * saw to --dump as JSON lines (seq, method, path, idem, auth, agent, ctype, status, accepted,
 * body).
 * Usage: recorder-server --port-file F --dump F [--require NAME=VALUE]
 *                        [--fail KIND:COUNT[:PARAM[:TEXT]]]...
 *   KIND: 500, hang (PARAM ms), 429 (TEXT: Retry-After), close, 400 (TEXT: body), 401 */
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

static int add_fault(struct recorder *r, char *spec)
{
	char *kind = strtok(spec, ":"), *count = strtok(NULL, ":"), *param = strtok(NULL, ":");
	char *text = strtok(NULL, "");
	if (!kind || !count)
		return -1;
	static const struct {
		const char *name;
		enum rec_fault f;
	} kinds[] = { { "500", REC_500 },     { "hang", REC_HANG }, { "429", REC_429 },
		      { "close", REC_CLOSE }, { "400", REC_400 },   { "401", REC_401 } };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kind, kinds[i].name) == 0) {
			recorder_fail(r, kinds[i].f, atoi(count), param ? atoi(param) : 0,
				      text ? text : (kinds[i].f == REC_429 ? param : NULL));
			return 0;
		}
	}
	return -1;
}

static int dump(struct recorder *r, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	for (size_t i = 0; i < recorder_count(r); i++) {
		struct rec_request q = recorder_get(r, i);
		json_t *o =
		    json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:b, s:s#}", "seq", q.seq,
			      "method", q.method, "path", q.path, "idem", q.idem, "auth", q.auth,
			      "agent", q.agent, "ctype", q.ctype, "status", q.status, "accepted",
			      q.accepted, "body", q.body ? q.body : "", (int)q.body_len);
		char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
		if (line)
			fprintf(f, "%s\n", line);
		free(line);
		json_decref(o);
	}
	return fclose(f);
}

int main(int argc, char **argv)
{
	const char *port_file = NULL, *dump_file = NULL;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* before the server's threads inherit the mask */
	struct recorder *r = recorder_start();
	if (!r) {
		fprintf(stderr, "recorder-server: cannot listen on 127.0.0.1\n");
		return 1;
	}
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--port-file")) {
			port_file = argv[i + 1];
		} else if (!strcmp(argv[i], "--dump")) {
			dump_file = argv[i + 1];
		} else if (!strcmp(argv[i], "--fail")) {
			if (add_fault(r, argv[i + 1]) != 0) {
				fprintf(stderr, "recorder-server: bad --fail %s\n", argv[i + 1]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--require")) {
			char *eq = strchr(argv[i + 1], '=');
			if (!eq)
				return 2;
			*eq = '\0';
			recorder_require(r, argv[i + 1], eq + 1);
		} else {
			fprintf(stderr, "recorder-server: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (!port_file || !dump_file)
		return 2;
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
	FILE *pf = fopen(tmp, "w");
	if (!pf || fprintf(pf, "%d\n", recorder_port(r)) < 0 || fclose(pf) != 0 ||
	    rename(tmp, port_file) != 0)
		return 1;
	int sig = 0;
	sigwait(&set, &sig);
	int rc = dump(r, dump_file) == 0 ? 0 : 1;
	recorder_stop(r);
	return rc;
}
