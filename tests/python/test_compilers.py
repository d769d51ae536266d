"""Tests of the compiler side of make bench: which compilers are used
(runner/compilers.py: missing or broken ones stop everything with exit 2 and
their name), the cross-compiler tables (runner/crosscc.py) on synthetic runs,
and a tiny real run with two compiler folders writing compilers.csv."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)
from runner import compilers, crosscc  # noqa: E402
from runfolder import rundir  # noqa: E402
import synthetic_runs as syn  # noqa: E402


def no_install(name):
    return False


def compiles(command):
    return None


class Detection(unittest.TestCase):
    def test_missing_compiler_is_named(self):
        with self.assertRaises(compilers.CompilerError) as e:
            compilers.resolve(["gcc", "no-such-cc-42"], which=lambda n: n == "gcc" and "/usr/bin/gcc",
                              install=no_install, check=compiles)
        self.assertIn("no-such-cc-42", str(e.exception))
        self.assertNotIn("gcc,", str(e.exception))

    def test_every_missing_compiler_is_named(self):
        with self.assertRaises(compilers.CompilerError) as e:
            compilers.resolve(["cc-a", "cc-b"], which=lambda n: None, install=no_install, check=compiles)
        self.assertIn("cc-a, cc-b", str(e.exception))

    def test_default_is_gcc_and_clang_found_on_path(self):
        self.assertEqual(compilers.resolve([], which=lambda n: "/x/" + n, install=no_install, check=compiles),
                         ["gcc", "clang"])
        self.assertEqual(compilers.resolve([], which=lambda n: n == "clang" and "/x/clang",
                                           install=no_install, check=compiles), ["clang"])

    def test_order_kept_and_duplicates_dropped(self):
        self.assertEqual(compilers.resolve(["clang-14", "gcc", "clang-14"], which=lambda n: "/x/" + n,
                                           install=no_install, check=compiles), ["clang-14", "gcc"])

    def test_install_is_tried_only_for_debian_compiler_names(self):
        tried = []

        def install(name):
            tried.append(name)
            return name == "clang-16"
        found = compilers.resolve(["clang-16"], which=lambda n: None, install=install, check=compiles)
        self.assertEqual(found, ["clang-16"])
        # try_install itself refuses names that are not packages, before any apt-get
        self.assertFalse(compilers.try_install("no-such-cc-42", need="/nonexistent/need.sh"))
        self.assertTrue(compilers.PACKAGE_NAME.match("gcc-11"))
        self.assertFalse(compilers.PACKAGE_NAME.match("no-such-cc-42"))
        self.assertEqual(tried, ["clang-16"])

    def test_two_commands_for_one_build_folder_are_refused(self):
        with self.assertRaises(compilers.CompilerError) as e:
            compilers.resolve(["gcc", "/usr/bin/gcc"], which=lambda n: n, install=no_install, check=compiles)
        self.assertIn("build/gcc/", str(e.exception))

    def test_a_compiler_that_cannot_compile_is_named(self):
        # PATH trick: a "compiler" that is on PATH but fails
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "broken-cc")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho 'broken-cc: internal error' >&2\nexit 1\n")
            os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
            env = dict(os.environ, PATH=tmp + os.pathsep + os.environ.get("PATH", ""), AM_NO_INSTALL="1")
            p = subprocess.run([sys.executable, "-m", "runner.compilers", "broken-cc"],
                               cwd=ROOT, capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("broken-cc", p.stderr)
        self.assertIn("internal error", p.stderr)

    def test_real_compilers_pass_the_probe(self):
        cc = shutil.which("gcc") or shutil.which("cc")
        if not cc:
            self.skipTest("no C compiler on PATH")
        self.assertIsNone(compilers.probe(os.path.basename(cc)))

    def test_make_bench_stops_before_building_anything(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            env = dict(os.environ, AM_NO_INSTALL="1")
            env.pop("MAKEFLAGS", None)
            env.pop("MFLAGS", None)
            p = subprocess.run(["make", "--no-print-directory", "bench", "COMPILERS=gcc no-such-cc-42",
                                "OUT=" + out], cwd=ROOT, capture_output=True, text=True, env=env, timeout=60)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("no-such-cc-42", p.stderr)
            self.assertIn("Error 2", p.stderr)  # the check's exit status, through make
            self.assertFalse(os.path.exists(out))
            self.assertFalse(os.path.exists(os.path.join(ROOT, "build", "no-such-cc-42")))
            self.assertNotIn("am-cell", p.stdout)  # nothing compiled, nothing run


def cells_two_compilers():
    # clang listed first in meta.json, so it is the base
    return {
        ("clang", "system", "thrash_pool", 10): syn.spread(100.0),
        ("gcc", "system", "thrash_pool", 10): syn.spread(200.0),       # clearly 2x
        ("clang", "system", "thrash_pool", 1810): syn.spread(1000.0, step=0.1),
        ("gcc", "system", "thrash_pool", 1810): syn.spread(1010.0, step=0.1),  # within noise
        ("clang", "minimal", "thrash_pool", 10): syn.spread(50.0),
        ("gcc", "minimal", "thrash_pool", 10): None,                     # failed
    }


class CrossCompilerTables(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.folder = syn.write_run(os.path.join(cls.tmp.name, "r1"), cells_two_compilers(), ["clang", "gcc"])
        cls.text = crosscc.write(cls.folder)
        cls.header, cls.rows = syn.read_csv(os.path.join(cls.folder, "compilers.csv"))
        cls.by = {(r["strategy"], r["size"], r["compiler"]): r for r in cls.rows}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_csv_columns(self):
        self.assertEqual(self.header, ["workload", "strategy", "size", "threads", "param", "compiler",
                                       "base", "median_ns_per_op", "ratio", "ci_low", "ci_high",
                                       "pairs", "significant", "unstable"])
        self.assertEqual(len(self.rows), 6)
        self.assertEqual({r["base"] for r in self.rows}, {"clang"})

    def test_clear_difference_is_significant(self):
        r = self.by[("system", "10", "gcc")]
        self.assertAlmostEqual(float(r["ratio"]), 2.0, places=6)
        self.assertLess(float(r["ci_low"]), 2.0 + 1e-9)
        self.assertGreater(float(r["ci_high"]), 2.0 - 1e-9)
        self.assertGreater(float(r["ci_low"]), 1.0)
        self.assertEqual(r["significant"], "1")
        self.assertEqual(float(r["median_ns_per_op"]), 200.0)

    def test_a_ratio_within_the_margin_is_not_marked(self):
        # both compilers' cells spread 10% a round, but every round's pair is 1.01 apart:
        # the paired interval is exactly 1.01, and 1% is within the 2% margin
        r = self.by[("system", "1810", "gcc")]
        self.assertAlmostEqual(float(r["ratio"]), 1.01, places=6)
        self.assertAlmostEqual(float(r["ci_low"]), 1.01, places=6)
        self.assertEqual((r["significant"], r["pairs"]), ("0", "9"))
        line = [ln for ln in self.text.splitlines() if ln.strip().startswith("1810")][0]
        self.assertIn("~1.01", line)
        r10 = [ln for ln in self.text.splitlines() if ln.strip().startswith("10 ")][0]
        self.assertIn(" 2.00 [", r10)
        self.assertNotIn("~", r10)

    def test_base_rows_and_failed_cells(self):
        self.assertEqual(self.by[("system", "10", "clang")]["ratio"], "1")
        self.assertEqual(self.by[("system", "10", "clang")]["ci_low"], "")
        failed = self.by[("minimal", "10", "gcc")]
        self.assertEqual((failed["median_ns_per_op"], failed["ratio"], failed["significant"]), ("", "", ""))

    def test_table_columns_are_compilers_then_ratio(self):
        with open(os.path.join(self.folder, "compilers.md")) as f:
            md = f.read()
        self.assertIn("### thrash_pool: system", md)
        self.assertIn("| size | clang | gcc | gcc/clang |", md)
        self.assertIn("\\~1.01", md)
        minimal = self.text[self.text.index("== thrash_pool: minimal =="):]
        self.assertIn("failed", minimal.splitlines()[2])

    def test_base_can_be_chosen(self):
        rows, _ = crosscc.build(rundir.load(self.folder), base="gcc")
        r = [x for x in rows if (x[1], x[2], x[5]) == ("system", 10, "clang")][0]
        self.assertEqual(r[6], "gcc")
        self.assertAlmostEqual(float(r[8]), 0.5, places=6)

    def test_one_compiler_writes_nothing(self):
        one = {k: v for k, v in cells_two_compilers().items() if k[0] == "gcc"}
        path = syn.write_run(os.path.join(self.tmp.name, "one"), one, ["gcc"])
        self.assertIsNone(crosscc.write(path))
        self.assertFalse(os.path.exists(os.path.join(path, "compilers.csv")))


class TwoCompilerRun(unittest.TestCase):
    """The runner with two compiler folders (both links to this build) writes
    the cross-compiler files, meta.json lists both in the order given."""

    def test_tiny_run(self):
        import test_runner
        test_runner.ensure_cells()
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, "build")
            os.makedirs(root)
            for name in ("cc-one", "cc-two"):
                os.symlink(test_runner.BUILD, os.path.join(root, name))
            out = os.path.join(tmp, "run")
            p = subprocess.run([sys.executable, "-m", "runner.allocmark",
                                "--compilers", "cc-two,cc-one", "--build-root", root, "--allocators", "system",
                                "--workloads", "thrash_pool", "--sizes", "10", "--samples", "3", "--revisits", "0",
                                "--min-ms", "1", "--seed", "3", "--out", out],
                               cwd=ROOT, capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            header, rows = syn.read_csv(os.path.join(out, "compilers.csv"))
            self.assertEqual(header, crosscc.CSV_COLS)
            # the baseline (monotonic, where built) joins the run: look at system's rows
            self.assertEqual([(r["compiler"], r["base"]) for r in rows if r["strategy"] == "system"],
                             [("cc-two", "cc-two"), ("cc-one", "cc-two")])
            # the terminal names the file; the tables are in it
            self.assertIn(os.path.join(out, "compilers.txt"), p.stdout)
            with open(os.path.join(out, "compilers.txt"), encoding="utf-8") as f:
                text = f.read()
            self.assertIn("== thrash_pool: system ==", text)
            self.assertIn("cc-one/cc-two", text)
            self.assertTrue(os.path.exists(os.path.join(out, "compilers.md")))


if __name__ == "__main__":
    unittest.main()
