"""test_runner_windows.py: the parts of runner/allocmark.py (and report.py) a
Windows run takes, checked here on Linux: a CMake/MSVC-style build folder
(am-cell-<row>.exe, .pdb files beside them, compiler.json with a path that has
spaces), Windows exit codes, and no sh for the plots. It does not run Windows;
the cells are this machine's, renamed."""
import csv
import json
import os
import re
import shutil
import textwrap
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import test_runner  # noqa: E402  (puts the repository on the path)
from report import plots  # noqa: E402
from runner import cell_process, cell_protocol  # noqa: E402
from runfolder import catalog  # noqa: E402

# what CMakeLists.txt writes for a Visual Studio build
MSVC_INFO = {"command": "C:/Program Files/Microsoft Visual Studio/2022/Enterprise/VC/Tools/MSVC/14.40.33807/"
                        "bin/Hostx64/x64/cl.exe",
             "opt": "/O2 /Ob2 /DNDEBUG", "flags": "/DWIN32 /D_WINDOWS /O2 /Ob2 /DNDEBUG /std:c11 /W3",
             "version_line": "MSVC 19.40.33811.0", "build": "CMake 3.29.0, Visual Studio 17 2022"}


class ExitCodes(unittest.TestCase):
    def test_windows_exceptions_are_crashes(self):
        self.assertEqual(cell_protocol.crash_reason(0xC0000005, windows=True),
                         "crashed (access violation 0xC0000005)")
        self.assertEqual(cell_protocol.crash_reason(0xC00000FD, windows=True), "crashed (stack overflow 0xC00000FD)")
        self.assertEqual(cell_protocol.crash_reason(0xE06D7363, windows=True), "crashed (exception 0xE06D7363)")
        # subprocess may report the NTSTATUS as a negative 32-bit number
        self.assertEqual(cell_protocol.crash_reason(0xC0000409 - 2 ** 32, windows=True),
                         "crashed (fail-fast or stack buffer overrun 0xC0000409)")

    def test_plain_exit_statuses_are_not(self):
        for code in (0, 1, 2, 3, 255):
            self.assertIsNone(cell_protocol.crash_reason(code, windows=True))
        self.assertIsNone(cell_protocol.crash_reason(0xC0000005, windows=False))

    def test_signals_on_posix(self):
        self.assertEqual(cell_protocol.crash_reason(-11, windows=False), "crashed (SIGSEGV)")

    def test_ctrl_c(self):
        self.assertTrue(cell_protocol.interrupted(0xC000013A, windows=True))
        self.assertFalse(cell_protocol.interrupted(0xC000013A, windows=False))
        self.assertTrue(cell_protocol.interrupted(-2, windows=False))
        self.assertFalse(cell_protocol.interrupted(1, windows=True))


class BinFolder(unittest.TestCase):
    def test_exe_cells_found_and_other_files_ignored(self):
        with tempfile.TemporaryDirectory() as d:
            for f in ("am-cell-system.exe", "am-cell-system-stats.exe", "am-cell-system.pdb",
                      "am-cell-minimal.exe", "am-cell-minimal.ilk", "am-cell-minimal-stats.pdb", "check.lib"):
                open(os.path.join(d, f), "w").close()
            self.assertEqual(catalog.built_rows(d, ["system", "minimal"]), ["system", "minimal"])
            self.assertEqual(catalog.cell_exe(d, "minimal"), os.path.join(d, "am-cell-minimal.exe"))
            self.assertEqual(catalog.cell_exe(d, "system", stats_build=True),
                             os.path.join(d, "am-cell-system-stats.exe"))


class PlotsWithoutSh(unittest.TestCase):
    def test_no_sh_and_no_gnuplot_is_a_reason_not_a_crash(self):
        env = {k: v for k, v in os.environ.items() if k != "GNUPLOT"}
        with mock.patch.dict(os.environ, env, clear=True), \
                mock.patch.object(plots.subprocess, "run", side_effect=FileNotFoundError("sh")), \
                mock.patch.object(plots.shutil, "which", return_value=None):
            path, reason = plots.find_gnuplot()
        self.assertIsNone(path)
        self.assertIn("gnuplot not found", reason)


