"""A run folder holds one run and is written by one runner: a folder that
holds a run, or that another run is writing (its lock), is refused before
anything is measured or overwritten; of two runs started into one folder one
is refused; a folder that cannot be written from the start is not left
behind."""
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

try:
    import resource
except ImportError:  # Windows
    resource = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_runner import BUILD, COMPILER, ROOT, RUNNER, TINY, ensure_cells  # noqa: E402
from runner import allocmark, cell_protocol, cli, config, meta, run as run_module  # noqa: E402
from runfolder import catalog, rundir, runlock  # noqa: E402

# the smallest run: two cells, no CPU probe, no control, no counting tables
SMALL = TINY + ["--sizes", "10", "--baseline", "system", "--cpu", "none", "--no-control", "--no-stats-tables"]


def command(out):
    return RUNNER + arguments(out)


def clean_env():
    env = dict(os.environ)
    for k in ("AM_TEST_CRASH", "AM_TEST_HANG", "AM_TEST_BADSUM"):
        env.pop(k, None)
    return env


def arguments(out):
    return ["--compilers", COMPILER, "--build-root", os.path.dirname(BUILD), "--out", out] + SMALL


def run(out, **kw):
    return subprocess.run(command(out), cwd=ROOT, capture_output=True, text=True, env=clean_env(), timeout=120, **kw)


