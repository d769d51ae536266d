#!/usr/bin/env python3
"""Runs allocmark's whole test suite and prints the closing
"N passed, N failed, N skipped".

1. builds every test binary (make tests-build), 2. runs each C test binary:
one per strategy and test file (tests/strategy/*.c) plus the unit tests
(tests/unit/*.c), --jobs at a time, 3. with --sanitizers, runs the strategy
tests of a few rows under ASan+UBSan (make check runs every row, and make
test leaves it to make check), 4. runs the Python tests
(tests/python/test_*.py) in a process of their own beside 2 and 3, and in a
second one once 2 ends (where the makes can take turns: tests/serial_make),
each taking the next module not yet taken, their output shown once all end. A binary that crashes, exits non-zero or prints
no PASS, FAIL or SKIP line counts as a failure; its SKIP lines count as
skipped, as the Python tests' skips do; so does a Python process that ends
without its counts. Each stage prints its time. Where it may (root, apt-get),
it installs Chromium for the report's browser test beside the build, not in
the Python tests' way."""
import argparse
import collections
import concurrent.futures
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

try:
    import fcntl  # tests/serial_make/make's lock: without it, one Python test process
except ImportError:
    fcntl = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from runfolder import catalog  # noqa: E402  (the one reader of allocators/strategies.txt)


# what one test binary did: counts of its PASS, FAIL and SKIP lines, the lines
# to show (failures, skips, the reason it failed as a whole) and its run time
Outcome = collections.namedtuple("Outcome", "passed failed skipped lines seconds")


def closing_line(passed, failed, skipped):
    """the last line of make test and make check, which CI and people read"""
    return f"{passed} passed, {failed} failed, {skipped} skipped"


def run_binary(path, timeout, prefix=(), extra=(), env_extra=None):
    """Runs one C test binary, under prefix when given (wine for MinGW builds,
    valgrind ...) with extra arguments (a name filter) and extra environment;
    returns its Outcome."""
    start = time.time()
    env = dict(os.environ)
    env.update(env_extra or {})
    # tcmalloc keeps one start-up allocation for life: not our leak
    env.setdefault("LSAN_OPTIONS", "suppressions=" + os.path.join(ROOT, "tests", "lsan.supp"))
    # Output goes to files, not pipes: a runner's helper processes (wine's
    # services) may inherit them and keep a pipe open long after the test ends.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            rc = subprocess.run([*prefix, path, *extra], cwd=ROOT, stdout=out, stderr=err,
                                timeout=timeout, env=env).returncode
        except subprocess.TimeoutExpired:
            return Outcome(0, 1, 0, [f"FAIL {path}: timed out after {timeout}s"], time.time() - start)
        out.seek(0)
        err.seek(0)
        p = subprocess.CompletedProcess(path, rc, out.read().decode(errors="replace"),
                                        err.read().decode(errors="replace"))
    passed = failed = skipped = 0
    lines = []
    for line in p.stdout.splitlines():
        if line.startswith("PASS "):
            passed += 1
        elif line.startswith("SKIP "):
            skipped += 1
            lines.append(line)
        elif line.startswith("FAIL "):
            failed += 1
            lines.append(line)
    if p.returncode != 0 and failed == 0:
        failed += 1
        lines.append(f"FAIL {path}: exit status {p.returncode}\n{p.stderr[-2000:]}")
    elif p.returncode != 0 and p.stderr:
        lines.append(p.stderr[-2000:])
    elif passed + failed + skipped == 0:
        # a binary that ran no test (a broken harness, a filter matching
        # nothing, the wrong file) proves nothing: not a pass
        failed += 1
        lines.append(f"FAIL {path}: exit status 0 but no PASS, FAIL or SKIP line\n{p.stderr[-2000:]}")
    return Outcome(passed, failed, skipped, lines, time.time() - start)


def row_sources():
    """{row: strategy source} from allocators/strategies.txt, the @virtual twins included"""
    return {r.name: r.source for r in catalog.with_virtual(catalog.read_rows())}


