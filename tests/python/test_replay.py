"""The replay of a recorded trace (the workload trace, am-cell --trace FILE;
docs/trace.md, "Replay"), through cells built as make builds them:

- faithful: for traces recorded from real programs (a C program making every
  call of the malloc family on one thread, python3), the -stats cell's
  replay makes the calls of each kind, reaches the peak live bytes and ends
  with the live bytes that the trace's closing record counts, and its
  counting wrapper sees one allocation and one free a block;
- every row replays the same calls: one checksum and one inputs digest on
  the malloc row, a pool, a one-size pool (heaps per size class, its
  allocations beyond the largest class counted) and a monotonic arena; two
  traces have different digests;
- a strategy that frees nothing, past its limit, is skipped with a reason;
- bad input (no file, not a trace, --trace beside another workload) exits 2
  with a message, and --help documents --trace;
- a trace of several threads (a pthread program whose threads free and
  resize each other's blocks) replays on as many threads through every row
  of the build: faithful to its closing record, one checksum and digest on
  every thread-safe row, "not applicable" on the others;
- the replay's own instructions a call (workloads/trace.c's, under
  callgrind, gcc) at most 25 on the malloc row and minimal.
The runner's --trace (make bench and make count TRACE=) is
test_runner_traces.py's."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_recorder import INFO, KINDS, LIB, LINUX, ROOT, make  # noqa: E402
from test_runner import BUILD, COMPILER, ensure_cells  # noqa: E402

ROWS = "system,pool,concurrent_pool,monotonic"

# one thread, every call of the malloc family, blocks of many sizes, some
# left live at exit; -fno-builtin keeps every call a call
PROGRAM = r"""
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    static void *keep[64];
    for (int i = 0; i < 400; i++) {
        size_t n = (size_t)(i * 37 % 5000) + (i % 7 == 0 ? 0 : 1);
        char *a = malloc(n), *b = calloc(i % 9 + 1, 24);
        a = realloc(a, n * 2 + 1);
        b = reallocarray(b, i % 5 + 2, 40);
        void *c = NULL;
        if (posix_memalign(&c, 64 << (i % 3), n + 8) != 0) return 1;
        void *d = aligned_alloc(32, 96), *e = memalign(256, 40), *f = valloc(100), *g = pvalloc(10);
        char *h = realloc(NULL, 33);
        h = realloc(h, 0);            /* glibc frees it */
        free(NULL);
        if (a) memset(a, 1, 1);
        free(keep[i % 64]);
        keep[i % 64] = i % 2 ? (void *)a : (void *)b;
        free(i % 2 ? (void *)b : (void *)a);
        free(c); free(d); free(e); free(f); free(g); free(h);
    }
    return 0;
}
"""


def cell(row, trace, *extra, name="trace:t"):
    exe = os.path.join(ROOT, BUILD, "bin", "am-cell-" + row)
    cmd = [exe, "--workload", name, "--trace", trace, "--size", "1", "--samples", "2", "--min-ms", "1"]
    p = subprocess.run(cmd + [str(e) for e in extra], capture_output=True, text=True, timeout=300)
    lines = p.stdout.strip().splitlines()
    return p.returncode, json.loads(lines[-1]) if lines else {}, p.stderr


def assert_faithful(test, v, line):
    """the -stats cell's answer (line) makes the calls of each kind, reaches
    the peak and ends with the live bytes of the trace's closing record (v,
    trace-info --values)"""
    m, s = line["metrics"], line["stats"]
    for k in KINDS:
        test.assertEqual(m["calls_" + k], int(v["closing_" + k]), k)
    test.assertEqual(m["peak_live_bytes"], int(v["closing_peak_live"]))
    test.assertEqual(m["final_live_bytes"], int(v["closing_final_live"]))
    # the counting wrapper: a block, an allocation; every block freed by the end
    test.assertEqual(s["allocs"], int(v["blocks"]))
    test.assertEqual(s["frees"], int(v["blocks"]))
    test.assertEqual(s["bytes_live"], 0)


def build_recorder():
    """the recording library and trace-info"""
    p = make(LIB, INFO)
    if p.returncode != 0:
        raise AssertionError(f"building the recorder failed:\n{p.stdout}{p.stderr}")


def record(trace, cmd):
    """make record TRACE=trace CMD=cmd: the trace"""
    p = make("record", "TRACE=" + trace, "CMD=" + cmd)
    if p.returncode != 0:
        raise AssertionError(f"recording {cmd} failed:\n{p.stdout}{p.stderr}")
    return trace


def record_program(folder, name, source, *flags):
    """source compiled in folder (-fno-builtin keeps every call a call) and
    recorded: the trace, folder/name.trace"""
    src, exe = os.path.join(folder, name + ".c"), os.path.join(folder, name)
    with open(src, "w") as f:
        f.write(source)
    subprocess.run([shutil.which("gcc") or "cc", "-std=c11", "-O1", "-fno-builtin", *flags, "-o", exe, src], check=True)
    return record(os.path.join(folder, name + ".trace"), exe)


@unittest.skipUnless(LINUX, "traces are recorded with an LD_PRELOAD library (Linux, glibc)")
class Replay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells(ROWS)
        subprocess.run(["make", "--no-print-directory", "-j2", os.path.join(BUILD, "bin", "am-cell-system-stats")],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        build_recorder()
        cls.tmp = tempfile.mkdtemp(prefix="am-replay-")
        cls.c_trace = record_program(cls.tmp, "calls", PROGRAM)
        cls.py_trace = record(os.path.join(cls.tmp, "py.trace"),
                              "python3 -c 'd = [{i: str(i) * (i % 50)} for i in range(3000)]'")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def info(self, path):
        p = subprocess.run([os.path.join(ROOT, INFO), "--values", path], capture_output=True, text=True, check=True)
        return dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)

    def stats(self, trace):
        rc, line, err = cell("system-stats", trace, "--stats-only")
        self.assertEqual(rc, 0, err)
        self.assertEqual(line["status"], "ok", line)
        return line

    def test_replay_is_faithful_to_the_closing_record(self):
        for trace in (self.c_trace, self.py_trace):
            with self.subTest(trace=os.path.basename(trace)):
                v, line = self.info(trace), self.stats(trace)
                self.assertEqual(v["closed"], "1")
                assert_faithful(self, v, line)
        v = self.info(self.c_trace)
        for k in KINDS:  # the C program made every call: none is left out of the check
            self.assertGreater(int(v["closing_" + k]), 0, k)

    def test_every_row_replays_the_same_calls(self):
        for trace in (self.c_trace, self.py_trace):
            with self.subTest(trace=os.path.basename(trace)):
                seen = {}
                for row in ROWS.split(","):
                    rc, line, err = cell(row, trace)
                    self.assertEqual(rc, 0, err + json.dumps(line))
                    self.assertEqual(line["status"], "ok", line)
                    self.assertEqual(line["workload"], "trace:t")
                    seen[row] = (line["inputs"], line["expect"], line["ops_per_rep"])
                self.assertEqual(len(set(seen.values())), 1, seen)
        _, a, _ = cell("system", self.c_trace)
        _, b, _ = cell("system", self.py_trace)
        self.assertNotEqual(a["inputs"], b["inputs"])

    def test_ops_are_the_calls_replayed(self):
        # every call but free(NULL) is replayed: the C program's free(NULL)s
        # are its 400 explicit ones, the 64 of an empty keep[] and the 400 of
        # a pointer realloc(p, 0) made NULL (with glibc's start-up calls, if any, in both)
        v = self.info(self.c_trace)
        _, line, _ = cell("system", self.c_trace)
        self.assertEqual(line["ops_per_rep"], int(v["calls"]) - (400 + 64 + 400))

    def test_one_size_pools_count_what_is_beyond_their_classes(self):
        rc, line, err = cell("concurrent_pool", self.c_trace)
        self.assertEqual(rc, 0, err)
        m = line["metrics"]
        self.assertEqual(m["largest_class_bytes"], 4096)
        self.assertGreater(m["allocs_beyond_classes"], 0)
        _, pool, _ = cell("pool", self.c_trace)
        self.assertEqual(pool["metrics"]["largest_class_bytes"], 1024)
        self.assertGreater(pool["metrics"]["allocs_beyond_classes"], m["allocs_beyond_classes"])
        _, system, _ = cell("system", self.c_trace)
        self.assertNotIn("allocs_beyond_classes", system["metrics"])

    def test_an_arena_past_its_limit_is_not_run(self):
        # a limit above the trace's peak but below all it allocates: the
        # strategy that reuses runs, the one that frees nothing is not run
        peak, total = int(self.info(self.py_trace)["peak_live"]), self.stats(self.py_trace)["stats"]["bytes_requested"]
        limit = peak * 3 // 2
        self.assertGreater(total, 2 * limit)
        rc, line, err = cell("monotonic", self.py_trace, "--limit", limit)
        self.assertEqual(rc, 0, err)
        self.assertEqual(line["status"], "skipped", line)
        self.assertTrue(line["reason"].startswith("not run:"), line)
        rc, line, err = cell("system", self.py_trace, "--limit", limit, "--alone")
        self.assertEqual((rc, line["status"]), (0, "ok"), err + json.dumps(line))

    def test_bad_input_exits_2_with_a_message(self):
        notatrace = os.path.join(self.tmp, "not.trace")
        with open(notatrace, "w") as f:
            f.write("hello\n")
        for args, said in (([os.path.join(self.tmp, "missing.trace")], "cannot open"),
                           ([notatrace], "not an allocmark trace"),
                           ([self.c_trace, "list_create"], "--trace is for the workload trace")):
            with self.subTest(said=said):
                name = args[1] if len(args) > 1 else "trace:t"
                rc, line, err = cell("system", args[0], name=name)
                self.assertEqual(rc, 2, err)
                self.assertEqual(line, {})
                self.assertIn(said, err)

    def test_without_a_trace_the_workload_is_skipped(self):
        exe = os.path.join(ROOT, BUILD, "bin", "am-cell-system")
        p = subprocess.run([exe, "--workload", "trace", "--size", "1", "--samples", "1"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        line = json.loads(p.stdout)
        self.assertEqual(line["status"], "skipped")
        self.assertIn("--trace FILE", line["reason"])

    def test_help_documents_trace(self):
        exe = os.path.join(ROOT, BUILD, "bin", "am-cell-system")
        out = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
        self.assertIn("--trace FILE", out)
        self.assertIn("trace:NAME", out)


# threads that hand blocks to one another through a locked ring: each of
# four threads allocates, and frees or resizes what the previous one made
THREADED = r"""
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#define T 4
#define N 3000
static void *ring[T][64];
static int head[T], tail[T];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *run(void *arg) {
    int me = (int)(long)arg, prev = (me + T - 1) % T;
    for (int i = 0; i < N; i++) {
        char *b = malloc((size_t)(i * 13 % 700) + 1);
        memset(b, me, 1);
        pthread_mutex_lock(&lock);
        void *got = head[prev] != tail[prev] ? ring[prev][tail[prev]++ % 64] : NULL;
        if (head[me] - tail[me] < 64) ring[me][head[me]++ % 64] = b; else free(b);
        pthread_mutex_unlock(&lock);
        if (got && i % 3 == 0) got = realloc(got, (size_t)i % 300 + 1);
        free(got);
    }
    return NULL;
}
int main(void) {
    pthread_t t[T];
    for (long i = 0; i < T; i++) pthread_create(&t[i], NULL, run, (void *)i);
    for (int i = 0; i < T; i++) pthread_join(t[i], NULL);
    return 0;
}
"""


def replay_own_instructions(exe, trace, reps):
    """callgrind's instructions inside trace_run, from the lines of
    workloads/trace.c alone, and the calls a repetition makes"""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, "--toggle-collect=*trace_run*",
                            exe, "--workload", "trace:py", "--trace", trace, "--size", "1", "--samples", "1",
                            "--reps", str(reps), "--alone"], capture_output=True, text=True, check=True)
        ops = json.loads(p.stdout.strip().splitlines()[-1])["ops_per_rep"]
        text = subprocess.run(["callgrind_annotate", "--auto=no", "--inclusive=no", out],
                              capture_output=True, text=True, check=True).stdout
    own = 0
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) .*\s(\S+):\S+", line)
        if m and m.group(2).endswith("workloads/trace.c"):
            own += int(m.group(1).replace(",", ""))
    return own, ops


@unittest.skipUnless(LINUX and shutil.which("valgrind") and shutil.which("callgrind_annotate"),
                     "needs Linux (the recorder) and valgrind")
class ReplayCost(unittest.TestCase):
    """The replay's own instructions a call (those of workloads/trace.c's
    lines, the strategy's inlined fast paths and the library apart), at most
    25, as the harness of alloc_* is held to its bound: the difference of two
    --reps values, over a trace of a real program, in gcc's measured build
    (valgrind 3.19 cannot read clang 14's debug information)."""
    BOUND = 25
    REPS = (10, 30)

    def test_the_replay_costs_at_most_25_instructions_a_call(self):
        if COMPILER != "gcc":
            self.skipTest("the build is not gcc's")
        ensure_cells("system,minimal")
        tmp = tempfile.mkdtemp(prefix="am-replay-cost-")
        self.addCleanup(shutil.rmtree, tmp, True)
        trace = record(os.path.join(tmp, "py.trace"), "python3 -c 'd = [{i: str(i)} for i in range(2000)]'")
        for row in ("system", "minimal"):
            exe = os.path.join(ROOT, BUILD, "bin", "am-cell-" + row)
            (few, ops), (more, _) = (replay_own_instructions(exe, trace, r) for r in self.REPS)
            got = (more - few) / ((self.REPS[1] - self.REPS[0]) * ops)
            with self.subTest(row=row):
                self.assertLessEqual(got, self.BOUND, f"{row}: {got:.1f} instructions of the replay's own a call")


def built_rows():
    """The rows `make cells` builds here (the build's rows.txt: those that
    link), not whatever else another test left in the bin folder"""
    with open(os.path.join(ROOT, BUILD, "rows.txt")) as f:
        return [line.strip() for line in f if line.strip()]


@unittest.skipUnless(LINUX, "traces are recorded with an LD_PRELOAD library (Linux, glibc)")
class ThreadedReplay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        subprocess.run(["make", "--no-print-directory", "-j2", "cells"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        build_recorder()
        cls.tmp = tempfile.mkdtemp(prefix="am-replay-threads-")
        cls.trace = record_program(cls.tmp, "ring", THREADED, "-pthread")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_trace_has_threads_and_cross_thread_frees(self):
        v = Replay.info(self, self.trace)
        self.assertEqual(v["closed"], "1")
        self.assertGreaterEqual(int(v["threads"]), 4)  # the four, and main if it allocated
        self.assertGreater(int(v["cross_thread_frees"]), 100)

    def test_replay_is_faithful_to_the_closing_record(self):
        v = Replay.info(self, self.trace)
        rc, line, err = cell("system-stats", self.trace, "--stats-only")
        self.assertEqual((rc, line.get("status")), (0, "ok"), err + json.dumps(line))
        assert_faithful(self, v, line)

    def test_every_thread_safe_row_replays_it_and_the_others_do_not_apply(self):
        seen, skipped = {}, []
        for row in built_rows():
            with self.subTest(row=row):
                rc, line, err = cell(row, self.trace)
                self.assertEqual(rc, 0, err + json.dumps(line))
                if line["status"] == "skipped" and "thread-safe" in line.get("reason", ""):
                    skipped.append(row)
                    continue
                self.assertEqual(line["status"], "ok", line)
                self.assertEqual(line.get("alone"), "threaded", line)
                seen[row] = (line["inputs"], line["expect"], line["ops_per_rep"])
        self.assertEqual(len(set(seen.values())), 1, seen)
        self.assertIn("system", seen)
        self.assertTrue(skipped, "no row said that it is not thread-safe")


if __name__ == "__main__":
    unittest.main()
