/* The shipped specs (testspecs/specs/, every .yaml): every op they name (global.supported_ops,
 * edits.ops.include/exclude, kernels[].op) maps through the op table to an op of the emulator,
 * and every file is a test_suite_config document. Read with libyaml's document API so that
 * this check does not depend on the loader it would be checking. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "spyre-emu/ops.h"
#include "testspecs/cases.h"

static const char *scalar(yaml_document_t *doc, yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static size_t checked;

static void check_op(const char *file, const char *op, int line)
{
	/* an exclude of a prefix ("nn.functional") names no single op: skip those */
	const struct spec_op_map *m = testspecs_opmap_find(op);
	cr_expect(m != NULL, "%s:%d: op %s has no row in the op table", file, line, op);
	if (m)
		cr_expect(spyre_op_find(m->emu) != NULL, "%s:%d: %s -> %s not in the emulator",
			  file, line, op, m->emu);
	checked++;
}

/* Ops are the scalars of `supported_ops`, `include`/`exclude` under `ops`, and `op`. */
static void walk(yaml_document_t *doc, yaml_node_t *n, const char *file, const char *key,
		 const char *parent, int depth)
{
	if (!n || depth > 64)
		return;
	if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			yaml_node_t *c = yaml_document_get_node(doc, *it);
			bool oplist = key && (strcmp(key, "supported_ops") == 0 ||
					      (parent && strcmp(parent, "ops") == 0));
			if (oplist && c->type == YAML_SCALAR_NODE)
				check_op(file, scalar(doc, c), (int)c->start_mark.line + 1);
			walk(doc, c, file, oplist ? "#op-item" : key, parent, depth + 1);
		}
	} else if (n->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			const char *k = scalar(doc, yaml_document_get_node(doc, p->key));
			yaml_node_t *v = yaml_document_get_node(doc, p->value);
			if (!k)
				continue;
			if (key && strcmp(key, "#op-item") == 0 && strcmp(k, "name") == 0)
				check_op(file, scalar(doc, v), (int)v->start_mark.line + 1);
			if (strcmp(k, "op") == 0 && v->type == YAML_SCALAR_NODE)
				check_op(file, scalar(doc, v), (int)v->start_mark.line + 1);
			if (strcmp(k, "dtypes") == 0 || strcmp(k, "sample_inputs_func") == 0)
				continue;
			walk(doc, v, file, k, key, depth + 1);
		}
	}
}

Test(shipped, every_op_exists_in_the_emulator)
{
	DIR *d = opendir(TESTSPECS_SPECS_DIR);
	cr_assert_not_null(d, "%s", TESTSPECS_SPECS_DIR);
	struct dirent *de;
	size_t files = 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", TESTSPECS_SPECS_DIR, de->d_name);
		FILE *f = fopen(path, "rb");
		cr_assert_not_null(f, "%s", path);
		yaml_parser_t parser;
		yaml_document_t doc;
		yaml_parser_initialize(&parser);
		yaml_parser_set_input_file(&parser, f);
		cr_assert(yaml_parser_load(&parser, &doc), "%s: %s", path, parser.problem);
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		cr_assert(root && root->type == YAML_MAPPING_NODE, "%s", path);
		const char *k =
		    scalar(&doc, yaml_document_get_node(&doc, root->data.mapping.pairs.start->key));
		cr_expect_str_eq(k, "test_suite_config", "%s", path);
		walk(&doc, root, de->d_name, NULL, NULL, 0);
		yaml_document_delete(&doc);
		yaml_parser_delete(&parser);
		fclose(f);
		files++;
	}
	closedir(d);
	cr_assert_geq(files, 6, "shipped spec files: %zu", files);
	cr_assert_geq(checked, 40, "ops checked: %zu", checked);
}
