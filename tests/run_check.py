#!/usr/bin/env python3
"""make check: allocmark's slower checks, each in a build folder of its own, and
a closing "N passed, N failed, N skipped" like make test's, which names the
stages skipped. Stages (--only picks some):

  asan      every C test under AddressSanitizer + UBSan (build/<cc>-asan), halting on
            the first error, including the bug-injection tests of test_detection.c
  debug     every C test with the allocmark debug layer, DEBUG=1 (build/<cc>-debug)
  tsan      the threaded tests (name filter "thread") under ThreadSanitizer (build/<cc>-tsan);
            only the test files that have such tests are built
  valgrind  the system row's tests under valgrind memcheck, no sanitizers (build/<cc>-valgrind)
  fuzz      fuzz/fuzz_allocator.c per row with clang + libFuzzer (build/clang-fuzz):
            --fuzz-runs executions each, but no more than --fuzz-cap seconds a row
            (make check: 20000 runs or 20 s), or --fuzz-seconds each (make fuzz);
            executions per row go to build/fuzz-stats.txt
  fuzz-selftest  rows built with a deliberate bug (-DAM_FUZZ_INJECT=n): the fuzzer
            must find each from an empty corpus within 60 s (build/clang-fuzz-inject<n>)

Sanitizer, valgrind and fuzz stages leave out rows linked against another malloc
(system-jemalloc ...): the tool's own malloc replaces theirs. A stage whose tool is
missing is skipped with a message (tools/need.sh says what to install) and
named in the closing line; skipped stages alone do not make the exit status
non-zero."""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run_all  # noqa: E402
from runfolder import catalog  # noqa: E402  (run_all put the repository on the path)

SAN_FLAGS = "-g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
SAN_LDFLAGS = "-fsanitize=address,undefined"
ASAN_ENV = {
    "ASAN_OPTIONS": "halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    "LSAN_OPTIONS": "suppressions=" + os.path.join(ROOT, "tests", "lsan.supp"),
}
STAGES = ("asan", "debug", "tsan", "valgrind", "fuzz", "fuzz-selftest")
# no vptr check: it needs clang's C++ UBSan runtime, which the C driver linking the fuzzer leaves out (the C++ rows)
FUZZ_FLAGS = "-g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all -fno-omit-frame-pointer"
# fuzz-selftest: a row built with a deliberate bug (AM_FUZZ_INJECT=n, compiled
# in nowhere else) that the fuzzer must find from an empty corpus
INJECTED = ((1, "fast_pool", "chunks carved 16 bytes short of their partition: neighbours overlap"),
            (2, "concurrent_pool", "slot 7 of a chunk pushed twice on free: handed out twice"))
SELFTEST_SECONDS = 60


def plain_rows():
    """rows of strategies.txt that link no other malloc"""
    return [r.name for r in catalog.read_rows() if not r.libs]


def source_rows():
    """one row per strategy source, the row named after it (system, minimal,
    pool ...): what make test runs under ASan; variants of a source differ
    in a flag or the malloc linked, and make check runs them all"""
    return [r.name for r in catalog.read_rows() if r.name == r.source and not r.libs]


def chosen_rows(args):
    """the plain rows, or those of them that --rows names"""
    rows = plain_rows()
    return [r for r in rows if r in args.rows] if getattr(args, "rows", None) else rows


def ccname(cc):
    return os.path.basename(cc.split()[0])


def need(*args):
    return subprocess.run([os.path.join(ROOT, "tools", "need.sh"), *args], cwd=ROOT).returncode == 0


# make check builds the strategy tests at the optimisation the cells are
# measured at (make test's default, -O1, builds faster)
CHECK_TEST_OPT = "-O2"


def make(args, target, **variables):
    variables.setdefault("TEST_OPT", CHECK_TEST_OPT)
    cmd = args.make.split() + ["-j" + str(os.cpu_count() or 2), "--no-print-directory"] + target.split()
    cmd += [f"{k}={v}" for k, v in variables.items()]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout[-3000:] + p.stderr[-3000:])
    return p.returncode == 0


