"""The regression gate fails closed (compare --base): it answers 0 only when
every cell it was asked to judge was judged, from two finished, intact runs
that are not the same folder. A run killed, still being written or
interrupted (base or change), a run whose cells failed, one without
meta.json, a base given as its own change, a count base with no counted
cell, a sample time that is not positive, and an A/A control that moved are
each answered 3 (cannot be judged) or 2 (bad input), never 0 or 1."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import synthetic_runs as syn  # noqa: E402
from test_compare import compare  # noqa: E402
from test_gate import gate_runs  # noqa: E402


def edit_meta(folder, **changes):
    path = os.path.join(folder, "meta.json")
    with open(path) as f:
        meta = json.load(f)
    meta.update(changes)
    with open(path, "w") as f:
        json.dump(meta, f)


def dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def rewrite_samples(folder, change):
    """samples.csv of folder with change(row) applied to each line (a dict of its fields)."""
    header, rows = syn.read_csv(os.path.join(folder, "samples.csv"))
    _, summary = syn.read_csv(os.path.join(folder, "summary.csv"))
    for r in rows:
        change(r)
    syn.write_lines(folder, [[s[c] for c in syn.schema.SUMMARY_COLS] for s in summary],
                    [[r[c] for c in header] for r in rows])


class GateFailsClosed(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.a, self.b = gate_runs(self.tmp.name)
        self.out = os.path.join(self.tmp.name, "cmp")

    def tearDown(self):
        self.tmp.cleanup()

    def gate(self, base=None, run=None):
        return compare(["--base", base or self.a, run or self.b, "--out", self.out])

    def test_runs_of_the_same_code_pass(self):
        p = self.gate()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_a_killed_run_cannot_be_judged(self):
        # SIGKILL: meta.json says running, its runner is gone (and so is the lock)
        edit_meta(self.b, state="running", runner={"pid": dead_pid(), "host": socket.gethostname()})
        p = self.gate()
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("cannot be judged: the run died", p.stdout)

    def test_a_run_still_being_written_cannot_be_judged(self):
        me = {"pid": os.getpid(), "host": socket.gethostname()}
        edit_meta(self.b, state="running", runner=me)
        with open(os.path.join(self.b, ".allocmark-lock"), "w") as f:
            json.dump(me, f)
        p = self.gate()
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("cannot be judged: the run is still being written", p.stdout)

    def test_a_base_that_did_not_finish_cannot_be_judged(self):
        for meta, words in (({"state": "interrupted", "cells": {"planned": 48, "not_run": 12}},
                             "cannot be judged: the base was interrupted (12 of 48 cells not run)"),
                            ({"state": "running", "runner": {"pid": dead_pid(), "host": socket.gethostname()}},
                             "cannot be judged: the base died")):
            edit_meta(self.a, **meta)
            p = self.gate()
            self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
            self.assertIn(words, p.stdout)

    def test_a_run_whose_every_cell_failed_in_its_summary_cannot_be_judged(self):
        header, rows = syn.read_csv(os.path.join(self.b, "summary.csv"))
        for r in rows:
            r.update(status="failed", reason="crashed (SIGSEGV)", median_ns_per_op="")
        _, samples = syn.read_csv(os.path.join(self.b, "samples.csv"))  # intact
        syn.write_lines(self.b, [[r[c] for c in header] for r in rows],
                        [[s[c] for c in syn.schema.SAMPLE_COLS] for s in samples])
        p = self.gate()
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("36 cell(s) of the base could not be judged", p.stdout)
        self.assertIn("not judged: gcc system list_dupe 1810: failed (crashed (SIGSEGV))", p.stdout)

    def test_a_cell_failed_in_the_base_cannot_be_judged(self):
        header, rows = syn.read_csv(os.path.join(self.a, "summary.csv"))
        for r in rows:
            if (r["strategy"], r["workload"], r["size"]) == ("pool", "map_erase", "10"):
                r.update(status="failed", reason="timed out", median_ns_per_op="")
        _, samples = syn.read_csv(os.path.join(self.a, "samples.csv"))
        syn.write_lines(self.a, [[r[c] for c in header] for r in rows],
                        [[s[c] for c in syn.schema.SAMPLE_COLS] for s in samples])
        p = self.gate()
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("not judged: gcc pool map_erase 10: failed in the base (timed out)", p.stdout)

    def test_a_run_without_meta_json_is_bad_input(self):
        for folder in (self.b, self.a):
            os.rename(os.path.join(folder, "meta.json"), os.path.join(folder, "meta.json.away"))
            p = self.gate()
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(f"no meta.json in {folder}", p.stderr)
            self.assertFalse(os.path.exists(self.out))
            os.rename(os.path.join(folder, "meta.json.away"), os.path.join(folder, "meta.json"))

    def test_the_base_as_its_own_change_is_bad_input(self):
        link = os.path.join(self.tmp.name, "link")
        os.symlink(self.a, link)
        for run in (self.a, link, self.a + "/"):
            p = self.gate(run=run)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("the same folder", p.stderr)
            self.assertFalse(os.path.exists(self.out))

    def test_a_sample_time_not_above_zero_is_bad_input(self):
        for value in ("0", "-5"):
            shutil.rmtree(self.b)
            _, self.b = gate_runs(os.path.join(self.tmp.name, value))

            def spoil(r):
                if (r["strategy"], r["workload"], r["size"]) == ("system", "list_dupe", "1810"):
                    r.update(ns=value, ns_per_op=value)
            rewrite_samples(self.b, spoil)
            p = self.gate()
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("samples.csv: line", p.stderr)
            self.assertIn("not above zero", p.stderr)
            self.assertNotIn("Traceback", p.stderr)
            p = subprocess.run([sys.executable, "-m", "runner.allocmark", "--regenerate", self.b], cwd=ROOT,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertNotIn("Traceback", p.stderr)

    def test_a_moved_control_says_the_host_was_too_noisy(self):
        def slower(r):
            if (r["strategy"], r["workload"], r["size"]) == ("control", "map_erase", "1010"):
                r.update(ns=float(r["ns"]) * 1.3, ns_per_op=float(r["ns_per_op"]) * 1.3)
        rewrite_samples(self.b, slower)
        p = self.gate()
        self.assertIn("moved: gcc control map_erase 1010", p.stdout)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("cannot be judged: the A/A control control moved in 1 of 12 cells", p.stdout)
        self.assertIn("too noisy", p.stdout)


class CountGateFailsClosed(unittest.TestCase):
    """The gate on counts (counts.csv) judges what the base counted: a base that
    counted nothing, or a count run that did not finish, cannot be judged."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        src = os.path.join(ROOT, "docs", "reference-counts", "gcc")
        self.base, self.run_dir = os.path.join(self.tmp.name, "a"), os.path.join(self.tmp.name, "b")
        shutil.copytree(src, self.base)
        shutil.copytree(src, self.run_dir)

    def tearDown(self):
        self.tmp.cleanup()

    def gate(self):
        return compare(["--base", self.base, self.run_dir, "--out", os.path.join(self.tmp.name, "cmp")])

    def test_an_empty_base_cannot_be_judged(self):
        for folder in (self.base, self.run_dir):  # SHARD=7/1000 of a small matrix: no cell
            with open(os.path.join(folder, "counts.csv")) as f:
                header = f.readline()
            with open(os.path.join(folder, "counts.csv"), "w") as f:
                f.write(header)
        p = self.gate()
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("cannot be judged: the base has no counted cell", p.stdout)

    def test_an_interrupted_count_run_cannot_be_judged(self):
        for folder, who in ((self.run_dir, "the run"), (self.base, "the base")):
            edit_meta_counts(folder, status="interrupted")
            p = self.gate()
            self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
            self.assertIn(f"cannot be judged: {who} was interrupted", p.stdout)


def edit_meta_counts(folder, **changes):
    path = os.path.join(folder, "counts.json")
    with open(path) as f:
        meta = json.load(f)
    meta.update(changes)
    with open(path, "w") as f:
        json.dump(meta, f)


if __name__ == "__main__":
    unittest.main()
