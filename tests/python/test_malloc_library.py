"""Which malloc a system-* row measures. Each cell names, in its JSON line, the
library that served malloc (the `malloc` field: the file that defines the
malloc the process is bound to, then the library's own version, or for a
library without a version call "at <the file's real path>"); a row whose
line in strategies.txt links -l<name> must name lib<name>, and the rows that
link nothing the C library. Without the check, a row linked without its library
(or a preload) would measure glibc under jemalloc's name.

The *-sized rows free with the library's sized call (what C++ sized delete
reaches): their measured executable must call it, and the plain rows must not.

Reads the executables with nm (binutils); skipped for Windows builds."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD, ROOT  # noqa: E402
from runfolder import catalog  # noqa: E402

# every malloc a Debian machine can install has its row (tools/need.sh installs
# them as root: make test, make bench)
LIBRARY_ROWS = ("system-jemalloc", "system-tcmalloc", "system-mimalloc", "system-tbbmalloc", "system-scudo")
SIZED_FREE = {"-ljemalloc": "sdallocx", "-ltcmalloc_minimal": "tc_free_sized", "-lmimalloc": "mi_free_size"}


def system_rows():
    """(row, cflags, libs) of the strategies.txt rows whose source is system"""
    return [(r.name, r.cflags, r.libs) for r in catalog.read_rows() if r.source == "system"]


def library_matches(libs, malloc):
    """The runner's rule (catalog.served_by_its_library) for a row linking libs."""
    return catalog.served_by_its_library(catalog.Row("", "system", "", libs, ""), malloc)


def cell_malloc(path, *extra):
    out = subprocess.run([path, "--workload", "alloc_pair", "--size", "8", "--reps", "1", "--samples", "1", *extra],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError(f"{path} exited {out.returncode}: {out.stderr}")
    return json.loads(out.stdout.splitlines()[-1]).get("malloc")


@unittest.skipUnless(shutil.which("nm"), "needs nm (binutils)")
class MallocLibrary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if "mingw" in BUILD:
            raise unittest.SkipTest("Windows executables: not run here")
        rows = ",".join(r for r, _, _ in system_rows())
        subprocess.run(["make", "--no-print-directory", "-j2", "cells", "ALLOCATORS=" + rows], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
        cls.built = [(r, c, l, os.path.join(BUILD, "bin", "am-cell-" + r)) for r, c, l in system_rows()
                     if os.path.exists(os.path.join(BUILD, "bin", "am-cell-" + r))]

    def test_each_row_names_its_library(self):
        self.assertIn("system", [r for r, _, _, _ in self.built])
        for row, _, libs, path in self.built:
            with self.subTest(row=row):
                malloc = cell_malloc(path)
                self.assertTrue(library_matches(libs, malloc), f"{row} links {libs} but malloc is {malloc!r}")
                self.assertRegex(malloc, r"\S+ \S+ \S+", "the library's version follows its file name")

    def test_every_library_has_its_row_built_where_it_links(self):
        listed = {r: libs for r, _, libs in system_rows()}
        with open(os.path.join(BUILD, "rows.txt")) as f:
            linked = f.read().split()
        for row in LIBRARY_ROWS:
            with self.subTest(row=row):
                self.assertIn(row, listed)
                if row in linked:
                    self.assertIn(row, [r for r, _, _, _ in self.built], f"{row} links but was not built")

    def test_each_row_runs_under_the_memory_limit(self):
        """the runner caps each cell's address space; Scudo reserves about 180
        GiB of it before main, which no cap may make every later mapping fail for"""
        for row, _, libs, path in self.built:
            with self.subTest(row=row):
                self.assertTrue(library_matches(libs, cell_malloc(path, "--mem-limit", str(4 << 30))))

    def test_row_linked_without_its_library_fails(self):
        """system-jemalloc's own objects linked without -ljemalloc: the check
        must refuse it, or it proves nothing."""
        row = next((b for b in self.built if b[2]), None)
        if row is None:
            self.skipTest("no library row built (jemalloc, tcmalloc, mimalloc missing)")
        name, _, libs, _ = row
        with open(os.path.join(BUILD, "flags.txt")) as f:
            # "cc flags | ldlibs | partner <row>" (the Makefile's flags stamp)
            cc, ldlibs, partner = f.read().strip().split(" | ")
        # the cell's objects as the Makefile links them, the trace reader among them
        objs = [os.path.join(BUILD, name, "row_unit.o"), os.path.join(BUILD, name, "cell_main.o"),
                os.path.join(BUILD, "partner-" + partner.split()[-1], "row_unit.o"),
                os.path.join(BUILD, "common", "recorder", "trace_read.o")]
        if any(not os.path.exists(o) for o in objs):
            self.skipTest("objects not found")
        with tempfile.TemporaryDirectory() as tmp:
            exe = os.path.join(tmp, "am-cell-unlinked")
            link = subprocess.run([cc.split()[0], "-o", exe] + objs + ldlibs.split(), capture_output=True, text=True)
            self.assertEqual(link.returncode, 0, link.stderr)
            malloc = cell_malloc(exe)
        self.assertFalse(library_matches(libs, malloc), f"{name} without {libs} passed as {malloc!r}")
        self.assertTrue(library_matches("", malloc), f"{name} without {libs}: malloc is {malloc!r}, not the C library")

    def test_sized_rows_call_the_sized_free(self):
        by_name = {r: (c, l, p) for r, c, l, p in self.built}
        sized = [r for r in by_name if r.endswith("-sized")]
        for libs, call in SIZED_FREE.items():
            plain = [r for r, (c, l, _) in by_name.items() if l == libs and not r.endswith("-sized")]
            for row in plain:
                with self.subTest(row=row):
                    self.assertIn(row + "-sized", sized, f"{row} has no sized row")
                    self.assertNotIn(call, undefined(by_name[row][2]), f"{row} calls {call}")
                    self.assertIn(call, undefined(by_name[row + "-sized"][2]),
                                  f"{row}-sized does not call {call}")


def undefined(path):
    """the symbols an executable takes from its libraries"""
    out = subprocess.run(["nm", "-u", path], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


if __name__ == "__main__":
    unittest.main()
