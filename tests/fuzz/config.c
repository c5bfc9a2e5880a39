/* Fuzz target: the configuration loader (relay/daemon/yconf.c and config.c) on arbitrary
 * YAML. Invariants: it either loads or fails with a located message, never crashes, and a
 * loaded configuration has every key within its table's bounds. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	int rc = config_parse(&c, "fuzz.yaml", (const char *)data, size);
	if (rc == 0) {
		if (c.listen_port < 0 || c.listen_port > 65535 || c.branches.n < 1 ||
		    c.poll_interval_s < 0 || c.workers < 0 || c.workers > 64 || !c.state_dir[0])
			abort();
		config_finish(&c);
	} else if (!strstr(err_last(), "fuzz.yaml")) {
		abort();
	}
	return 0;
}
