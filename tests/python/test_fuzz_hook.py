"""The fuzzer's deliberate bugs (make fuzz-selftest) stay out of measured code:
they are written in fuzz/inject.h alone, the allocators reach them only
through AM_FUZZ_HOOK, and a build that could be measured (no ASan, AM_STATS=0)
does not compile with -DAM_FUZZ_INJECT. That the self-test still finds both
bugs is the fuzz-selftest stage of make check."""
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD, ROOT  # noqa: E402


def build_cc():
    """the compiler of the build under test (its flags.txt), else cc"""
    try:
        with open(os.path.join(BUILD, "flags.txt")) as f:
            return f.read().split()[0]
    except (OSError, IndexError):
        return "cc"


class FuzzHook(unittest.TestCase):
    def test_bugs_only_in_inject_h(self):
        for folder in ("allocators", "containers", "workloads", "runner", "platform"):
            for name in os.listdir(os.path.join(ROOT, folder)):
                if not name.endswith((".c", ".h")):
                    continue
                with open(os.path.join(ROOT, folder, name)) as f:
                    text = f.read()
                with self.subTest(file=f"{folder}/{name}"):
                    uses = re.findall(r"AM_FUZZ_INJECT\s*==", text)
                    self.assertEqual(uses, [], "a deliberate bug outside fuzz/inject.h")
        with open(os.path.join(ROOT, "fuzz", "inject.h")) as f:
            self.assertIn("AM_FUZZ_INJECT == 1", f.read())

    def test_measured_build_cannot_carry_a_bug(self):
        cc = build_cc()
        if "mingw" in cc or not shutil.which(cc):
            self.skipTest(f"{cc}: not a native compiler here")
        for n, source in ((1, "allocators/boost_pool.c"), (2, "allocators/concurrent_pool.c")):
            with self.subTest(bug=n):
                p = subprocess.run([cc, "-std=c11", "-O2", "-Iplatform", "-Iallocators", "-DAM_STATS=0",
                                    f"-DAM_FUZZ_INJECT={n}", "-fsyntax-only", source],
                                   cwd=ROOT, capture_output=True, text=True)
                self.assertNotEqual(p.returncode, 0, f"{source} compiled with bug {n} in a measured build")
                self.assertIn("fuzzer's self-test build only", p.stderr)


if __name__ == "__main__":
    unittest.main()
