"""--layout: the cells' addresses drawn anew for each process (random, the
default) or the same for every process of an executable (fixed: Linux's
ADDR_NO_RANDOMIZE persona, which the runner takes on and its cells inherit).
Each cell says which it ran at (its answer's "layout"), and a run that asked
for fixed fails a cell that ran at random rather than mix the two."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_cell_answers import build_with_minimal  # noqa: E402
from test_runner import BUILD, COMPILER, ROOT, RUNNER, ensure_cells, read_csv  # noqa: E402
from runner import layout  # noqa: E402
from runfolder import catalog, outputs, schema  # noqa: E402
from runfolder.errors import UsageError  # noqa: E402

LINUX = sys.platform.startswith("linux")
SETARCH = shutil.which("setarch")


def system_randomizes():
    try:
        with open("/proc/sys/kernel/randomize_va_space") as f:
            return f.read().strip() != "0"
    except OSError:
        return False


# what a child started after layout.apply(MODE) sees of its persona
CHILD_PERSONA = """
import subprocess, sys
sys.path.insert(0, {root!r})
from runner import layout
layout.apply(sys.argv[1])
print(subprocess.run(["cat", "/proc/self/personality"], capture_output=True, text=True).stdout.strip())
"""

# a cell that clears the persona it was given before it starts the real one:
# what a wrapper between the runner and its cells could do
RESETTING_CELL = """#!{python}
import os, sys
sys.path.insert(0, {root!r})
from runner import layout
layout.apply("random")
os.execv({real!r}, [{real!r}] + sys.argv[1:])
"""


def cell_layout(cmd_prefix=()):
    exe = catalog.cell_exe(os.path.join(BUILD, "bin"), "minimal")
    p = subprocess.run([*cmd_prefix, exe, "--workload", "list_create", "--size", "10", "--samples", "1"],
                       capture_output=True, text=True, timeout=60)
    return json.loads(p.stdout.strip().splitlines()[-1]).get("layout")


@unittest.skipUnless(LINUX, "the persona is Linux's")
class Persona(unittest.TestCase):
    def child_persona(self, mode, prefix=()):
        p = subprocess.run([*prefix, sys.executable, "-c", CHILD_PERSONA.format(root=ROOT), mode],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return int(p.stdout, 16)

    def test_fixed_is_passed_on_to_the_programs_the_runner_starts(self):
        self.assertTrue(self.child_persona("fixed") & layout.ADDR_NO_RANDOMIZE)

    @unittest.skipUnless(SETARCH, "setarch (util-linux) is not installed")
    def test_random_clears_a_persona_the_runner_was_started_with(self):
        prefix = [SETARCH, os.uname().machine, "-R"]
        self.assertTrue(self.child_persona("fixed", prefix) & layout.ADDR_NO_RANDOMIZE)
        self.assertFalse(self.child_persona("random", prefix) & layout.ADDR_NO_RANDOMIZE)

    def test_a_system_without_the_call_refuses_fixed_and_allows_random(self):
        saved = layout._personality
        layout._personality = lambda: None
        try:
            with self.assertRaises(UsageError) as e:
                layout.check("fixed")
            self.assertIn("--layout fixed", str(e.exception))
            layout.check("random")
        finally:
            layout._personality = saved


@unittest.skipUnless(LINUX, "the persona is Linux's")
class CellSays(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells()

    @unittest.skipUnless(system_randomizes(), "this system does not randomize addresses")
    def test_a_cell_started_plainly_says_random(self):
        self.assertEqual(cell_layout(), "random")

    @unittest.skipUnless(SETARCH, "setarch (util-linux) is not installed")
    def test_a_cell_started_without_randomization_says_fixed(self):
        self.assertEqual(cell_layout([SETARCH, os.uname().machine, "-R"]), "fixed")


class TablesSay(unittest.TestCase):
    def test_a_fixed_layout_heads_the_tables_and_a_random_one_does_not(self):
        self.assertTrue(outputs.head_lines([], None, [], "fixed")[0].startswith("Layout fixed"))
        self.assertFalse(any("Layout" in line for line in outputs.head_lines([], None, [], "random")))

    def test_a_folder_written_before_the_choice_ran_at_random(self):
        self.assertEqual(schema.layout_mode({"seed": 1}), "random")
        self.assertEqual(schema.layout_mode({"layout": {"mode": "fixed"}}), "fixed")


def resetting_build(tmp):
    """A build root whose minimal row resets the persona before it runs."""
    return build_with_minimal(tmp, lambda real: RESETTING_CELL.format(python=sys.executable, root=ROOT, real=real))


@unittest.skipUnless(LINUX and system_randomizes(), "needs Linux with address-space randomization on")
class Run(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells()
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_fixed(self, root, name):
        out = os.path.join(self.tmp.name, name)
        env = dict(os.environ)
        for k in ("AM_TEST_CRASH", "AM_TEST_HANG", "AM_TEST_BADSUM"):
            env.pop(k, None)
        p = subprocess.run([*RUNNER, "--compilers", COMPILER, "--build-root", root,
                            "--allocators", "system,minimal", "--baseline", "system", "--workloads",
                            "thrash_pool", "--sizes", "10", "--samples", "3", "--min-ms", "1", "--seed", "7",
                            "--revisits", "0", "--cpu", "none", "--no-control", "--no-stats-tables",
                            "--layout", "fixed", "--out", out], cwd=ROOT, capture_output=True, text=True,
                           env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, rows = read_csv(os.path.join(out, "summary.csv"))
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
        return {r["strategy"]: (r["status"], r["reason"]) for r in rows}, meta

    def test_a_fixed_run_keeps_every_cell_and_says_so(self):
        status, meta = self.run_fixed(os.path.dirname(BUILD), "fixed")
        self.assertEqual(status, {"system": ("ok", ""), "minimal": ("ok", "")})
        self.assertEqual(meta["layout"]["mode"], "fixed")
        with open(os.path.join(self.tmp.name, "fixed", "tables.txt")) as f:
            self.assertTrue(f.read().startswith("Layout fixed (LAYOUT=fixed): every process of one executable"))

    @unittest.skipIf(os.name == "nt", "the resetting cell is a script")
    def test_a_cell_that_ran_at_random_in_a_fixed_run_fails(self):
        status, _ = self.run_fixed(resetting_build(self.tmp.name), "reset")
        self.assertEqual(status["system"][0], "ok")
        self.assertEqual(status["minimal"][0], "failed")
        self.assertIn("--layout fixed", status["minimal"][1])


if __name__ == "__main__":
    unittest.main()
