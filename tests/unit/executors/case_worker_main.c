/* A program whose main is only a pool worker: what a front-end's main does when it is started
 * with EXEC_WORKER_ARG, for the pool's tests of exec'd workers (exec_worker.c). */
#include <string.h>

#include "executors/pool.h"

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], EXEC_WORKER_ARG) == 0)
		exec_pool_worker_main(EXEC_WORKER_FD, EXEC_WORKER_FD + 1);
	return 2;
}
