"""What a measured cell executable contains. Each strategy's allocate and free
must be inlined into the workloads (no out-of-line copy of <source>_alloc or
<source>_free, as with a C++ template allocator), and a measured build must not
carry debug checks: no call to assert's failure handler. Until this test,
tls_size_class asserted its owner on every allocate and free in measured builds
(`#ifdef AM_DEBUG` where allocator.h defines AM_DEBUG 0), an out-of-line call
the other rows did not pay.

Reads the binaries with nm and objdump (binutils, which gcc brings); skipped
for builds that are not measured ones (-O0, sanitizers, DEBUG=1). Builds the
measured cells of every row that links, as test_measured_code does (no -stats
twin: nothing here reads one)."""
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD  # noqa: E402
from test_measured_code import build_rows, linked_rows, own_family  # noqa: E402
from runner import catalog  # noqa: E402


def rows():
    """(row, source) of allocators/strategies.txt"""
    return [(r.name, r.source) for r in catalog.read_rows()]


@unittest.skipUnless(shutil.which("nm") and shutil.which("objdump"), "needs nm and objdump (binutils)")
class MeasuredBuild(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if "mingw" in BUILD:
            raise unittest.SkipTest("Windows executables: not read here")
        linked = linked_rows()  # rows whose library is missing are not built
        bindir = build_rows(own_family(), linked)
        if bindir is None:
            raise unittest.SkipTest(f"{BUILD} is not a measured build (-O0, sanitizers or DEBUG=1)")
        cls.cells = [(row, source, os.path.join(bindir, "am-cell-" + row)) for row, source in rows() if row in linked]

    def test_every_row_found(self):
        names = [r for r, _, _ in self.cells]
        for row in ("system", "minimal", "pool", "fast_pool", "monotonic", "tls_size_class",
                    "mmap_arena", "concurrent_pool"):
            self.assertIn(row, names)

    def test_fast_path_inlined(self):
        for row, source, path in self.cells:
            with self.subTest(row=row):
                symbols = subprocess.run(["nm", path], capture_output=True, text=True,
                                         check=True).stdout.split("\n")
                names = {line.split()[-1] for line in symbols if len(line.split()) == 3}
                self.assertNotIn(source + "_alloc", names)
                self.assertNotIn(source + "_free", names)
                # and the workloads are there: the check would pass on an empty binary
                self.assertIn("am_workload_list_create", names)

    def test_no_asserts(self):
        for row, _, path in self.cells:
            with self.subTest(row=row):
                code = subprocess.run(["objdump", "-d", path], capture_output=True, text=True,
                                      check=True).stdout
                calls = [line for line in code.split("\n") if "call" in line and "__assert_fail" in line]
                self.assertEqual(calls, [], f"{row}: {len(calls)} calls to __assert_fail")
                self.assertIn("<main>:", code)


if __name__ == "__main__":
    unittest.main()
