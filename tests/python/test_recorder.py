"""make record and make trace-info (recorder/, docs/trace.md), through make as
a user runs them:

- real programs recorded: tests/recorder/subject.c (threads that end early,
  blocks freed across threads, every call of the malloc family, fork, exec,
  a failing exit), python3 and `sh -c 'ls | sort'`; each process's trace is
  closed, names its program, and its closing record's counts of each call,
  threads, peak and final live bytes equal what the reader decodes;
- the traces of real programs take at most 6 bytes a call (median);
- a program killed by SIGKILL leaves a cut trace whose complete units read,
  and a copy cut mid-unit reads up to the cut, which is named;
- bad input, to trace-info and to make record, is refused with a message
  and exit status 2; a program that fails keeps its trace and its status."""
import glob
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("AM_BUILD", "build/gcc")
LIB = os.path.join(BUILD, "recorder", "libamrecord.so")
INFO = os.path.join(BUILD, "recorder", "am-trace-info")
SUBJECT = os.path.join(ROOT, "tests", "recorder", "subject.c")
LINUX = sys.platform.startswith("linux")
RARE_KINDS = ("reallocarray", "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc")
KINDS = ("malloc", "calloc", "realloc", "free") + RARE_KINDS


def make(*args, status=False):
    """make (through tools/make.sh when the command's own status matters)"""
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "AM_STATUS_FILE"):
        env.pop(k, None)
    cmd = (["sh", "tools/make.sh"] if status else ["make"]) + ["--no-print-directory", "-s", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def header(version=1, pid=42, program=b"made", command=b"made\0by\0hand"):
    body = varint(pid) + varint(1) + varint(0) + varint(len(program)) + program + varint(len(command)) + command
    return b"AMTRACE\0" + varint(version) + varint(len(body)) + body


def unit(thread, records):
    return b"R" + varint(thread) + varint(len(records)) + records


def closing(counts, peak=0, final=0, threads=1):
    fields = [1, threads] + [counts.get(k, 0) for k in KINDS_IN_ORDER] + [0, 0, peak, final, 0]
    body = varint(len(fields)) + b"".join(varint(f) for f in fields)
    return b"E" + varint(len(body)) + body


# the order of the calls in the format (trace_format.h)
KINDS_IN_ORDER = ("malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc",
                  "memalign", "valloc", "pvalloc")
MALLOC, FREE, OTHER = 0, 4, 0x40


@unittest.skipUnless(LINUX, "the recorder is an LD_PRELOAD library for Linux with glibc")
class Recorder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        p = make(LIB, INFO)
        if p.returncode != 0:
            raise AssertionError(f"building the recorder failed:\n{p.stdout}{p.stderr}")
        cls.tmp = tempfile.mkdtemp(prefix="am-recorder-")
        cls.subject = os.path.join(cls.tmp, "subject")
        cc = shutil.which("gcc") or "cc"
        # -fno-builtin: every call the source makes reaches the library, none folded away
        subprocess.run([cc, "-std=c11", "-O1", "-fno-builtin", "-o", cls.subject, SUBJECT, "-lpthread"], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def record(self, name, cmd, status=False):
        return make("record", "TRACE=" + self.path(name), "CMD=" + cmd, status=status)

    def info(self, path, check=True):
        p = subprocess.run([os.path.join(ROOT, INFO), "--values", path], capture_output=True, text=True)
        if check:
            self.assertEqual(p.returncode, 0, p.stderr)
        return dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)

    def traces(self, name):
        """{program: [values of each trace]} of a recording: FILE and <stem>.<program>.<pid><ext>"""
        stem, ext = os.path.splitext(name)
        out = {}
        for f in sorted(os.listdir(self.tmp)):
            if f == name or (f.startswith(stem + ".") and f.endswith(ext)):
                v = self.info(self.path(f))
                v["file"] = f
                out.setdefault(v["program"], []).append(v)
        return out

    def assert_agrees(self, v):
        """the closing record against the calls the reader decoded"""
        self.assertEqual(v["closed"], "1", v)
        for k in KINDS:
            self.assertEqual(v[k], v["closing_" + k], f"{v['file']}: {k}")
        self.assertEqual(v["peak_live"], v["closing_peak_live"], v["file"])
        self.assertEqual(v["final_live"], v["closing_final_live"], v["file"])
        self.assertEqual(v["threads"], v["closing_threads"], v["file"])
        self.assertEqual(v["agrees"], "1", v["file"])

    def test_threads_every_call_and_cross_thread_frees(self):
        p = self.record("threads.trace", f"{self.subject} threads")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        made = dict(line.split() for line in p.stdout.splitlines() if line.startswith(("every_kind", "cross")))
        v = self.info(self.path("threads.trace"))
        v["file"] = "threads.trace"
        self.assert_agrees(v)
        self.assertEqual(v["threads"], "5")  # main and four, one of which ended early
        for k in RARE_KINDS:
            self.assertEqual(int(v[k]), int(made["every_kind"]), k)
        self.assertGreaterEqual(int(v["cross_thread_frees"]), int(made["cross_thread"]))
        self.assertGreaterEqual(int(v["peak_live"]), 64 * 48)
        self.assertEqual(v["closing_foreign_frees"], "0")

    def test_thread_started_after_the_sequence_wraps_keeps_its_place(self):
        # The recorder keeps each call's number modulo 2^24. Built here to keep
        # 2^10 (a hint every 2^6 calls), it wraps in a test's time: a thread
        # that starts after main's 5000 calls still frees main's block after
        # main allocated it, and the order's peak is the recorder's.
        lib = os.path.join(self.tmp, "libamrecord-wraps.so")
        subprocess.run(["gcc" if shutil.which("gcc") else "cc", "-std=c11", "-O2", "-fPIC", "-shared",
                        "-fvisibility=hidden", "-DSEQ_BITS=10", "-DHINT_BITS=6", "-o", lib,
                        *sorted(glob.glob(os.path.join(ROOT, "recorder", "record_*.c"))), "-ldl", "-lpthread"],
                       check=True)
        path = self.path("late.trace")
        subprocess.run([self.subject, "late", "5000"], check=True,
                       env=dict(os.environ, LD_PRELOAD=lib, AM_TRACE=path))
        v = self.info(path)
        v["file"] = "late.trace"
        self.assert_agrees(v)
        self.assertGreater(int(v["calls"]), 5000)
        self.assertEqual(v["threads"], "2")
        self.assertEqual(v["cross_thread_frees"], "2")

    def test_fork_child_writes_a_trace_of_its_own(self):
        p = self.record("fork.trace", f"{self.subject} fork")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        got = self.traces("fork.trace")
        self.assertEqual(list(got), ["subject"])
        parent = [v for v in got["subject"] if v["file"] == "fork.trace"]
        child = [v for v in got["subject"] if v["file"] != "fork.trace"]
        self.assertEqual((len(parent), len(child)), (1, 1), got)
        parent, child = parent[0], child[0]
        self.assertEqual(child["file"], f"fork.subject.{child['pid']}.trace")
        self.assertEqual(child["origin"], "1")
        self.assertEqual(child["parent_pid"], parent["pid"])
        for v in (parent, child):
            self.assert_agrees(v)
            for k in RARE_KINDS:
                self.assertEqual(v[k], "1", f"{v['file']}: {k}")
        # the block the child inherited is not its own: counted, not replayed
        self.assertEqual(child["closing_foreign_frees"], "1")
        self.assertEqual(parent["closing_foreign_frees"], "0")

    def test_exec_gives_the_new_program_a_trace_of_its_own(self):
        p = self.record("exec.trace", f"{self.subject} exec")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        got = self.traces("exec.trace")["subject"]
        self.assertEqual(len(got), 2, got)
        first = [v for v in got if v["file"] == "exec.trace"][0]
        after = [v for v in got if v["file"] != "exec.trace"][0]
        for v, times in ((first, "1"), (after, "2")):
            self.assert_agrees(v)
            for k in RARE_KINDS:
                self.assertEqual(v[k], times, f"{v['file']}: {k}")
        self.assertEqual(first["closing_reason"], "2")  # ended by exec
        self.assertEqual(after["closing_reason"], "1")
        self.assertEqual(after["pid"], first["pid"])
        self.assertEqual(after["origin"], "2")

    def test_real_programs_a_trace_a_process_compact(self):
        script = "d = [{str(i): 'x' * (i % 90)} for i in range(30000)]; s = sorted(map(str, d)); del d"
        # PYTHONMALLOC=malloc: every object through malloc, as a malloc-bound program
        p = self.record("py.trace", f"env PYTHONMALLOC=malloc {sys.executable} -c \"{script}\"")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        p = self.record("pipe.trace", "sh -c 'ls / | sort'")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("the program ended: exit status 0", p.stdout)
        pipe = self.traces("pipe.trace")
        self.assertTrue({"sh", "ls", "sort"} <= set(pipe), pipe.keys())
        py = self.traces("py.trace")
        self.assertTrue(any(k.startswith("python") for k in py), py.keys())
        per_call = []
        for group in (pipe, py):
            for traces in group.values():
                for v in traces:
                    self.assert_agrees(v)
                    if int(v["calls"]) >= 100:
                        per_call.append(int(v["bytes"]) / int(v["calls"]))
        self.assertGreaterEqual(len(per_call), 3)  # ls, sort and python at least
        self.assertLessEqual(statistics.median(per_call), 6.0, per_call)
        biggest = max(int(v["calls"]) for traces in py.values() for v in traces)
        self.assertGreater(biggest, 60000)

    def test_killed_program_leaves_a_cut_trace_that_reads(self):
        path = self.path("killed.trace")
        env = dict(os.environ)
        for k in ("MAKEFLAGS", "MFLAGS", "AM_STATUS_FILE"):
            env.pop(k, None)
        proc = subprocess.Popen(["make", "--no-print-directory", "-s", "record", "TRACE=" + path,
                                 f"CMD={self.subject} loop"], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        try:
            self.assertEqual(proc.stdout.readline().split()[:2], ["allocmark:", "recording"])
            self.assertEqual(proc.stdout.readline().strip(), "ready")
            pid = int(self.info(path)["pid"])
            os.kill(pid, signal.SIGKILL)
            out = proc.stdout.read()
        finally:
            proc.wait(timeout=60)
            proc.stdout.close()
            proc.stderr.close()
        self.assertIn("killed by signal 9", out)
        v = self.info(path)
        self.assertEqual((v["closed"], v["cut"]), ("0", "1"))
        self.assertEqual(v["threads"], "2")  # the thread that ended before the kill wrote its records
        self.assertGreater(int(v["calls"]), 200000)
        self.assertEqual(v["cut_at"], v["bytes"])
        text = subprocess.run([os.path.join(ROOT, INFO), path], capture_output=True, text=True)
        self.assertEqual(text.returncode, 0)
        self.assertIn(f"the trace is cut at byte {v['bytes']}", text.stdout)
        # a copy cut off inside a unit: the units before it read, the cut is named
        copy = self.path("copy.trace")
        with open(path, "rb") as f:
            data = f.read()
        with open(copy, "wb") as f:
            f.write(data[: len(data) - 100])
        c = self.info(copy)
        self.assertEqual(c["cut"], "1")
        self.assertLess(int(c["cut_at"]), len(data) - 100)
        self.assertLess(int(c["calls"]), int(v["calls"]))
        self.assertGreater(int(c["calls"]), 0)

    def test_failing_program_keeps_its_trace_and_status(self):
        p = self.record("fail.trace", f"{self.subject} fail", status=True)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("exit status 3", p.stdout)
        v = self.info(self.path("fail.trace"))
        v["file"] = "fail.trace"
        self.assert_agrees(v)

    def test_bad_commands_exit_2_with_a_message(self):
        cases = [
            (["TRACE=" + self.path("x.trace"), "CMD=no-such-program-am --flag"], "cannot start 'no-such-program-am'"),
            (["TRACE=" + self.path("x.trace"), "CMD="], "give the command"),
            (["CMD=true"], "give the trace file"),
            (["TRACE=" + self.tmp, "CMD=true"], "is a folder"),
            (["TRACE=" + self.path("x.trace"), "CMD=sh -c 'unclosed"], "does not split"),
            (["TRACE=" + self.path("none/x.trace"), "CMD=true"], "no folder"),
        ]
        for args, message in cases:
            p = make("record", *args, status=True)
            self.assertEqual(p.returncode, 2, f"{args}: {p.stdout}{p.stderr}")
            self.assertIn(message, p.stderr, args)
        # a ; in CMD is the program's argument, never a shell's command
        p = make("record", "TRACE=" + self.path("semi.trace"), "CMD=echo a; touch " + self.path("injected"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("a; touch", p.stdout)
        self.assertFalse(os.path.exists(self.path("injected")))

    def bad_trace(self, name, data):
        path = self.path(name)
        if data is not None:
            with open(path, "wb") as f:
                f.write(data)
        p = subprocess.run([os.path.join(ROOT, INFO), path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, f"{name}: {p.stdout}{p.stderr}")
        self.assertTrue(p.stderr.startswith("trace-info: " + path), p.stderr)
        return p.stderr

    def test_bad_traces_exit_2_with_a_message(self):
        one = varint(1)
        good = header() + unit(0, bytes([MALLOC]) + varint(24) + bytes([FREE]) + varint(0))
        self.write("good.trace", good)
        self.assertEqual(self.info(self.path("good.trace"))["calls"], "2")  # the crafted traces are well formed
        self.assertIn("cannot open", self.bad_trace("missing.trace", None))
        self.assertIn("is empty", self.bad_trace("empty.trace", b""))
        self.assertIn("not an allocmark trace", self.bad_trace("text.trace", b"hello, world\n"))
        self.assertIn("damaged header", self.bad_trace("header.trace", b"AMTRACE\0" + one + varint(9999) + b"abc"))
        self.assertIn("damaged header", self.bad_trace("fields.trace", b"AMTRACE\0" + one + varint(3) + b"\x01\x01\x09"))
        self.assertIn("format version 7", self.bad_trace("version.trace", header(version=7)))
        self.assertIn("do not decode", self.bad_trace("kind.trace", header() + unit(0, bytes([0x0F]))))
        self.assertIn("do not decode", self.bad_trace("unit.trace", header() + b"Z\x01\x00"))
        self.assertIn("do not decode",
                      self.bad_trace("short.trace", header() + unit(0, bytes([MALLOC]) + b"\x80")))
        twice = header() + unit(0, bytes([MALLOC]) + varint(24) + bytes([FREE]) + varint(0) + bytes([FREE | OTHER]) +
                                varint(0) + varint(1))
        self.assertIn("freed before", self.bad_trace("twice.trace", twice + closing({"malloc": 1, "free": 2}, 24)))
        never = header() + unit(0, bytes([FREE | OTHER]) + varint(3) + varint(1))
        self.assertIn("never allocated", self.bad_trace("never.trace", never + closing({"free": 1})))
        os.makedirs(self.path("folder"), exist_ok=True)
        self.assertIn("cannot read", self.bad_trace("folder", None))
        p = make("trace-info", "TRACE=" + self.path("missing.trace"), status=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("cannot open", p.stderr)

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    unittest.main()
