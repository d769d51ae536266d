"""The runner's --trace (make bench TRACE=..., make count TRACE=...; docs/trace.md,
"Replay"), over a trace of test_replay.py's C program, recorded here:

- make bench TRACE="a b": each trace's cells, of the workload trace:NAME, for
  every strategy, alone or beside the WORKLOADS given; a trace that cannot be
  read or decoded, an empty one, a folder, two of one name, trace:NAME
  without its file: a message, exit 2, no folder;
- make count TRACE=FILE: a trace's cells counted under callgrind as every
  one-thread cell, the same figures from a file at another path and with
  another environment, and counts.json naming the trace by its digest."""
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_recorder import LINUX, ROOT  # noqa: E402
from test_replay import PROGRAM, build_recorder, record_program  # noqa: E402
from test_runner import ensure_cells, read_csv, run  # noqa: E402


class RecordedCalls(unittest.TestCase):
    """the cells built, and the C program's trace recorded in a folder of the class's own"""

    @classmethod
    def setUpClass(cls):
        ensure_cells()
        build_recorder()
        cls.tmp = tempfile.mkdtemp(prefix="am-runner-trace-")
        cls.trace = record_program(cls.tmp, "calls", PROGRAM)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)


@unittest.skipUnless(LINUX, "traces are recorded with an LD_PRELOAD library (Linux, glibc)")
class BenchTrace(RecordedCalls):
    """The runner's --trace (make bench TRACE=...): a trace is a workload of the run."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # the same calls under a second name: a second workload
        cls.other = os.path.join(cls.tmp, "again.trace")
        shutil.copyfile(cls.trace, cls.other)

    def bench(self, *args, out="run"):
        out = os.path.join(self.tmp, out)
        return run(["--allocators", "system,minimal", "--samples", "3", "--min-ms", "1", "--seed", "7",
                    "--revisits", "0", "--no-stats-tables", "--cpu", "none", "--out", out] + list(args)), out

    def test_each_trace_is_a_workload_of_every_strategy(self):
        p, out = self.bench("--trace", self.trace, "--trace", self.other, out="two")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        _, rows = read_csv(os.path.join(out, "summary.csv"))
        cells = sorted((r["workload"], r["strategy"], r["status"]) for r in rows)
        self.assertEqual(cells, [(w, s, "ok") for w in ("trace:again", "trace:calls") for s in ("minimal", "system")])
        # one trace, one inputs digest on every row
        for w in ("trace:again", "trace:calls"):
            self.assertEqual(len({r["inputs"] for r in rows if r["workload"] == w}), 1, w)
        with open(os.path.join(out, "meta.json")) as f:
            self.assertEqual(json.load(f)["workloads"], ["trace:calls", "trace:again"])
        self.assertIn("trace:calls", p.stdout)

    def test_workloads_add_to_the_traces(self):
        p, out = self.bench("--trace", self.trace, "--workloads", "alloc_pair", "--quick", out="beside")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        _, rows = read_csv(os.path.join(out, "summary.csv"))
        self.assertEqual(sorted({r["workload"] for r in rows}), ["alloc_pair", "trace:calls"])
        # a trace's samples last at least 2 ms (config.TRACE_MIN_MS), the others the run's 1 ms,
        # each calibrated to its own: twice as long, in one run on one host. Compared with each
        # other, not with a clock's figure: under make test's load a sample of 1.15 ms ran 1.61
        # (the command each cell is given: test_rounds.a_trace_cell_takes_longer_samples)
        _, samples = read_csv(os.path.join(out, "samples.csv"))
        middle = {}
        for workload in ("trace:calls", "alloc_pair"):
            ns = sorted(int(s[k]) for s in samples if s["workload"] == workload for k in ("ns", "partner_ns"))
            middle[workload] = ns[len(ns) // 2]
        self.assertGreater(middle["trace:calls"], 1.3 * middle["alloc_pair"], middle)
        with open(os.path.join(out, "meta.json")) as f:
            self.assertEqual(json.load(f)["trace_min_ms"], 2.0)

    def refused(self, args, *said):
        p, out = self.bench(*args, out="never")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        for s in said:
            self.assertIn(s, p.stderr)
        self.assertNotIn(" visits ", p.stdout)  # nothing measured
        self.assertFalse(os.path.exists(out), "bad input left a run folder")

    def test_bad_traces_are_refused_before_any_folder(self):
        missing = os.path.join(self.tmp, "missing.trace")
        empty = os.path.join(self.tmp, "empty.trace")
        open(empty, "w").close()
        text = os.path.join(self.tmp, "text.trace")
        with open(text, "w") as f:
            f.write("hello\n")
        folder = os.path.join(self.tmp, "folder.trace")
        os.makedirs(folder, exist_ok=True)
        twin = os.path.join(self.tmp, "twin")
        os.makedirs(twin, exist_ok=True)
        shutil.copyfile(self.trace, os.path.join(twin, "calls.trace"))
        for args, said in (
                (["--trace", missing], [missing, "cannot read"]),
                (["--trace", empty], [empty, "empty"]),
                (["--trace", text], [text, "not an allocmark trace"]),
                (["--trace", folder], [folder, "a folder"]),
                (["--trace", self.trace, "--trace", os.path.join(twin, "calls.trace")], ["'calls'", "rename"]),
                (["--workloads", "trace:nosuch"], ["trace:nosuch", "--trace"])):
            with self.subTest(said=said[-1]):
                self.refused(args, *said)

    def test_make_bench_passes_each_trace(self):
        # the runner refuses the first before anything is measured: a dry
        # look at what make hands it, through the real goal
        missing = os.path.join(self.tmp, "nosuch.trace")
        out = os.path.join(self.tmp, "from-make")
        env = dict(os.environ, AM_NO_INSTALL="1")
        for k in ("MAKEFLAGS", "MFLAGS"):
            env.pop(k, None)
        p = subprocess.run(["make", "--no-print-directory", "bench", "QUICK=1", "ALLOCATORS=system",
                            f"TRACE={self.trace} {self.other}", "OUT=" + out, "-n"],
                           cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"--trace '{self.trace}' --trace '{self.other}'", p.stdout)
        p = subprocess.run(["tools/make.sh", "bench", "QUICK=1", "ALLOCATORS=system", "TRACE=" + missing,
                            "OUT=" + out], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("cannot read", p.stderr)
        self.assertFalse(os.path.exists(out))


@unittest.skipUnless(LINUX and shutil.which("valgrind"), "needs the recorder (Linux, glibc) and valgrind")
class CountTrace(RecordedCalls):
    """make count TRACE=FILE: a trace counted like any one-thread cell."""

    def count(self, trace, out, env=None):
        out = os.path.join(self.tmp, out)
        p = run(["--count", "--allocators", "system,minimal", "--no-control", "--trace", trace, "--out", out],
                env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "counts.csv")) as f:
            text = f.read()
        with open(os.path.join(out, "counts.json")) as f:
            return text, json.load(f)

    def test_a_trace_is_counted_the_same_on_every_run(self):
        # the same file at a deeper path, counted with a longer environment:
        # the cell's stack, and so its addresses, must not see either
        deep = os.path.join(self.tmp, "a" * 60, "calls.trace")
        os.makedirs(os.path.dirname(deep))
        shutil.copyfile(self.trace, deep)
        text, meta = self.count(self.trace, "here")
        again, meta_again = self.count(deep, "there", env={"ALLOCMARK_TEST_PADDING": "x" * 300})
        rows = list(csv.DictReader(text.splitlines()))
        self.assertEqual(sorted((r["workload"], r["strategy"], r["status"]) for r in rows),
                         [("trace:calls", s, "ok") for s in ("minimal", "system")], text)
        for r in rows:
            self.assertGreater(float(r["instructions_per_op"]), 0, r)
        self.assertEqual(text, again)
        self.assertEqual(meta["traces"], meta_again["traces"])
        self.assertEqual(set(meta["traces"]), {"trace:calls"})
        with open(self.trace, "rb") as f:
            self.assertEqual(meta["traces"]["trace:calls"]["sha256"], hashlib.sha256(f.read()).hexdigest())

    def test_make_count_passes_each_trace(self):
        env = dict(os.environ)
        for k in ("MAKEFLAGS", "MFLAGS"):
            env.pop(k, None)
        p = subprocess.run(["make", "--no-print-directory", "-n", "count", "ALLOCATORS=system",
                            "TRACE=" + self.trace], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--count", p.stdout)
        self.assertIn(f"--trace '{self.trace}'", p.stdout)


if __name__ == "__main__":
    unittest.main()
