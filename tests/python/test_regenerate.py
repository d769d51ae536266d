"""runner/regenerate.py (runner/allocmark.py --regenerate RUN): the derived
files of a run folder (summary.csv, ratios.csv, groups.csv, tables.txt, tables.md,
matrix.csv and compilers.*) made again from its samples.csv, with the figures summary.csv
takes from the samples emptied first, come out byte for byte as the run
wrote them. test_sweep.py and test_scenarios.py check their runs the same way."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_runner import ROOT, RUNNER, TINY, ensure_cells, read_csv, run  # noqa: E402
from runfolder import schema  # noqa: E402


DERIVED = ("summary.csv", "ratios.csv", "groups.csv", "tables.txt", "tables.md", "matrix.csv", "compilers.csv",
           "compilers.txt", "compilers.md")


def assert_regenerates(test, out):
    """The derived files of the run folder out, regenerated from its samples
    by runner/allocmark.py --regenerate in a copy, are byte for byte the same."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "copy")
        shutil.copytree(out, copy)
        for name in DERIVED[1:]:
            if os.path.exists(os.path.join(copy, name)):
                os.remove(os.path.join(copy, name))
        # summary.csv holds what samples do not (status, counts): its figures
        # made from the samples are emptied, to be computed again
        header, rows = read_csv(os.path.join(copy, "summary.csv"))
        with open(os.path.join(copy, "summary.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows([["" if c in schema.FROM_SAMPLES else r[c] for c in header] for r in rows])
        p = subprocess.run([*RUNNER, "--regenerate", copy], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
        test.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for name in DERIVED:
            if not os.path.exists(os.path.join(out, name)):
                test.assertFalse(os.path.exists(os.path.join(copy, name)), name)
                continue
            with open(os.path.join(out, name), "rb") as a, open(os.path.join(copy, name), "rb") as b:
                test.assertEqual(a.read().decode(), b.read().decode(), name)


class Regenerate(unittest.TestCase):
    def test_a_run_regenerates_to_the_same_bytes(self):
        ensure_cells()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            p = run(TINY + ["--sizes", "10,210", "--baseline", "system", "--cpu", "none", "--out", out])
            self.assertEqual(p.returncode, 0, p.stderr)
            assert_regenerates(self, out)

    def test_a_folder_without_samples_is_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([*RUNNER, "--regenerate", tmp], cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(os.path.join(tmp, "summary.csv"), p.stderr)

    def test_a_summary_cut_at_a_line_boundary_is_refused_and_nothing_rewritten(self):
        ensure_cells()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            p = run(TINY + ["--sizes", "10,210", "--baseline", "system", "--cpu", "none", "--out", out])
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(out, "summary.csv")) as f:
                lines = f.readlines()
            for keep in (len(lines) - 1, 1):  # the last cell's line gone; the header alone
                with self.subTest(lines_kept=keep):
                    with open(os.path.join(out, "summary.csv"), "w") as f:
                        f.writelines(lines[:keep])
                    before = {n: open(os.path.join(out, n), "rb").read() for n in DERIVED + ("meta.json",)
                              if os.path.exists(os.path.join(out, n))}
                    p = subprocess.run([*RUNNER, "--regenerate", out, "--margin", "3%"],
                                       cwd=ROOT, capture_output=True, text=True, timeout=120)
                    self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                    self.assertIn("summary.csv", p.stderr)
                    self.assertIn("samples.csv has samples of", p.stderr)
                    for n, text in before.items():
                        with open(os.path.join(out, n), "rb") as f:
                            self.assertEqual(f.read(), text, n)

    def test_a_run_of_the_old_format_gets_the_new_figures(self):
        """A folder written before visits, pairs and unstable existed (and with no
        statistics in meta.json) is read and rewritten with them."""
        ensure_cells()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            p = run(TINY + ["--sizes", "10", "--baseline", "system", "--cpu", "none", "--out", out])
            self.assertEqual(p.returncode, 0, p.stderr)
            for name, gone in (("summary.csv", ("visits", "unstable")), ("ratios.csv", ("pairs", "unstable"))):
                header, rows = read_csv(os.path.join(out, name))
                with open(os.path.join(out, name), "w", newline="") as f:
                    w = csv.writer(f, lineterminator="\n")
                    w.writerow([c for c in header if c not in gone])
                    w.writerows([[r[c] for c in header if c not in gone] for r in rows])
            with open(os.path.join(out, "meta.json")) as f:
                meta = json.load(f)
            del meta["statistics"]
            with open(os.path.join(out, "meta.json"), "w") as f:
                json.dump(meta, f)
            p = subprocess.run([*RUNNER, "--regenerate", out], cwd=ROOT, capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            header, rows = read_csv(os.path.join(out, "summary.csv"))
            self.assertEqual(header, schema.SUMMARY_COLS)
            self.assertEqual({r["visits"] for r in rows}, {"3"})
            header, rows = read_csv(os.path.join(out, "ratios.csv"))
            self.assertEqual((header, rows[0]["pairs"]), (schema.RATIO_COLS, "3"))

    def test_another_margin_judges_the_marks_again_and_is_recorded(self):
        ensure_cells()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            p = run(TINY + ["--samples", "6", "--sizes", "10", "--baseline", "system", "--cpu", "none",
                            "--out", out])
            self.assertEqual(p.returncode, 0, p.stderr)
            _, rows = read_csv(os.path.join(out, "ratios.csv"))
            ratio = float(rows[0]["ratio"])  # minimal against system
            margin = 0.99  # a ratio within 1 / 1.99 and 1.99 is no longer marked
            p = subprocess.run([*RUNNER, "--regenerate", out, "--margin", "99%"],
                               cwd=ROOT, capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            _, rows = read_csv(os.path.join(out, "ratios.csv"))
            excludes = float(rows[0]["ci_low"]) > 1 or float(rows[0]["ci_high"]) < 1
            self.assertEqual(rows[0]["significant"], "1" if excludes and not 1 / 1.99 < ratio < 1.99 else "0")
            with open(os.path.join(out, "meta.json")) as f:
                self.assertEqual(json.load(f)["statistics"]["margin"], margin)
            with open(os.path.join(out, "tables.txt")) as f:  # the legend is wrapped to the tables' width
                self.assertIn(f"within {100 * margin:g}% of 1", " ".join(f.read().split()))
            p = subprocess.run([*RUNNER, "--regenerate", out, "--margin", "x"],
                               cwd=ROOT, capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 2)
            self.assertIn("'x'", p.stderr)


if __name__ == "__main__":
    unittest.main()
