"""The scenarios modelled on OSRM (its mmap allocator, its query heap)
through the runner on a tiny matrix: mmap_pressure on mmap_file and system
(param 0 and 30 %: the run folder's tmp/ is handed to the cells as
AM_TMPDIR and gone afterwards, residency drops only for the file, the
slowdown table has a line per fraction), and query_heap on system and
tls_size_class (OSRM's benchmark lines and the table against system)."""
import csv
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_runner as tr  # noqa: E402
from test_regenerate import assert_regenerates  # noqa: E402
from runner import cell_process  # noqa: E402

ROWS = "system,mmap_file,tls_size_class"


def metrics(out):
    with open(os.path.join(out, "metrics.csv"), newline="") as f:
        return list(csv.DictReader(f))


class CellEnv(unittest.TestCase):
    def test_tmpdir_is_passed(self):
        self.assertEqual(cell_process.cell_env("/x/tmp")["AM_TMPDIR"], "/x/tmp")
        self.assertEqual(cell_process.cell_env(None).get("AM_TMPDIR"), os.environ.get("AM_TMPDIR"))


class Scenarios(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tr.ensure_cells(ROWS)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.mp = os.path.join(cls.tmp.name, "mp")
        cls.p = tr.run(["--allocators", "system,mmap_file", "--baseline", "system", "--workloads",
                        "mmap_pressure", "--sizes", "1", "--threads", "1", "--quick", "--samples", "3",
                        "--revisits", "0",
                        "--min-ms", "1", "--seed", "3", "--out", cls.mp, "--no-stats-tables"])
        cls.qh = os.path.join(cls.tmp.name, "qh")
        cls.q = tr.run(["--allocators", "system,tls_size_class", "--baseline", "system", "--workloads",
                        "query_heap", "--sizes", "400", "--quick", "--samples", "3", "--min-ms", "1", "--revisits", "0",
                        "--seed", "3", "--out", cls.qh, "--no-stats-tables"])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_regenerated_from_samples_the_files_are_the_same(self):
        for out in (self.mp, self.qh):  # the slowdown table, OSRM's benchmark lines
            assert_regenerates(self, out)

    def test_mmap_pressure_runs_and_removes_its_tmp(self):
        self.assertEqual(self.p.returncode, 0, self.p.stdout + self.p.stderr)
        _, rows = tr.read_csv(os.path.join(self.mp, "summary.csv"))
        got = sorted((r["strategy"], r["param"], r["status"]) for r in rows)
        self.assertEqual(got, [(s, p, "ok") for s in ("mmap_file", "system") for p in ("0", "30")])
        self.assertFalse(os.path.exists(os.path.join(self.mp, "tmp")))

    def test_residency_drops_for_the_file_only(self):
        res = {(m["strategy"], m["param"]): float(m["value"]) for m in metrics(self.mp)
               if m["metric"] == "resident_pct"}
        backed = {m["strategy"]: float(m["value"]) for m in metrics(self.mp) if m["metric"] == "file_backed"}
        self.assertEqual(backed, {"mmap_file": 1.0, "system": 0.0})
        self.assertEqual(res[("mmap_file", "0")], 100.0)
        self.assertEqual(res[("system", "0")], 100.0)
        self.assertLess(res[("mmap_file", "30")], 85.0)  # 30 % of the page runs went

    def test_slowdown_table(self):
        with open(os.path.join(self.mp, "tables.txt")) as f:
            text = f.read()
        self.assertIn("mmap_pressure slowdown against 0% evicted (size 1, threads 1)", text)
        lines = [line.split() for line in text.splitlines()]
        zero = [line for line in lines if line[:1] == ["0"] and "1.00x" in line]
        self.assertEqual(zero[0].count("1.00x"), 2)
        self.assertTrue(any(line[:1] == ["30"] for line in lines))

    def test_query_heap_benchmark_lines(self):
        self.assertEqual(self.q.returncode, 0, self.q.stdout + self.q.stderr)
        with open(os.path.join(self.qh, "tables.txt")) as f:
            text = f.read()
        for t in ("1", "2"):
            self.assertIn(f"query_heap benchmark lines (size 400, threads {t})", text)
        self.assertIn("query_heap against system (size 400)", text)
        mine = [x for x in text.splitlines() if x.strip().startswith("tls_size_class ")]
        # the table is split into parts of 100 columns: ops/s in one, the change against system in another
        self.assertTrue(any("\u00b1" in x for x in mine), mine)
        self.assertTrue(any(x.rstrip().endswith("%") for x in mine), mine)
        names = {m["metric"] for m in metrics(self.qh)}
        for n in ("latency_mean_ns", "latency_p50_ns", "latency_p95_ns", "latency_p99_ns"):
            self.assertIn(n, names)
        _, rows = tr.read_csv(os.path.join(self.qh, "summary.csv"))
        for r in rows:  # 50 queries a thread at this size
            self.assertEqual(float(r["ops_per_rep"]), 50 * int(r["threads"]))


if __name__ == "__main__":
    unittest.main()
