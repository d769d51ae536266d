"""Tests of runner/hyperfine.py with a stand-in hyperfine that records its
arguments: every command does the same fixed work, the options asked for are
passed, the files land in the run folder with the peak-memory note, and a
missing hyperfine is skipped with a message. Runs real cells (system, minimal)."""
import json
import os
import shlex
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
HF = [sys.executable, "-m", "runner.hyperfine"]
sys.path.insert(0, HERE)
import test_runner  # noqa: E402

FAKE = r'''#!/usr/bin/env python3
import json, os, sys
a = sys.argv[1:]
if a == ["--version"]:
    print("hyperfine 0.0-fake"); sys.exit(0)
with open(os.environ["FAKE_HF_LOG"], "a") as f:
    f.write(json.dumps(a) + "\n")
names, cmds, i = [], [], 0
while i < len(a):
    if a[i] == "--command-name":
        names.append(a[i + 1]); cmds.append(a[i + 2]); i += 3
    elif a[i] in ("--export-json", "--export-markdown", "--warmup", "--min-runs"):
        i += 2
    else:
        i += 1
js = a[a.index("--export-json") + 1]
md = a[a.index("--export-markdown") + 1]
json.dump({"results": [{"command": n, "mean": 0.1, "median": 0.1, "times": [0.1] * 10} for n in names]},
          open(js, "w"))
open(md, "w").write("| Command | Mean [ms] |\n|:---|---:|\n" + "".join(f"| `{n}` | 100 |\n" for n in names))
'''


class FakeHyperfine(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        test_runner.ensure_cells()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.fake = os.path.join(cls.tmp.name, "hyperfine-fake")
        with open(cls.fake, "w") as f:
            f.write(FAKE)
        os.chmod(cls.fake, os.stat(cls.fake).st_mode | stat.S_IEXEC)
        root = os.path.join(cls.tmp.name, "build")
        os.makedirs(root)
        for name in ("cc-one", "cc-two"):
            os.symlink(test_runner.BUILD, os.path.join(root, name))
        cls.log = os.path.join(cls.tmp.name, "log")
        cls.run_dir = os.path.join(cls.tmp.name, "results", "r1")
        os.makedirs(cls.run_dir)
        cls.p = subprocess.run([*HF, "--compilers", "cc-one,cc-two", "--build-root", root,
                                "--run", cls.run_dir, "--allocators", "system,minimal", "--workload", "thrash_pool", "--size", "10",
                                "--reps", "7", "--runs", "12", "--hyperfine", cls.fake],
                               cwd=ROOT, capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, FAKE_HF_LOG=cls.log))
        with open(cls.log) as f:
            cls.calls = [json.loads(line) for line in f]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def commands(self, call):
        return [(call[i + 1], shlex.split(call[i + 2])) for i, a in enumerate(call) if a == "--command-name"]

    def test_two_sets_timed_with_the_options(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        self.assertEqual(len(self.calls), 2)
        for call in self.calls:
            self.assertEqual(call[call.index("--warmup") + 1], "3")
            self.assertEqual(call[call.index("--min-runs") + 1], "12")

    def test_strategies_then_compilers_all_doing_the_same_work(self):
        strategies, compilers = (self.commands(c) for c in self.calls)
        self.assertEqual([n for n, _ in strategies], ["system", "minimal"])
        self.assertEqual([n for n, _ in compilers], ["cc-one", "cc-two"])
        for name, cmd in strategies + compilers:
            self.assertTrue(os.path.basename(cmd[0]).startswith("am-cell-"), cmd)
            # the row alone: a whole process as a program runs it, no partner beside it
            self.assertEqual(cmd[1:], ["--workload", "thrash_pool", "--size", "10", "--samples", "1",
                                       "--reps", "7", "--alone"])
        self.assertIn(os.path.join("cc-two", "bin", "am-cell-system"), compilers[1][1][0])

    def test_files_in_the_run_folder_with_peak_memory(self):
        for stem in ("hyperfine-strategies", "hyperfine-compilers"):
            with open(os.path.join(self.run_dir, stem + ".json")) as f:
                data = json.load(f)
            self.assertEqual(data["allocmark"]["reps"], 7)
            for r in data["results"]:
                self.assertGreater(r["peak_rss_bytes"], 0)
            with open(os.path.join(self.run_dir, stem + ".md")) as f:
                md = f.read()
            self.assertIn("VmHWM", md)
            self.assertIn("does not measure memory", md)
            self.assertIn("| Command | Mean [ms] |", md)
            self.assertIn("MiB |", md)

    def test_unknown_workload_is_refused(self):
        p = subprocess.run([*HF, "--compilers", "cc-one", "--build-root",
                            os.path.join(self.tmp.name, "build"), "--run", self.run_dir,
                            "--workload", "nosuch", "--hyperfine", self.fake],
                           cwd=ROOT, capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, FAKE_HF_LOG=self.log))
        self.assertEqual(p.returncode, 2)
        self.assertIn("nosuch", p.stderr)
        self.assertIn("thrash_pool", p.stderr)

    def test_missing_hyperfine_is_skipped(self):
        p = subprocess.run([*HF, "--compilers", "cc-one", "--hyperfine", "no-such-hyperfine-9"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0)
        self.assertIn("skipping make hyperfine", p.stdout)


if __name__ == "__main__":
    unittest.main()
