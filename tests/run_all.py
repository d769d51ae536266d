#!/usr/bin/env python3
"""Runs allocmark's whole test suite and prints the closing "N passed, N failed".

1. builds every test binary (make tests-build), 2. runs each C test binary:
one per strategy and test file (tests/strategy/*.c) plus the unit tests
(tests/unit/*.c), 3. runs the Python tests (tests/python/test_*.py).
A binary that crashes or prints no summary counts as a failure."""
import argparse
import os
import subprocess
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_binary(path, timeout):
    """Runs one C test binary; returns (passed, failed, failure lines)."""
    try:
        p = subprocess.run([path], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 0, 1, [f"FAIL {path}: timed out after {timeout}s"]
    passed = failed = 0
    failures = []
    for line in p.stdout.splitlines():
        if line.startswith("PASS "):
            passed += 1
        elif line.startswith("FAIL "):
            failed += 1
            failures.append(line)
    if p.returncode != 0 and failed == 0:
        failed += 1
        failures.append(f"FAIL {path}: exit status {p.returncode}\n{p.stderr[-2000:]}")
    elif p.returncode != 0 and p.stderr:
        failures.append(p.stderr[-2000:])
    return passed, failed, failures


class CountingResult(unittest.TextTestResult):
    pass


def run_python_tests():
    loader = unittest.TestLoader()
    suite = loader.discover(os.path.join(ROOT, "tests", "python"), pattern="test_*.py",
                            top_level_dir=os.path.join(ROOT, "tests", "python"))
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=1).run(suite)
    failed = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    return passed, failed, skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--make", default="make")
    ap.add_argument("--build", default="build/cc")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--no-python", action="store_true")
    args = ap.parse_args()
    start = time.time()
    # the Python tests that run cells find them here (build/<cc><variant>)
    os.environ.setdefault("AM_BUILD", args.build)
    passed = failed = skipped = 0
    jobs = str(os.cpu_count() or 2)
    b = subprocess.run(args.make.split() + ["-j" + jobs, "--no-print-directory", "tests-build"], cwd=ROOT)
    if b.returncode != 0:
        print("FAIL build: make tests-build failed")
        failed += 1
    else:
        bins = []
        for sub in ("tests", "unit"):
            top = os.path.join(ROOT, args.build, sub)
            for dirpath, _, files in os.walk(top):
                bins += [os.path.join(dirpath, f) for f in files if not f.endswith((".o", ".d"))]
        for path in sorted(bins):
            p, f, lines = run_binary(path, args.timeout)
            rel = os.path.relpath(path, ROOT)
            print(f"{rel}: {p} passed, {f} failed")
            for line in lines:
                print("  " + line)
            passed += p
            failed += f
    if not args.no_python:
        p, f, s = run_python_tests()
        passed += p
        failed += f
        skipped += s
    print(f"test time: {time.time() - start:.0f} s")
    tail = f", {skipped} skipped" if skipped else ""
    print(f"{passed} passed, {failed} failed{tail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