def built_for_row(path, sources=None):
    """False for build/.../tests/<row>/test_<source> of another source: the
    Makefile builds test_<source>.c for that source's rows only, and one left
    from an older build is not run"""
    sources = sources or row_sources()
    row = os.path.basename(os.path.dirname(path))
    name = os.path.basename(path)
    if name.endswith(".exe"):
        name = name[:-4]
    own = sources.get(row)
    if own is None or not name.startswith("test_"):
        return True
    return name[5:] == own or name[5:] not in sources.values()


def default_jobs(python_beside=False):
    """Test binaries at once: two at most; beside the Python tests, one CPU
    fewer, left to them: they are the stage that ends last, and on 2 CPUs
    make test took 452 s with one binary at a time against 477 s with two
    (docs/measurements.md, "make test")."""
    return max(1, min((os.cpu_count() or 2) - (1 if python_beside else 0), 2))


def run_binaries(bins, timeout, jobs, prefix=(), extra=(), env_extra=None):
    """Runs the binaries, jobs at a time (each is a process: threads only
    wait); yields (path, Outcome) in the given order."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(run_binary, b, timeout, prefix, extra, env_extra) for b in bins]
        for path, fut in zip(bins, futures):
            yield path, fut.result()


def slowest(timed, count=5):
    """'a 3.1 s, b 2.0 s' for the slowest binaries (relative to ROOT) or modules"""
    top = sorted(timed, key=lambda t: -t[1])[:count]
    return ", ".join(f"{os.path.relpath(p, ROOT) if os.path.isabs(p) else p} {t:.1f} s" for p, t in top)


class CountingResult(unittest.TextTestResult):
    pass


PYTHON_COUNTS = "python tests: "  # the last line of --python-only
MODULE_TIME = "module time: "  # a line of --python-only after each module
# the build folders the C stages write while the Python tests run, separated
# by os.pathsep: tests/python/test_build.py's check that make -n writes
# nothing leaves them out
BUILDS_IN_USE = "AM_BUILDS_IN_USE"


PYTHON_TESTS = os.path.join(ROOT, "tests", "python")
# a make in front of make, for the Python test processes: theirs take turns
SERIAL_MAKE = os.path.join(ROOT, "tests", "serial_make")


def take(claims, module):
    """True for the one process that takes the module first (a file made
    only if it is not there: claims is shared by the test processes)"""
    try:
        os.close(os.open(os.path.join(claims, module), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


def run_python_tests(claims):
    """Each test module not yet taken in the folder claims, in name order:
    (passed, failed, skipped) of those this process ran."""
    if not os.path.isdir(PYTHON_TESTS):
        return 0, 0, 0
    sys.path.insert(0, PYTHON_TESTS)
    modules = sorted(f[:-3] for f in os.listdir(PYTHON_TESTS) if f.startswith("test_") and f.endswith(".py"))
    loader = unittest.TestLoader()
    passed = failed = skipped = 0
    for module in modules:
        if not take(claims, module):
            continue
        print(f"-- {module}", flush=True)
        t0 = time.time()
        result = unittest.TextTestRunner(stream=sys.stdout, verbosity=1).run(loader.loadTestsFromName(module))
        # unittest's own "Ran N tests in" leaves out the module's import and its
        # setUpModule, where the cells are built
        print(f"{MODULE_TIME}{module} {time.time() - t0:.1f} s", flush=True)
        f = len(result.failures) + len(result.errors)
        s = len(result.skipped)
        passed, failed, skipped = passed + result.testsRun - f - s, failed + f, skipped + s
    return passed, failed, skipped


def install_ahead():
    """Starts installing, beside the build, what a Python test would install on
    its way, where it may (root, apt-get): Chromium for the report's browser
    test, a download of some 50 s on a fresh machine that would otherwise hold
    up the Python tests, the last stage to end. The test's own tools/need.sh
    then finds it. The process, or None."""
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        return None
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("apt-get"):
        return None  # the test says what to install, and skips
    return subprocess.Popen(["sh", os.path.join(ROOT, "tools", "need.sh"), "--for", "the report's browser test",
                             "chromium", "chromium"], cwd=ROOT)


def python_command(claims):
    return [sys.executable, os.path.abspath(__file__), "--python-only", "--claims", claims]


class PythonTests:
    """The Python tests in child processes (run_all.py --python-only), so that
    they wait on their cells and makes while the C tests use the CPUs: one
    from the start, a second (add) when a CPU is free. Each takes the modules
    the other has not; their makes take turns (tests/serial_make/make). The
    output of each goes to a file, shown by finish()."""

    def __init__(self):
        self.start = time.time()
        self.claims = tempfile.TemporaryDirectory()
        self.env = dict(os.environ, PATH=SERIAL_MAKE + os.pathsep + os.environ.get("PATH", ""),
                        AM_MAKE_LOCK=os.path.join(self.claims.name, "make.lock"))
        self.children = []
        self.add()

    def add(self):
        out = tempfile.TemporaryFile()
        proc = subprocess.Popen(python_command(self.claims.name), cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env=self.env)
        self.children.append((proc, out))

    def finish(self):
        """(passed, failed, skipped) of all, after printing each child's output"""
        total = [0, 0, 0]
        timed = []
        for i, (proc, out) in enumerate(self.children, 1):
            rc = proc.wait()
            out.seek(0)
            text = out.read().decode(errors="replace")
            out.close()
            if len(self.children) > 1:
                print(f"== Python test process {i} of {len(self.children)}")
            sys.stdout.write(text)
            counts = parse_python_counts(text)
            if counts is None:
                print(f"FAIL python tests: exit status {rc} before their counts")
                counts = (0, 1, 0)
            total = [a + b for a, b in zip(total, counts)]
            timed += module_times(text)
        if timed:
            print(f"slowest Python modules: {slowest(timed)}")
        self.claims.cleanup()
        return tuple(total)


