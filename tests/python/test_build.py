"""test_build.py: what the Makefile promises about itself.

- Reading it writes nothing: `make -n` of any goal leaves the tree, build/
  included, as it was (and runs nothing: no tests, no benchmark).
- The flags stamp: objects rebuild when OPT changes, not otherwise, and the
  stamp is rewritten by a build, never by a dry run (-n, -q).
- The library probe runs in a recipe, once a build: not for `make help`,
  `make -n clean` or a dry run.
- make test and make bench share one build folder: build/gcc by default.
- `make help` is a list of goals that exist.
- cell/row_unit.c, the committed unit, includes every source of a row but
  the cell's main, and the workloads in it are those of workloads/workloads.def;
  when they disagree the message names the line to add."""
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import run_check  # noqa: E402
CC = "gcc" if shutil.which("gcc") else "cc"
# set while the dry-run test runs: a Makefile that ran `make -n test` for real
# would start this test again
NESTED = "AM_TEST_BUILD_DRY_RUN"


def make(*args, check=True):
    env = dict(os.environ, **{NESTED: "1"})
    env.pop("MAKEFLAGS", None)
    env.pop("MAKELEVEL", None)
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True,
                          check=check, env=env)


def make_variable(name, *args):
    """a variable of the Makefile as make sees it (its database, -p, of a dry run)"""
    m = re.search(rf"^{name} :?= (.*)$", make("-np", "help", *args).stdout, re.M)
    return m.group(1) if m else None


def make_rows():
    """[(row, source, libs)] as the Makefile reads allocators/strategies.txt"""
    rows = []
    for word in make_variable("STRATEGY_LINES").split():
        row, source, _, libs = word.split("|")
        rows.append((row, source, "" if libs == "-" else libs.replace("~", " ")))
    return rows


def snapshot(root):
    """{path: (size, mtime) or "dir"} of every file and folder but .git and
    the build folders make test's C stages write meanwhile (tests/run_all.py)"""
    busy = {os.path.abspath(p) for p in os.environ.get("AM_BUILDS_IN_USE", "").split(os.pathsep) if p}
    out = {}
    for dirpath, dirs, names in os.walk(root):
        if dirpath == root and ".git" in dirs:
            dirs.remove(".git")
        dirs[:] = [d for d in dirs if os.path.abspath(os.path.join(dirpath, d)) not in busy]
        for d in dirs:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = "dir"
        for n in names:
            path = os.path.join(dirpath, n)
            st = os.lstat(path)
            out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns)
    return out


def differences(before, after):
    out = [f"created {p}" for p in sorted(set(after) - set(before))]
    out += [f"removed {p}" for p in sorted(set(before) - set(after))]
    out += [f"changed {p}" for p in sorted(set(before) & set(after)) if before[p] != after[p]]
    return out


class Snapshot(unittest.TestCase):
    def test_builds_in_use_are_left_out(self):
        # make test's ASan stage writes its folder while this file runs beside it
        with tempfile.TemporaryDirectory() as tmp:
            for d in ("gcc", "gcc-asan"):
                os.makedirs(os.path.join(tmp, "build", d))
                open(os.path.join(tmp, "build", d, "x.o"), "w").close()
            saved = os.environ.get("AM_BUILDS_IN_USE")
            os.environ["AM_BUILDS_IN_USE"] = os.path.join(tmp, "build", "gcc-asan")
            try:
                got = snapshot(tmp)
            finally:
                os.environ.pop("AM_BUILDS_IN_USE")
                if saved is not None:
                    os.environ["AM_BUILDS_IN_USE"] = saved
        self.assertIn(os.path.join("build", "gcc", "x.o"), got)
        self.assertEqual([p for p in got if "gcc-asan" in p], [])


