#!/usr/bin/env python3
"""Self-test of opdb_truth.py: runs it on the fake PyTorch tree tests/fixtures/opdb_truth/ (our
own few lines) and checks the JSON it writes, then once more on a copy whose op_db has a broken
entry, to check that a failing list literal is rebuilt element by element and the failure is
recorded. Standard library only; exits non-zero on any failure.

  python3 tests/tools/opdb_truth_selftest.py      (or: opdb_truth.py --selftest)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "opdb_truth.py")
FIXTURE = os.path.join(HERE, "..", "fixtures", "opdb_truth")
CMI = os.path.join("torch", "testing", "_internal", "common_methods_invocations.py")
TEST = os.path.join("test", "test_fake.py")


def run_tool(root, out):
    proc = subprocess.run([sys.executable, TOOL, "--root", root, "--out", out],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"opdb_truth failed ({proc.returncode}):\n{proc.stderr}")
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def line_of(path, text):
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return i
    raise AssertionError(f"{text!r} not in {path}")


ALL_AND_BOOL = sorted(["float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"])


class FakeTree(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="opdb_truth_selftest.")
        cls.out = run_tool(FIXTURE, os.path.join(cls.tmp, "a.json"))
        cls.cmi = os.path.join(FIXTURE, CMI)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def entry(self, name):
        found = [e for e in self.out["entries"] if e["name"] == name]
        self.assertEqual(len(found), 1, name)
        return found[0]

    def test_no_errors(self):
        self.assertEqual(self.out["errors"], [])

    def test_entries(self):
        e = self.out["entries"]
        self.assertEqual([(x["class"], x["name"], x["variant_test_name"]) for x in e], [
            ("UnaryLikeInfo", "neg", ""), ("UnaryLikeInfo", "abs", ""),
            ("OpInfo", "add", ""), ("OpInfo", "sum", "dim")])
        for x in e:
            self.assertEqual(x["file"], CMI)
            self.assertEqual(x["module_statement"], [CMI, x["line"]])   # made directly
        self.assertEqual(self.entry("neg")["line"], line_of(self.cmi, "UnaryLikeInfo('neg'"))
        self.assertEqual(self.entry("abs")["line"], line_of(self.cmi, "UnaryLikeInfo(\n"))
        self.assertEqual(self.entry("sum")["line"], line_of(self.cmi, "OpInfo('sum'"))

    def test_entry_fields(self):
        neg, abs_, add, sum_ = (self.entry(n) for n in ("neg", "abs", "add", "sum"))
        self.assertEqual(neg["dtypes"], ["float32", "float64"])     # UnaryLikeInfo's default
        self.assertEqual(abs_["dtypes"], ALL_AND_BOOL)
        self.assertEqual(add["dtypes"], sorted(["float32", "float64", "uint8", "int8", "int16",
                                                "int32", "int64", "float16"]))
        self.assertEqual(abs_["aliases"], ["absolute"])
        self.assertEqual(sum_["aten_name"], "sum_dim")
        self.assertEqual(add["aten_name"], "add")
        self.assertEqual(sum_["formatted_name"], "sum_dim")
        # neg's ref is numpy's (a stub), abs gets UnaryLikeInfo's default ref, OpInfo has none.
        self.assertEqual([x["has_ref"] for x in (neg, abs_, add, sum_)],
                         [True, True, False, False])
        self.assertEqual(neg["sample_inputs_func"], "sample_inputs_plain")
        self.assertIsNone(neg["reference_inputs_func"])
        self.assertEqual(add["ctor"], {"positional": 1, "keywords": ["dtypes", "supports_out"]})
        self.assertEqual(sum_["ctor"]["keywords"], ["aten_name", "dtypes", "variant_test_name"])

    def test_lists(self):
        lists = self.out["lists"]
        self.assertEqual(lists["op_db"], [["neg", ""], ["abs", ""], ["add", ""], ["sum", "dim"]])
        self.assertEqual(lists["unary_like"], [["neg", ""], ["abs", ""]])
        self.assertEqual(lists["with_ref"], [["neg", ""], ["abs", ""]])
        self.assertEqual(self.out["list_entries"]["unary_like"], [0, 1])
        self.assertNotIn("test/test_fake.py:unary_like", lists)    # imported, not built there

    def test_ops_tests(self):
        t = self.out["ops_tests"]
        self.assertEqual(sorted(t), ["test/test_fake.py::TestFake::test_out",
                                     "test/test_fake.py::TestFake::test_unary"])
        unary = t["test/test_fake.py::TestFake::test_unary"]
        self.assertEqual(unary["ops"], [["neg", ""], ["abs", ""]])
        self.assertEqual(unary["dtypes_mode"], "supported")
        self.assertIsNone(unary["allowed_dtypes"])
        self.assertEqual(unary["instantiated"], {"neg": ["float32", "float64"],
                                                 "abs": ALL_AND_BOOL})
        self.assertTrue(unary["cpu_instantiated"])
        self.assertIs(unary["stub_dependent"], False)
        self.assertEqual(unary["line"], line_of(os.path.join(FIXTURE, TEST), "@ops(unary_like)"))

        out = t["test/test_fake.py::TestFake::test_out"]
        self.assertEqual(out["ops"], [["neg", ""], ["abs", ""], ["sum", "dim"]])   # add filtered
        self.assertEqual(out["op_entries"], [0, 1, 3])
        self.assertEqual(out["allowed_dtypes"], ["bool", "float16", "float32"])
        self.assertEqual(out["instantiated"], {"neg": ["float32"], "abs": ["bool", "float32"],
                                               "sum_dim": ["float32"]})

    def test_plain_and_instantiations(self):
        self.assertEqual(self.out["plain_tests"], {"test/test_fake.py::TestFake": ["test_plain"]})
        self.assertEqual(self.out["instantiations"],
                         {"test/test_fake.py::TestFake": [{"kind": "device", "kwargs": {}}]})
        self.assertEqual(self.out["test_files"]["test/test_fake.py"]["ops_tests"], 2)

    def test_deterministic(self):
        again = run_tool(FIXTURE, os.path.join(self.tmp, "b.json"))
        self.assertEqual(again, self.out)


class BrokenEntry(unittest.TestCase):
    """An entry whose constructor fails costs that entry only, and is recorded."""

    def test_broken_entry(self):
        tmp = tempfile.mkdtemp(prefix="opdb_truth_selftest.")
        try:
            root = os.path.join(tmp, "tree")
            shutil.copytree(FIXTURE, root)
            cmi = os.path.join(root, CMI)
            with open(cmi, encoding="utf-8") as f:
                text = f.read()
            text = text.replace("    OpInfo('add',", "    OpInfo('broken'),  # no dtypes\n"
                                "    OpInfo('add',")
            with open(cmi, "w", encoding="utf-8") as f:
                f.write(text)
            out = run_tool(root, os.path.join(tmp, "c.json"))
            self.assertEqual(out["lists"]["op_db"],
                             [["neg", ""], ["abs", ""], ["add", ""], ["sum", "dim"]])
            self.assertEqual(len(out["entries"]), 4)        # the failed attempt is dropped
            where = sorted((e["where"], e["line"]) for e in out["errors"])
            self.assertEqual(where, [("list element skipped", line_of(cmi, "'broken'")),
                                     ("list rebuilt element by element",
                                      line_of(cmi, "op_db = ["))])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
