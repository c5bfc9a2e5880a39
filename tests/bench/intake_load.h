/* A small HTTP/1.1 load generator for the intake benchmark: C keep-alive connections on
 * loopback, each sending signed 8 KB push deliveries on a fixed schedule (open loop: a
 * request's latency counts from when it was due, so a slow server is not hidden by the client
 * waiting for it). */
#ifndef TESTS_BENCH_INTAKE_LOAD_H
#define TESTS_BENCH_INTAKE_LOAD_H

#include <stddef.h>
#include <stdint.h>

struct load_result {
	double offered, sustained; /* deliveries per second */
	double p50_ms, p99_ms;
	size_t sent, ok, errors; /* ok: 2xx answers */
};

/* Sends `rate` deliveries per second for `seconds` over `conns` connections to 127.0.0.1:port,
 * signed with `secret`; delivery ids start with `tag` so that every run's ids are new. */
int load_run(struct load_result *out, int port, double rate, double seconds, int conns,
	     const char *secret, const char *tag);

#endif
