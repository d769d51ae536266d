"""make preload: the program itself under each malloc library, held against
its replay.

- the comparison (runfolder/preload.py): a library faster in every round is
  the program's fastest group alone; the replay's fastest is found in it or
  not; Kendall's tau is 1 for the same order and -1 for the reverse; the
  replay's ratios come from ratios.csv's cells of the trace, over system's;
- the report shows the section, with the replay's ratios;
- make preload on a real program (Linux, hyperfine): a result file whose
  every library ran every round, and bad input refused with exit 2."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)
import fake_results  # noqa: E402
from report import report  # noqa: E402
from runfolder import preload  # noqa: E402

LINUX = sys.platform.startswith("linux")
LIBS = ("system", "system-jemalloc", "system-mimalloc", "system-tcmalloc")


def made(factors, rounds=8):
    """a Preload whose library i takes base * factors[i] in every round, the
    base drifting from round to round as the machine does"""
    libs = [preload.Library(row, "" if row == "system" else f"/lib/lib{row}.so",
                            [(1.0 + 0.3 * (r % 3)) * f for r in range(rounds)])
            for row, f in zip(LIBS, factors)]
    return preload.Preload("prog", ["prog", "arg"], "trace:prog", rounds, "test", libs)


class Comparison(unittest.TestCase):
    def test_faster_in_every_round_is_the_group_alone(self):
        lines, verdict = preload.compare(made([1.0, 0.8, 0.9, 1.2]), {})
        self.assertEqual([x.row for x in lines], ["system-jemalloc", "system-mimalloc", "system", "system-tcmalloc"])
        self.assertEqual(verdict["program_group"], ["system-jemalloc"])
        self.assertAlmostEqual(lines[0].ratio.estimate, 0.8)
        self.assertNotIn("replay_fastest", verdict)

    def test_within_the_margin_is_in_the_group(self):
        _, verdict = preload.compare(made([1.0, 0.995, 1.3, 1.2]), {})
        self.assertEqual(verdict["program_group"], ["system", "system-jemalloc"])

    def test_the_replay_held_against_the_program(self):
        p = made([1.0, 0.8, 0.9, 1.2])
        same = {"system": 1.0, "system-jemalloc": 0.7, "system-mimalloc": 0.95, "system-tcmalloc": 1.1}
        _, verdict = preload.compare(p, same)
        self.assertEqual((verdict["replay_fastest"], verdict["replay_fastest_in_program_group"]),
                         ("system-jemalloc", True))
        self.assertEqual(verdict["kendall_tau"], 1.0)
        reverse = {row: 1 / r for row, r in same.items()}
        _, verdict = preload.compare(p, reverse)
        self.assertEqual((verdict["replay_fastest"], verdict["replay_fastest_in_program_group"]),
                         ("system-tcmalloc", False))
        self.assertEqual(verdict["kendall_tau"], -1.0)
        self.assertIn("is not in the program's fastest group", preload.verdict_text(p, verdict))

    def test_replay_ratios_are_over_system(self):
        entries = [dict(compiler=c, workload=w, strategy=s, ratio=r)
                   for c, w, s, r in (("gcc", "trace:prog", "system", 2.0), ("gcc", "trace:prog", "system-jemalloc", 1.0),
                                      ("gcc", "trace:other", "system-mimalloc", 0.5),
                                      ("clang", "trace:prog", "system-mimalloc", 0.5))]
        self.assertEqual(preload.replay_ratios(entries, "trace:prog", "gcc"),
                         {"system": 1.0, "system-jemalloc": 0.5})
        self.assertEqual(preload.replay_ratios(entries, "trace:none", "gcc"), {})
        # a trace of several threads: no ratios, the medians over system's
        summary = [dict(compiler="gcc", workload="trace:threads", strategy=s, status=st, median_ns_per_op=m)
                   for s, st, m in (("system", "ok", 30.0), ("system-mimalloc", "ok", 15.0),
                                    ("minimal", "skipped", None))]
        self.assertEqual(preload.replay_ratios(entries, "trace:threads", "gcc", summary),
                         {"system": 1.0, "system-mimalloc": 0.5})

    def test_the_file_round_trips(self):
        p = made([1.0, 0.8, 0.9, 1.2])
        self.assertEqual(preload.from_json(preload.to_json(p), "x"), p)
        with self.assertRaises(preload.RunError):
            preload.from_json('{"name": "x"}', "x")


class Report(unittest.TestCase):
    def test_the_report_shows_program_and_replay(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake_results.make(tmp, list(LIBS), ["trace:prog"], [1], ["gcc"])
            p = made([1.0, 0.8, 0.9, 1.2])
            with open(os.path.join(tmp, preload.file_name("prog")), "w") as f:
                f.write(preload.to_json(p))
            out, _ = report.build(tmp, draw_plots=False)
            with open(out, encoding="utf-8") as f:
                page = f.read()
        self.assertIn('id="preload"', page)
        self.assertIn("The replay&#x27;s fastest library", page)
        # fake_results: each row's time grows with its index, so the replay ranks them in LIBS' order
        self.assertIn("system-jemalloc</code></td><td class=\"num\">", page)
        self.assertIn("is not in the program&#x27;s fastest group", page)


def make(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "AM_STATUS_FILE")}
    return subprocess.run(["sh", "tools/make.sh", "--no-print-directory", "-s", *args], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=900)


@unittest.skipUnless(LINUX, "LD_PRELOAD: Linux")
class MakePreload(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="am-preload-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_real_program_every_library_every_round(self):
        if not shutil.which("hyperfine"):
            self.skipTest("hyperfine is missing (apt-get install hyperfine)")
        run = os.path.join(self.tmp, "run")
        p = make("preload", "CMD=sh -c 'ls / | sort'", "ALLOCATORS=system,system-jemalloc,system-mimalloc",
                 "ROUNDS=6", "SEED=3", "RUN=" + run, "TRACE=traces/cc1.trace")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(run, preload.file_name("cc1"))) as f:
            got = json.load(f)
        rows = [lib["row"] for lib in got["libraries"] if lib["status"] == "ok"]
        self.assertIn("system", rows)
        for lib in got["libraries"]:
            if lib["status"] == "ok":
                self.assertEqual(len(lib["seconds"]), 6, lib["row"])
                self.assertTrue(all(s > 0 for s in lib["seconds"]), lib)
                self.assertEqual(bool(lib["preload"]), lib["row"] != "system")
        self.assertIn("No cells of trace:cc1", p.stdout)  # a folder without the replay's cells

    def test_bad_input_exit_2(self):
        run = os.path.join(self.tmp, "never")
        # refused before anything is built
        for args, said in ((["CMD="], "needs CMD"),
                           (["CMD=no-such-program-here x"], "cannot start 'no-such-program-here'"),
                           (["CMD=true", "ALLOCATORS=pool"], "'pool' is not a malloc row")):
            with self.subTest(args=args):
                p = make("preload", "RUN=" + run, "ROUNDS=6", *args)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(said, p.stderr)
                self.assertNotIn("am-cell-", p.stdout + p.stderr)
        # a program that fails on its own: its exit status, and no folder
        if not shutil.which("hyperfine"):
            self.skipTest("hyperfine is missing (apt-get install hyperfine)")
        p = subprocess.run([sys.executable, "-m", "runner.preload", "--cmd", "sh -c 'echo why >&2; exit 3'",
                            "--allocators", "system", "--run", run, "--rounds", "6"],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("failed (exit status 3) without a preload: why", p.stderr)
        self.assertFalse(os.path.exists(run))


if __name__ == "__main__":
    unittest.main()
