"""The README's table of results is report/readme_table.py's output for the
committed reference run (docs/reference-run/), so each of its figures is a
median of that run's summary.csv, and the README cannot drift from it."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # synthetic_runs
from report import readme_table  # noqa: E402

RUN = os.path.join(ROOT, readme_table.REFERENCE_RUN)
SCRIPT = [sys.executable, "-m", "report.readme_table"]


def readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


class ReadmeTable(unittest.TestCase):
    def test_the_readme_holds_the_table_of_the_reference_run(self):
        self.assertEqual(readme_table.current_block(readme()), readme_table.table(RUN),
                         "README.md's table is not the reference run's: python3 -m report.readme_table "
                         "--write README.md")

    def test_the_readme_holds_the_table_of_the_dimensions_run(self):
        dims = os.path.join(ROOT, readme_table.DIMENSIONS_RUN)
        block = readme_table.current_block(readme(), readme_table.DIMENSIONS_BEGIN, readme_table.DIMENSIONS_END)
        self.assertEqual(block, readme_table.dimension_table(dims),
                         "README.md's table of the dimensions is not the committed run's: python3 "
                         "-m report.readme_table --write README.md")

    def test_the_readme_holds_the_traces_of_the_reference_run(self):
        block = readme_table.current_block(readme(), readme_table.TRACES_BEGIN, readme_table.TRACES_END)
        self.assertEqual(block, readme_table.trace_table(RUN),
                         "README.md's table of the traces is not the reference run's: python3 -m "
                         "report.readme_table --write README.md")

    def test_each_figure_is_a_median_of_the_run_and_the_group_its_groups_csv(self):
        with open(os.path.join(RUN, "summary.csv"), newline="") as f:
            medians = {(r["compiler"], r["strategy"], r["workload"]): float(r["median_ns_per_op"])
                       for r in csv.DictReader(f) if r["status"] == "ok" and r["threads"] == "1"
                       and r["param"] == "0" and r["size"] == "1810"}
        with open(os.path.join(RUN, "groups.csv"), newline="") as f:
            ranked = sorted((r for r in csv.DictReader(f) if r["threads"] == "1" and r["param"] == "0"
                             and r["size"] == "1810" and r["in_group"] == "1"), key=lambda r: int(r["rank"]))
        groups = {}
        for r in ranked:
            groups.setdefault((r["compiler"], r["workload"]), []).append(r["strategy"])
        lines = [line for line in readme_table.table(RUN).splitlines() if line.startswith("| `")]
        self.assertTrue(lines)
        for line in lines:
            cells = [c.strip() for c in line.strip("|").split("|")]
            workload, compiler = cells[0].strip("`"), cells[1]
            for (strategy, _), text in zip(readme_table.COLUMNS, cells[3:]):
                if text not in ("-", "failed", "skipped"):
                    self.assertEqual(text, readme_table.figure(medians[(compiler, strategy, workload)]),
                                     (workload, compiler, strategy))
            members = cells[2].rsplit(" (", 1)[0].split(", ")
            self.assertEqual(members, groups[(compiler, workload)], (workload, compiler))
            fastest = min((m, s) for (c, s, w), m in medians.items() if (c, w) == (compiler, workload))
            self.assertEqual(members[0], fastest[1], (workload, compiler))

    def test_the_command_names_no_folder_of_the_machine_that_ran_it(self):
        self.assertEqual(readme_table.command_text("python3 -m runner.allocmark --out /work/runs/a --virtual"),
                         "python3 -m runner.allocmark --out <run> --virtual")
        self.assertEqual(readme_table.command_text("python3 -m runner.allocmark --out=/tmp/r"),
                         "python3 -m runner.allocmark --out=<run>")
        self.assertNotIn("/runs/", readme_table.table(RUN))

    def test_write_puts_the_table_between_the_markers(self):
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "README.md")
            text = readme()
            block = readme_table.current_block(text)
            with open(copy, "w", encoding="utf-8") as f:
                f.write(text.replace(block, block.replace("| gcc |", "| gcc-old |")))
            p = subprocess.run([*SCRIPT, RUN, "--write", copy], cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(copy, encoding="utf-8") as f:
                self.assertEqual(readme_table.current_block(f.read()), readme_table.table(RUN))

    def test_a_folder_without_a_summary_is_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(os.path.join(RUN, "meta.json"), tmp)
            p = subprocess.run([*SCRIPT, tmp], cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("summary.csv", p.stderr)


class FastestGroup(unittest.TestCase):
    def test_a_run_with_its_samples_names_its_fastest_group(self):
        from synthetic_runs import spread, write_run
        with tempfile.TemporaryDirectory() as tmp:
            folder = write_run(os.path.join(tmp, "run"), {
                ("gcc", "pool", "list_dupe", 10): spread(10.0), ("gcc", "monotonic", "list_dupe", 10): spread(10.1),
                ("gcc", "system", "list_dupe", 10): spread(13.0)}, ["gcc"], baseline="system")
            block = readme_table.table(folder)
        self.assertIn("| fastest group |", block)
        self.assertIn("| `list_dupe` | gcc | pool, monotonic (2 of 3) |", block)

    def test_a_dimensions_run_with_its_samples_names_who_ties_with_the_fastest(self):
        from synthetic_runs import spread, write_run
        with tempfile.TemporaryDirectory() as tmp:
            folder = write_run(os.path.join(tmp, "run"), {
                ("gcc", "pool", "size_mix", 10): spread(10.0), ("gcc", "monotonic", "size_mix", 10): spread(10.1),
                ("gcc", "minimal", "size_mix", 10): spread(10.05), ("gcc", "system", "size_mix", 10): spread(13.0)},
                ["gcc"], baseline="system", meta={"workload_facts": {"size_mix": {"dimension": "variation"}}})
            block = readme_table.dimension_table(folder)
        self.assertIn("| fastest | tied | fastest / system |", block)
        # minimal is in the group but no one's choice
        self.assertIn("| variation | gcc | `size_mix 10` | pool | monotonic | 0.77 | 0.78 |", block)



class TraceTable(unittest.TestCase):
    def test_a_line_per_trace_and_compiler_with_its_group(self):
        from synthetic_runs import spread, write_run
        with tempfile.TemporaryDirectory() as tmp:
            folder = write_run(os.path.join(tmp, "run"), {
                ("gcc", "pool", "trace:prog", 1): spread(10.0), ("gcc", "system", "trace:prog", 1): spread(13.0),
                ("gcc", "pool", "list_dupe", 10): spread(10.0), ("gcc", "system", "list_dupe", 10): spread(13.0)},
                ["gcc"], baseline="system")
            block = readme_table.trace_table(folder)
            alone = write_run(os.path.join(tmp, "none"), {
                ("gcc", "pool", "list_dupe", 10): spread(10.0), ("gcc", "system", "list_dupe", 10): spread(13.0)},
                ["gcc"], baseline="system")
            self.assertIsNone(readme_table.trace_table(alone))
        lines = [line for line in block.splitlines() if line.startswith("| `")]
        self.assertEqual(len(lines), 1)
        self.assertTrue(lines[0].startswith("| `trace:prog` | gcc | pool (1 of 2) | 13.0 |"), lines[0])


if __name__ == "__main__":
    unittest.main()
