/* The hardware description: every number the emulator and its timing model use, loaded from
 * a YAML file (the shipped spyre-emu/hw/spyre.yaml is built into the program; a path can
 * override it). Each value in the file carries a label, `fact` (with its public source) or
 * `estimate`, so a reader can tell which results rest on what. */
#ifndef SPYRE_EMU_HW_H
#define SPYRE_EMU_HW_H

#include <stddef.h>
#include <stdint.h>

#define SPYRE_CORES_MAX     32
#define SPYRE_HW_PARAMS_MAX 24

enum spyre_hw_label { SPYRE_HW_FACT, SPYRE_HW_ESTIMATE };

/* Where a value came from, as the file says: its label, and for a fact its public source, for
 * an estimate its basis. */
struct spyre_hw_param {
	char key[40]; /* as in the YAML file: "lx_bytes" */
	enum spyre_hw_label label;
	char source[160];
};

struct spyre_hw {
	char name[64];
	int cores;                      /* 1..32 */
	int corelets_per_core;          /* 2 */
	int pe_rows, pe_cols;           /* systolic array of one corelet: 8 x 8 */
	uint64_t lx_bytes;              /* scratchpad per core: 2 MiB */
	uint32_t stick_bytes;           /* 128 */
	uint32_t ring_bytes_per_cycle;  /* per direction: 128 */
	uint32_t ring_hop_cycles;       /* latency of one hop (estimate) */
	uint64_t dev_mem_bytes;         /* device memory capacity */
	double dev_mem_gbps;            /* device memory bandwidth, GB/s, shared by all cores */
	uint64_t window_bytes;          /* span of device memory one core addresses: ~256 MB */
	double clock_ghz;               /* 1.0 (estimate) */
	uint32_t vec_elems_per_cycle;   /* vector (special-function) unit: 64 fp16 (estimate) */
	uint32_t transcendental_factor; /* cost multiplier of exp, log, tanh, ... (estimate) */
	uint32_t dma_setup_cycles;      /* fixed cost of one DMA descriptor (estimate) */
	uint32_t pe_simd_lanes; /* multiply-adds per PE per cycle, along K (estimate; optional) */
	struct spyre_hw_param params[SPYRE_HW_PARAMS_MAX]; /* one per key, in file order */
	size_t nparams;
};

/* Parses a description from YAML text; `origin` names it in errors ("file:line:col: ..."). */
int spyre_hw_parse(struct spyre_hw *out, const char *text, size_t len, const char *origin);
int spyre_hw_load_file(struct spyre_hw *out, const char *path);
/* The shipped description (built into the program). */
int spyre_hw_load_default(struct spyre_hw *out);
/* The same with the core count replaced (1..32); ERR_INVAL otherwise. */
int spyre_hw_set_cores(struct spyre_hw *hw, int cores);

/* Device-memory bytes per clock cycle (bandwidth / clock). */
double spyre_hw_dev_bytes_per_cycle(const struct spyre_hw *hw);

/* The modelled compute peak: fp16 FLOP per cycle of one core, and of the card (all `cores`) in
 * TFLOPS at clock_ghz. Both rest on estimates (pe_simd_lanes, clock_ghz). */
double spyre_hw_peak_flops_per_cycle(const struct spyre_hw *hw);
double spyre_hw_peak_tflops(const struct spyre_hw *hw);

/* The label of one key ("clock_ghz"), or NULL if the description has no such key. */
const struct spyre_hw_param *spyre_hw_param_find(const struct spyre_hw *hw, const char *key);

#endif
