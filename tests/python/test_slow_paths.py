"""One naming rule for slow paths (allocators/allocator.h, README "Adding a
strategy"): an inline fast path branches out to one function named after it
with _slow appended (S_alloc -> S_alloc_slow, bp_malloc -> bp_malloc_slow),
declared AM_NOINLINE in the strategy's header. So every AM_NOINLINE in a
strategy header is such a function, and every strategy has its S_alloc_slow."""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import ROOT  # noqa: E402
from test_measured_build import rows  # noqa: E402

ALLOCATORS = os.path.join(ROOT, "allocators")
# the C++ rows' slow paths are their library's own code (pmr.cc, boost_lib.cc)
EXEMPT = {f[:-3] for f in os.listdir(ALLOCATORS) if f.endswith(".cc")}
NOINLINE = re.compile(r"^AM_NOINLINE\s+[\w\s]+?\**\s*(\w+)\s*\(", re.M)


def sources():
    return sorted({source for _, source in rows()} - EXEMPT)


def noinline_names(header):
    with open(os.path.join(ALLOCATORS, header)) as f:
        return NOINLINE.findall(f.read())


class SlowPathNames(unittest.TestCase):
    def test_noinline_functions_are_slow_paths(self):
        headers = [h for h in os.listdir(ALLOCATORS) if h.endswith(".h") and h[:-2] not in EXEMPT]
        found = 0
        for h in headers:
            for name in noinline_names(h):
                found += 1
                with self.subTest(header=h, function=name):
                    self.assertTrue(name.endswith("_slow"), f"{h}: AM_NOINLINE {name} is not named <fast path>_slow")
        self.assertGreater(found, 5)

    def test_every_strategy_has_its_alloc_slow(self):
        for source in sources():
            with self.subTest(strategy=source):
                self.assertIn(source + "_alloc_slow", noinline_names(source + ".h"))


if __name__ == "__main__":
    unittest.main()
