"""Values given to make (ALLOCATORS=, OUT=, RUN=, BASE= ...) reach the programs
as they were typed, one argument each, and never a shell: a `;` in one runs
nothing and is the program's to refuse (exit 2), a space in a folder's name
is part of the name. make runs with PYTHON= a recorder that notes what each
program was given and runs it (a benchmark only with --quick, so a value that
dropped QUICK=1 starts no full run)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from test_gate import gate_runs  # noqa: E402

INJECTED = "echo INJECTED"
RECORDER = """#!{python}
import json, os, sys
args = sys.argv[1:]
if args[:1] == ["-m"] and len(args) > 1:  # a program of the suite: its module, then its arguments
    with open(os.environ["AM_ARGS_LOG"], "a") as f:
        f.write(json.dumps(args[1:]) + "\\n")
    if args[1] == "runner.allocmark" and "--list" not in args and "--quick" not in args:
        sys.exit(99)  # never a full run
os.execv(sys.executable, [sys.executable] + args)
"""


class MakeValues(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.python = os.path.join(cls.tmp.name, "python")
        with open(cls.python, "w") as f:
            f.write(RECORDER.format(python=sys.executable))
        os.chmod(cls.python, 0o755)
        cls.spaced = os.path.join(cls.tmp.name, "with space")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def make(self, args):
        """(process, [argv of each Python program make ran])"""
        log = os.path.join(self.tmp.name, "args.log")
        if os.path.exists(log):
            os.remove(log)
        env = dict(os.environ, AM_NO_INSTALL="1", AM_ARGS_LOG=log)
        for k in ("MAKEFLAGS", "MFLAGS", "AM_STATUS_FILE"):
            env.pop(k, None)
        p = subprocess.run(["make", "--no-print-directory", "PYTHON=" + self.python] + args, cwd=ROOT,
                           capture_output=True, text=True, env=env, timeout=600)
        ran = []
        if os.path.exists(log):
            with open(log) as f:
                ran = [json.loads(line) for line in f]
        return p, ran

    def program(self, ran, name):
        runs = [a for a in ran if a[0] == name]
        self.assertTrue(runs, f"{name} did not run: {ran}")
        return runs[0]

    def assert_nothing_injected(self, p):
        self.assertNotIn("INJECTED", [line.split(",")[0].strip() for line in p.stdout.splitlines()], p.stdout)

    def test_bench_values_reach_the_runner_whole(self):
        out = self.spaced + " refused"
        p, ran = self.make(["bench", "QUICK=1", "ALLOCATORS=system;" + INJECTED, "WORKLOADS=list_dupe",
                            "OUT=" + out])
        self.assert_nothing_injected(p)
        args = self.program(ran, "runner.allocmark")
        self.assertEqual(args[args.index("--allocators") + 1], "system;" + INJECTED)
        self.assertEqual(args[args.index("--workloads") + 1], "list_dupe")
        self.assertEqual(args[args.index("--out") + 1], out)
        self.assertIn("--quick", args)
        # the runner refuses the strategy: bad input, nothing measured
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("system;" + INJECTED, p.stderr)
        self.assertFalse(os.path.exists(out))

    def test_bench_into_a_folder_with_a_space(self):
        p, ran = self.make(["bench", "QUICK=1", "ALLOCATORS=system", "WORKLOADS=list_dupe", "CPU=none",
                            "SAMPLES=3", "ROUNDS=1", "BENCH_FLAGS=--min-ms 0.2 --no-stats-tables",
                            "OUT=" + self.spaced])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(os.path.isfile(os.path.join(self.spaced, "summary.csv")))
        self.assertEqual(self.program(ran, "report.report")[1:], [self.spaced])
        args = self.program(ran, "runner.allocmark")
        self.assertEqual(args[-3:], ["--min-ms", "0.2", "--no-stats-tables"])  # BENCH_FLAGS: words

    def test_compare_values_reach_compare_whole(self):
        a, b = gate_runs(os.path.join(self.tmp.name, "runs"))
        p, ran = self.make(["compare", "BASE=" + a + ";" + INJECTED, "RUNS=" + b, "OUT=" + self.spaced + "-cmp"])
        self.assert_nothing_injected(p)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(a + ";" + INJECTED, p.stderr)
        p, ran = self.make(["compare", "BASE=" + a, "RUNS=" + b, "MARGIN=2%", "OUT=" + self.spaced + "-cmp"])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(self.program(ran, "runner.compare")[1:],
                         ["--base", a, b, "--margin", "2%", "--out", self.spaced + "-cmp"])
        self.assertTrue(os.path.isfile(os.path.join(self.spaced + "-cmp", "compare.txt")))

    def test_report_and_plots_take_the_run_whole(self):
        for goal in ("report", "plots"):
            p, ran = self.make([goal, "RUN=" + self.spaced + ";" + INJECTED])
            self.assert_nothing_injected(p)
            self.assertEqual(self.program(ran, f"report.{goal}")[1:], [self.spaced + ";" + INJECTED])

    def test_hyperfine_values_stay_whole(self):
        # hyperfine itself may be missing (then make hyperfine says so and stops): what make
        # would run is read back with `make -n`, split as sh splits it
        import shlex
        p = subprocess.run(["make", "-n", "--no-print-directory", "hyperfine", "RUN=" + self.spaced,
                            "HF_WORKLOAD=list_dupe;" + INJECTED, "ALLOCATORS=system"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        lex = shlex.shlex(p.stdout, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        words = list(lex)
        args = words[words.index("runner.hyperfine"):]
        args = args[:args.index(";")]
        self.assertEqual(args[args.index("--run") + 1], self.spaced)
        self.assertEqual(args[args.index("--workload") + 1], "list_dupe;" + INJECTED)


class MakeNames(unittest.TestCase):
    """A variable make does not know that looks like one of the suite's, a value
    a switch does not know, and a newline in a value are refused before
    anything runs (exit 2, naming it); none starts the full default run."""

    def make(self, *args):
        env = dict(os.environ, AM_NO_INSTALL="1")
        for k in ("MAKEFLAGS", "MFLAGS", "AM_STATUS_FILE"):
            env.pop(k, None)
        return subprocess.run(["make", "-n", "--no-print-directory"] + list(args), cwd=ROOT, capture_output=True,
                              text=True, env=env, timeout=60)

    def test_a_misspelt_variable_is_named(self):
        for given, meant in (("ALLOCATOR=system", "ALLOCATORS="), ("QUIK=1", "QUICK="), ("quick=1", "QUICK="),
                             ("WORKLOAD=list_dupe", "WORKLOADS="), ("SIZE=10", "SIZES=")):
            p = self.make("bench", given)
            self.assertEqual(p.returncode, 2, given + ": " + p.stdout + p.stderr)
            self.assertIn(f"{given.split('=')[0]}= is not a variable of this Makefile: did you mean {meant}?",
                          p.stderr)
            self.assertNotIn("runner.allocmark", p.stdout)
        p = self.make("bench", "QUICK=1", "CPU=none", "ALLOCATORS=system")  # every one known
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_a_value_a_switch_does_not_know_is_refused(self):
        for given in ("QUICK=true", "QUICK=2", "VIRTUAL=yes", "DEBUG=on"):
            p = self.make("bench", given)
            self.assertEqual(p.returncode, 2, given + ": " + p.stdout + p.stderr)
            self.assertIn(f"{given} is not a value {given.split('=')[0]} knows", p.stderr)
        for given in ("QUICK=1", "QUICK=yes", "QUICK=0", "VIRTUAL=1", "QUICK="):
            self.assertEqual(self.make("bench", given).returncode, 0, given)

    def test_a_newline_in_a_value_is_refused(self):
        for goal, given in (("bench", "OUT=results/a\nb"), ("report", "RUN=results/a\nb"),
                            ("compare", "BASE=results/a\nb")):
            p = self.make(goal, given, "RUNS=results/x")  # -n: on a shell, the value would be cut at the newline
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(f"{given.split('=')[0]}= holds a newline", p.stderr)


if __name__ == "__main__":
    unittest.main()