@unittest.skipIf(os.environ.get(NESTED), "inside a make -n run of this very test")
class DryRunWritesNothing(unittest.TestCase):
    # every goal of `make help`, and a few with variables that change the build
    GOALS = [[], ["all"], ["cells"], ["tests-build"], ["fuzz-build"], ["list"], ["help"], ["clean"],
             ["test"], ["check"], ["fuzz"], ["fuzz-selftest"], ["test-windows"], ["bench"],
             ["bench", "QUICK=1"], ["count"], ["count", "SHARD=1/2"], ["count", "MERGE=a b", "OUT=c"],
             ["hyperfine"], ["compare", "RUNS=results/a results/b"], ["report"],
             ["plots"], ["compiler-info"], ["record", "TRACE=x.trace", "CMD=true"], ["trace-info", "TRACE=x.trace"], ["preload", "CMD=true"],
             ["cells", "OPT=-O3"], ["all", "VARIANT=-dry-run"],
             ["tests-build", "DEBUG=1"], ["cells", "tests-build", "ALLOCATORS=system"],
             ["all", "CC=x86_64-w64-mingw32-gcc"], [f"build/{CC}-dry-run/tests/pool/test_list", "VARIANT=-dry-run"]]

    def test_make_n_leaves_the_tree_as_it_was(self):
        before = snapshot(ROOT)
        ran = []
        for goal in self.GOALS:
            p = make("-n", *goal, check=False)
            ran.append(f"make -n {' '.join(goal)}: exit {p.returncode}")
            self.assertEqual(p.returncode, 0, f"make -n {' '.join(goal)}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
            self.assertEqual(differences(before, snapshot(ROOT)), [], f"make -n {' '.join(goal)} wrote")
        self.assertEqual(len(ran), len(self.GOALS))

    def test_make_n_test_prints_the_test_command(self):
        # printed, not run: a dry run of make test takes a second, not minutes
        out = make("-n", "test").stdout
        self.assertIn("tests/run_all.py", out)
        for lib in ("jemalloc", "tcmalloc_minimal", "mimalloc"):
            self.assertRegex(out, r"tools/need.sh --for .*" + lib)


class FlagsStamp(unittest.TestCase):
    """changing OPT rebuilds; the same flags do not; only a build writes the stamp"""
    VARIANT = "-stamp-test"

    def setUp(self):
        self.build = os.path.join(ROOT, "build", CC + self.VARIANT)
        self.obj = f"build/{CC}{self.VARIANT}/common/allocators/allocator.o"
        self.stamp = os.path.join(self.build, "flags.txt")
        shutil.rmtree(self.build, ignore_errors=True)

    def tearDown(self):
        shutil.rmtree(self.build, ignore_errors=True)

    def run_make(self, *args, check=True):
        return make(f"CC={CC}", f"VARIANT={self.VARIANT}", *args, check=check)

    def test_opt_rebuilds_and_nothing_else_does(self):
        self.run_make(self.obj, "OPT=-O2")
        obj_time, stamp_time = os.stat(os.path.join(ROOT, self.obj)).st_mtime_ns, os.stat(self.stamp).st_mtime_ns
        with open(self.stamp) as f:
            self.assertIn(" -O2 ", f.read())
        # the same flags: up to date, nothing rewritten
        self.assertEqual(self.run_make("-q", self.obj, "OPT=-O2", check=False).returncode, 0)
        self.run_make(self.obj, "OPT=-O2")
        self.assertEqual(os.stat(os.path.join(ROOT, self.obj)).st_mtime_ns, obj_time)
        self.assertEqual(os.stat(self.stamp).st_mtime_ns, stamp_time)
        # other flags: out of date, but asking (-q) or a dry run (-n) writes nothing
        self.assertEqual(self.run_make("-q", self.obj, "OPT=-O1", check=False).returncode, 1)
        self.run_make("-n", self.obj, "OPT=-O1")
        with open(self.stamp) as f:
            self.assertIn(" -O2 ", f.read(), "a dry run rewrote the flags stamp")
        self.run_make(self.obj, "OPT=-O1")
        with open(self.stamp) as f:
            self.assertIn(" -O1 ", f.read())
        self.assertGreater(os.stat(os.path.join(ROOT, self.obj)).st_mtime_ns, obj_time)


class TestOpt(unittest.TestCase):
    """the strategy tests build at TEST_OPT (-O1 unless given), the cells at
    OPT; TEST_OPT rebuilds the tests alone, and make check asks for -O2"""

    def commands(self, target, *more):
        out = make("-n", "-B", f"CC={CC}", "VARIANT=-testopt", target, *more).stdout.replace("\\\n", " ")
        return [line for line in out.splitlines()
                if " -o " in line and ("tests/strategy/" in line or "cell/row_unit.c" in line)]

    def test_tests_at_test_opt_and_the_cells_at_opt(self):
        test = self.commands(f"build/{CC}-testopt/tests/pool/test_list")
        self.assertTrue(any("tests/strategy/test_list.c" in c for c in test), test)
        for c in test:
            want = " -O1 " if "tests/strategy/" in c else " -O2 "
            self.assertIn(want, c)
        given = self.commands(f"build/{CC}-testopt/tests/pool/test_list", "TEST_OPT=-O2")
        self.assertTrue(all(" -O1 " not in c for c in given), given)
        cell = self.commands(f"build/{CC}-testopt/pool/row_unit.o")
        self.assertTrue(cell and all(" -O2 " in c and " -O1 " not in c for c in cell), cell)

    def test_test_opt_has_a_stamp_of_its_own(self):
        build = os.path.join(ROOT, "build", CC + "-testopt")
        self.addCleanup(shutil.rmtree, build, True)
        make(f"CC={CC}", "VARIANT=-testopt", f"build/{CC}-testopt/testflags.txt", "TEST_OPT=-O2")
        with open(os.path.join(build, "testflags.txt")) as f:
            self.assertEqual(f.read().strip(), "-O2")
        # a test binary depends on it; the cells' objects do not
        db = make("-p", "-n", f"CC={CC}", "VARIANT=-testopt", f"build/{CC}-testopt/tests/pool/test_list").stdout
        rule = re.search(rf"^build/{CC}-testopt/tests/pool/test_list:(.*)$", db, re.M)
        self.assertIsNotNone(rule)
        self.assertIn("testflags.txt", rule.group(1))

    def test_make_check_asks_for_the_cells_optimisation(self):
        self.assertEqual(run_check.CHECK_TEST_OPT, "-O2")


class LibraryProbe(unittest.TestCase):
    """the probe links a program for each row that names a library: in a
    recipe, once a build, never while the Makefile is read"""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="am-probe-")
        self.log = os.path.join(self.tmp, "log")
        self.cc = os.path.join(self.tmp, "am-probe-cc")  # build/am-probe-cc
        with open(self.cc, "w") as f:
            f.write(f'#!/bin/sh\necho "$*" >> "{self.log}"\nexec {CC} "$@"\n')
        os.chmod(self.cc, os.stat(self.cc).st_mode | stat.S_IXUSR)
        self.build = os.path.join(ROOT, "build", "am-probe-cc")
        shutil.rmtree(self.build, ignore_errors=True)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(self.build, ignore_errors=True)

    def invocations(self):
        """every run of the compiler, one line of arguments each"""
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()

    def test_no_probe_while_reading(self):
        for goal in (["help"], ["-n", "clean"], ["-n", "all"], ["-n", "cells"], ["-n", "compare"]):
            make(f"CC={self.cc}", *goal)
            self.assertEqual(self.invocations(), [], f"make {' '.join(goal)} ran the compiler")

    def test_once_a_build(self):
        libs = [lib for _, _, lib in make_rows() if lib]
        self.assertGreater(len(libs), 0)
        # cells of no row: the probe and the sub-make, nothing compiled
        make(f"CC={self.cc}", "cells", "ALLOCATORS=none")
        probes = [line for line in self.invocations() if any(lib in line for lib in libs)]
        self.assertEqual(len(probes), len(libs), self.invocations())
        self.assertEqual(len(self.invocations()), len(libs))
        with open(os.path.join(self.build, "rows.txt")) as f:
            rows = f.read().split()
        self.assertIn("system", rows)


