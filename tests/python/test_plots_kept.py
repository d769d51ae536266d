"""Plots drawn before are kept when they cannot be drawn again: without
gnuplot, `make plots` (report/plots.py) and `make report` leave a run's
plots/index.json as it was, say why, and plots.py exits 1; the report still
links the images on disk."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import fake_results  # noqa: E402

PLOTS = [sys.executable, "-m", "report.plots"]
REPORT = [sys.executable, "-m", "report.report"]
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>\n'


class PlotsKept(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.folder = fake_results.make(os.path.join(self.tmp.name, "run"), **fake_results.SMALL)
        plots = os.path.join(self.folder, "plots")
        os.makedirs(os.path.join(plots, "data"))
        entries = []
        for name in ("time-list_create-gcc", "time-thrash_pool-gcc"):
            for ext, text in (("svg", SVG), ("png", "png"), ("dat", "1 2\n")):
                path = os.path.join(plots, "data" if ext == "dat" else "", f"{name}.{ext}")
                with open(path, "w") as f:
                    f.write(text)
            entries.append({"workload": name.split("-")[1], "compiler": "gcc", "variant": "", "kind": "time",
                            "caption": name, "title": name, "svg": f"plots/{name}.svg",
                            "png": f"plots/{name}.png", "data": f"plots/data/{name}.dat"})
        self.index = os.path.join(plots, "index.json")
        with open(self.index, "w") as f:
            json.dump({"status": "ok", "reason": "", "plots": entries, "failed": []}, f, indent=1)
        with open(self.index) as f:
            self.before = f.read()
        self.env = dict(os.environ, GNUPLOT=os.path.join(self.tmp.name, "no-gnuplot-here"))

    def tearDown(self):
        self.tmp.cleanup()

    def test_without_gnuplot_the_plots_drawn_before_are_kept(self):
        p = subprocess.run([*PLOTS, self.folder], cwd=ROOT, capture_output=True, text=True, env=self.env,
                           timeout=120)
        with open(self.index) as f:
            self.assertEqual(f.read(), self.before)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("the 2 plots drawn before are kept", p.stderr)
        p = subprocess.run([*REPORT, self.folder], cwd=ROOT, capture_output=True, text=True, env=self.env,
                           timeout=120)
        with open(self.index) as f:
            self.assertEqual(f.read(), self.before)
        with open(os.path.join(self.folder, "report.html")) as f:
            page = f.read()
        self.assertIn("plots/time-list_create-gcc.png", page, p.stderr)


if __name__ == "__main__":
    unittest.main()
