"""Tests of report/report.py and report/plots.py on a synthetic results folder (fake_results.py):
the page is well formed, shows every workload's table and plots with the CSV's numbers and the
right colours, and still renders, naming the bad file, when the folder is damaged."""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

try:
    import resource
except ImportError:  # Windows
    resource = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import fake_results  # noqa: E402
import htmlcheck  # noqa: E402
sys.path.insert(0, ROOT)
from report import plots  # noqa: E402

REPORT = [sys.executable, "-m", "report.report"]


def run_report(folder, *flags, env=None):
    p = subprocess.run([*REPORT, folder, *flags], cwd=ROOT, capture_output=True, text=True,
                       timeout=300, env=env)
    with open(os.path.join(folder, "report.html"), encoding="utf-8") as f:
        page = f.read()
    return p, page


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path, rows):
    """rows (dicts, as read_csv gives them) back into the file, in their columns"""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def three_sig(v):
    return float(f"{v:.3g}")


class ReportOfGoodFolder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="am-report-")
        cls.folder = fake_results.make(os.path.join(cls.tmp, "run1"), **fake_results.SMALL)
        cls.proc, cls.page = run_report(cls.folder)
        cls.root, cls.errors, cls.doctype = htmlcheck.parse(cls.page)
        cls.summary = read_csv(os.path.join(cls.folder, "summary.csv"))
        cls.ratios = read_csv(os.path.join(cls.folder, "ratios.csv"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def cell(self, table, strategy, x, kind):
        cells = [td for td in table.find_all("td", data_strategy=strategy, data_x=str(x))
                 if kind in td.classes()]
        self.assertEqual(len(cells), 1, f"one {kind} cell for {strategy} at {x}")
        return cells[0]

    def test_exit_status_and_no_temp_file_left(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertEqual(self.proc.stderr, "")
        self.assertFalse(os.path.exists(os.path.join(self.folder, "report.html.tmp")))

    def test_page_is_well_formed_and_self_contained(self):
        self.assertEqual(self.errors, [])
        self.assertEqual((self.doctype or "").lower(), "doctype html")
        self.assertEqual(len(self.root.find_all("html")), 1)
        self.assertEqual(self.root.find_all("script"), [])
        self.assertEqual(self.root.find_all("link"), [])
        for n in self.root.iter():
            self.assertFalse(n.attrs.get("src", "").startswith(("http:", "https:", "//")), n.attrs)
        self.assertNotIn("@import", self.page)
        ids = [n.attrs["id"] for n in self.root.iter() if "id" in n.attrs]
        self.assertEqual(len(ids), len(set(ids)), "ids are unique across inlined plots")
        # no template text left unformatted (a literal "{self.legend()}" once showed)
        self.assertNotRegex(self.page, r"\{(self|esc|fmt|run|g)\b[.(]")

    def test_table_of_contents_links_to_sections(self):
        toc = self.root.find_all("nav")[0]
        targets = [a.attrs["href"][1:] for a in toc.find_all("a")]
        for sect in ("summary", "workloads", "stats", "failed", "method", "env", "files"):
            self.assertIn(sect, targets)
        for t in targets:
            self.assertIsNotNone(self.root.by_id(t), f"#{t} exists")

    def test_every_workload_has_its_table_and_plots(self):
        for w in fake_results.SMALL["workloads"]:
            table = self.root.by_id(f"t-{w}-gcc")
            self.assertIsNotNone(table, w)
            section = self.root.by_id("workloads")
            kinds = set()
            for fig in section.find_all("figure"):
                svg = fig.find_all("svg")
                if svg and svg[0].attrs.get("aria-label") and w in "".join(
                        t.text() for t in fig.find_all("title")):
                    kinds.add(fig.attrs["data-kind"])
            # drawn in the page: the forest at the largest size
            self.assertEqual(kinds, {"forest"}, w)
            # the others are files the page links to
            for kind in ("time", "ratio", "bars", "rss", "overhead"):
                for ext in ("svg", "png"):
                    path = os.path.join(self.folder, "plots", f"{w}-gcc-{kind}.{ext}")
                    self.assertGreater(os.path.getsize(path), 1000, path)
                    self.assertIn(f'href="plots/{w}-gcc-{kind}.{ext}"', self.page)
            for size in fake_results.SMALL["sizes"]:
                self.assertTrue(os.path.exists(os.path.join(self.folder, "plots", f"{w}-gcc-{size}-forest.svg")))

    def test_plot_titles_name_workload_compiler_and_machine(self):
        with open(os.path.join(self.folder, "plots", "thrash_pool-gcc-time.svg")) as f:
            svg = f.read()
        for word in ("thrash_pool", "gcc version 12.2.0", "testhost", "Test CPU 9000"):
            self.assertIn(word, svg)
        self.assertIn("median time per operation (ns", svg)

    def test_times_in_table_match_summary_csv(self):
        checked = 0
        for r in self.summary:
            if r["status"] != "ok":
                continue
            table = self.root.by_id(f"t-{r['workload']}-{r['compiler']}")
            td = self.cell(table, r["strategy"], r["size"], "t")
            self.assertEqual(float(td.text().replace(",", "")), three_sig(float(r["median_ns_per_op"])))
            checked += 1
        self.assertEqual(checked, 16)  # 3 x 2 x 3 cells, one failed, one skipped

    def test_ratios_and_intervals_match_ratios_csv(self):
        for r in self.ratios:
            table = self.root.by_id(f"t-{r['workload']}-{r['compiler']}")
            if (r["compiler"], r["strategy"], r["workload"], r["size"]) == fake_results.FAILED:
                continue
            td = self.cell(table, r["strategy"], r["size"], "ratio")
            shown = td.find_all("span")[0].text()
            self.assertEqual(shown, f"{float(r['ratio']):.2f}×")
            lo, hi = td.find_all("small")[0].text().split("–")
            self.assertAlmostEqual(float(lo), float(r["ci_low"]), places=2)
            self.assertAlmostEqual(float(hi), float(r["ci_high"]), places=2)

    def test_cells_coloured_faster_slower_not_significant(self):
        table = self.root.by_id("t-list_create-gcc")
        for size in (16, 256, 4096):
            self.assertIn("faster", self.cell(table, "pool", size, "ratio").classes())
            self.assertIn("base", self.cell(table, "system", size, "ratio").classes())
        self.assertIn("slower", self.cell(table, "monotonic", 16, "ratio").classes())
        self.assertIn("same", self.cell(table, "monotonic", 256, "ratio").classes())
        self.assertIn("▼", self.cell(table, "pool", 16, "ratio").text())
        self.assertIn("▲", self.cell(table, "monotonic", 16, "ratio").text())
        self.assertIn("≈", self.cell(table, "monotonic", 256, "ratio").text())

    def test_failed_cell_shown_as_failed_with_reason(self):
        table = self.root.by_id("t-thrash_pool-gcc")
        cells = table.find_all("td", data_strategy="monotonic", data_x="4096")
        self.assertEqual(len(cells), 1)
        self.assertIn("failed", cells[0].classes())
        self.assertIn("out of memory at limit", cells[0].text())
        self.assertIn("out of memory at limit", self.root.by_id("failed").text())

    def test_skipped_cell_is_na_not_failed(self):
        table = self.root.by_id("t-thrash_pool-gcc")
        cells = table.find_all("td", data_strategy="monotonic", data_x="16")
        self.assertEqual(len(cells), 1)
        self.assertIn("na", cells[0].classes())
        self.assertEqual(cells[0].text().strip(), "n/a")
        self.assertIn("does not apply to this row", cells[0].attrs["title"])
        summary = self.root.by_id("summary").text()
        self.assertIn("1 cell failed", summary)  # the skipped one is not counted as failed
        self.assertIn("1 cell skipped", summary)
        listing = self.root.by_id("failed").text()
        self.assertIn("skipped", listing)
        self.assertIn("does not apply to this row", listing)

    def test_summary_names_fastest_at_largest_size(self):
        table = self.root.by_id("summary-table")
        best = {td.attrs["data-workload"]: td.text() for td in table.find_all("td") if "best" in td.classes()}
        # the fastest group, fastest first: one round of samples tells no strategy apart from it
        self.assertEqual({w: t.split(",")[0] for w, t in best.items()}, {"list_create": "pool", "thrash_pool": "pool"})
        self.assertIn("(3 of 3)", best["list_create"])
        self.assertIn("0.50×", table.text())
        self.assertIn("size 4096", table.text())

    def test_statistics_table_has_counts(self):
        table = self.root.by_id("s-thrash_pool-gcc")
        text = table.text()
        # pool at size 4096: requested 4096*24*1000, allocations 1000*4096
        self.assertIn("98,304,000", text)
        self.assertIn("4,096,000", text)

    def test_environment_and_raw_links(self):
        env = self.root.by_id("env").text()
        for word in ("testhost", "Test CPU 9000", "Linux 6.1.0", "abc1234", "gcc version 12.2.0"):
            self.assertIn(word, env)
        hrefs = [a.attrs.get("href") for a in self.root.by_id("files").find_all("a")]
        for name in ("summary.csv", "ratios.csv", "samples.csv", "meta.json", "tables.md"):
            self.assertIn(name, hrefs)
        method = self.root.by_id("method").text()
        self.assertIn("42", method)
        self.assertIn("split between 3 rounds", method)
        self.assertIn("9 samples in all (the baseline 27", method)


class ReportOfMarks(unittest.TestCase):
    """What the page says of the marks: the margin, unstable ratios and cells (?),
    and how often the A/A control row was marked."""

    def test_margin_unstable_and_control(self):
        tmp = tempfile.mkdtemp(prefix="am-report-")
        try:
            folder = fake_results.make(os.path.join(tmp, "run"), **fake_results.SMALL)
            with open(os.path.join(folder, "meta.json")) as f:
                meta = json.load(f)
            meta.update(control={"row": "pool", "twin": "system"},
                        statistics={"margin": 0.05, "unstable_width": 0.1},
                        cells=dict(meta.get("cells") or {}, ok=17, unstable=1))
            with open(os.path.join(folder, "meta.json"), "w") as f:
                json.dump(meta, f)
            ratios = read_csv(os.path.join(folder, "ratios.csv"))
            ratios[0]["unstable"] = "1"
            write_csv(os.path.join(folder, "ratios.csv"), ratios)
            marked = sum(r["significant"] == "1" for r in ratios if r["strategy"] == "pool")
            n = sum(r["strategy"] == "pool" for r in ratios)
            p, page = run_report(folder)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(f"This run: {marked} of {n} marked", page)
            self.assertIn("within 5% of 1", page)
            self.assertIn("1 of 17 cells unstable", page)
            self.assertIn("×?</span>", page)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


    def test_a_cells_own_spread_is_shown_not_marked(self):
        tmp = tempfile.mkdtemp(prefix="am-report-")
        try:
            folder = fake_results.make(os.path.join(tmp, "run"), **fake_results.SMALL)
            summary = read_csv(os.path.join(folder, "summary.csv"))
            wide = next(r for r in summary if r["status"] == "ok")
            wide["unstable"] = "1"
            write_csv(os.path.join(folder, "summary.csv"), summary)
            p, page = run_report(folder)
            self.assertEqual(p.returncode, 0, p.stderr)
            root, _, _ = htmlcheck.parse(page)
            times = [td for td in root.find_all("td", data_strategy=wide["strategy"], data_x=wide["size"])
                     if "t" in td.classes()]
            self.assertTrue(times)
            for td in times:  # its interval in the title, as for every cell; no ? and no "unstable"
                self.assertNotIn("?", td.text())
                self.assertIn("95% interval", td.attrs["title"])
                self.assertNotIn("unstable", td.attrs["title"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


    def test_a_time_apart_from_its_ratio_is_marked_with_the_partners_own_in_its_title(self):
        tmp = tempfile.mkdtemp(prefix="am-report-")
        try:
            folder = fake_results.make(os.path.join(tmp, "run"), **fake_results.SMALL)
            ratios = read_csv(os.path.join(folder, "ratios.csv"))
            far = next(r for r in ratios if r["threads"] == "1" and r["ratio"])
            far["ratio"] = repr(float(far["ratio"]) * 0.8)  # its time now reads 1.25x its ratio
            far["partner_shift"], far["through_partner"] = "1.2", "1"
            write_csv(os.path.join(folder, "ratios.csv"), ratios)
            p, page = run_report(folder)
            self.assertEqual(p.returncode, 0, p.stderr)
            root, _, _ = htmlcheck.parse(page)
            marked = [td for td in root.find_all("td") if "t" in td.classes() and td.text().endswith("^")]
            self.assertEqual([(td.attrs["data-strategy"], td.attrs["data-x"]) for td in marked],
                             [(far["strategy"], far["size"])])
            self.assertIn("1.25x the ratio", marked[0].attrs["title"])
            self.assertIn("the partner beside it ran 1.20x", marked[0].attrs["title"])
            self.assertIn("the partner beside it ran as much off", marked[0].attrs["title"])
            # a partner that ran otherwise is not given as the reason
            far["partner_shift"] = "1.0"
            write_csv(os.path.join(folder, "ratios.csv"), ratios)
            p, page = run_report(folder)
            root, _, _ = htmlcheck.parse(page)
            title = next(td for td in root.find_all("td") if "t" in td.classes() and td.text().endswith("^")).attrs["title"]
            self.assertIn("the partner's own time does not account for it", title)
            self.assertNotIn("as much off", title)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class ReportOfDamagedFolder(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="am-report-bad-")
        self.folder = fake_results.make(os.path.join(self.tmp, "run"), **fake_results.SMALL)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def check_page(self, page):
        root, errors, _ = htmlcheck.parse(page)
        self.assertEqual(errors, [])
        return root

    def test_missing_summary_still_gives_a_page(self):
        os.remove(os.path.join(self.folder, "summary.csv"))
        p, page = run_report(self.folder, "--no-plots")
        self.assertEqual(p.returncode, 1)
        self.assertIn(os.path.join(self.folder, "summary.csv"), p.stderr)
        self.assertIn("missing", p.stderr)
        root = self.check_page(page)
        self.assertIn("summary.csv", root.by_id("problems").text())
        self.assertIsNotNone(root.by_id("env"))
        self.assertIn("testhost", root.by_id("env").text())

    def test_truncated_line_is_named_and_the_rest_shown(self):
        path = os.path.join(self.folder, "summary.csv")
        with open(path) as f:
            text = f.read()
        lines = text.splitlines()
        with open(path, "w") as f:
            f.write(text[:len(text) - len(lines[-1]) // 2 - 1])  # cut the last line halfway
        p, page = run_report(self.folder, "--no-plots")
        self.assertEqual(p.returncode, 1)
        self.assertRegex(p.stderr, rf"summary\.csv: line {len(lines)} has \d+ fields, expected 25 \(truncated\?\)")
        root = self.check_page(page)
        self.assertIn(f"line {len(lines)}", root.by_id("problems").text())
        table = root.by_id("t-list_create-gcc")
        self.assertEqual(len([td for td in table.find_all("td") if "t" in td.classes()]), 9)

    def test_bad_meta_json_is_named(self):
        with open(os.path.join(self.folder, "meta.json"), "w") as f:
            f.write('{"host": "x", ')
        p, page = run_report(self.folder, "--no-plots")
        self.assertEqual(p.returncode, 1)
        self.assertIn("meta.json: unreadable JSON", p.stderr)
        root = self.check_page(page)
        self.assertIn("meta.json", root.by_id("problems").text())
        self.assertIsNotNone(root.by_id("t-thrash_pool-gcc"))

    def test_missing_ratios_fall_back_to_medians_without_intervals(self):
        os.remove(os.path.join(self.folder, "ratios.csv"))
        p, page = run_report(self.folder, "--no-plots")
        self.assertIn("ratios.csv", p.stderr)
        root = self.check_page(page)
        table = root.by_id("t-list_create-gcc")
        cells = [td for td in table.find_all("td", data_strategy="pool", data_x="16") if "ratio" in td.classes()]
        self.assertIn("nointerval", cells[0].classes())
        self.assertIn("0.50×", cells[0].text())

    def test_without_gnuplot_the_page_says_plots_were_skipped(self):
        env = dict(os.environ, GNUPLOT=os.path.join(self.tmp, "no-gnuplot-here"))
        p, page = run_report(self.folder, env=env)
        self.assertIn("plots: skipped", p.stderr)
        root = self.check_page(page)
        self.assertIn("skipped", root.by_id("problems").text())
        self.assertEqual(root.find_all("figure"), [])
        self.assertIsNotNone(root.by_id("t-thrash_pool-gcc"))

    def test_not_a_folder_is_an_error(self):
        p = subprocess.run([*REPORT, os.path.join(self.tmp, "nothing")],
                           cwd=ROOT, capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such results folder", p.stderr)



@unittest.skipIf(resource is None, "needs setrlimit (POSIX)")
@unittest.skipIf(plots.find_gnuplot()[0] is None, "needs gnuplot")
class ReportOnAFullDisk(unittest.TestCase):
    """A disk that fills while the report is drawn (RLIMIT_FSIZE, SIGXFSZ
    ignored, as in test_results_kept.FullDisk) below the smallest PNG of the
    same folder: gnuplot still exits 0, so each image is checked before it is
    renamed. No image or page is left cut short under its final name.
    Python's subprocess gives gnuplot SIGXFSZ back, which would kill it where
    a full disk does not: a wrapper ignores it again."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="am-report-full-")
        self.folder = fake_results.make(os.path.join(self.tmp, "run"), **fake_results.SMALL)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_no_cut_image_or_page_is_left(self):
        p, _ = run_report(self.folder)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = os.path.join(self.folder, "plots")
        pngs = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".png")]
        self.assertTrue(pngs)
        limit = min(os.path.getsize(f) for f in pngs) // 2
        shutil.rmtree(out)
        os.remove(os.path.join(self.folder, "report.html"))

        def full_disk():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        wrapper = os.path.join(self.tmp, "gnuplot")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\ntrap '' XFSZ\nexec '%s' \"$@\"\n" % plots.find_gnuplot()[0])
        os.chmod(wrapper, 0o755)
        p = subprocess.run([*REPORT, self.folder], cwd=ROOT, capture_output=True, text=True, timeout=300,
                           preexec_fn=full_disk, env=dict(os.environ, GNUPLOT=wrapper))
        left = []
        for dirpath, _, files in os.walk(self.folder):
            left += [os.path.join(dirpath, f) for f in files]
        self.assertEqual([f for f in left if f.endswith(".tmp")], [])
        ends = {".png": b"IEND\xaeB`\x82", ".svg": b"</svg>", ".html": b"</html>"}
        cut = []
        for f in left:
            end = ends.get(os.path.splitext(f)[1])
            with open(f, "rb") as fh:
                if end and not fh.read().rstrip().endswith(end):
                    cut.append(os.path.relpath(f, self.folder))
        self.assertEqual(sorted(cut), [])
        self.assertIn("ends short", p.stderr)
        page = os.path.join(self.folder, "report.html")
        self.assertEqual(p.returncode, 2 if not os.path.exists(page) else 1, p.stderr)


class BarsAxis(unittest.TestCase):
    def test_log_axis_only_for_a_wide_span(self):
        # alloc_bulk at 256 once: monotonic 4.48 ns, Boost.Pool's ordered free 8,520 ns
        self.assertEqual(plots.bars_axis(4.48, 8520.0), (True, 1.0))
        self.assertEqual(plots.bars_axis(40.0, 2000.0), (True, 10.0))
        self.assertEqual(plots.bars_axis(10.0, 200.0), (False, 0.0))
        self.assertEqual(plots.bars_axis(0.0, 5.0), (False, 0.0))


class ReportSize(unittest.TestCase):
    """The page opens fast: a default run's report.html (21 strategies, 25
    workloads, 3 sizes, 2 compilers) at most 3 MB, a QUICK run's (1 size, 1
    compiler) at most 1 MB. A made-up run of the same shape but 3 workloads
    gets the same share per (workload, compiler): 3 MB / 50 and 1 MB / 25."""

    WORKLOADS = ["list_create", "thrash_pool", "map_erase", "list_dupe", "vector_dupe", "alloc_bulk"]

    def page_size(self, workloads, sizes, compilers):
        from runfolder import catalog
        rows = catalog.row_names()[:21]
        with tempfile.TemporaryDirectory() as tmp:
            folder = fake_results.make(os.path.join(tmp, "run"), rows, workloads, sizes, compilers)
            p, page = run_report(folder)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn('data-kind="forest"', page)
            return len(page.encode("utf-8"))

    def size_of_25_workloads(self, sizes, compilers):
        """The page of 25 workloads, from pages of 3 and 6: a fixed part and a
        part per workload."""
        three = self.page_size(self.WORKLOADS[:3], sizes, compilers)
        six = self.page_size(self.WORKLOADS, sizes, compilers)
        return three + (six - three) / 3 * 22

    def test_a_default_run_within_3_mb(self):
        self.assertLessEqual(self.size_of_25_workloads([16, 256, 4096], ["gcc", "clang"]), 3e6)

    def test_a_quick_run_within_1_mb(self):
        self.assertLessEqual(self.size_of_25_workloads([4096], ["gcc"]), 1e6)

    def test_a_large_file_of_the_run_is_a_link_not_a_table(self):
        # a default run's compilers.csv (190 KB) was a 0.9 MB table in the page
        with tempfile.TemporaryDirectory() as tmp:
            folder = fake_results.make(os.path.join(tmp, "run"), ["system", "monotonic"], ["list_dupe"], [16],
                                       ["gcc", "clang"])
            line = "gcc,system,list_dupe,16,1,0,12.5,clang,13.1,1.05\n"
            with open(os.path.join(folder, "compilers.csv"), "w") as f:
                f.write("compiler,strategy,workload,size,threads,param,median,other,other_median,ratio\n")
                f.write(line * (200_000 // len(line)))
            p, page = run_report(folder)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn('<a href="compilers.csv">compilers.csv</a>', page)
            self.assertLess(len(page.encode("utf-8")), 200_000)


if __name__ == "__main__":
    unittest.main()
