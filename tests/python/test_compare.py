"""Tests of runner/compare.py on synthetic run folders: cells matched across
runs, ratios to the first run from the visits, cells missing from a run
listed (never dropped), and bad folders refused with exit 2 naming the file.
The regression gate (--base): test_gate.py."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
COMPARE = [sys.executable, "-m", "runner.compare"]
sys.path.insert(0, HERE)
import synthetic_runs as syn  # noqa: E402

RUN_A = {
    ("gcc", "system", "thrash_pool", 10): syn.spread(100.0),
    ("gcc", "system", "thrash_pool", 1810): syn.spread(1000.0, step=0.1),
    ("gcc", "minimal", "thrash_pool", 10): syn.spread(40.0),
    ("gcc", "only-in-a", "thrash_pool", 10): syn.spread(70.0),
    ("gcc", "monotonic", "contention", 10): "skipped",
}
RUN_B = {
    ("gcc", "system", "thrash_pool", 10): syn.spread(150.0),           # 1.5x slower
    ("gcc", "system", "thrash_pool", 1810): syn.spread(990.0, step=0.1),  # the same, within noise
    ("gcc", "minimal", "thrash_pool", 10): None,                        # failed in B
    ("clang", "system", "thrash_pool", 10): syn.spread(90.0),         # compiler only in B
    ("gcc", "monotonic", "contention", 10): "skipped",                # does not apply, in both
}


def compare(args):
    return subprocess.run(COMPARE + args, cwd=ROOT, capture_output=True, text=True, timeout=60)


class TwoRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.a = syn.write_run(os.path.join(cls.tmp.name, "a"), RUN_A, ["gcc"], run_id="20240101-000000", host="alpha")
        cls.b = syn.write_run(os.path.join(cls.tmp.name, "b"), RUN_B, ["gcc", "clang"], run_id="20240202-000000",
                              host="beta")
        cls.out = os.path.join(cls.tmp.name, "cmp")
        cls.p = compare([cls.a, cls.b, "--out", cls.out])
        cls.header, cls.rows = syn.read_csv(os.path.join(cls.out, "compare.csv"))
        cls.by = {(r["compiler"], r["strategy"], r["size"], r["run"]): r for r in cls.rows}
        with open(os.path.join(cls.out, "compare.txt")) as f:
            cls.text = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_succeeds_and_writes_three_files(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        for name in ("compare.txt", "compare.md", "compare.csv"):
            self.assertGreater(os.path.getsize(os.path.join(self.out, name)), 0)
        self.assertFalse([f for f in os.listdir(self.out) if f.endswith(".tmp")])

    def test_csv_has_a_row_per_cell_and_run(self):
        self.assertEqual(self.header[:9], ["compiler", "strategy", "workload", "size", "threads", "param",
                                           "run", "label", "status"])
        cells = {(r["compiler"], r["strategy"], r["size"]) for r in self.rows}
        self.assertEqual(len(cells), 6)  # the union of both runs' cells
        self.assertEqual(len(self.rows), 12)

    def test_matched_cells_get_a_ratio_to_the_first_run(self):
        r = self.by[("gcc", "system", "10", "B")]
        self.assertEqual(r["status"], "ok")
        self.assertAlmostEqual(float(r["ratio"]), 1.5, places=6)
        self.assertGreater(float(r["ci_low"]), 1.0)
        self.assertEqual(r["significant"], "1")
        self.assertEqual(r["base"], "A")
        same = self.by[("gcc", "system", "1810", "B")]
        self.assertAlmostEqual(float(same["ratio"]), 0.99, places=6)
        self.assertEqual(same["significant"], "0")
        self.assertIn("~0.99", self.text)

    def test_labels_name_run_host_and_compiler(self):
        self.assertEqual(self.by[("gcc", "system", "10", "A")]["label"], "20240101-000000@alpha gcc 1.0 -O2")
        self.assertEqual(self.by[("gcc", "system", "10", "B")]["label"], "20240202-000000@beta gcc 1.0 -O2")
        self.assertIn("A 20240101-000000@alpha gcc 1.0 -O2", self.text)
        self.assertIn("B/A", self.text)

    def test_failed_and_missing_cells_have_no_ratio(self):
        failed = self.by[("gcc", "minimal", "10", "B")]
        self.assertEqual((failed["status"], failed["ratio"]), ("failed", ""))
        missing = self.by[("gcc", "only-in-a", "10", "B")]
        self.assertEqual((missing["status"], missing["median_ns_per_op"], missing["ratio"]), ("missing", "", ""))
        self.assertEqual(self.by[("clang", "system", "10", "A")]["status"], "missing")

    def test_skipped_cells_read_n_a_not_failed(self):
        table = self.text[self.text.index("== gcc: contention =="):]
        table = table[:table.index("\n\n")]
        self.assertRegex(table, r"monotonic\s+10\s+n/a\s+n/a\s+-")
        self.assertNotIn("failed", table)
        self.assertEqual(self.by[("gcc", "monotonic", "10", "B")]["status"], "skipped")

    def test_mismatches_are_listed_at_the_end(self):
        tail = self.text[self.text.index("Cells not in every run (2):"):]
        self.assertIn("gcc only-in-a thrash_pool size 10: only in A; missing from B", tail)
        self.assertIn("clang system thrash_pool size 10: only in B; missing from A", tail)
        # a failed cell is in both runs: shown in the table, not a mismatch
        self.assertNotIn("minimal", tail)
        with open(os.path.join(self.out, "compare.md")) as f:
            self.assertIn("## Cells not in every run (2):", f.read())

    def test_agreement_counts_cells_within_five_percent(self):
        # B has a ratio for two cells: 1.5 (out) and 0.99 (within 5%); failed
        # and missing cells are not counted
        self.assertIn("B: 1 of 2 cells (50%) have a median within 5% of A's (one thread 1 of 2)", self.text)
        self.assertIn("thrash_pool 1/2", self.text)

    def test_identical_runs_have_no_mismatch(self):
        out = os.path.join(self.tmp.name, "same")
        p = compare([self.a, self.a, "--out", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Every cell is in every run.", p.stdout)
        self.assertIn("@alpha#2", p.stdout)  # the same run twice keeps two labels


class AgreementSplit(unittest.TestCase):
    """Cells with several threads are counted apart: they run on every CPU."""

    def test_one_thread_and_several_threads_are_counted_apart(self):
        sys.path.insert(0, os.path.join(HERE, "..", ".."))
        from runner import compare as cmp

        def row(run, workload, threads, ratio):
            return ["gcc", "system", workload, 10, threads, 0, run, "", "ok", 1.0, "", ratio, "", "", ""]
        rows = [row("A", "w", 1, ""), row("B", "w", 1, 1.01), row("B", "w", 1, 1.2),
                row("B", "c", 2, 1.5), row("B", "c", 2, 0.97), row("B", "c", 4, 1.3)]
        within, n, per, kind = cmp.agreement(rows, ["A", "B"])["B"]
        self.assertEqual((within, n), (2, 5))
        self.assertEqual(per, {"w": (1, 2), "c": (1, 3)})
        self.assertEqual(kind, {"one thread": (1, 2), "several threads": (1, 3)})


class RatioAgreement(unittest.TestCase):
    """A run on a machine that is slower all over disagrees on every median and
    agrees on every ratio; a ratio that moved is counted out."""

    def test_ratios_to_the_baseline_are_compared_apart_from_the_medians(self):
        a = {("gcc", s, "thrash_pool", 10): syn.spread(v) for s, v in
             (("monotonic", 100.0), ("system", 150.0), ("fast_pool", 90.0), ("pool", 400.0))}
        b = {k: syn.spread(v[4] * 1.5) for k, v in a.items()}  # everything 1.5x slower
        b[("gcc", "pool", "thrash_pool", 10)] = syn.spread(400.0 * 1.5 * 1.2)  # and pool 1.2x more
        with tempfile.TemporaryDirectory() as tmp:
            ra = syn.write_run(os.path.join(tmp, "a"), a, ["gcc"], baseline="monotonic")
            rb = syn.write_run(os.path.join(tmp, "b"), b, ["gcc"], baseline="monotonic")
            p = compare([ra, rb, "--out", os.path.join(tmp, "cmp")])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("B: 0 of 4 cells (0%) have a median within 5% of A's", p.stdout)
        self.assertIn("B: 2 of 3 ratios to monotonic (67%) are within 5% of A's (one thread 2 of 3)", p.stdout)


class BadInput(unittest.TestCase):
    def test_folder_without_summary_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            good = syn.write_run(os.path.join(tmp, "good"), RUN_A, ["gcc"])
            empty = os.path.join(tmp, "empty")
            os.makedirs(empty)
            out = os.path.join(tmp, "cmp")
            p = compare([good, empty, "--out", out])
            self.assertEqual(p.returncode, 2)
            self.assertIn(os.path.join(empty, "summary.csv"), p.stderr)
            self.assertFalse(os.path.exists(out))

    def test_folder_without_samples_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            good = syn.write_run(os.path.join(tmp, "good"), RUN_A, ["gcc"])
            other = syn.write_run(os.path.join(tmp, "other"), RUN_B, ["gcc"])
            os.remove(os.path.join(other, "samples.csv"))
            p = compare([good, other, "--out", os.path.join(tmp, "cmp")])
            self.assertEqual(p.returncode, 2)
            self.assertIn(os.path.join(other, "samples.csv"), p.stderr)

    def test_not_a_folder_and_too_few_runs(self):
        p = compare(["/nonexistent/run-x", "/nonexistent/run-y"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("/nonexistent/run-x", p.stderr)
        p = compare([])
        self.assertEqual(p.returncode, 2)
        self.assertIn("at least two", p.stderr)


if __name__ == "__main__":
    unittest.main()
