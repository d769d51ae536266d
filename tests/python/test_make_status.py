"""What reaches the caller of make. GNU make exits 2 whenever a recipe fails,
whatever the recipe's own status, so the goals with statuses of their own
(bench, compare, hyperfine, report, plots) record them, and tools/make.sh
exits with them: a gate that found a moved cell (1), a run it cannot judge
(3), bad input (2); a bench whose every cell failed (3) or whose run folder
filled up (4). docs/bench.md: Exit statuses through make."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import resource
except ImportError:  # Windows
    resource = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MAKE_SH = os.path.join(ROOT, "tools", "make.sh")
sys.path.insert(0, HERE)
import synthetic_runs as syn  # noqa: E402
from test_gate import gate_runs  # noqa: E402

# the rows make bench ALLOCATORS=system measures: the row and the baseline (no
# A/A control: its twin monotonic is not measured)
BENCH_ROWS = "system,minimal"
QUICK_BENCH = ["bench", "QUICK=1", "ALLOCATORS=system", "WORKLOADS=list_dupe", "CPU=none"]


def make(args, wrapper=True, **kw):
    env = dict(os.environ, AM_NO_INSTALL="1")
    for k in ("MAKEFLAGS", "MFLAGS", "AM_STATUS_FILE"):
        env.pop(k, None)
    env.update(kw.pop("env", {}))
    cmd = ([MAKE_SH] if wrapper else ["make"]) + ["--no-print-directory"] + args
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600, **kw)


class Compare(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.a, cls.b = gate_runs(cls.tmp.name, regression=1.25)
        cls.same = gate_runs(os.path.join(cls.tmp.name, "same"))[1]  # a run of the same code
        cls.empty = syn.write_run(os.path.join(cls.tmp.name, "empty"), {}, ["gcc"], baseline="monotonic")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def compare(self, base, runs, wrapper=True):
        out = os.path.join(self.tmp.name, "cmp")
        shutil.rmtree(out, ignore_errors=True)
        return make(["compare", "BASE=" + base, "RUNS=" + runs, "OUT=" + out], wrapper)

    def test_a_moved_cell_is_1(self):
        p = self.compare(self.a, self.b)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("1 cell(s) moved", p.stderr)

    def test_no_moved_cell_is_0(self):
        p = self.compare(os.path.join(self.tmp.name, "same", "a"), self.same)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_a_run_that_cannot_be_judged_is_3(self):
        p = self.compare(self.a, self.empty)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("cannot be judged", p.stderr)

    def test_bad_input_is_2(self):
        p = self.compare(self.a, os.path.join(self.tmp.name, "no-such-run"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("no-such-run", p.stderr)

    def test_make_alone_exits_2_and_names_the_status(self):
        p = self.compare(self.a, self.b, wrapper=False)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("Error 1", p.stderr)


class Bench(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        p = make(["-j2", "cells", "ALLOCATORS=" + BENCH_ROWS], wrapper=False)
        if p.returncode:
            raise unittest.SkipTest("cannot build the cells: " + p.stderr[-500:])

    def test_every_cell_failed_is_3(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            p = make(QUICK_BENCH + ["OUT=" + out, "BENCH_FLAGS=--timeout 0.000001"])
            self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
            self.assertIn("(2 failed)", p.stdout)  # system and the baseline

    @unittest.skipIf(resource is None, "needs setrlimit (POSIX)")
    def test_a_full_disk_is_4(self):
        # the disk fills up for the runner alone (a file-size limit of 512 bytes, as in
        # test_results_kept.FullDisk), so that make's checks and builds still write; its
        # `git status` (meta.json) must not try to rewrite the repository's index under that limit
        with tempfile.TemporaryDirectory() as tmp:
            shim = os.path.join(tmp, "python")
            with open(shim, "w") as f:
                f.write("#!/bin/sh\ncase \"$1 $2\" in '-m runner.allocmark')\n"
                        "  export GIT_OPTIONAL_LOCKS=0; trap '' XFSZ; ulimit -f 1;;\nesac\n"
                        f"exec '{sys.executable}' \"$@\"\n")
            os.chmod(shim, 0o755)
            out = os.path.join(tmp, "run")
            p = make(QUICK_BENCH + ["OUT=" + out, "SAMPLES=3", "ROUNDS=1", "PYTHON=" + shim], env={"TMPDIR": tmp})
            self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
            self.assertIn("could not be written", p.stdout)

    @unittest.skipIf(resource is None, "needs setrlimit (POSIX)")
    def test_a_report_that_cannot_be_written_is_4(self):
        # the run is written whole; the disk fills for the report alone (report.html cannot be written)
        with tempfile.TemporaryDirectory() as tmp:
            shim = os.path.join(tmp, "python")
            with open(shim, "w") as f:
                f.write(f"#!/bin/sh\ncase \"$1 $2\" in '-m report.report') trap '' XFSZ; ulimit -f 1;; esac\n"
                        f"exec '{sys.executable}' \"$@\"\n")
            os.chmod(shim, 0o755)
            out = os.path.join(tmp, "run")
            p = make(QUICK_BENCH + ["OUT=" + out, "SAMPLES=3", "ROUNDS=1", "PYTHON=" + shim],
                     env={"TMPDIR": tmp, "GNUPLOT": os.path.join(tmp, "no-gnuplot")})
            self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
            self.assertTrue(os.path.exists(os.path.join(out, "summary.csv")))
            self.assertFalse(os.path.exists(os.path.join(out, "report.html")))

    def test_bad_input_is_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            p = make(QUICK_BENCH[:-2] + ["WORKLOADS=no_such_workload", "OUT=" + out])
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("no_such_workload", p.stderr)
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
