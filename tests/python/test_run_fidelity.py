"""What a run records about the work its cells did, on real cells:

- every row of a block ran the same inputs (summary.csv's `inputs`): rows
  that calibrate very differently, and contention, whose W loop count the
  runner measures once and passes to every row;
- page faults: each sample's in samples.csv, per operation in summary.csv;
- the allocator variables of the user's shell (LD_PRELOAD, GLIBC_TUNABLES,
  MALLOC_* ...) are removed for the cells and recorded in meta.json; kept
  with --keep-allocator-env, a preloaded jemalloc then serves the system
  row, and the runner fails that cell, whose `malloc` is not the C library.
Builds the rows it runs (make cells)."""
import ctypes.util
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD, ensure_cells, read_csv, run  # noqa: E402

ROWS = "system,monotonic,pool"
BLOCK = ("compiler", "workload", "size", "threads", "param")


def jemalloc_file():
    """The jemalloc shared library's path, or None."""
    name = ctypes.util.find_library("jemalloc")
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"):
        if name and os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


@unittest.skipIf("mingw" in BUILD or not sys.platform.startswith("linux"), "runs Linux cells")
class RunFidelity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells(ROWS)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run")
        p = run(["--allocators", ROWS, "--workloads", "thrash_pool_sort,contention", "--sizes", "910,2000",
                 "--threads", "1", "--param", "500", "--samples", "3", "--rounds", "3", "--revisits", "0",
                 "--min-ms", "2", "--no-control", "--no-stats-tables", "--out", cls.out],
                env={"MALLOC_ARENA_MAX": "1", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}, timeout=300)
        if p.returncode != 0:
            raise AssertionError(f"run failed ({p.returncode}): {p.stdout[-2000:]} {p.stderr[-2000:]}")
        _, cls.summary = read_csv(os.path.join(cls.out, "summary.csv"))
        cls.sample_header, cls.samples = read_csv(os.path.join(cls.out, "samples.csv"))
        with open(os.path.join(cls.out, "meta.json")) as f:
            cls.meta = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_rows_of_a_block_ran_the_same_inputs(self):
        blocks = {}
        for e in self.summary:
            if e["status"] == "ok":
                blocks.setdefault(tuple(e[k] for k in BLOCK), {})[e["strategy"]] = e["inputs"]
        self.assertTrue(any(b[1] == "contention" for b in blocks), "no contention block ran")
        for block, inputs in blocks.items():
            with self.subTest(block=block):
                self.assertGreaterEqual(len(inputs), 2, inputs)
                self.assertRegex(next(iter(inputs.values())), r"^[0-9a-f]{16}$")
                self.assertEqual(len(set(inputs.values())), 1, f"rows ran different inputs: {inputs}")

    def test_page_faults_per_sample_and_per_op(self):
        self.assertIn("minor_faults", self.sample_header)
        self.assertTrue(all(s["minor_faults"] != "" and s["major_faults"] != "" for s in self.samples))
        for e in self.summary:
            if e["status"] == "ok":
                with self.subTest(cell=(e["strategy"], e["workload"])):
                    self.assertGreaterEqual(float(e["minor_faults_per_op"]), 0)
                    self.assertGreaterEqual(float(e["major_faults_per_op"]), 0)

    def test_allocator_variables_removed_and_recorded(self):
        cleared = self.meta["allocator_environment"]["cleared"]
        self.assertEqual(cleared.get("MALLOC_ARENA_MAX"), "1")
        self.assertIn("GLIBC_TUNABLES", cleared)
        self.assertEqual(self.meta["allocator_environment"]["kept"], {})
        system = [e for e in self.summary if e["strategy"] == "system"]
        self.assertTrue(system and all(e["malloc"].startswith("libc.") for e in system), system)


@unittest.skipIf("mingw" in BUILD or not sys.platform.startswith("linux"), "runs Linux cells")
class PreloadedMalloc(unittest.TestCase):
    def run_with_preload(self, *extra):
        lib = jemalloc_file()
        if not lib:
            self.skipTest("jemalloc is not installed (libjemalloc2)")
        ensure_cells("system,monotonic")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            p = run(["--allocators", "system,monotonic", "--workloads", "alloc_pair", "--sizes", "16",
                     "--samples", "3", "--rounds", "1", "--revisits", "0", "--min-ms", "1", "--no-control",
                     "--no-stats-tables", "--out", out] + list(extra), env={"LD_PRELOAD": lib})
            _, summary = read_csv(os.path.join(out, "summary.csv"))
            with open(os.path.join(out, "meta.json")) as f:
                meta = json.load(f)
        return p, {e["strategy"]: e for e in summary}, meta

    def test_removed_by_default(self):
        p, cells, meta = self.run_with_preload()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(cells["system"]["status"], "ok")
        self.assertTrue(cells["system"]["malloc"].startswith("libc."), cells["system"]["malloc"])
        self.assertIn("LD_PRELOAD", meta["allocator_environment"]["cleared"])

    def test_kept_preload_fails_the_system_row(self):
        p, cells, meta = self.run_with_preload("--keep-allocator-env")
        self.assertEqual(cells["system"]["status"], "failed")
        self.assertIn("libjemalloc", cells["system"]["reason"])
        self.assertIn("LD_PRELOAD", meta["allocator_environment"]["kept"])
        self.assertEqual(cells["monotonic"]["status"], "ok", "a strategy of its own is not a malloc row")


if __name__ == "__main__":
    unittest.main()
