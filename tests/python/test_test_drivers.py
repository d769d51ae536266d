"""test_test_drivers.py: how tests/run_all.py (make test) and tests/run_check.py
(make check) count. A test binary that exits 0 but prints no PASS, FAIL or
SKIP line is a failure; SKIP lines are counted and reach the closing line
"N passed, N failed, N skipped"; a make check stage skipped for a missing tool
is named in the closing line. The binaries here are small shell scripts."""
import contextlib
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import types
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import run_all  # noqa: E402
import run_check  # noqa: E402


def script(folder, name, body):
    path = os.path.join(folder, name)
    os.makedirs(folder, exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


class RunBinary(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="am-drivers-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_one(self, body):
        return run_all.run_binary(script(self.dir, "t", body), timeout=30)

    def test_silent_success_is_a_failure(self):
        o = self.run_one("exit 0")
        self.assertEqual((o.passed, o.failed, o.skipped), (0, 1, 0))
        self.assertIn("no PASS, FAIL or SKIP line", o.lines[0])

    def test_a_summary_alone_is_not_a_result(self):
        o = self.run_one('echo "0 passed, 0 failed"')
        self.assertEqual((o.passed, o.failed), (0, 1))

    def test_skips_are_counted(self):
        o = self.run_one('echo "PASS s/a"; echo "SKIP s/b: no perf counters"; echo "SKIP s/c: why"')
        self.assertEqual((o.passed, o.failed, o.skipped), (1, 0, 2))
        self.assertEqual(o.lines, ["SKIP s/b: no perf counters", "SKIP s/c: why"])

    def test_only_skips_is_not_a_failure(self):
        o = self.run_one('echo "SKIP s/a: not on this OS"')
        self.assertEqual((o.passed, o.failed, o.skipped), (0, 0, 1))

    def test_a_crash_after_passes_fails(self):
        o = self.run_one('echo "PASS s/a"; exit 3')
        self.assertEqual((o.passed, o.failed), (1, 1))


class Jobs(unittest.TestCase):
    """make test leaves the Python tests, which end last, a CPU: its test
    binaries run on the CPUs but one, two at most; alone, or in make check,
    on every CPU, two at most"""

    def test_a_cpu_is_left_to_the_python_tests(self):
        for cpus, beside, alone in [(1, 1, 1), (2, 1, 2), (8, 2, 2)]:
            with mock.patch.object(run_all.os, "cpu_count", return_value=cpus):
                self.assertEqual(run_all.default_jobs(python_beside=True), beside, cpus)
                self.assertEqual(run_all.default_jobs(), alone, cpus)


class ClosingLines(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="am-drivers-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_make_test_closing_line_counts_c_skips(self):
        # a build folder of two "test binaries", make replaced by true
        build = os.path.join(self.dir, "build")
        script(os.path.join(build, "tests", "system"), "test_a", 'echo "PASS a/x"; echo "SKIP a/y: why"')
        script(os.path.join(build, "unit"), "test_b", "exit 0")
        argv = ["run_all.py", "--make", "true", "--build", build, "--no-sanitizers", "--no-python", "--jobs", "1"]
        out = io.StringIO()
        with mock.patch.object(sys, "argv", argv), mock.patch.dict(os.environ), contextlib.redirect_stdout(out):
            rc = run_all.main()
        self.assertEqual(rc, 1)
        self.assertEqual(out.getvalue().splitlines()[-1], "1 passed, 1 failed, 1 skipped")

    def make_test(self, python_body):
        """make test on a build folder of one C "test binary", which passes
        only once the Python tests (a script printing python_body) have
        started; returns (exit status, output lines)"""
        marker = os.path.join(self.dir, "python-started")
        build = os.path.join(self.dir, "build")
        script(os.path.join(build, "tests", "system"), "test_a",
               f'for i in $(seq 300); do [ -f "{marker}" ] && {{ echo "PASS a/beside"; exit 0; }}; sleep 0.1; done\n'
               'echo "FAIL a/beside: the Python tests had not started"')
        child = script(self.dir, "python_tests", f'touch "{marker}"\n' + python_body)
        argv = ["run_all.py", "--make", "true", "--build", build, "--no-sanitizers", "--jobs", "1"]
        out = io.StringIO()
        with mock.patch.object(sys, "argv", argv), mock.patch.dict(os.environ), contextlib.redirect_stdout(out), \
                mock.patch.object(run_all, "python_command", return_value=[child]):
            rc = run_all.main()
        return rc, out.getvalue().splitlines()

    def test_make_test_runs_the_python_tests_beside_the_c_tests(self):
        rc, lines = self.make_test('echo "python tests: 2 passed, 0 failed, 3 skipped"')
        # a second Python process once the C tests end: the counts of both join
        self.assertIn("== Python test process 2 of 2", lines)
        self.assertEqual(lines[-1], "5 passed, 0 failed, 6 skipped", lines)
        self.assertEqual(rc, 0)

    def test_make_test_names_the_slowest_python_modules(self):
        rc, lines = self.make_test('echo "module time: test_slow 12.5 s"; echo "module time: test_quick 0.5 s"; '
                                   'echo "python tests: 2 passed, 0 failed, 0 skipped"')
        self.assertIn("slowest Python modules: test_slow 12.5 s, test_slow 12.5 s, test_quick 0.5 s, "
                      "test_quick 0.5 s", lines)
        self.assertEqual(rc, 0)

    def test_python_tests_that_fail_or_die_fail_make_test(self):
        rc, lines = self.make_test('echo "python tests: 2 passed, 1 failed, 0 skipped"; exit 1')
        self.assertEqual((rc, lines[-1]), (1, "5 passed, 2 failed, 0 skipped"))
        rc, lines = self.make_test("exit 1")  # no counts: a failure, not nothing
        self.assertEqual((rc, lines[-1]), (1, "1 passed, 2 failed, 0 skipped"))

    def test_python_processes_take_each_module_once(self):
        tests = os.path.join(self.dir, "python")
        script(tests, "test_one.py", "import unittest\nclass A(unittest.TestCase):\n"
               "    def test_a(self): pass\n    def test_b(self): self.skipTest('why')")
        script(tests, "test_two.py", "import unittest\nclass B(unittest.TestCase):\n    def test_c(self): pass")
        claims = os.path.join(self.dir, "claims")
        os.makedirs(claims)
        out = io.StringIO()
        with mock.patch.object(run_all, "PYTHON_TESTS", tests), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(io.StringIO()):
            first = run_all.run_python_tests(claims)
            second = run_all.run_python_tests(claims)
        self.assertEqual((first, second), ((2, 0, 1), (0, 0, 0)))
        self.assertEqual([name for name, _ in run_all.module_times(out.getvalue())], ["test_one", "test_two"])
        self.assertEqual(sorted(os.listdir(claims)), ["test_one", "test_two"])

    def test_the_python_tests_makes_take_turns(self):
        # two makes through tests/serial_make/make with one lock: the second
        # starts once the first has ended (each writes when it starts and ends)
        log = os.path.join(self.dir, "log")
        fake = script(os.path.join(self.dir, "bin"), "make", f'echo "start $1" >> "{log}"; sleep 0.5; '
                      f'echo "end $1" >> "{log}"')
        env = dict(os.environ, PATH=run_all.SERIAL_MAKE + os.pathsep + os.path.dirname(fake) + os.pathsep +
                   os.environ.get("PATH", ""), AM_MAKE_LOCK=os.path.join(self.dir, "lock"))
        env.pop("AM_MAKE_LOCK_HELD", None)
        procs = [subprocess.Popen(["make", name], env=env) for name in ("a", "b")]
        self.assertEqual([p.wait(timeout=30) for p in procs], [0, 0])
        with open(log) as f:
            words = [line.split()[0] for line in f]
        self.assertEqual(words, ["start", "end", "start", "end"])

    def test_make_check_closing_line_names_skipped_stages(self):
        names = {"valgrind": "valgrind", "fuzz": "fuzz (clang)"}
        text = run_check.summary([("valgrind", (5, 0, 1), 3.0), ("fuzz", None, 0.5)], names, 4.0)
        self.assertEqual(text.splitlines()[-1], "5 passed, 0 failed, 1 skipped; stages skipped: fuzz")
        self.assertIn("fuzz (clang): skipped (tool missing)", text)

    def test_make_check_exit_status_with_a_skipped_stage(self):
        # a skipped stage is said, not failed; a failed one fails
        for results, want in (((1, 0, 0), 0), ((1, 1, 0), 1)):
            with mock.patch.object(run_check, "stage_valgrind", return_value=results), \
                    mock.patch.object(run_check, "stage_fuzz", return_value=None), \
                    mock.patch.object(sys, "argv", ["run_check.py", "--only", "valgrind,fuzz"]), \
                    contextlib.redirect_stdout(io.StringIO()) as out:
                self.assertEqual(run_check.main(), want)
            self.assertTrue(out.getvalue().rstrip().endswith("; stages skipped: fuzz"), out.getvalue())


class SanitizerStages(unittest.TestCase):
    def test_each_stage_asks_make_for_the_rows_it_runs(self):
        """make check's asan and tsan stages build the chosen rows' tests: a
        failed build is a failure of the stage, not an error of the driver."""
        args = types.SimpleNamespace(cc="gcc", rows=["minimal"], make="make", jobs=1, timeout=10)
        seen = []

        def fake_make(args_, targets, **variables):
            seen.append(variables.get("ALLOCATORS"))
            return False
        with mock.patch.object(run_check, "make", fake_make):
            self.assertEqual(run_check.stage_tsan(args), (0, 1, 0))
            self.assertEqual(run_check.stage_asan(args, units=False), (0, 1, 0))
        self.assertEqual(seen, ["minimal", "minimal"])


if __name__ == "__main__":
    unittest.main()