def module_times(text):
    """[(module, seconds)] of a child's "module time:" lines"""
    timed = []
    for line in text.splitlines():
        if line.startswith(MODULE_TIME):
            words = line[len(MODULE_TIME):].split()
            try:
                timed.append((words[0], float(words[1])))
            except (IndexError, ValueError):
                pass
    return timed


def parse_python_counts(text):
    """(passed, failed, skipped) of the child's last counts line, or None"""
    for line in reversed(text.splitlines()):
        if line.startswith(PYTHON_COUNTS):
            try:
                return tuple(int(w) for w in line[len(PYTHON_COUNTS):].split()[::2])
            except ValueError:
                return None
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--make", default="make")
    ap.add_argument("--build", default="build/gcc")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=None,
                    help="test binaries run at once (default: 2, one CPU fewer beside the Python tests, "
                         "at least 1)")
    ap.add_argument("--no-python", action="store_true")
    ap.add_argument("--python-only", action="store_true",
                    help="run the Python tests alone, here, and end with their counts (what make test starts "
                         "beside the C tests)")
    ap.add_argument("--claims", default=None,
                    help="with --python-only: the folder the test processes share, each taking a module "
                         "by making its file there (default: a folder of its own, every module)")
    ap.add_argument("--runner", default="",
                    help="command to run each test binary with, e.g. 'wine' for MinGW builds")
    ap.add_argument("--cc", default="gcc", help="the compiler, for the sanitizer stage")
    # Off by default: make check runs every row under ASan+UBSan, and these
    # four rows' stage, beside the Python tests on two CPUs, took make test
    # past its 8 minutes (docs/measurements.md, "make test")
    ap.add_argument("--sanitizers", dest="sanitizers", action="store_true", default=False,
                    help="also run the strategy tests of four rows under ASan+UBSan "
                         "(make check covers every row)")
    ap.add_argument("--no-sanitizers", dest="sanitizers", action="store_false",
                    help="leave that stage out (the default)")
    args = ap.parse_args()
    if args.jobs is None:
        args.jobs = default_jobs(python_beside=not args.no_python)
    if args.python_only:
        if args.claims is None:
            with tempfile.TemporaryDirectory() as claims:
                p, f, s = run_python_tests(claims)
        else:
            p, f, s = run_python_tests(args.claims)
        print(PYTHON_COUNTS + closing_line(p, f, s), flush=True)
        return 1 if f else 0
    # sanitizer builds: leaks of libraries' own statics are not ours
    os.environ.setdefault("LSAN_OPTIONS", "suppressions=" + os.path.join(ROOT, "tests", "lsan.supp"))
    start = time.time()
    # the Python tests that run cells find them here (build/<cc><variant>)
    os.environ.setdefault("AM_BUILD", args.build)
    passed = failed = skipped = 0
    times = []
    ahead = None if args.no_python else install_ahead()
    t0 = time.time()
    b = subprocess.run(args.make.split() + ["-j" + str(os.cpu_count() or 2), "--no-print-directory", "tests-build"],
                       cwd=ROOT)
    times.append(("build", time.time() - t0))
    import run_check  # before the Python tests start: its first import writes its bytecode into tests/
    if args.sanitizers:
        os.environ[BUILDS_IN_USE] = os.path.join(ROOT, f"build/{run_check.ccname(args.cc)}-asan")
    if ahead:
        t0 = time.time()
        ahead.wait()  # before the Python tests, which would start it again
        times.append(("installs after the build", time.time() - t0))
    # after the build: the Python tests make cells in the same build folder
    python = None if args.no_python else PythonTests()
    if b.returncode != 0:
        print("FAIL build: make tests-build failed")
        failed += 1
    else:
        t0 = time.time()
        bins = []
        for sub in ("tests", "unit"):
            top = os.path.join(ROOT, args.build, sub)
            for dirpath, _, files in os.walk(top):
                bins += [os.path.join(dirpath, f) for f in files if not f.endswith((".o", ".d"))]
        sources = row_sources()
        bins = [b for b in bins if built_for_row(b, sources)]
        timed = []
        for path, o in run_binaries(sorted(bins), args.timeout, args.jobs, shlex.split(args.runner)):
            rel = os.path.relpath(path, ROOT)
            print(f"{rel}: {o.passed} passed, {o.failed} failed" + (f", {o.skipped} skipped" if o.skipped else ""))
            for line in o.lines:
                print("  " + line)
            passed += o.passed
            failed += o.failed
            skipped += o.skipped
            timed.append((path, o.seconds))
        times.append((f"{len(bins)} C test binaries", time.time() - t0))
        if timed:
            print(f"slowest: {slowest(timed)}")
    if python and fcntl and not args.sanitizers and (os.cpu_count() or 1) > 1:
        python.add()  # the CPU the C tests leave: the Python tests took 326 s of 445 alone
    if args.sanitizers:
        # the ASan+UBSan part of make check that fits here: the strategy
        # tests of a few rows, bug injections included
        # (tests/run_check.py runs every row, and the rest)
        # four hand-written strategies whose poisoning is their own: the whole
        # list (every source) costs ~8 min on 2 cores, past make test's budget
        rows = [r for r in run_check.source_rows() if r in ("minimal", "pool", "monotonic", "tls_size_class")]
        print(f"== strategy tests under ASan+UBSan, rows {','.join(rows)} (--sanitizers)",
              flush=True)
        t0 = time.time()
        args.verbose = False
        p, f, s = run_check.stage_asan(args, units=False, rows=rows)
        print(f"asan+ubsan: {closing_line(p, f, s)}, {time.time() - t0:.0f} s")
        times.append(("asan+ubsan (build and run)", time.time() - t0))
        passed += p
        failed += f
        skipped += s
    if python:
        print("== Python tests (run beside the C tests)", flush=True)
        p, f, s = python.finish()
        times.append((f"python tests (beside the C tests, {len(python.children)} processes)",
                      time.time() - python.start))
        passed += p
        failed += f
        skipped += s
    print("stage times: " + ", ".join(f"{name} {secs:.0f} s" for name, secs in times))
    print(f"test time: {time.time() - start:.0f} s")
    print(closing_line(passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
