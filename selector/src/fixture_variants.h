/* The generated upstream's test file of test variants and its ground truth
 * (fixture_variants.c). */
#ifndef SELECTOR_FIXTURE_VARIANTS_H
#define SELECTOR_FIXTURE_VARIANTS_H

#include "fixture_int.h"

/* The op whose entry has a second one with a variant_test_name, or FX_NONE (basic shapes). */
uint32_t fixture__variant_op(const struct fx_gen *g);
/* .ground_truth/opinfos.jsonl with the variant entry (fixture_opinfo.c). */
int fixture__write_opinfos_truth(struct fx_gen *g, const char *dir);
/* Appends that second entry to op database file `file`'s op_db list (file 0 only). */
int fixture__render_variant_entry(struct fx_gen *g, uint32_t file);
/* Writes test/test_op_variants.py into the tree (all shapes only). */
int fixture__write_variants_file(struct fx_gen *g);
/* The tests of that file (0 with basic shapes), as tests.jsonl counts them. */
uint32_t fixture__variants_tests(const struct fx_gen *g);
/* Writes DIR/.ground_truth/variants.jsonl and appends the file's tests to tests.jsonl. */
int fixture__write_variants_truth(struct fx_gen *g, const char *dir);

#endif