class SharedBuild(unittest.TestCase):
    def variable(self, name, *args):
        return make_variable(name, *args)

    @unittest.skipUnless(shutil.which("gcc"), "no gcc: make builds with cc")
    def test_make_test_builds_what_make_bench_measures(self):
        # make bench builds each compiler by name (runner/compilers.py): gcc -> build/gcc
        sys.path.insert(0, os.path.join(ROOT, "runner"))
        import compilers
        self.assertIn("gcc", compilers.default_commands())
        self.assertEqual(self.variable("BUILD"), "build/" + compilers.folder_name("gcc"))
        self.assertIn("--build build/gcc ", make("-n", "test").stdout)

    def test_a_given_compiler_is_kept(self):
        self.assertEqual(self.variable("BUILD", "CC=clang"), "build/clang")
        self.assertEqual(self.variable("COMPILERS", "CC=clang"), "clang")
        self.assertEqual(self.variable("COMPILERS"), "")


class Help(unittest.TestCase):
    def test_help_lists_goals_that_exist(self):
        out = make("help").stdout
        goals = sorted(set(re.findall(r"^  make ([a-z-]+)", out, re.M)))
        for goal in ("test", "bench", "check", "list", "report", "compare", "hyperfine", "fuzz",
                     "fuzz-selftest", "test-windows", "cells", "clean"):
            self.assertIn(goal, goals)
        for goal in goals:
            self.assertEqual(make("-n", goal, check=False).returncode, 0, f"make help names {goal}, make lacks it")
        self.assertNotIn("# ", out)  # not the Makefile's comments


# ---------------------------------------------------------------- the committed unit

UNIT = "cell/row_unit.c"
INCLUDE = re.compile(r'^#include "\.\./([^"]+)"', re.M)


