"""The rows come from allocators/strategies.txt, read by one Python module
(runfolder/catalog.py) with one set of rules: comments and blank lines skipped,
a row needs four fields. A built executable of a row the file does not list
is not measured (a stale binary of a removed or renamed row); a listed row
that is not built is said in one line and is an error only when asked for
by name."""
import ast
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_runner as tr  # noqa: E402  (puts the repository on the path)

ROOT = tr.ROOT


def python_files():
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in (".git", "build", "results", "__pycache__")]
        for f in files:
            # this file names strategies.txt to look for it
            if f.endswith(".py") and os.path.join(top, f) != os.path.abspath(__file__):
                yield os.path.join(top, f)


def names_strategies_txt(path):
    """Line numbers of the string constants in path that name the file
    strategies.txt (not docstrings or prose that mention it)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and (n.value == "strategies.txt" or n.value.endswith("/strategies.txt")) and " " not in n.value]


class OneReader(unittest.TestCase):
    def test_only_catalog_names_the_file(self):
        found = {}
        for p in python_files():
            lines = names_strategies_txt(p)
            if lines:
                found[os.path.relpath(p, ROOT)] = lines
        self.assertEqual(sorted(found), [os.path.join("runfolder", "catalog.py")], found)

    def test_the_rules(self):
        from runfolder import catalog
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "rows.txt")
            with open(path, "w") as f:
                f.write("# row source cflags libs description\n\n"
                        "   # an indented comment with four words\n"
                        "a   src  -               -         plain row\n"
                        "b   src  -DX=1~-DY=2     -lfoo~-lbar  two flags, two libraries\n")
            rows = catalog.read_rows(path)
            self.assertEqual([r.name for r in rows], ["a", "b"])
            self.assertEqual((rows[0].cflags, rows[0].libs, rows[0].description), ("", "", "plain row"))
            self.assertEqual((rows[1].source, rows[1].cflags, rows[1].libs), ("src", "-DX=1 -DY=2", "-lfoo -lbar"))
            with open(path, "a") as f:
                f.write("c src -\n")
            with self.assertRaises(ValueError) as e:
                catalog.read_rows(path)
            self.assertIn(":6:", str(e.exception))
            self.assertIn("four fields", str(e.exception))

    def test_the_report_lists_rows_in_file_order(self):
        from report import results
        from runfolder import catalog
        self.assertEqual(results._strategy_order(), catalog.row_names())


class BuiltRows(unittest.TestCase):
    """A build folder with system's cells, minimal's missing, and a stale
    executable of a row strategies.txt does not list (a copy of system's)."""

    @classmethod
    def setUpClass(cls):
        tr.ensure_cells("system")
        cls.tmp = tempfile.TemporaryDirectory()
        root = os.path.join(cls.tmp.name, "build")
        bindir = os.path.join(root, "cc", "bin")
        os.makedirs(bindir)
        src = os.path.join(tr.BUILD, "bin")
        for name, copy in (("system", "system"), ("system-stats", "system-stats"), ("system", "retired_row")):
            shutil.copy2(os.path.join(src, "am-cell-" + name), os.path.join(bindir, "am-cell-" + copy))
        cls.out = os.path.join(cls.tmp.name, "run")
        cls.root = root
        cls.p = cls.run_on(["--workloads", "thrash_pool", "--sizes", "10", "--samples", "3", "--min-ms", "1",
                            "--revisits", "0", "--seed", "5", "--cpu", "none", "--no-stats-tables", "--out", cls.out])

    @classmethod
    def run_on(cls, args):
        return subprocess.run([*tr.RUNNER, "--build-root", cls.root, "--compilers", "cc"] + args,
                              cwd=ROOT, capture_output=True, text=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_a_stale_executable_is_not_measured(self):
        self.assertEqual(self.p.returncode, 0, self.p.stdout + self.p.stderr)
        with open(os.path.join(self.out, "summary.csv"), newline="") as f:
            self.assertEqual({r["strategy"] for r in csv.DictReader(f)}, {"system"})
        self.assertIn("retired_row", self.p.stdout)

    def test_rows_not_built_are_said_once(self):
        lines = [line for line in self.p.stdout.splitlines() if line.startswith("note: not built")]
        self.assertEqual(len(lines), 1, self.p.stdout)
        for row in ("minimal", "pool", "monotonic", "mmap_file"):
            self.assertIn(row, lines[0])

    def test_a_row_asked_for_by_name_must_be_built(self):
        p = self.run_on(["--allocators", "system,minimal", "--out", os.path.join(self.tmp.name, "never")])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("'minimal' is not built", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "never")))

    def test_a_stale_row_is_not_a_strategy(self):
        p = self.run_on(["--allocators", "retired_row", "--out", os.path.join(self.tmp.name, "never")])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("unknown strategy 'retired_row'", p.stderr)


class Suites(unittest.TestCase):
    LISTED = [{"name": "a"}, {"name": "b", "suite": "default"}, {"name": "c", "suite": "dimensions"},
              {"name": "b_drop", "suite": "dimensions"}]

    def test_a_suite_is_its_workloads_in_list_order(self):
        from runfolder import catalog
        self.assertEqual(catalog.suite_workloads(self.LISTED, "default"), ["a", "b"])
        # a drop variant brings the workload it is read against
        self.assertEqual(catalog.suite_workloads(self.LISTED, "dimensions"), ["b", "c", "b_drop"])
        self.assertEqual(catalog.suite_workloads(self.LISTED, "all"), ["a", "b", "c", "b_drop"])

    def test_an_unknown_suite_names_the_suites(self):
        from runfolder import catalog
        from runfolder.errors import UsageError
        with self.assertRaisesRegex(UsageError, "unknown suite 'dims'; valid: all, default, dimensions"):
            catalog.suite_workloads(self.LISTED, "dims")

    def test_the_runner_refuses_an_unknown_suite(self):
        tr.ensure_cells("system,monotonic")
        with tempfile.TemporaryDirectory() as tmp:
            p = tr.run(["--suite", "no-such-suite", "--out", os.path.join(tmp, "never")])
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("unknown suite 'no-such-suite'", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "never")))


if __name__ == "__main__":
    unittest.main()
