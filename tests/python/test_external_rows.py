"""make bench EXTERNAL=name:/path/to/libfoo.so: a row system-<name>, the system
row's code linked by path against any malloc library, with an rpath to the
library's folder so that the cell runs. Checked here:

- the cell is served by that library (the runner's rule,
  catalog.served_by_its_library), found through the rpath (Scudo's folder is
  not on the loader's path), and a library without malloc fails the rule;
- the runner knows the row from the value make passes it (AM_EXTERNAL);
- bad input (no colon, a missing file, a folder, a bad or taken name) stops
  make with a message and exit status 2 before anything runs, and the runner
  refuses a bad AM_EXTERNAL the same way."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD, ROOT, RUNNER  # noqa: E402
from test_malloc_library import cell_malloc, library_matches  # noqa: E402

# malloc libraries a Debian machine may have; the first one present is used
CANDIDATES = ("/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.scudo_standalone-x86_64.so",
              "/usr/lib/x86_64-linux-gnu/libtbbmalloc_proxy.so.2", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2",
              "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")
VARIANT = "-external-test"
NAME = "amext"


def make(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "EXTERNAL")}
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True, env=env)


def runner(*args, external=None):
    env = dict(os.environ)
    env.pop("AM_EXTERNAL", None)
    if external is not None:
        env["AM_EXTERNAL"] = external
    return subprocess.run([*RUNNER, *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)


class BadInput(unittest.TestCase):
    def test_make_stops_with_status_2(self):
        lib = next((c for c in CANDIDATES if os.path.exists(c)), os.path.join(ROOT, "Makefile"))
        cases = {"nocolon": "is not name:path", "x:/nonexistent/libnone.so": "no file /nonexistent/libnone.so",
                 f"bad/name:{lib}": "characters other than", f"jemalloc:{lib}": "row system-jemalloc exists",
                 f"d:{ROOT}": "is a folder", f"a:{lib},a:{lib}": "a name given twice", f":{lib}": "is not name:path"}
        for value, why in cases.items():
            with self.subTest(value=value):
                # -n: were the check missing, nothing would run
                p = make("-n", "bench", "EXTERNAL=" + value)
                self.assertEqual(p.returncode, 2, p.stdout[-1000:] + p.stderr)
                self.assertIn(f"allocmark: EXTERNAL={value}: ", p.stderr)
                self.assertIn(why, p.stderr)

    def test_runner_refuses_bad_text(self):
        for value in ("nocolon", "x:/nonexistent/libnone.so", "b/c:" + os.path.join(ROOT, "Makefile")):
            with self.subTest(value=value):
                p = runner("--list", external=value)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn("AM_EXTERNAL=" + value, p.stderr)


class ExternalRow(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if "mingw" in BUILD:
            raise unittest.SkipTest("Windows executables: not run here")
        cls.lib = next((c for c in CANDIDATES if os.path.exists(c)), None)
        if cls.lib is None:
            raise unittest.SkipTest("no malloc library to link (scudo, tbbmalloc, mimalloc or jemalloc)")
        cls.folder = os.path.join(ROOT, "build", os.path.basename(BUILD.rstrip("/")) + VARIANT)
        shutil.rmtree(cls.folder, ignore_errors=True)
        cls.exe = os.path.join(cls.folder, "bin", "am-cell-system-" + NAME)
        p = make(f"VARIANT={VARIANT}", f"EXTERNAL={NAME}:{cls.lib}", os.path.relpath(cls.exe, ROOT))
        if p.returncode != 0:
            raise AssertionError(p.stdout[-2000:] + p.stderr[-2000:])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)

    def test_served_by_that_library(self):
        malloc = cell_malloc(self.exe)
        self.assertTrue(library_matches(self.lib, malloc), f"{self.lib}: malloc is {malloc!r}")
        self.assertFalse(library_matches("", malloc), f"{self.lib}: malloc is the C library's ({malloc!r})")

    def test_a_library_without_malloc_fails_the_check(self):
        """linked against libm, the row is served by the C library: the rule must say so"""
        libm = "/usr/lib/x86_64-linux-gnu/libm.so.6"
        if not os.path.exists(libm):
            self.skipTest(f"no {libm}")
        exe = os.path.join(self.folder, "bin", "am-cell-system-notmalloc")
        p = make(f"VARIANT={VARIANT}", f"EXTERNAL=notmalloc:{libm}", os.path.relpath(exe, ROOT))
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        malloc = cell_malloc(exe)
        self.assertFalse(library_matches(libm, malloc), f"{libm} passed as {malloc!r}")
        self.assertTrue(library_matches("", malloc))

    def test_runner_knows_the_row(self):
        row = "system-" + NAME
        with tempfile.TemporaryDirectory() as tmp:
            args = ["--build-root", os.path.dirname(self.folder), "--compilers", os.path.basename(self.folder),
                    "--allocators", row, "--baseline", row, "--workloads", "alloc_pair", "--sizes", "8",
                    "--samples", "3", "--min-ms", "1", "--cpu", "none", "--no-stats-tables"]
            p = runner(*args, "--out", os.path.join(tmp, "run"), external=f"{NAME}:{self.lib}")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(os.path.join(tmp, "run", "summary.csv"), newline="") as f:
                self.assertEqual([r["strategy"] for r in csv.DictReader(f)], [row])
            # without the value the row is not one of the runner's: bad input, nothing written
            p = runner(*args, "--out", os.path.join(tmp, "never"))
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "never")))


if __name__ == "__main__":
    unittest.main()
