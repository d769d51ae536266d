"""A cell's answer is untrusted input: a JSON line with a sample time that is
not a positive finite number (NaN, Infinity, null, negative, zero), or a line
that is not JSON at all, fails that cell with a reason that says so, and the
run goes on. The cells here are wrappers around a real am-cell that spoil its
line (cell_protocol.run directly, and a whole run through a build
folder whose minimal row is such a wrapper)."""
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_runner import BUILD, COMPILER, ROOT, RUNNER, ensure_cells, read_csv  # noqa: E402
from runner import cell_protocol  # noqa: E402
from runfolder import catalog  # noqa: E402

# runs the real cell and puts AM_SPOIL_SAMPLE's text first in samples_ns
# ("<cut>": the line cut in half, so that it is no longer JSON)
WRAPPER = """#!{python}
import os, subprocess, sys
p = subprocess.run([{real!r}] + sys.argv[1:], capture_output=True, text=True)
spoil = os.environ.get("AM_SPOIL_SAMPLE")
out = p.stdout
if spoil and '"samples_ns":[' in out:
    out = out.replace('"samples_ns":[', '"samples_ns":[' + spoil + ',')
    if spoil == "<cut>":
        line = out.strip().splitlines()[-1]
        out = line[:len(line) // 2] + "\\n"
sys.stdout.write(out)
sys.stderr.write(p.stderr)
sys.exit(p.returncode)
"""


def build_with_minimal(tmp, script):
    """A build root whose minimal row is a script (script: the text of it, given
    the real cell's path); system and every -stats build are the real ones."""
    real, bin_dir = os.path.join(BUILD, "bin"), os.path.join(tmp, "build", COMPILER, "bin")
    os.makedirs(bin_dir)
    for name in os.listdir(real):
        if name.startswith(os.path.basename(catalog.cell_exe("", "system"))) or "-stats" in name:
            os.symlink(os.path.join(real, name), os.path.join(bin_dir, name))
    path = catalog.cell_exe(bin_dir, "minimal")
    with open(path, "w") as f:
        f.write(script(catalog.cell_exe(real, "minimal")))
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return os.path.dirname(os.path.dirname(bin_dir))


def spoiled_build(tmp):
    """A build root whose minimal row spoils its answers; system is the real one."""
    return build_with_minimal(tmp, lambda real: WRAPPER.format(python=sys.executable, real=real))


@unittest.skipIf(os.name == "nt", "the wrapper is a script")
class SpoiledAnswers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = spoiled_build(cls.tmp.name)
        cls.cmd = [catalog.cell_exe(os.path.join(cls.root, COMPILER, "bin"), "minimal"), "--workload",
                   "thrash_pool", "--size", "10", "--samples", "3", "--min-ms", "1"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def answer(self, spoil):
        env = dict(os.environ, AM_SPOIL_SAMPLE=spoil)
        out, why = cell_protocol.run(self.cmd, 60, self.tmp.name, env)
        if not why:
            why = cell_protocol.check_answer(out)
        return why

    def test_an_unspoiled_answer_is_accepted(self):
        self.assertIsNone(self.answer(""))

    def test_a_sample_that_is_not_a_positive_number_fails_the_cell(self):
        for spoil in ("NaN", "Infinity", "-Infinity", "null", "-5", "0", '"12"', "true"):
            with self.subTest(spoil=spoil):
                why = self.answer(spoil)
                self.assertIsNotNone(why)
                self.assertIn("samples_ns", why)
                self.assertIn(spoil, why)

    def test_a_line_that_is_not_json_is_called_so(self):
        why = self.answer("<cut>")
        self.assertIsNotNone(why)
        self.assertIn("not valid JSON", why)
        self.assertNotIn("no output", why)

    def run_with(self, spoil):
        out = os.path.join(self.tmp.name, "run-" + str(abs(hash(spoil))))
        env = dict(os.environ, AM_SPOIL_SAMPLE=spoil)
        for k in ("AM_TEST_CRASH", "AM_TEST_HANG", "AM_TEST_BADSUM"):
            env.pop(k, None)
        p = subprocess.run([*RUNNER, "--compilers", COMPILER, "--build-root", self.root,
                            "--allocators", "system,minimal", "--baseline", "system", "--workloads",
                            "thrash_pool", "--sizes", "10", "--samples", "3", "--min-ms", "1", "--seed", "7",
                            "--revisits", "0", "--cpu", "none", "--no-control", "--no-stats-tables",
                            "--out", out], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
        return p, out

    def test_a_run_keeps_the_other_cells_and_fails_the_spoiled_one(self):
        for spoil in ("NaN", "<cut>"):
            with self.subTest(spoil=spoil):
                p, out = self.run_with(spoil)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertNotIn("Traceback", p.stderr)
                _, rows = read_csv(os.path.join(out, "summary.csv"))
                status = {r["strategy"]: (r["status"], r["reason"]) for r in rows}
                self.assertEqual(status["system"][0], "ok")
                self.assertEqual(status["minimal"][0], "failed")
                self.assertIn("samples_ns" if spoil == "NaN" else "not valid JSON", status["minimal"][1])
                with open(os.path.join(out, "meta.json")) as f:
                    self.assertEqual(json.load(f)["state"], "finished")


if __name__ == "__main__":
    unittest.main()