class MsvcStyleBuild(unittest.TestCase):
    """The runner and the report on build/msvc/ as CMakeLists.txt lays it out,
    with this machine's system cells renamed to .exe."""

    @classmethod
    def setUpClass(cls):
        test_runner.ensure_cells()
        cls.tmp = tempfile.TemporaryDirectory()
        root = os.path.join(cls.tmp.name, "build")
        bindir = os.path.join(root, "msvc", "bin")
        os.makedirs(bindir)
        for suffix in ("", "-stats"):
            shutil.copy2(os.path.join(test_runner.BUILD, "bin", "am-cell-system" + suffix),
                         os.path.join(bindir, "am-cell-system" + suffix + ".exe"))
        open(os.path.join(bindir, "am-cell-system.pdb"), "w").close()
        with open(os.path.join(root, "msvc", "compiler.json"), "w") as f:
            json.dump(MSVC_INFO, f)
        cls.out = os.path.join(cls.tmp.name, "results", "msvc-quick")
        cls.p = subprocess.run(
            [sys.executable, "-m", "runner.allocmark", "--build-root", root,
             "--compilers", "msvc", "--quick", "--workloads", "thrash_pool", "--samples", "3",
             "--min-ms", "1", "--seed", "3", "--out", cls.out], cwd=ROOT, capture_output=True, text=True,
            timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_run_finishes_with_the_exe_cells(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr + self.p.stdout)
        with open(os.path.join(self.out, "summary.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual({r["strategy"] for r in rows}, {"system"})
        self.assertEqual({r["compiler"] for r in rows}, {"msvc"})
        self.assertTrue(rows and all(r["status"] == "ok" for r in rows), rows)
        # the counts come from am-cell-system-stats.exe
        self.assertTrue(all(int(r["allocs"]) > 0 for r in rows), rows)

    def test_meta_has_the_compiler_cmake_recorded(self):
        with open(os.path.join(self.out, "meta.json")) as f:
            meta = json.load(f)
        c = meta["compilers"][0]
        self.assertEqual(c["name"], "msvc")
        self.assertEqual(c["command"], MSVC_INFO["command"])
        self.assertEqual(c["version_line"], "MSVC 19.40.33811.0")
        self.assertEqual(c["opt"], "/O2 /Ob2 /DNDEBUG")

    def test_report_renders_the_run(self):
        p = subprocess.run([sys.executable, "-m", "report.report", self.out, "--no-plots"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        with open(os.path.join(self.out, "report.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn("C:/Program Files/Microsoft Visual Studio", page)
        self.assertIn("thrash_pool", page)


WORKFLOW = os.path.join(ROOT, ".github", "workflows", "windows-msvc.yml")


def workflow_python_step(text):
    """The script of the workflow's `shell: python` step."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == "shell: python")
    run = next(i for i in range(at, len(lines)) if lines[i].strip() == "run: |")
    indent = len(lines[run]) - len(lines[run].lstrip())
    body = []
    for line in lines[run + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return textwrap.dedent("\n".join(body))


class Workflow(unittest.TestCase):
    """What .github/workflows/windows-msvc.yml runs agrees with itself and with the
    runner; its cell check is run here on a run folder with and without a failure."""

    @classmethod
    def setUpClass(cls):
        with open(WORKFLOW, encoding="utf-8") as f:
            cls.text = f.read()

    def test_build_folder_compiler_name_and_results_agree(self):
        build = re.search(r"cmake -S \. -B build/(\S+) -G", self.text).group(1)
        self.assertIn(f"ctest --test-dir build/{build} ", self.text)
        self.assertIn(f"cmake --build build/{build} --config Release", self.text)
        out = re.search(rf"python -m runner.allocmark --compilers {re.escape(build)} --quick --out (\S+)",
                        self.text).group(1)
        self.assertIn(f"python -m report.report {out}\n", self.text)
        self.assertRegex(self.text, r"path: results/\n")
        self.assertTrue(out.startswith("results/"))
        self.assertIn(f'"{out}/summary.csv"', workflow_python_step(self.text))

    def test_cell_check_step(self):
        script = workflow_python_step(self.text)
        cols = ["compiler", "strategy", "workload", "size", "threads", "param", "status", "reason"]
        with tempfile.TemporaryDirectory() as d:
            folder = os.path.join(d, "results", "msvc-quick")
            os.makedirs(folder)

            def run_with(statuses):
                with open(os.path.join(folder, "summary.csv"), "w", newline="", encoding="utf-8") as f:
                    w = csv.writer(f)
                    w.writerow(cols)
                    for i, st in enumerate(statuses):
                        w.writerow(["msvc", "pool", "thrash_pool", 10 * (i + 1), 1, 0, st,
                                    "crashed (access violation 0xC0000005)" if st == "failed" else ""])
                return subprocess.run([sys.executable, "-c", script], cwd=d, capture_output=True, text=True)

            ok = run_with(["ok", "ok", "skipped"])
            self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
            self.assertIn("3 cells, 0 failed", ok.stdout)
            bad = run_with(["ok", "failed"])
            self.assertEqual(bad.returncode, 1)
            self.assertIn("failed: pool thrash_pool 20 1 crashed (access violation 0xC0000005)", bad.stdout)
            self.assertEqual(run_with([]).returncode, 1)


if __name__ == "__main__":
    unittest.main()
