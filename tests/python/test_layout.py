"""--layout: the cells' addresses drawn anew for each process (random, the
default), the same for every process of an executable (fixed: Linux's
ADDR_NO_RANDOMIZE persona, which the runner takes on and its cells inherit),
or that and visit N's heap and mappings moved as placement N of one sequence
(shifted: the cell's --place N). Each cell says which it ran at (its answer's
"layout"), and a run that asked for fixed or shifted fails a cell that ran at
another rather than mix them."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_cell_answers import build_with_minimal  # noqa: E402
from test_runner import BUILD, COMPILER, ROOT, RUNNER, ensure_cells, read_csv  # noqa: E402
from runner import layout, rounds  # noqa: E402
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


def cell_answer(cmd_prefix=(), more=()):
    exe = catalog.cell_exe(os.path.join(BUILD, "bin"), "minimal")
    p = subprocess.run([*cmd_prefix, exe, "--workload", "list_create", "--size", "10", "--samples", "1", *more],
                       capture_output=True, text=True, timeout=60)
    return json.loads(p.stdout.strip().splitlines()[-1])


def cell_layout(cmd_prefix=()):
    return cell_answer(cmd_prefix).get("layout")


def no_randomization():
    return [SETARCH, os.uname().machine, "-R"]


def placed_memory(place):
    """The [heap] line's range and the reserved (---p, unnamed) mappings of a
    minimal cell started without randomization at --place place, read from
    /proc while the cell hangs (AM_TEST_HANG) after its moves."""
    exe = catalog.cell_exe(os.path.join(BUILD, "bin"), "minimal")
    env = dict(os.environ, AM_TEST_HANG="list_create")
    p = subprocess.Popen([*no_randomization(), exe, "--workload", "list_create", "--size", "10",
                          "--place", str(place)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline, last = time.monotonic() + 30, None
        while time.monotonic() < deadline:
            with open(f"/proc/{p.pid}/maps") as f:
                lines = f.read().splitlines()
            heap = [line.split()[0] for line in lines if line.endswith("[heap]")]
            reserved = [line.split()[0] for line in lines if len(line.split()) == 5 and line.split()[1] == "---p"]
            # the same twice in a row: the cell has made its moves and hangs
            if heap and (heap, reserved) == last:
                return last
            last = heap, reserved
            time.sleep(0.05)
        raise AssertionError("the cell's maps never settled with a heap")
    finally:
        p.kill()
        p.wait()


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
        self.assertEqual(cell_layout(no_randomization()), "fixed")

    @unittest.skipUnless(SETARCH, "setarch (util-linux) is not installed")
    def test_a_placed_cell_says_shifted_and_its_placement(self):
        out = cell_answer(no_randomization(), ["--place", "3"])
        self.assertEqual((out.get("status"), out.get("layout"), out.get("place")), ("ok", "shifted", 3))

    def test_a_placement_that_is_not_a_number_is_refused(self):
        exe = catalog.cell_exe(os.path.join(BUILD, "bin"), "minimal")
        p = subprocess.run([exe, "--workload", "list_create", "--size", "10", "--place", "x"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--place", p.stderr)


@unittest.skipUnless(LINUX and SETARCH, "needs Linux and setarch (util-linux)")
class CellMoves(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells()

    def test_one_placement_lands_at_the_same_addresses_in_every_process(self):
        self.assertEqual(placed_memory(1), placed_memory(1))

    def test_two_placements_move_the_heap_and_the_mappings(self):
        (heap1, reserved1), (heap2, reserved2) = placed_memory(1), placed_memory(2)
        self.assertNotEqual(heap1, heap2)
        self.assertTrue(reserved1 and reserved2)
        self.assertNotEqual(reserved1, reserved2)


class TablesSay(unittest.TestCase):
    def test_a_fixed_or_shifted_layout_heads_the_tables_and_a_random_one_does_not(self):
        self.assertTrue(outputs.head_lines([], None, [], "fixed")[0].startswith("Layout fixed"))
        self.assertTrue(outputs.head_lines([], None, [], "shifted")[0].startswith("Layout shifted"))
        self.assertFalse(any("Layout" in line for line in outputs.head_lines([], None, [], "random")))

    def test_visit_n_of_a_shifted_run_is_placement_n(self):
        self.assertEqual([layout.place_of("shifted", v) for v in (0, 1, 7)], [0, 1, 7])
        self.assertIsNone(layout.place_of("random", 3))
        self.assertIsNone(layout.place_of("fixed", 3))

    def test_a_shifted_run_keeps_only_answers_that_moved(self):
        ok = {"status": "ok"}
        self.assertIsNone(rounds.layout_mismatch(dict(ok, layout="shifted"), "shifted"))
        self.assertIn("--layout shifted", rounds.layout_mismatch(dict(ok, layout="fixed"), "shifted"))
        self.assertIn("at random", rounds.layout_mismatch(dict(ok, layout="random"), "shifted"))
        self.assertIsNone(rounds.layout_mismatch(dict(ok, layout="random"), "random"))

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

    def run_fixed(self, root, name, mode="fixed"):
        out = os.path.join(self.tmp.name, name)
        env = dict(os.environ)
        for k in ("AM_TEST_CRASH", "AM_TEST_HANG", "AM_TEST_BADSUM"):
            env.pop(k, None)
        p = subprocess.run([*RUNNER, "--compilers", COMPILER, "--build-root", root,
                            "--allocators", "system,minimal", "--baseline", "system", "--workloads",
                            "thrash_pool", "--sizes", "10", "--samples", "3", "--min-ms", "1", "--seed", "7",
                            "--revisits", "0", "--cpu", "none", "--no-control", "--no-stats-tables",
                            "--layout", mode, "--out", out], cwd=ROOT, capture_output=True, text=True,
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

    def test_a_shifted_run_keeps_every_cell_and_says_so(self):
        status, meta = self.run_fixed(os.path.dirname(BUILD), "shifted", "shifted")
        self.assertEqual(status, {"system": ("ok", ""), "minimal": ("ok", "")})
        self.assertEqual(meta["layout"]["mode"], "shifted")
        with open(os.path.join(self.tmp.name, "shifted", "tables.txt")) as f:
            self.assertTrue(f.read().startswith("Layout shifted (LAYOUT=shifted)"))

    @unittest.skipIf(os.name == "nt", "the resetting cell is a script")
    def test_a_cell_that_ran_at_random_in_a_shifted_run_fails(self):
        status, _ = self.run_fixed(resetting_build(self.tmp.name + "/s"), "reset-shifted", "shifted")
        self.assertEqual(status["system"][0], "ok")
        self.assertEqual(status["minimal"][0], "failed")
        self.assertIn("--layout shifted", status["minimal"][1])

    @unittest.skipIf(os.name == "nt", "the resetting cell is a script")
    def test_a_cell_that_ran_at_random_in_a_fixed_run_fails(self):
        status, _ = self.run_fixed(resetting_build(self.tmp.name), "reset")
        self.assertEqual(status["system"][0], "ok")
        self.assertEqual(status["minimal"][0], "failed")
        self.assertIn("--layout fixed", status["minimal"][1])


if __name__ == "__main__":
    unittest.main()
