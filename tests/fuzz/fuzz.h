/* The one entry point every fuzz target defines (libFuzzer's), declared for the replay driver
 * and to satisfy -Wmissing-prototypes. */
#ifndef TESTS_FUZZ_H
#define TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
