"""make count (runner/counts.py) and its folder: Ctrl-C stops the count at
once (no valgrind process starts after it, those running end), writes what
was counted and exits 130; a folder a timed run is writing (its lock) is
refused with exit 2, and nothing is counted into it. valgrind is a stand-in
here that logs each start, so that no cell is counted for real."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import ROOT, ensure_cells  # noqa: E402

RUNNER = [sys.executable, "-m", "runner.allocmark"]
# six cells to count (two rows, three workloads at QUICK=1's size), two at a time
SMALL = ["--count", "--allocators", "monotonic,minimal", "--workloads", "alloc_pair,list_dupe,map_erase",
         "--quick", "--no-control"]


def stand_in_valgrind(folder, log, seconds):
    """A valgrind that logs its pid and sleeps `seconds`, then fails (it counts nothing)."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "valgrind")
    with open(path, "w") as f:
        f.write(f"""#!/bin/sh
case "$1" in --version) echo valgrind-3.19.0; exit 0;; esac
echo $$ >> '{log}'
exec sleep {seconds}
""")
    os.chmod(path, 0o755)
    return dict(os.environ, PATH=folder + os.pathsep + os.environ.get("PATH", ""))


def started(log):
    try:
        with open(log) as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class CountFolder(unittest.TestCase):
    def setUp(self):
        ensure_cells("monotonic,minimal")
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "count")
        self.log = os.path.join(self.tmp.name, "started")

    def tearDown(self):
        self.tmp.cleanup()

    def test_ctrl_c_stops_the_count_at_once(self):
        env = stand_in_valgrind(os.path.join(self.tmp.name, "bin"), self.log, 20)
        # a shell's background job (make test &) ignores SIGINT, and the runner
        # would inherit that: Ctrl-C reaches a runner in the foreground
        p = subprocess.Popen(RUNNER + SMALL + ["--out", self.out], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            deadline = time.time() + 60
            while len(started(self.log)) < 2 and time.time() < deadline and p.poll() is None:
                time.sleep(0.1)
            self.assertEqual(len(started(self.log)), 2, "two cells under valgrind, two at a time")
            p.send_signal(signal.SIGINT)  # to the runner alone, as `kill -INT` does
            stopped = time.time()
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                self.fail(f"still running 10 s after Ctrl-C, {len(started(self.log))} valgrind processes started")
            self.assertLess(time.time() - stopped, 10)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 130, out + err)
        self.assertEqual(len(started(self.log)), 2, "no valgrind process starts after Ctrl-C")
        self.assertFalse([pid for pid in started(self.log) if alive(pid)], "the running ones are ended")
        with open(os.path.join(self.out, "counts.json")) as f:
            self.assertEqual(json.load(f)["status"], "interrupted")
        self.assertFalse(os.path.exists(os.path.join(self.out, ".allocmark-lock")))

    def test_a_folder_a_run_is_writing_is_refused(self):
        env = stand_in_valgrind(os.path.join(self.tmp.name, "bin"), self.log, 0)
        os.makedirs(self.out)
        me = {"pid": os.getpid(), "host": socket.gethostname()}  # a make bench at work there
        with open(os.path.join(self.out, ".allocmark-lock"), "w") as f:
            json.dump(me, f)
        with open(os.path.join(self.out, "meta.json"), "w") as f:
            json.dump({"state": "running", "runner": me}, f)
        p = subprocess.run(RUNNER + SMALL + ["--out", self.out], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("is being written by another run", p.stderr)
        self.assertEqual(started(self.log), [])
        self.assertEqual(sorted(os.listdir(self.out)), [".allocmark-lock", "meta.json"])


if __name__ == "__main__":
    unittest.main()
