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
from test_runner import BUILD, ROOT  # noqa: E402
from test_measured_code import build_rows, linked_rows, own_family  # noqa: E402
from runfolder import catalog  # noqa: E402


def rows():
    """(row, source) of allocators/strategies.txt"""
    return [(r.name, r.source) for r in catalog.read_rows()]


def partner_row():
    """the build's partner row (make PARTNER=), from its flags stamp"""
    with open(os.path.join(BUILD, "flags.txt")) as f:
        return f.read().rsplit("| partner ", 1)[1].split()[0]


def symbols(path):
    """(name, address) of each function an object or executable defines"""
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    return [(f[2], int(f[0], 16)) for f in (line.split() for line in out.splitlines())
            if len(f) == 3 and f[1] in "tT"]


def defined(path):
    return {name for name, _ in symbols(path)}


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
                if os.path.exists(os.path.join(ROOT, "allocators", source + ".cc")):
                    # a C++ row keeps the one definition C links against: no call or jump may reach it
                    code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True,
                                          text=True, check=True).stdout
                    self.assertNotRegex(code, rf"(call|jmp)\s+\S+ <{source}_(alloc|free)(>|\.(?!cold>))")
                else:
                    self.assertNotIn(source + "_alloc", names)
                    self.assertNotIn(source + "_free", names)
                # and the workloads are there: the check would pass on an empty binary
                self.assertIn("am_workload_list_create", names)

    def test_the_partner_s_row_lies_as_the_partner(self):
        # the cell of the partner's own row holds the same code twice, its
        # unit and the partner's: each function must sit at the same place
        # within a cache line in both, or the same loops run at two
        # alignments (clang's minimal ran alloc_pair 0-45% slower than the
        # partner; the Makefile's ALIGN)
        partner = partner_row()
        path = dict((row, p) for row, _, p in self.cells)[partner]
        in_main = defined(os.path.join(BUILD, partner, "cell_main.o"))
        places = {}
        for name, address in symbols(path):
            if name not in in_main and ".cold" not in name:
                places.setdefault(name, []).append(address % 64)
        twice = {name: a for name, a in places.items() if len(a) == 2}
        self.assertGreater(len(twice), 50, "too few functions found in both units")
        apart = sorted(f"{name} at {a[0]:#x} and {a[1]:#x}" for name, a in twice.items() if a[0] != a[1])
        self.assertEqual(apart, [], f"{len(apart)} of {len(twice)} functions lie apart within a cache line")

    def test_loops_start_on_a_cache_line(self):
        # where a loop starts within a line decided its speed: gcc's
        # thrash_pool ran 1.5 us a repetition in some rows and 2.2-2.9 in
        # others, its inner loop across a line or not; the compiler aligns
        # the loops it chooses, and only when told
        with open(os.path.join(BUILD, "flags.txt")) as f:
            flags = f.read().split(" | ")[0].split()
        self.assertIn("-falign-loops=64", flags)
        self.assertIn("-falign-functions=64", flags)

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