def contents(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                out[name] = f.read()
    return out


class ExistingOut(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_a_folder_that_holds_a_run_is_refused_and_kept(self):
        out = os.path.join(self.tmp.name, "run")
        first = run(out)
        self.assertEqual(first.returncode, 0, first.stderr)
        before = contents(out)
        self.assertIn("summary.csv", before)
        self.assertNotIn(runlock.LOCK, before)  # dropped when the run ends
        again = run(out)
        self.assertEqual(again.returncode, 2, again.stdout + again.stderr)
        self.assertIn("holds a run already", again.stderr)
        self.assertIn(out, again.stderr)
        self.assertNotIn(" visits ", again.stdout)  # no progress: nothing measured
        self.assertEqual(contents(out), before)

    def test_a_folder_another_run_is_writing_is_refused(self):
        out = os.path.join(self.tmp.name, "run")
        os.makedirs(out)
        with open(os.path.join(out, runlock.LOCK), "w") as f:
            json.dump(runlock.this_runner(), f)  # this test's process: alive
        p = run(out)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("being written by another run", p.stderr)
        self.assertIn(f"pid {os.getpid()}", p.stderr)
        self.assertEqual(sorted(os.listdir(out)), [runlock.LOCK])

    def test_of_two_runs_into_one_folder_one_is_refused(self):
        out = os.path.join(self.tmp.name, "run")
        procs = [subprocess.Popen(command(out), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=clean_env()) for _ in range(2)]
        results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
        self.assertEqual(sorted(r[2] for r in results), [0, 2], results)
        refused = next(r for r in results if r[2] == 2)
        self.assertRegex(refused[1], "being written by another run|holds a run already")
        with open(os.path.join(out, "meta.json")) as f:
            self.assertEqual(json.load(f)["state"], "finished")

    def test_an_empty_folder_is_used(self):
        out = os.path.join(self.tmp.name, "run")
        os.makedirs(out)
        p = run(out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(os.path.join(out, "summary.csv")))


class LatestLink(unittest.TestCase):
    """Only the default results folder gets a latest link to its newest run."""

    @classmethod
    def setUpClass(cls):
        ensure_cells()

    def test_a_run_elsewhere_leaves_its_parent_folder_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = run(os.path.join(tmp, "run"))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(os.listdir(tmp), ["run"])

    @unittest.skipIf(os.name == "nt", "symlinks")
    def test_a_run_in_the_results_folder_is_linked(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = config.plan(cli.parse(arguments(os.path.join(tmp, "run"))))
            with mock.patch.object(config, "RESULTS", tmp), contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(run_module.run(cfg), 0)
            self.assertEqual(os.readlink(os.path.join(tmp, "latest")), "run")


class DiedRun(unittest.TestCase):
    """What a SIGKILL of the runner leaves: meta.json saying "running" and the
    lock naming a process that is gone. Its readers say the run died."""

    @classmethod
    def setUpClass(cls):
        ensure_cells()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run")
        p = run(cls.out)
        assert p.returncode == 0, p.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def left_running_by(self, runner):
        with open(os.path.join(self.out, "meta.json")) as f:
            m = json.load(f)
        m.update(state="running", runner=runner)
        with open(os.path.join(self.out, "meta.json"), "w") as f:
            json.dump(m, f)
        with open(os.path.join(self.out, runlock.LOCK), "w") as f:
            json.dump(runner, f)
        self.addCleanup(runlock.release, self.out)

    def gone_runner(self):
        p = subprocess.Popen([sys.executable, "-c", "pass"])
        p.wait()  # reaped: its pid names no process now
        return dict(runlock.this_runner(), pid=p.pid)

    @unittest.skipIf(os.name == "nt", "a process's liveness is not told on Windows")
    def test_a_killed_run_is_read_as_died(self):
        self.left_running_by(self.gone_runner())
        run_read = rundir.load(self.out)
        self.assertEqual(run_read.meta["state"], "died")
        self.assertTrue(any("the run died" in p.message for p in run_read.problems), run_read.problems)
        p = subprocess.run([*RUNNER, "--regenerate", self.out], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("the run died", p.stderr)

    def test_a_run_whose_runner_lives_is_running(self):
        self.left_running_by(runlock.this_runner())
        self.assertEqual(rundir.load(self.out).meta["state"], "running")
        self.assertFalse(rundir.load(self.out).problems)


class EarlyInterrupt(unittest.TestCase):
    """Ctrl-C before the first cell: exit 130 with a line, no traceback, no
    empty run folder."""

    @classmethod
    def setUpClass(cls):
        ensure_cells()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.out = os.path.join(self.tmp.name, "run")

    def quietly(self, fn, *a):
        text = io.StringIO()
        try:
            with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
                return fn(*a), text.getvalue()
        except KeyboardInterrupt:  # would stop the test runner itself
            self.fail(f"KeyboardInterrupt escaped; left: {os.listdir(self.tmp.name)}")

    def test_during_the_library_probe(self):
        cfg = config.plan(cli.parse(arguments(self.out)))
        with mock.patch.object(meta, "static_meta", side_effect=KeyboardInterrupt):
            rc, text = self.quietly(run_module.run, cfg)
        self.assertEqual(rc, 130)
        self.assertIn("interrupted before the first cell", text)
        self.assertEqual(os.listdir(self.tmp.name), [])

    def test_while_planning(self):
        with mock.patch.object(cell_protocol, "list_workloads", side_effect=KeyboardInterrupt):
            rc, text = self.quietly(allocmark.main, arguments(self.out))
        self.assertEqual(rc, 130)
        self.assertIn("interrupted before the first cell", text)
        self.assertEqual(os.listdir(self.tmp.name), [])

    @unittest.skipIf(os.name == "nt", "SIGINT")
    def test_ctrl_c_as_the_run_starts(self):
        # wherever it lands (the probes or the first cells), the answer is clean
        p = subprocess.Popen(command(self.out), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=clean_env(), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        first = p.stdout.readline()  # the plan, printed as the probes begin
        p.send_signal(signal.SIGINT)
        rest, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, first + rest + err)
        self.assertNotIn("Traceback", err)
        self.assertIn("interrupted", first + rest + err)
        if os.path.exists(self.out):
            with open(os.path.join(self.out, "meta.json")) as f:
                self.assertEqual(json.load(f)["state"], "interrupted")


@unittest.skipIf(resource is None, "needs setrlimit (POSIX)")
class FullFromTheStart(unittest.TestCase):
    """No byte can be written (RLIMIT_FSIZE 0, as a disk full before the run)."""

    def test_nothing_is_left_behind(self):
        ensure_cells()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")

            def no_file_can_grow():
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
            p = run(out, preexec_fn=no_file_can_grow)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(f"cannot write the run folder '{out}'", p.stderr)
            self.assertNotIn(" visits ", p.stdout)  # no progress: nothing measured
            self.assertEqual(os.listdir(tmp), [])


if __name__ == "__main__":
    unittest.main()