def binaries(build, subs=("tests", "unit"), rows=None):
    """test binaries under build/<sub>; with rows, strategy tests of those rows only
    (the folder may hold others from earlier builds)"""
    bins = []
    for sub in subs:
        for dirpath, _, files in os.walk(os.path.join(ROOT, build, sub)):
            if sub == "tests" and rows is not None and os.path.basename(dirpath) not in rows:
                continue
            bins += [os.path.join(dirpath, f) for f in files if not f.endswith((".o", ".d"))]
    sources = run_all.row_sources()
    return sorted(b for b in bins if run_all.built_for_row(b, sources))


def run_bins(bins, args, prefix=(), extra=(), env=None):
    """runs the binaries (optionally under a tool), args.jobs at a time, prints
    a line each; returns (passed, failed, skipped)"""
    passed = failed = skipped = 0
    jobs = getattr(args, "jobs", None) or run_all.default_jobs()
    for path, o in run_all.run_binaries(bins, args.timeout, jobs, prefix=list(prefix),
                                        extra=list(extra), env_extra=env):
        print(f"  {os.path.relpath(path, ROOT)}: {run_all.closing_line(o.passed, o.failed, o.skipped)}", flush=True)
        for line in o.lines:
            if not line.startswith("SKIP ") or args.verbose:
                print("    " + line.replace("\n", "\n    "))
        passed += o.passed
        failed += o.failed
        skipped += o.skipped
    return passed, failed, skipped


def strategy_targets(build, rows, files):
    """build/.../tests/<row>/<file> for each row and each of the files built for it"""
    sources = run_all.row_sources()
    targets = [os.path.join(build, "tests", r, t) for r in rows for t in files]
    return [t for t in targets if run_all.built_for_row(t, sources)]


def strategy_test_files():
    top = os.path.join(ROOT, "tests", "strategy")
    return sorted(f[:-2] for f in os.listdir(top) if f.endswith(".c"))


def stage_asan(args, units=True, rows=None):
    """rows: the rows to build and run (default: --rows, or every row without a
    malloc of its own). Without units, only the rows' strategy tests are built."""
    build = f"build/{ccname(args.cc)}-asan"
    rows = rows or chosen_rows(args)
    targets = "tests-build" if units else " ".join(strategy_targets(build, rows, strategy_test_files()))
    if not make(args, targets, CC=args.cc, VARIANT="-asan", EXTRA_CFLAGS=SAN_FLAGS,
                EXTRA_LDFLAGS=SAN_LDFLAGS, ALLOCATORS=",".join(rows)):
        return 0, 1, 0
    return run_bins(binaries(build, ("tests", "unit") if units else ("tests",), rows), args, env=ASAN_ENV)


def stage_debug(args):
    build = f"build/{ccname(args.cc)}-debug"
    if not make(args, "tests-build", CC=args.cc, DEBUG=1):
        return 0, 1, 0
    return run_bins(binaries(build, ("tests",)), args)


def threaded_test_files():
    """tests/strategy files that name a test "...thread...": the only ones the
    tsan stage runs (with the name filter "thread"), so the only ones it builds"""
    out = []
    top = os.path.join(ROOT, "tests", "strategy")
    for f in sorted(os.listdir(top)):
        if f.endswith(".c"):
            with open(os.path.join(top, f)) as src:
                if re.search(r'\{"\w*thread', src.read()):
                    out.append(f[:-2])
    return out


def stage_tsan(args):
    build = f"build/{ccname(args.cc)}-tsan"
    rows = chosen_rows(args)
    targets = strategy_targets(build, rows, threaded_test_files())
    if not make(args, " ".join(targets), CC=args.cc, VARIANT="-tsan",
                EXTRA_CFLAGS="-g -fsanitize=thread -fno-omit-frame-pointer", EXTRA_LDFLAGS="-fsanitize=thread",
                ALLOCATORS=",".join(rows)):
        return 0, 1, 0
    env = {"TSAN_OPTIONS": "halt_on_error=1:second_deadlock_stack=1"}
    return run_bins(sorted(os.path.join(ROOT, t) for t in targets), args, extra=["thread"], env=env)


def stage_valgrind(args):
    if not need("valgrind", "valgrind"):
        return None
    # a folder of its own: valgrind 3.19 cannot read clang 14's default DWARF 5
    build = f"build/{ccname(args.cc)}-valgrind"
    if not make(args, "tests-build", CC=args.cc, VARIANT="-valgrind", EXTRA_CFLAGS="-gdwarf-4",
                ALLOCATORS="system"):
        return 0, 1, 0
    tool = ["valgrind", "--quiet", "--error-exitcode=1", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--trace-children=no",
            "--suppressions=" + os.path.join(ROOT, "tests", "valgrind.supp")]
    return run_bins(binaries(build + "/tests/system", ("",)), args, prefix=tool)


