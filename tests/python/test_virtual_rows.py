"""The <row>@virtual rows: a row's strategy reached through a table of function
pointers (-DAM_VIRTUAL=1, allocators/allocator.h), as C++ containers reach a
std::pmr::memory_resource. Read from the executables of each installed
compiler (gcc, clang):

- in a row's own build no one-thread workload's run function calls through a
  pointer: the fast path inlines (the project's measured builds);
- in its @virtual build the run function of each workload named below calls
  through a pointer inside a loop: one indirect call per operation;
- the @virtual cell runs the same inputs as its row and gets the same answer;
- the contract tests (tests/strategy/test_allocator.c, test_heap_accounting.c) pass through the table;
- a run measures the twins only when asked (--virtual, or by name): built
  ones do not double a default run's matrix;
- CMake builds them with -DAM_VIRTUAL_ROWS=ON, under the same file names.

Builds the executables it reads (make); skipped without binutils."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD, ROOT, RUNNER  # noqa: E402
from test_measured_code import build_rows, functions, installed, one_thread_workloads, successors  # noqa: E402

ROWS = ("pool", "monotonic")
SUFFIX = "@virtual"
# node, pattern and map workloads: each allocates inside a loop of its run
# function (vector workloads grow in a function of their own, or once a repetition)
LOOPED = ("list_create", "list_dupe", "alloc_pair", "map_erase")


def indirect_calls(code):
    """addresses of the calls through a register or memory operand"""
    return [a for a, op, args in code if op.startswith("call") and args.startswith("*")]


def in_a_loop(code, addr):
    """True when control can come back to addr: it lies on a cycle"""
    succ = successors(code)
    seen, work = set(), list(succ[addr])
    while work:
        a = work.pop()
        if a == addr:
            return True
        if a not in seen:
            seen.add(a)
            work.extend(succ.get(a, ()))
    return False


def run_cell(path, workload, size):
    out = subprocess.run([path, "--workload", workload, "--size", str(size), "--samples", "1", "--reps", "2"],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise AssertionError(f"{path} exited {out.returncode}: {out.stderr}")
    return json.loads(out.stdout.splitlines()[-1])


@unittest.skipUnless(shutil.which("objdump"), "needs objdump (binutils)")
class VirtualRows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if "mingw" in BUILD:
            raise unittest.SkipTest("Windows executables: not run here")
        cls.bins = {}
        for cc in installed():
            # system: the cell that lists the workloads
            bindir = build_rows(cc, ["system"] + [r + s for r in ROWS for s in ("", SUFFIX)])
            if bindir is not None:
                cls.bins[cc] = bindir
        if not cls.bins:
            raise unittest.SkipTest("no measured build (gcc or clang at -O2/-O3)")

    def test_plain_rows_call_no_pointer(self):
        for cc, bindir in self.bins.items():
            for row in ROWS:
                code = functions(os.path.join(bindir, "am-cell-" + row))
                for w in one_thread_workloads(bindir):
                    with self.subTest(compiler=cc, row=row, workload=w):
                        self.assertEqual(indirect_calls(code[w + "_run"]), [],
                                         f"{cc} {row}: {w}_run calls through a pointer")

    def test_virtual_rows_call_through_the_table_in_the_loop(self):
        for cc, bindir in self.bins.items():
            for row in ROWS:
                code = functions(os.path.join(bindir, "am-cell-" + row + SUFFIX))
                for w in LOOPED:
                    run = code[w + "_run"]
                    with self.subTest(compiler=cc, row=row + SUFFIX, workload=w):
                        looped = [a for a in indirect_calls(run) if in_a_loop(run, a)]
                        self.assertNotEqual(looped, [], f"{cc} {row}{SUFFIX}: no indirect call in a loop of {w}_run")

    def test_same_inputs_same_answer(self):
        for cc, bindir in self.bins.items():
            for row in ROWS:
                for w, size in (("list_create", 1000), ("map_erase", 1000)):
                    plain = run_cell(os.path.join(bindir, "am-cell-" + row), w, size)
                    virtual = run_cell(os.path.join(bindir, "am-cell-" + row + SUFFIX), w, size)
                    with self.subTest(compiler=cc, row=row, workload=w):
                        self.assertEqual(virtual["strategy"], row + SUFFIX)
                        self.assertEqual((virtual["status"], virtual["inputs"], virtual["expect"]),
                                         ("ok", plain["inputs"], plain["expect"]))

    def test_contract_through_the_table(self):
        tests = [os.path.join(BUILD, "tests", row + SUFFIX, test) for row in ROWS
                 for test in ("test_allocator", "test_heap_accounting")]
        subprocess.run(["make", "--no-print-directory", "-j2"] + [os.path.relpath(t, ROOT) for t in tests],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        for t in tests:
            out = subprocess.run([t], cwd=ROOT, capture_output=True, text=True, timeout=300)
            with self.subTest(test=t):
                self.assertEqual(out.returncode, 0, out.stdout[-2000:] + out.stderr[-2000:])
                self.assertRegex(out.stdout, r"\b[1-9]\d* passed, 0 failed")


class RunnerSelection(unittest.TestCase):
    """A build folder with system and system@virtual: the twin is measured only when asked."""

    @classmethod
    def setUpClass(cls):
        if "mingw" in BUILD:
            raise unittest.SkipTest("Windows executables: not run here")
        names = ["system", "system-stats", "system" + SUFFIX, "system" + SUFFIX + "-stats"]
        subprocess.run(["make", "--no-print-directory", "-j2", "ALLOCATORS=system,system" + SUFFIX] +
                       [os.path.relpath(os.path.join(BUILD, "bin", "am-cell-" + n), ROOT) for n in names],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = os.path.join(cls.tmp.name, "build")
        os.makedirs(os.path.join(cls.root, "cc", "bin"))
        for n in names:
            shutil.copy2(os.path.join(BUILD, "bin", "am-cell-" + n), os.path.join(cls.root, "cc", "bin"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_on(self, name, *args):
        out = os.path.join(self.tmp.name, name)
        p = subprocess.run([*RUNNER, "--build-root", self.root, "--compilers", "cc",
                            "--workloads", "alloc_pair", "--sizes", "8", "--samples", "3", "--min-ms", "1",
                            "--cpu", "none", "--no-stats-tables", "--out", out] + list(args),
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "summary.csv"), newline="") as f:
            return p.stdout, sorted({r["strategy"] for r in csv.DictReader(f)})

    def test_default_run_leaves_the_twins_out(self):
        stdout, measured = self.run_on("default")
        self.assertEqual(measured, ["system"])
        self.assertNotIn(SUFFIX, stdout)

    def test_asked_for(self):
        self.assertEqual(self.run_on("virtual", "--virtual")[1], ["system", "system" + SUFFIX])
        self.assertEqual(self.run_on("named", "--allocators", "system" + SUFFIX, "--baseline", "system" + SUFFIX)[1],
                         ["system" + SUFFIX])


class TestDriver(unittest.TestCase):
    def test_a_twin_runs_the_tests_of_its_source_only(self):
        sys.path.insert(0, os.path.join(ROOT, "tests"))
        import run_all
        self.assertFalse(run_all.built_for_row(f"build/cc/tests/pool{SUFFIX}/test_monotonic"))
        self.assertTrue(run_all.built_for_row(f"build/cc/tests/monotonic{SUFFIX}/test_monotonic"))
        self.assertTrue(run_all.built_for_row(f"build/cc/tests/pool{SUFFIX}/test_allocator"))


@unittest.skipUnless(shutil.which("cmake"), "cmake is not installed")
class CMakeTwins(unittest.TestCase):
    def test_configured_with_the_twins(self):
        from test_cmake_sync import cmake_codemodel, cmake_defines
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, ".cmake", "api", "v1", "query"))
            open(os.path.join(d, ".cmake", "api", "v1", "query", "codemodel-v2"), "w").close()
            p = subprocess.run(["cmake", "-S", ROOT, "-B", d, "-DAM_VIRTUAL_ROWS=ON",
                                "-DCMAKE_C_COMPILER=" + (shutil.which("gcc") or "cc")], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
            targets = cmake_codemodel(d)
        built = {a["path"] for t in targets.values() if t["type"] == "EXECUTABLE" for a in t["artifacts"]}
        for row in ROWS:
            for path in (f"bin/am-cell-{row}{SUFFIX}", f"bin/am-cell-{row}{SUFFIX}-stats",
                         f"tests/{row}{SUFFIX}/test_allocator"):
                self.assertIn(path, built)
            defines = cmake_defines(targets[f"am_row_{row}_virtual"])
            self.assertIn("AM_VIRTUAL=1", defines)
            self.assertIn(f'AM_ROW_NAME="{row}{SUFFIX}"', defines)
            self.assertNotIn("AM_VIRTUAL=1", cmake_defines(targets[f"am_row_{row}"]))


if __name__ == "__main__":
    unittest.main()
