"""No result is lost: a run folder that fills up (its results go to the
temporary directory or to stdout, exit status 4), a write that fails half
way (the previous file stays whole), and Ctrl-C (the finished cells are
kept and the files written, exit status 130)."""
import csv
import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

try:
    import resource
except ImportError:  # Windows
    resource = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_runner import BUILD, COMPILER, ROOT, RUNNER, TINY, ensure_cells, read_csv  # noqa: E402
from runfolder import errors, outputs  # noqa: E402


def limit_file_size(limit):
    """preexec_fn: files above limit bytes cannot be written (EFBIG, with
    SIGXFSZ ignored), as on a full disk"""
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


@unittest.skipIf(resource is None, "needs setrlimit (POSIX)")
class FullDisk(unittest.TestCase):
    """A run folder that fills up: simulated with RLIMIT_FSIZE (300 bytes, so
    the probe file fits and the CSV files do not), which fails every larger
    write with EFBIG, the way a full disk fails them with ENOSPC. The temporary
    directory is limited alike, so the results must come out on stdout."""

    @classmethod
    def setUpClass(cls):
        ensure_cells()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run")
        env = dict(os.environ, TMPDIR=cls.tmp.name)
        for k in ("AM_TEST_CRASH", "AM_TEST_HANG", "AM_TEST_BADSUM"):
            env.pop(k, None)
        cmd = [*RUNNER, "--compilers", COMPILER, "--build-root", os.path.dirname(BUILD),
               "--out", cls.out, "--baseline", "system"] + TINY + ["--sizes", "10,210"]
        cls.p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=120,
                               preexec_fn=limit_file_size(300))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status_and_message_name_the_folder(self):
        self.assertEqual(self.p.returncode, errors.EXIT_NOT_WRITTEN, self.p.stderr)
        self.assertIn(f"cannot write the results into {self.out}", self.p.stderr)
        self.assertIn("follow on stdout", self.p.stderr)

    def test_every_result_is_on_stdout(self):
        text = self.p.stdout.split("== summary.csv\n", 1)[1]
        summary, samples = text.split("== samples.csv\n", 1)
        rows = list(csv.DictReader(summary.splitlines()))
        self.assertEqual(sorted((r["strategy"], r["size"], r["status"]) for r in rows),
                         [("minimal", "10", "ok"), ("minimal", "210", "ok"), ("system", "10", "ok"),
                          ("system", "210", "ok")])
        lines = [line for line in samples.splitlines() if line.startswith(COMPILER + ",")]
        self.assertEqual(len(lines), sum(int(r["samples"]) for r in rows))
        self.assertGreaterEqual(len(lines), 4 * 3)

    def test_no_partial_files_are_left(self):
        for folder in (self.out, self.tmp.name):
            for dirpath, _, files in os.walk(folder):
                self.assertEqual([f for f in files if f.endswith(".tmp")], [], dirpath)
        # the rescue folder that could not be filled is not left behind either
        self.assertEqual(sorted(os.listdir(self.tmp.name)), ["run"])


class WriteAtomic(unittest.TestCase):
    def test_enospc_keeps_the_old_file_whole(self):
        real_open = open

        class Full:
            def __init__(self, f):
                self.f = f

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.f.close()

            def write(self, text):
                self.f.write(text[:10])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "summary.csv")
            outputs.write_atomic(path, "a,b\n1,2\n")
            with mock.patch("builtins.open", lambda *a, **k: Full(real_open(*a, **k))):
                with self.assertRaises(OSError) as e:
                    outputs.write_atomic(path, "a,b\n3,4\n5,6\n")
            self.assertEqual(e.exception.errno, errno.ENOSPC)
            with open(path) as f:
                self.assertEqual(f.read(), "a,b\n1,2\n")
            self.assertEqual(os.listdir(tmp), ["summary.csv"])


class Interrupt(unittest.TestCase):
    def test_ctrl_c_keeps_finished_cells(self):
        ensure_cells()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            env = dict(os.environ, AM_TEST_HANG="system/thrash_pool")
            cmd = [*RUNNER, "--compilers", COMPILER, "--build-root", os.path.dirname(BUILD),
                   "--out", out, "--timeout", "3", "--baseline", "system"] + TINY + ["--sizes", "10,210,410"]
            # a shell's background job (make test &) ignores SIGINT, and so would
            # the runner, which inherits that: give it the default disposition
            p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            # every system cell hangs for 3 s; whatever the order, half a second
            # after the first cell is reported a system cell is still to come
            deadline = time.monotonic() + 30
            seen = 0
            while time.monotonic() < deadline:
                line = p.stdout.readline()
                if not line or " visits " in line:  # the first progress line: a visit is done
                    seen += bool(line)
                    break
            time.sleep(0.5)
            p.send_signal(signal.SIGINT)
            rest, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 130, err)
            self.assertGreaterEqual(seen, 1)
            self.assertIn("interrupted:", rest)
            self.assertIn(out, rest)
            _, rows = read_csv(os.path.join(out, "summary.csv"))
            self.assertGreaterEqual(len(rows), 1)
            self.assertLess(len(rows), 6)
            with open(os.path.join(out, "meta.json")) as f:
                self.assertEqual(json.load(f)["state"], "interrupted")


if __name__ == "__main__":
    unittest.main()