def fuzz_toolchain(cc):
    """1 if cc links a libFuzzer target, after installing the runtime where possible"""
    probe = "int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n"

    def links():
        p = subprocess.run([cc, "-x", "c", "-", "-fsanitize=fuzzer,address,undefined", "-o", os.devnull],
                           input=probe, capture_output=True, text=True)
        return p.returncode == 0
    if not need(cc, "clang"):
        return False
    if links():
        return True
    major = subprocess.run([cc, "-dumpversion"], capture_output=True, text=True).stdout.split(".")[0]
    rt = subprocess.run([cc, "--print-runtime-dir"], capture_output=True, text=True).stdout.strip()
    need("--file", os.path.join(rt, "libclang_rt.fuzzer-x86_64.a"), f"libclang-rt-{major}-dev")
    return links()


def stage_fuzz(args):
    cc = args.fuzz_cc
    if not fuzz_toolchain(cc):
        print(f"  skipped: {cc} cannot build libFuzzer targets")
        return None
    build = f"build/{ccname(cc)}-fuzz"
    rows = chosen_rows(args)
    if not make(args, "fuzz-build", CC=cc, VARIANT="-fuzz", EXTRA_CFLAGS=FUZZ_FLAGS,
                EXTRA_LDFLAGS=SAN_LDFLAGS, ALLOCATORS=",".join(rows)):
        return 0, 1, 0
    passed = failed = 0
    stats = []
    # the cap keeps make check's time bounded on a slow or busy machine: a row
    # whose inputs each create a 16 MiB heap under ASan (monotonic) manages
    # fewer than 100 executions a second there
    if args.fuzz_seconds:
        limit = [f"-max_total_time={args.fuzz_seconds}"]
    else:
        limit = [f"-runs={args.fuzz_runs}"] + ([f"-max_total_time={args.fuzz_cap}"] if args.fuzz_cap else [])
    for row in rows:
        exe = os.path.join(ROOT, build, "fuzz", row, "fuzz_allocator")
        work = os.path.join(ROOT, build, "corpus", row)
        os.makedirs(work, exist_ok=True)
        cmd = [exe, work, os.path.join(ROOT, "fuzz", "corpus"), "-print_final_stats=1", "-max_len=2048",
               "-seed=1", "-artifact_prefix=" + os.path.join(ROOT, build, row + "-")] + limit
        start = time.time()
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        m = re.search(r"stat::number_of_executed_units:\s*(\d+)", p.stderr)
        execs = int(m.group(1)) if m else 0
        ok = p.returncode == 0 and execs > 0
        line = f"{row}: {execs} executions in {time.time() - start:.0f} s, {'ok' if ok else 'FAILED'}"
        stats.append(line)
        print("  fuzz " + line)
        if ok:
            passed += 1
        else:
            failed += 1
            print("    " + p.stderr[-3000:].replace("\n", "\n    "))
    out = os.path.join(ROOT, "build", "fuzz-stats.txt")
    with open(out + ".tmp", "w") as f:
        f.write("\n".join(stats) + "\n")
    os.replace(out + ".tmp", out)
    print(f"  executions per row written to {os.path.relpath(out, ROOT)}")
    return passed, failed, 0


