"""The README's table of workloads is runner/readme_workloads.py's output for
a cell's --list answer: every workload of workloads/workloads.def, in its
order, with the summary its definition states. Builds the system row's cell
if needed."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from report import readme_table  # noqa: E402
from runner import readme_workloads  # noqa: E402
from runner import cell_protocol  # noqa: E402
from runfolder import catalog  # noqa: E402

SCRIPT = [sys.executable, "-m", "runner.readme_workloads"]


def readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def listing():
    # inherits MAKEFLAGS from `make test`, so CC, VARIANT and flags match
    subprocess.run(["make", "--no-print-directory", "-j2", "cells", "ALLOCATORS=system"],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    build = os.environ.get("AM_BUILD")  # set by make test: the build folder it made
    cell = catalog.cell_exe(os.path.join(ROOT, build, "bin"), "system") if build else readme_workloads.default_cell()
    return cell_protocol.list_workloads(cell)


def defined_workloads():
    with open(os.path.join(ROOT, "workloads", "workloads.def"), encoding="utf-8") as f:
        return re.findall(r"^AM_WORKLOAD\((\w+)\)", f.read(), re.M)


class ReadmeWorkloads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.listing = listing()

    def test_the_readme_holds_the_table_of_the_cells_list(self):
        block = readme_table.current_block(readme(), readme_workloads.BEGIN, readme_workloads.END)
        self.assertEqual(block, readme_workloads.table(self.listing),
                         "README.md's table of workloads is not what the cells list: python3 "
                         "-m runner.readme_workloads --write README.md")

    def test_the_table_has_every_workload_of_workloads_def_in_order(self):
        rows = [line for line in readme_workloads.table(self.listing).splitlines() if line.startswith("| `")]
        self.assertEqual([r.split("`")[1] for r in rows], defined_workloads())

    def test_a_summary_keeps_its_angle_brackets_and_bars(self):
        fake = {"workloads": [{"name": "w", "suite": "default", "summary": "vector<int> | `list<int>`"}]}
        self.assertIn("| vector\\<int> \\| `list<int>` |", readme_workloads.table(fake))

    def test_write_puts_the_table_between_the_markers(self):
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "README.md")
            with open(copy, "w", encoding="utf-8") as f:
                f.write(f"# t\n\n{readme_workloads.BEGIN}\n| old |\n{readme_workloads.END}\n\nafter\n")
            p = subprocess.run([*SCRIPT, "--write", copy], cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(copy, encoding="utf-8") as f:
                text = f.read()
            self.assertEqual(readme_table.current_block(text, readme_workloads.BEGIN, readme_workloads.END),
                             readme_workloads.table(self.listing))
            self.assertTrue(text.endswith("\n\nafter\n"))

    def test_a_missing_cell_is_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([*SCRIPT, "--cell", os.path.join(tmp, "am-cell-none")],
                               cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("am-cell-none", p.stderr)


if __name__ == "__main__":
    unittest.main()