def unit_problems(root=ROOT, strategy_sources=None):
    """How cell/row_unit.c, the workload files and workloads.def disagree, one
    line each, naming the line to add. strategy_sources: the rows' own .c files
    (AM_STRATEGY_C), which the unit must not include; by default the Makefile's."""
    with open(os.path.join(root, UNIT)) as f:
        unit = f.read()
    included = INCLUDE.findall(unit)
    if strategy_sources is None:
        strategy_sources = {source + ".c" for _, source, _ in make_rows()}
    want = []
    for folder in ("platform", "allocators", "containers", "workloads"):
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if name.endswith(".c") and not (folder == "allocators" and name in strategy_sources):
                want.append(f"{folder}/{name}")
    out = []
    for path in want:
        if path not in included:
            # the include after which it belongs: the last one of its folder
            # that sorts before it (or the first of the folder)
            same = [p for p in included if p.split("/")[0] == path.split("/")[0]]
            before = [p for p in same if p < path]
            where = (f'after the line #include "../{max(before)}"' if before else
                     f'before the line #include "../{same[0]}"' if same else "")
            out.append(f'{UNIT} does not include {path}: add the line #include "../{path}" {where}'.rstrip())
    for path in sorted({p for p in included if included.count(p) > 1}):
        out.append(f"{UNIT} includes {path} twice: remove one line")
    for path in included:
        if not os.path.exists(os.path.join(root, path)):
            out.append(f"{UNIT} includes {path}, which does not exist: remove that line")
        elif path.startswith("allocators/") and os.path.basename(path) in strategy_sources:
            out.append(f"{UNIT} includes the strategy source {path}: a row's own comes from AM_STRATEGY_C")
    with open(os.path.join(root, "workloads", "workloads.def")) as f:
        listed = re.findall(r"^AM_WORKLOAD\((\w+)\)", f.read(), re.M)
    for path in included:
        if path.startswith("workloads/") and path != "workloads/registry.c" and \
                os.path.exists(os.path.join(root, path)):
            with open(os.path.join(root, path)) as f:
                defined = re.findall(r"\bconst am_workload am_workload_(\w+)\s*=", f.read())
            for name in defined:
                if name not in listed:
                    out.append(f"workloads/workloads.def does not list {name} ({path}): "
                               f"add the line AM_WORKLOAD({name}) where its tables should go")
    for name in listed:
        if f"workloads/{name}.c" not in included:
            out.append(f"workloads/workloads.def lists {name}, but {UNIT} does not include workloads/{name}.c")
    return out


class CommittedUnit(unittest.TestCase):
    def test_unit_and_lists_agree(self):
        self.assertEqual(unit_problems(), [])

    def test_the_unit_has_every_workload(self):
        with open(os.path.join(ROOT, UNIT)) as f:
            included = INCLUDE.findall(f.read())
        self.assertIn("workloads/thrash_pool.c", included)
        self.assertIn("workloads/registry.c", included)
        self.assertEqual(included[0], "platform/platform_posix.c")  # _GNU_SOURCE before any header


class CommittedUnitBroken(unittest.TestCase):
    """unit_problems on copies: a new workload, a removed include"""

    @classmethod
    def setUpClass(cls):
        cls.sources = {source + ".c" for _, source, _ in make_rows()}

    def problems(self):
        return unit_problems(self.dir, self.sources)

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="am-unit-")
        for folder in ("platform", "allocators", "containers", "workloads", "cell"):
            shutil.copytree(os.path.join(ROOT, folder), os.path.join(self.dir, folder),
                            ignore=shutil.ignore_patterns("__pycache__"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_the_copy_passes(self):
        self.assertEqual(self.problems(), [])

    def test_a_new_workload_file_names_both_lines(self):
        with open(os.path.join(self.dir, "workloads", "list_zip.c"), "w") as f:
            f.write("const am_workload am_workload_list_zip = {0};\n")
        self.assertEqual(self.problems(), [
            f'{UNIT} does not include workloads/list_zip.c: add the line #include "../workloads/list_zip.c" '
            'after the line #include "../workloads/list_iterate.c"'])
        with open(os.path.join(self.dir, UNIT), "a") as f:
            f.write('#include "../workloads/list_zip.c"\n')
        self.assertEqual(self.problems(), [
            "workloads/workloads.def does not list list_zip (workloads/list_zip.c): "
            "add the line AM_WORKLOAD(list_zip) where its tables should go"])

    def test_a_missing_include(self):
        path = os.path.join(self.dir, UNIT)
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace('#include "../workloads/alloc_bulk.c"\n', ""))
        self.assertEqual(self.problems(), [
            f'{UNIT} does not include workloads/alloc_bulk.c: add the line #include "../workloads/alloc_bulk.c" '
            'before the line #include "../workloads/alloc_pair.c"',
            f"workloads/workloads.def lists alloc_bulk, but {UNIT} does not include workloads/alloc_bulk.c"])


if __name__ == "__main__":
    unittest.main()
