"""What a cell's JSON line says about the experiment it ran, on real cells:

- every row of a block runs the same inputs whatever its repetition count:
  the "inputs" digest is equal for two rows and for one row at two forced
  --reps, and so is the oracle's checksum of the seed cycle ("expect"),
  which the old seeding (repetition r ran seed + r) made depend on the count;
- a workload of random values cycles through enough seeds that a cycle is
  not learnt by the branch predictor (AM_CYCLE_OPS operations);
- a later round given the first round's --reps and --expect reports the same
  inputs, and a wrong --expect fails it;
- every sample carries its minor and major page faults; glibc's trimming
  after a bulk free makes the system row fault on every repetition of
  alloc_bulk 256;
- contention's work loop count can be given (--work-loops), and two rows
  given the same count run the same inputs.
Builds the rows it runs (make cells)."""
import json
import os
import platform
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD, ensure_cells  # noqa: E402

ROWS = "system,minimal,monotonic,pool"


def cell(row, workload, size, *extra, env=None):
    exe = os.path.join(BUILD, "bin", "am-cell-" + row)
    cmd = [exe, "--workload", workload, "--size", str(size), "--seed", "5", "--samples", "2",
           "--min-ms", "1"] + [str(e) for e in extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    lines = p.stdout.strip().splitlines()
    return p.returncode, json.loads(lines[-1]) if lines else {}


class EqualInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells(ROWS)

    def test_one_row_at_two_repetition_counts(self):
        # thrash_pool draws the vector's length from the seed: the first 3
        # repetitions and the first 200 were different inputs
        for workload, size in (("thrash_pool", 1810), ("thrash_pool_sort", 910), ("map_erase", 210)):
            with self.subTest(workload=workload):
                rc1, few = cell("system", workload, size, "--reps", 3)
                rc2, many = cell("system", workload, size, "--reps", 200)
                self.assertEqual((rc1, rc2), (0, 0))
                self.assertEqual(few["expect"], many["expect"], "the oracle's checksum of the cycle differs")
                self.assertIsNotNone(few.get("inputs"))
                self.assertEqual(few["inputs"], many["inputs"])

    def test_two_rows_that_calibrate_differently(self):
        # pool's ordered free makes its repetitions many times slower than minimal's
        rc1, slow = cell("pool", "list_dupe", 1010)
        rc2, fast = cell("minimal", "list_dupe", 1010)
        self.assertEqual((rc1, rc2), (0, 0))
        self.assertEqual(slow["inputs"], fast["inputs"])
        rc1, slow = cell("pool", "thrash_pool_sort", 910)
        rc2, fast = cell("monotonic", "thrash_pool_sort", 910)
        self.assertEqual((rc1, rc2), (0, 0))
        self.assertEqual(slow["inputs"], fast["inputs"])

    def test_random_values_cycle_through_enough_seeds_not_to_be_learnt(self):
        # four lists of 1,010 random ints sorted in turn are learnt by the
        # branch predictor (3x faster after a few hundred repetitions); a
        # cycle of 65,536 values is not
        rc, out = cell("minimal", "thrash_pool_sort_list_int", 1010, "--reps", 3)
        self.assertEqual(rc, 0)
        self.assertGreaterEqual(out["seeds"] * out["ops_per_rep"], 65536)
        rc, small = cell("minimal", "thrash_pool_map_list_unaligned", 10, "--reps", 3)
        self.assertEqual(rc, 0)
        self.assertGreater(small["seeds"], 4)
        # a workload with one input keeps it
        rc, one = cell("minimal", "list_dupe", 1010, "--reps", 3)
        self.assertEqual((rc, one["seeds"]), (0, 1))

    def test_different_blocks_differ(self):
        _, a = cell("system", "thrash_pool", 1810, "--reps", 64)
        _, b = cell("system", "thrash_pool", 1010, "--reps", 64)
        self.assertNotEqual(a["inputs"], b["inputs"])

    def test_a_later_round_runs_the_first_round_s_inputs(self):
        rc, first = cell("monotonic", "map_erase", 810)
        self.assertEqual(rc, 0)
        rc, later = cell("monotonic", "map_erase", 810, "--reps", first["reps"], "--expect", first["expect"])
        self.assertEqual(rc, 0)
        self.assertEqual((later["inputs"], later["reps"], later["expect"]),
                         (first["inputs"], first["reps"], first["expect"]))
        rc, wrong = cell("monotonic", "map_erase", 810, "--reps", first["reps"], "--expect", first["expect"] + 1)
        self.assertEqual((rc, wrong["status"]), (4, "failed"))

    def test_contention_work_loops(self):
        rc1, a = cell("system", "contention", 2000, "--threads", 1, "--param", 500, "--work-loops", 300)
        rc2, b = cell("pool", "contention", 2000, "--threads", 1, "--param", 500, "--work-loops", 300)
        self.assertEqual((rc1, rc2), (0, 0))
        self.assertEqual(a["metrics"]["work_loops"], 300)
        self.assertNotIn("work_loop_per_ns", a["metrics"])  # nothing measured
        self.assertEqual(a["inputs"], b["inputs"])
        _, c = cell("system", "contention", 2000, "--threads", 1, "--param", 500, "--work-loops", 301)
        self.assertNotEqual(a["inputs"], c["inputs"])


class PageFaults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells(ROWS)

    def test_every_sample_has_its_faults(self):
        rc, out = cell("monotonic", "list_create", 210, "--samples", 4)
        self.assertEqual(rc, 0)
        for key in ("minor_faults", "major_faults"):
            self.assertEqual(len(out[key]), len(out["samples_ns"]), key)
            self.assertTrue(all(isinstance(v, int) and v >= 0 for v in out[key]), key)

    @unittest.skipUnless(platform.system() == "Linux" and platform.libc_ver()[0] == "glibc", "glibc's trimming")
    def test_glibc_trimming_shows(self):
        # 10,000 blocks of 256 bytes freed at once leave a top chunk above the
        # trim threshold: the heap shrinks, and the next repetition faults
        env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
        rc, out = cell("system", "alloc_bulk", 256, "--reps", 2, env=env)
        self.assertEqual(rc, 0)
        self.assertTrue(all(f > 100 for f in out["minor_faults"]), out["minor_faults"])


if __name__ == "__main__":
    unittest.main()