def stage_fuzz_selftest(args):
    """Does the fuzzer find bugs? Each injected row must crash with a report
    (ASan's or fuzz_allocator's own) within SELFTEST_SECONDS, starting from an
    empty corpus, so that the search finds it, not the seed inputs."""
    cc = args.fuzz_cc
    if not fuzz_toolchain(cc):
        print(f"  skipped: {cc} cannot build libFuzzer targets")
        return None
    passed = failed = 0
    for n, row, what in INJECTED:
        variant = f"-fuzz-inject{n}"
        if not make(args, "fuzz-build", CC=cc, VARIANT=variant, EXTRA_CFLAGS=f"{FUZZ_FLAGS} -DAM_FUZZ_INJECT={n}",
                    EXTRA_LDFLAGS=SAN_LDFLAGS, ALLOCATORS=row):
            failed += 1
            continue
        build = os.path.join(ROOT, f"build/{ccname(cc)}{variant}")
        work = os.path.join(build, "corpus-empty")
        if os.path.isdir(work):
            for f in os.listdir(work):
                os.remove(os.path.join(work, f))
        os.makedirs(work, exist_ok=True)
        cmd = [os.path.join(build, "fuzz", row, "fuzz_allocator"), work, "-print_final_stats=1", "-max_len=2048",
               "-seed=1", f"-max_total_time={SELFTEST_SECONDS}", "-artifact_prefix=" + build + "/"]
        start = time.time()
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        m = re.search(r"stat::number_of_executed_units:\s*(\d+)", p.stderr)
        report = re.search(r"^(SUMMARY: \S+: [\w-]+|fuzz_allocator\[[^]]*\]: [^(]*)", p.stderr, re.M)
        found = p.returncode != 0 and report is not None
        print(f"  AM_FUZZ_INJECT={n} ({row}: {what}): " +
              (f"found after {m.group(1) if m else '?'} executions, {time.time() - start:.1f} s: "
               f"{report.group(1).strip()}" if found else
               f"NOT found in {SELFTEST_SECONDS} s (exit status {p.returncode})"), flush=True)
        if found:
            passed += 1
        else:
            failed += 1
            print("    " + p.stderr[-2000:].replace("\n", "\n    "))
    return passed, failed, 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", default="make")
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--fuzz-cc", default="clang")
    ap.add_argument("--only", default=",".join(STAGES), help="comma-separated stages")
    ap.add_argument("--rows", default="", help="comma-separated rows for the asan, tsan and fuzz stages "
                    "(default: every row linked against no other malloc)")
    ap.add_argument("--fuzz-runs", type=int, default=20000)
    ap.add_argument("--fuzz-seconds", type=int, default=0, help="fuzz each row this long (make fuzz)")
    ap.add_argument("--fuzz-cap", type=int, default=20,
                    help="with --fuzz-runs: at most this many seconds a row (0: no cap)")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--jobs", type=int, default=run_all.default_jobs(), help="test binaries run at once")
    ap.add_argument("--verbose", action="store_true", help="also list skipped tests")
    args = ap.parse_args()
    todo = [s for s in args.only.split(",") if s]
    for s in todo:
        if s not in STAGES:
            ap.error(f"unknown stage {s}; stages: {', '.join(STAGES)}")
    args.rows = [r for r in args.rows.split(",") if r]
    for r in args.rows:
        if r not in plain_rows():
            ap.error(f"unknown or malloc-linked row {r}; rows: {', '.join(plain_rows())}")
    names = {"asan": f"asan+ubsan ({ccname(args.cc)})", "debug": f"DEBUG=1 ({ccname(args.cc)})",
             "tsan": f"tsan, threaded tests ({ccname(args.cc)})", "valgrind": "valgrind memcheck, system row",
             "fuzz": f"fuzz ({ccname(args.fuzz_cc)})",
             "fuzz-selftest": f"fuzz self-test, injected bugs ({ccname(args.fuzz_cc)})"}
    results = []
    start = time.time()
    for s in todo:
        print(f"== {names[s]}", flush=True)
        t0 = time.time()
        r = globals()["stage_" + s.replace("-", "_")](args)
        results.append((s, r, time.time() - t0))
    print("== summary")
    print(summary(results, names, time.time() - start))
    return 1 if any(r and r[1] for _, r, _ in results) else 0


def summary(results, names, seconds):
    """A line a stage, then the closing one: [(stage, (passed, failed,
    skipped) or None when the stage was skipped, seconds)] -> text."""
    out = []
    passed = failed = skipped = 0
    skipped_stages = []
    for s, r, secs in results:
        if r is None:
            out.append(f"{names[s]}: skipped (tool missing), {secs:.0f} s")
            skipped_stages.append(s)
            continue
        out.append(f"{names[s]}: {run_all.closing_line(*r)}, {secs:.0f} s")
        passed, failed, skipped = passed + r[0], failed + r[1], skipped + r[2]
    out.append(f"check time: {seconds:.0f} s")
    tail = f"; stages skipped: {', '.join(skipped_stages)}" if skipped_stages else ""
    out.append(run_all.closing_line(passed, failed, skipped) + tail)
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
