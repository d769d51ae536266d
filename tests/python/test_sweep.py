"""The runner's threads x param sweep on a tiny matrix (pool, fast_pool and minimal,
the contention workload, QUICK's corner: threads 1 and 2, param 0 and 500):
one cell per (threads, param), fast_pool skipped where two threads would race
on its shared pools, the tables' lines per (threads, param) with n/a, the
derived table against pool, and the counting table file. Also the thread
sweep's shape for a few CPU counts."""
import csv
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_runner as tr  # noqa: E402
from test_regenerate import assert_regenerates  # noqa: E402
from runner import matrix  # noqa: E402

ROWS = "pool,fast_pool,minimal"


class ThreadSweep(unittest.TestCase):
    def test_powers_of_two_then_one_past(self):
        self.assertEqual(matrix.thread_sweep(1), [1, 2])
        self.assertEqual(matrix.thread_sweep(2), [1, 2, 4])
        self.assertEqual(matrix.thread_sweep(6), [1, 2, 4, 6, 8])

    def test_choices(self):
        w = {"threaded": 1, "thread_sweep": 1, "params": [0, 100, 500], "quick_params": [0, 500]}
        self.assertEqual(matrix.choose_threads(w, None, 2, True), [1, 2])
        self.assertEqual(matrix.choose_threads(w, 3, 2, False), [3])
        self.assertEqual(matrix.choose_params(w, None, True), [0.0, 500.0])
        self.assertEqual(matrix.choose_params(w, None, False), [0.0, 100.0, 500.0])
        self.assertEqual(matrix.choose_params(w, 7, False), [7.0])
        plain = {"threaded": 0}
        self.assertEqual(matrix.choose_threads(plain, 4, 2, False), [1])
        self.assertEqual(matrix.choose_params(plain, None, False), [0.0])
        self.assertEqual(matrix.choose_params({"params": [4, 1]}, None, True), [4.0])  # no quick_params: the first


class Sweep(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tr.ensure_cells(ROWS)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run")
        cls.p = tr.run(["--allocators", ROWS, "--baseline", "pool", "--workloads", "contention",
                        "--sizes", "3000", "--quick", "--samples", "3", "--min-ms", "1", "--seed", "3",
                        "--revisits", "0",
                        "--out", cls.out])
        with open(os.path.join(cls.out, "summary.csv"), newline="") as f:
            cls.rows = list(csv.DictReader(f))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_regenerated_from_samples_the_files_are_the_same(self):
        assert_regenerates(self, self.out)

    def test_one_cell_per_threads_and_param(self):
        self.assertEqual(self.p.returncode, 0, self.p.stdout + self.p.stderr)
        got = sorted((r["strategy"], r["threads"], r["param"]) for r in self.rows)
        want = sorted((s, t, p) for s in ROWS.split(",") for t in ("1", "2") for p in ("0", "500"))
        self.assertEqual(got, want)

    def test_fast_pool_is_skipped_only_with_two_threads(self):
        for r in self.rows:
            if r["strategy"] == "fast_pool" and r["threads"] == "2":
                self.assertEqual(r["status"], "skipped")
                self.assertIn("not safe", r["reason"])
            else:
                self.assertEqual(r["status"], "ok", r)
                # ops = threads x iterations: 3000 at W=0, 3000 x 25 / 500 = 150 at W=500
                iters = 3000 if r["param"] == "0" else 150
                self.assertEqual(float(r["ops_per_rep"]), int(r["threads"]) * iters)

    def test_calibration_is_recorded_and_shared(self):
        # the first cell of a param measures the loop's rate; every cell of
        # that param, whatever its row or threads, runs its loop count
        with open(os.path.join(self.out, "metrics.csv"), newline="") as f:
            m = list(csv.DictReader(f))
        rates = [r for r in m if r["metric"] == "work_loop_per_ns"]
        self.assertTrue(rates and all(float(r["value"]) > 0 for r in rates))
        loops = {}
        for r in m:
            if r["metric"] == "work_loops":
                loops.setdefault(r["param"], set()).add(r["value"])
        self.assertEqual(sum(1 for r in m if r["metric"] == "work_loops"), 10)  # the 10 ok cells
        self.assertEqual({p: len(v) for p, v in loops.items()}, {"0": 1, "500": 1}, loops)

    def test_tables_have_a_block_per_threads_and_param(self):
        with open(os.path.join(self.out, "tables.txt")) as f:
            text = f.read()
        for title in ("contention size 3000 ==", "contention size 3000 (param 500) ==",
                      "contention size 3000 (threads 2) ==", "contention size 3000 (threads 2, param 500) =="):
            self.assertIn(title, text)
        block = text.split("contention size 3000 (threads 2) ==")[1].split("\n\n")[0]
        self.assertIn("n/a", block)
        self.assertIn("contention against pool (size 3000)", text)
        self.assertIn("fast_pool/pool (own heaps)", text)

    def test_counting_table_file(self):
        path = os.path.join(self.out, "stats-pool-contention-3000.txt")
        with open(path) as f:
            text = f.read()
        self.assertIn("| Bytes Allocated| -delta-| Max Bytes Allocated|", text)
        self.assertIn("      thread-0 ", text)
        self.assertIn("      thread-1 ", text)
        self.assertNotIn("{", text)


if __name__ == "__main__":
    unittest.main()
