"""The workload suites, read from a real cell:

- `--list` gives every workload a `suite`: "default" for the workloads above
  the first AM_SUITE line of workloads/workloads.def, else the suite of the
  last such line above it ("dimensions");
- the dimensions suite's workloads whose work depends on the seed or the param
  (churn_traverse's churn, size_mix's sizes) run the same inputs on two rows
  and at two repetition counts: the "inputs" digest is equal.
Builds the rows it runs (make cells)."""
import json
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD, ROOT, ensure_cells  # noqa: E402
from test_cell_output import cell  # noqa: E402

ROWS = "system,monotonic"


def suites_in_def():
    """{workload: suite} as workloads.def declares them"""
    with open(os.path.join(ROOT, "workloads", "workloads.def")) as f:
        text = f.read()
    suite, out = "default", {}
    for m in re.finditer(r"^AM_(WORKLOAD|SUITE)\((\w+)\)", text, re.M):
        if m.group(1) == "SUITE":
            suite = m.group(2)
        else:
            out[m.group(2)] = suite
    return out


class Suites(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells(ROWS)

    def test_list_names_each_workload_s_suite(self):
        out = subprocess.run([os.path.join(BUILD, "bin", "am-cell-system"), "--list"], capture_output=True,
                             text=True, check=True).stdout
        listed = {w["name"]: w.get("suite") for w in json.loads(out)["workloads"]}
        want = suites_in_def()
        self.assertEqual(listed, want)
        self.assertEqual(listed["thrash_pool"], "default")
        self.assertEqual(listed["mmap_pressure"], "default")
        for name in ("churn_traverse", "utilization", "size_mix", "vector_of_lists", "map_of_vectors",
                     "list_create_drop", "vector_of_lists_drop", "producer_consumer"):
            self.assertEqual(listed.get(name), "dimensions", name)

    def test_rows_run_the_same_inputs(self):
        for workload, size, param in (("churn_traverse", 4096, 1), ("size_mix", 1000, 3), ("utilization", 1024, 0)):
            with self.subTest(workload=workload):
                digests = set()
                for row, reps in (("system", 4), ("monotonic", 4), ("monotonic", 12)):
                    rc, line = cell(row, workload, size, "--param", param, "--reps", reps)
                    self.assertEqual(rc, 0, line)
                    self.assertEqual(line["status"], "ok")
                    digests.add(line["inputs"])
                self.assertEqual(len(digests), 1, digests)


if __name__ == "__main__":
    unittest.main()
