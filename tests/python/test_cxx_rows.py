"""The C++ rows (a strategy source with a .cc beside its .h and .c: pmr.cc,
boost_lib.cc, boost_fast_lib.cc): the Makefile's probe keeps them where their
source compiles as C++17 and leaves out only them, saying what to install,
where the C++ compiler or Boost's headers are missing; a C++ row cannot be the
partner; and where they are built, the fast paths of the pmr rows and of the
boost-fast_pool rows are inlined into the C containers (link-time
optimisation), not called, and the pool resources' do_allocate, which is in
the C++ library, is called directly, not through the vtable."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD, ROOT  # noqa: E402
from runfolder import catalog  # noqa: E402

VARIANT = "-cxx-probe-test"
CXX_ROWS = {"pmr-monotonic": "pmr", "pmr-pool": "pmr", "pmr-sync-pool": "pmr", "boost-pool": "boost_lib",
            "boost-fast_pool": "boost_fast_lib", "boost-fast_pool-mutex": "boost_fast_lib"}
PMR_ROWS = [r for r in CXX_ROWS if r.startswith("pmr-")]
# the pool resources' classes, whose do_allocate and do_deallocate libstdc++.so defines
POOL_CLASSES = {"pmr-pool": "unsynchronized_pool_resource", "pmr-sync-pool": "synchronized_pool_resource"}
BOOST_ROWS = [r for r in CXX_ROWS if r.startswith("boost-")]


def make(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "CXX")}
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True, env=env)


def rows_in(path):
    with open(path) as f:
        return set(f.read().split())


def strategies():
    """{row: source} of the rows (runfolder/catalog.py reads strategies.txt)"""
    return {r.name: r.source for r in catalog.read_rows()}


class Listed(unittest.TestCase):
    def test_rows_and_their_cxx_sources(self):
        rows = strategies()
        for row, src in CXX_ROWS.items():
            self.assertEqual(rows.get(row), src, f"{row} is not a row of strategies.txt with source {src}")
            for ext in (".h", ".c", ".cc"):
                self.assertTrue(os.path.exists(os.path.join(ROOT, "allocators", src + ext)), src + ext)

    def test_a_cxx_row_is_no_partner(self):
        p = make("-n", "PARTNER=pmr-monotonic", "cells")
        self.assertEqual(p.returncode, 2)
        self.assertIn("is a C++ row", p.stderr)


@unittest.skipUnless(shutil.which("g++") and shutil.which("gcc"), "gcc and g++ are not both installed")
class Probe(unittest.TestCase):
    """make's probe with a C++ compiler that cannot do what the rows need"""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="am-cxx-")
        self.build = os.path.join(ROOT, "build", "gcc" + VARIANT)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(self.build, ignore_errors=True)

    def probe(self, cxx):
        shutil.rmtree(self.build, ignore_errors=True)
        p = make("CC=gcc", f"VARIANT={VARIANT}", f"CXX={cxx}", f"build/gcc{VARIANT}/rows.txt")
        self.assertEqual(p.returncode, 0, p.stderr)
        return rows_in(os.path.join(self.build, "rows.txt")), p.stderr

    def test_without_boost_headers_only_the_boost_rows_are_left_out(self):
        # a boost/pool/pool.hpp that stops the compiler stands for the header missing
        os.makedirs(os.path.join(self.dir, "boost", "pool"))
        with open(os.path.join(self.dir, "boost", "pool", "pool.hpp"), "w") as f:
            f.write("#error no Boost here\n")
        rows, said = self.probe(f"g++ -isystem {self.dir}")
        self.assertFalse(set(BOOST_ROWS) & rows)
        self.assertTrue(set(PMR_ROWS) <= rows)
        self.assertTrue({"system", "minimal", "pool", "fast_pool", "fast_pool-mutex", "monotonic"} <= rows)
        for row in BOOST_ROWS:
            self.assertRegex(said, rf"row {row} left out: allocators/{CXX_ROWS[row]}\.cc does not compile.*libboost-dev")

    def test_without_a_cxx_compiler_only_the_cxx_rows_are_left_out(self):
        rows, said = self.probe(os.path.join(self.dir, "no-such-g++"))
        self.assertFalse(set(CXX_ROWS) & rows)
        self.assertTrue({"system", "minimal", "pool", "fast_pool", "fast_pool-mutex", "monotonic"} <= rows)
        for row in CXX_ROWS:
            self.assertRegex(said, rf"row {row} left out: the C\+\+ compiler .*no-such-g\+\+ is not installed; install g\+\+")


class Inlined(unittest.TestCase):
    """the fast path a C container calls is the resource's own code, inlined,
    with each compiler whose build is here (clang inlines less than gcc)"""

    def cells(self, row):
        """[(compiler, the disassembly of its am-cell-<row>)] of gcc's and clang's builds"""
        if not shutil.which("objdump"):
            self.skipTest("objdump is missing")
        found = []
        for compiler in ("gcc", "clang"):
            path = os.path.join(ROOT, "build", compiler, "bin", "am-cell-" + row)
            if os.path.exists(path):
                found.append((compiler, subprocess.run(["objdump", "-d", "--no-show-raw-insn", path],
                                                       capture_output=True, text=True, check=True).stdout))
        if not found:
            self.skipTest(f"am-cell-{row} is not built here (no C++ compiler or Boost)")
        return found

    def test_pmr_alloc_and_free_are_not_called(self):
        for row in PMR_ROWS:
            for compiler, text in self.cells(row):
                with self.subTest(row=row, compiler=compiler):
                    calls = re.findall(r"call\s+\S+ <(pmr_alloc|pmr_free)[>.]", text)
                    self.assertEqual(calls, [], "pmr_alloc/pmr_free are called, not inlined")

    def test_pmr_monotonic_do_allocate_is_inlined(self):
        # neither the vtable's call nor a direct one: clang left the resource's
        # do_allocate a call while pmr.cc went through allocate()
        for compiler, text in self.cells("pmr-monotonic"):
            with self.subTest(compiler=compiler):
                self.assertNotRegex(text, r"call\s+\S+ <_ZNSt3pmr25monotonic_buffer_resource1\d+do_(de)?allocate")

    def test_pmr_pool_do_allocate_is_called_directly(self):
        # the pools' do_allocate is in libstdc++.so: a call remains, and it is
        # to the function itself, not the vtable's (gcc 12 kept that one
        # through allocate() and the final type)
        for row, cls in POOL_CLASSES.items():
            for compiler, text in self.cells(row):
                with self.subTest(row=row, compiler=compiler):
                    for f in ("11do_allocateEmm", "13do_deallocateEPvmm"):
                        mangled = f"_ZNSt3pmr{len(cls)}{cls}{f}"
                        direct = re.search(rf"call\s+\S+ <{mangled}(@plt)?>", text)
                        self.assertIsNotNone(direct, f"no direct call to {mangled}")

    def test_boost_fast_pool_calls_are_inlined(self):
        # fast_pool_allocator's allocate and deallocate, for one object and
        # for arrays, are templates a C++ container inlines; only Boost's
        # walks (ordered_malloc(n), free(p, n)) and new blocks stay calls
        for row in ("boost-fast_pool", "boost-fast_pool-mutex"):
            for compiler, text in self.cells(row):
                with self.subTest(row=row, compiler=compiler):
                    calls = re.findall(r"(?:call|jmp)\s+\S+ <(boost_fast_lib_(?:alloc|free)(?:_array)?)[>.]", text)
                    self.assertEqual(calls, [], f"{row}: called, not inlined")


if __name__ == "__main__":
    unittest.main()
