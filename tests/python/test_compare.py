"""Tests of runner/compare.py on synthetic run folders: cells matched across
runs, ratios to the first run from the visits, cells missing from a run
listed (never dropped), the regression gate (--base), and bad folders refused
with exit 2 naming the file."""
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
COMPARE = os.path.join(ROOT, "runner", "compare.py")
sys.path.insert(0, HERE)
import synthetic_runs as syn  # noqa: E402

RUN_A = {
    ("gcc", "system", "thrash_pool", 10): syn.spread(100.0),
    ("gcc", "system", "thrash_pool", 1810): syn.spread(1000.0, step=0.1),
    ("gcc", "minimal", "thrash_pool", 10): syn.spread(40.0),
    ("gcc", "only-in-a", "thrash_pool", 10): syn.spread(70.0),
    ("gcc", "monotonic", "contention", 10): "skipped",
}
RUN_B = {
    ("gcc", "system", "thrash_pool", 10): syn.spread(150.0),           # 1.5x slower
    ("gcc", "system", "thrash_pool", 1810): syn.spread(990.0, step=0.1),  # the same, within noise
    ("gcc", "minimal", "thrash_pool", 10): None,                        # failed in B
    ("clang", "system", "thrash_pool", 10): syn.spread(90.0),         # compiler only in B
    ("gcc", "monotonic", "contention", 10): "skipped",                # does not apply, in both
}


def compare(args):
    return subprocess.run([sys.executable, COMPARE] + args, capture_output=True, text=True, timeout=60)


class TwoRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.a = syn.write_run(os.path.join(cls.tmp.name, "a"), RUN_A, ["gcc"], run_id="20240101-000000", host="alpha")
        cls.b = syn.write_run(os.path.join(cls.tmp.name, "b"), RUN_B, ["gcc", "clang"], run_id="20240202-000000",
                              host="beta")
        cls.out = os.path.join(cls.tmp.name, "cmp")
        cls.p = compare([cls.a, cls.b, "--out", cls.out])
        cls.header, cls.rows = syn.read_csv(os.path.join(cls.out, "compare.csv"))
        cls.by = {(r["compiler"], r["strategy"], r["size"], r["run"]): r for r in cls.rows}
        with open(os.path.join(cls.out, "compare.txt")) as f:
            cls.text = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_succeeds_and_writes_three_files(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        for name in ("compare.txt", "compare.md", "compare.csv"):
            self.assertGreater(os.path.getsize(os.path.join(self.out, name)), 0)
        self.assertFalse([f for f in os.listdir(self.out) if f.endswith(".tmp")])

    def test_csv_has_a_row_per_cell_and_run(self):
        self.assertEqual(self.header[:9], ["compiler", "strategy", "workload", "size", "threads", "param",
                                           "run", "label", "status"])
        cells = {(r["compiler"], r["strategy"], r["size"]) for r in self.rows}
        self.assertEqual(len(cells), 6)  # the union of both runs' cells
        self.assertEqual(len(self.rows), 12)

    def test_matched_cells_get_a_ratio_to_the_first_run(self):
        r = self.by[("gcc", "system", "10", "B")]
        self.assertEqual(r["status"], "ok")
        self.assertAlmostEqual(float(r["ratio"]), 1.5, places=6)
        self.assertGreater(float(r["ci_low"]), 1.0)
        self.assertEqual(r["significant"], "1")
        self.assertEqual(r["base"], "A")
        same = self.by[("gcc", "system", "1810", "B")]
        self.assertAlmostEqual(float(same["ratio"]), 0.99, places=6)
        self.assertEqual(same["significant"], "0")
        self.assertIn("~0.99", self.text)

    def test_labels_name_run_host_and_compiler(self):
        self.assertEqual(self.by[("gcc", "system", "10", "A")]["label"], "20240101-000000@alpha gcc 1.0 -O2")
        self.assertEqual(self.by[("gcc", "system", "10", "B")]["label"], "20240202-000000@beta gcc 1.0 -O2")
        self.assertIn("A 20240101-000000@alpha gcc 1.0 -O2", self.text)
        self.assertIn("B/A", self.text)

    def test_failed_and_missing_cells_have_no_ratio(self):
        failed = self.by[("gcc", "minimal", "10", "B")]
        self.assertEqual((failed["status"], failed["ratio"]), ("failed", ""))
        missing = self.by[("gcc", "only-in-a", "10", "B")]
        self.assertEqual((missing["status"], missing["median_ns_per_op"], missing["ratio"]), ("missing", "", ""))
        self.assertEqual(self.by[("clang", "system", "10", "A")]["status"], "missing")

    def test_skipped_cells_read_n_a_not_failed(self):
        table = self.text[self.text.index("== gcc: contention =="):]
        table = table[:table.index("\n\n")]
        self.assertRegex(table, r"monotonic\s+10\s+n/a\s+n/a\s+-")
        self.assertNotIn("failed", table)
        self.assertEqual(self.by[("gcc", "monotonic", "10", "B")]["status"], "skipped")

    def test_mismatches_are_listed_at_the_end(self):
        tail = self.text[self.text.index("Cells not in every run (2):"):]
        self.assertIn("gcc only-in-a thrash_pool size 10: only in A; missing from B", tail)
        self.assertIn("clang system thrash_pool size 10: only in B; missing from A", tail)
        # a failed cell is in both runs: shown in the table, not a mismatch
        self.assertNotIn("minimal", tail)
        with open(os.path.join(self.out, "compare.md")) as f:
            self.assertIn("## Cells not in every run (2):", f.read())

    def test_agreement_counts_cells_within_five_percent(self):
        # B has a ratio for two cells: 1.5 (out) and 0.99 (within 5%); failed
        # and missing cells are not counted
        self.assertIn("B: 1 of 2 cells (50%) have a median within 5% of A's (one thread 1 of 2)", self.text)
        self.assertIn("thrash_pool 1/2", self.text)

    def test_identical_runs_have_no_mismatch(self):
        out = os.path.join(self.tmp.name, "same")
        p = compare([self.a, self.a, "--out", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Every cell is in every run.", p.stdout)
        self.assertIn("@alpha#2", p.stdout)  # the same run twice keeps two labels


class AgreementSplit(unittest.TestCase):
    """Cells with several threads are counted apart: they run on every CPU."""

    def test_one_thread_and_several_threads_are_counted_apart(self):
        sys.path.insert(0, os.path.join(HERE, "..", ".."))
        from runner import compare as cmp

        def row(run, workload, threads, ratio):
            return ["gcc", "system", workload, 10, threads, 0, run, "", "ok", 1.0, "", ratio, "", "", ""]
        rows = [row("A", "w", 1, ""), row("B", "w", 1, 1.01), row("B", "w", 1, 1.2),
                row("B", "c", 2, 1.5), row("B", "c", 2, 0.97), row("B", "c", 4, 1.3)]
        within, n, per, kind = cmp.agreement(rows, ["A", "B"])["B"]
        self.assertEqual((within, n), (2, 5))
        self.assertEqual(per, {"w": (1, 2), "c": (1, 3)})
        self.assertEqual(kind, {"one thread": (1, 2), "several threads": (1, 3)})


class RatioAgreement(unittest.TestCase):
    """A run on a machine that is slower all over disagrees on every median and
    agrees on every ratio; a ratio that moved is counted out."""

    def test_ratios_to_the_baseline_are_compared_apart_from_the_medians(self):
        a = {("gcc", s, "thrash_pool", 10): syn.spread(v) for s, v in
             (("monotonic", 100.0), ("system", 150.0), ("fast_pool", 90.0), ("pool", 400.0))}
        b = {k: syn.spread(v[4] * 1.5) for k, v in a.items()}  # everything 1.5x slower
        b[("gcc", "pool", "thrash_pool", 10)] = syn.spread(400.0 * 1.5 * 1.2)  # and pool 1.2x more
        with tempfile.TemporaryDirectory() as tmp:
            ra = syn.write_run(os.path.join(tmp, "a"), a, ["gcc"], baseline="monotonic")
            rb = syn.write_run(os.path.join(tmp, "b"), b, ["gcc"], baseline="monotonic")
            p = compare([ra, rb, "--out", os.path.join(tmp, "cmp")])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("B: 0 of 4 cells (0%) have a median within 5% of A's", p.stdout)
        self.assertIn("B: 2 of 3 ratios to monotonic (67%) are within 5% of A's (one thread 2 of 3)", p.stdout)


CONTROL = {"control": {"row": "control", "twin": "monotonic"}}


LEVEL = {"monotonic": 10.0, "system": 30.0, "pool": 50.0, "control": 10.0}


def gate_runs(tmp, regression=1.0, seed=3, slower=None, workloads=("thrash_pool", "list_dupe", "map_erase",
                                                                   "alloc_pair"), sizes=(10, 1010, 1810), visits=8,
              strategies=tuple(LEVEL)):
    """Two runs of 4 strategies x 12 blocks, 8 visits each (a 2% spread a process);
    B's machine is 1.3 times slower all over, and B's pool at list_dupe 1810 is
    `regression` times slower still; slower: {strategy: how much slower in B in every block}."""
    rng = random.Random(seed)
    level = {s: LEVEL[s] for s in strategies}
    a, b = {}, {}
    for w in workloads:
        for size in sizes:
            for s, v in level.items():
                k = ("gcc", s, w, size)
                a[k] = [v * size * math.exp(rng.gauss(0, 0.02)) for _ in range(visits)]
                worse = (regression if (s, w, size) == ("pool", "list_dupe", 1810) else 1.0) * \
                    (slower or {}).get(s, 1.0)
                b[k] = [1.3 * worse * v * size * math.exp(rng.gauss(0, 0.02)) for _ in range(visits)]
    return (syn.write_run(os.path.join(tmp, "a"), a, ["gcc"], baseline="monotonic", meta=CONTROL),
            syn.write_run(os.path.join(tmp, "b"), b, ["gcc"], baseline="monotonic", meta=CONTROL))


class Gate(unittest.TestCase):
    """compare --base (make compare BASE=...): the cells that moved beyond the
    noise, judged on the ratios to the baseline, and exit 1 when one did."""

    def test_a_regression_is_named_and_fails_the_gate(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = gate_runs(tmp, regression=1.25)
            p = compare(["--base", a, b, "--out", os.path.join(tmp, "cmp")])
            with open(os.path.join(tmp, "cmp", "compare.md")) as f:
                md = f.read()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        moved = [line.strip() for line in p.stdout.splitlines() if line.strip().startswith("moved:")]
        self.assertEqual(len(moved), 1, p.stdout)
        self.assertRegex(moved[0], r"^moved: gcc pool list_dupe 1810: 5\.\d+ -> 6\.\d+ of monotonic \(\+2\d\.\d%")
        self.assertIn("1 of 36 cells moved beyond the noise.", p.stdout)
        self.assertIn("1 cell(s) moved against", p.stderr)
        self.assertIn("## Gate: B against A", md)

    def test_a_slower_machine_alone_moves_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = gate_runs(tmp)
            p = compare(["--base", a, b, "--out", os.path.join(tmp, "cmp")])
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("0 of 36 cells moved beyond the noise.", p.stdout)
            # without --base the runs are only put side by side: never exit 1
            a, b = gate_runs(tmp, regression=1.25)
            p = compare([a, b, "--out", os.path.join(tmp, "cmp2")])
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertNotIn("Gate:", p.stdout)

    def test_a_change_within_the_margin_or_the_noise_does_not_move(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = gate_runs(tmp, regression=1.25)
            p = compare(["--base", a, b, "--margin", "30%", "--out", os.path.join(tmp, "cmp")])
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            p = compare(["--base", a, b, "--margin", "2", "--out", os.path.join(tmp, "cmp")])
            self.assertEqual(p.returncode, 2)
            self.assertIn("'2'", p.stderr)

    def test_a_base_without_a_baseline_is_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            a = syn.write_run(os.path.join(tmp, "a"), RUN_A, ["gcc"])
            b = syn.write_run(os.path.join(tmp, "b"), RUN_B, ["gcc"])
            p = compare(["--base", a, b, "--out", os.path.join(tmp, "cmp")])
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("names no baseline", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "cmp")))

    def test_the_noise_is_read_from_the_control_not_from_the_changes_judged(self):
        sys.path.insert(0, os.path.join(HERE, "..", ".."))
        from runner import gate, stats

        def change(strategy, threads, log_change, se):
            e, half = math.exp(log_change), 1.96 * se
            return gate.Change(("gcc", strategy, "w", 1, threads, 0.0), "monotonic", 1.0, e,
                               stats.Interval(e, math.exp(log_change - half), math.exp(log_change + half), 8, True))
        # twelve control cells of z -1 and +1: the runs differ 1.48 times more than their intervals say
        control = [change("control", 1, x, 0.01) for x in (-0.01, 0.01) * 6]
        k = 1.4826
        for n in (1, 30):  # however many cells moved by 8% (z 8 / k = 5.4), k stays where the control puts it
            moved = [change("pool", 1, 0.08, 0.01) for _ in range(n)]
            verdict = gate.judge(control + moved, 0.02, "control")
            self.assertAlmostEqual(verdict.k["one thread"], k)
            self.assertTrue(all(c.moved for c in moved))
            self.assertFalse(any(c.moved for c in control))
        # 6% at a standard error of 2% (z 3 / k = 2.0): no cell alone; a strategy whose 8 cells all
        # moved so has a median z of 2.0 x sqrt(8) / 1.2533 = 4.6 and moved as a whole, with each of
        # them; 6 such cells (4.0 - a little) are not enough
        for n, whole in ((8, True), (6, False)):
            cells = [change("system", 1, 0.06, 0.02) for _ in range(n)]
            verdict = gate.judge(control + cells, 0.02, "control")
            self.assertEqual([c.moved for c in cells], [whole] * n)
            self.assertEqual([w[0] for w in verdict.wholes], ["system"] if whole else [])
        # a cell whose own interval is narrow by chance is judged at its row's usual error
        narrow = [change("pool", 1, 0.03, 0.02) for _ in range(4)] + [change("pool", 1, 0.03, 0.001)]
        gate.judge(control + narrow, 0.02, "control")
        self.assertFalse(any(c.moved for c in narrow))
        # a change within the margin never moves, whatever its z
        small = change("pool", 1, 0.015, 0.0001)
        gate.judge(control + [small], 0.02, "control")
        self.assertFalse(small.moved)
        # a kind without FEW control cells takes k from every control cell
        several = change("pool", 2, 0.035, 0.005)
        verdict = gate.judge(control + [several], 0.02, "control")
        self.assertEqual(verdict.k["several threads"], verdict.k["one thread"])
        self.assertFalse(several.moved)  # z 7 / 1.48 = 4.7, short of 5
        # fewer than FEW control cells: the intervals are taken at their word (k 1)
        verdict = gate.judge(control[:3] + [several], 0.02, "control")
        self.assertEqual(verdict.k, {"one thread": 1.0, "several threads": 1.0})
        self.assertTrue(several.moved)


class GateNoise(unittest.TestCase):
    """The gate's bar does not rise with the regression it judges: one strategy
    or every strategy (but the baseline and the A/A control)
    10% slower fails it; runs of the same code pass it."""

    def gate(self, **kw):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = gate_runs(tmp, **kw)
            return compare(["--base", a, b, "--out", os.path.join(tmp, "cmp")])

    def moved(self, p):
        return [line.strip() for line in p.stdout.splitlines() if line.strip().startswith("moved:")]

    def test_runs_of_the_same_code_pass(self):
        for seed in range(1, 6):
            p = self.gate(seed=seed)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("0 of 36 cells moved beyond the noise.", p.stdout)

    def test_one_strategy_ten_percent_slower_fails(self):
        p = self.gate(slower={"system": 1.1})
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        # a 10% change is a few SDs of the noise of one cell's change: most of the 12 are found
        self.assertGreaterEqual(len(self.moved(p)), 6, p.stdout)
        self.assertTrue(all(" system " in m for m in self.moved(p)), p.stdout)

    def test_every_strategy_ten_percent_slower_fails(self):
        p = self.gate(slower={"system": 1.1, "pool": 1.1})
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertGreaterEqual(len(self.moved(p)), 12, p.stdout)
        self.assertIn("A/A control control: moved in 0 of 12 cells.", p.stdout)

    def test_a_quick_run_and_a_slower_copy_of_it(self):
        # make bench QUICK=1 ALLOCATORS=system,monotonic WORKLOADS=list_dupe: one block, six visits;
        # its copy with system made slower, or with every strategy but the baseline and the A/A control (here also pool),
        # and a second run of the same code
        for rows, slower in ((("monotonic", "system", "control"), ("system",)),
                             (tuple(LEVEL), ("system", "pool"))):
            quick = {"workloads": ("list_dupe",), "sizes": (1810,), "visits": 6, "strategies": rows}
            with tempfile.TemporaryDirectory() as tmp:
                a, b = gate_runs(tmp, **quick)
                header, samples = syn.read_csv(os.path.join(a, "samples.csv"))
                copy = os.path.join(tmp, "copy")
                shutil.copytree(a, copy)
                for factor in (1.1, 1.5):
                    syn.write_lines(copy, [], [[float(r[c]) * factor if c in ("ns", "ns_per_op") and
                                                r["strategy"] in slower else r[c] for c in header] for r in samples])
                    shutil.copy(os.path.join(a, "summary.csv"), copy)
                    p = compare(["--base", a, copy, "--out", os.path.join(tmp, "cmp")])
                    self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                    self.assertEqual(len(self.moved(p)), len(slower), p.stdout)
                    self.assertTrue(all(m.split()[2] in slower for m in self.moved(p)), p.stdout)
                p = compare(["--base", a, b, "--out", os.path.join(tmp, "cmp")])
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            for seed in range(1, 6):
                p = self.gate(seed=seed, **quick)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


class GateThroughThePartner(unittest.TestCase):
    """Cells timed beside a partner are judged on their time over the
    partner's: a baseline cell that read slower in one run's processes moves
    itself, not every other cell of its block."""

    def runs(self, tmp, base_drift=1.0, slower=None, other_seed=False, seeds=(1, 1)):
        """Two paired runs of LEVEL's rows at list_dupe and thrash_pool 1810, 8
        visits each; every process of B's machine 1.3x slower and a few % off on
        both sides; in B, monotonic's list_dupe cell base_drift times slower
        than its partner, and `slower` rows slower in every cell."""
        rng = random.Random(5)
        folders = []
        for run in ("a", "b"):
            cells, beside = {}, {}
            for w in ("list_dupe", "thrash_pool"):
                for s, v in LEVEL.items():
                    k = ("gcc", s, w, 1810)
                    own = [math.exp(rng.gauss(0, 0.06)) * (1.3 if run == "b" else 1.0) for _ in range(8)]
                    worse = 1.0 if run == "a" else (base_drift if (s, w) == ("monotonic", "list_dupe") else 1.0) * \
                        (slower or {}).get(s, 1.0)
                    cells[k] = [f * v * worse * math.exp(rng.gauss(0, 0.005)) for f in own]
                    beside[k] = [f * 20.0 * math.exp(rng.gauss(0, 0.005)) for f in own]
            folders.append(syn.write_run(os.path.join(tmp, run), cells, ["gcc"], baseline="monotonic", meta=CONTROL,
                                         partners=("minimal", beside), seed=seeds[len(folders)]))
        if other_seed:  # B's cells did other work: summary.csv's inputs differ
            path = os.path.join(folders[1], "summary.csv")
            with open(path) as f:
                text = f.read().splitlines()
            col = text[0].split(",").index("inputs")
            with open(path, "w") as f:
                f.write("\n".join([text[0]] + [",".join(v if i != col else "%016x" % 0xfeed
                                                         for i, v in enumerate(line.split(",")))
                                               for line in text[1:]]) + "\n")
        return compare(["--base", folders[0], folders[1], "--out", os.path.join(tmp, "cmp")])

    def moved(self, p):
        return [line.strip() for line in p.stdout.splitlines() if line.strip().startswith("moved:")]

    def test_the_same_code_passes_though_each_process_differs(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = self.runs(tmp)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("0 of 8 cells moved beyond the noise.", p.stdout)
        self.assertIn("Judged on each cell's time over its partner's beside it (minimal;", p.stdout)

    def test_runs_of_other_work_are_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = self.runs(tmp)
            self.assertNotIn("The work differs", p.stdout)
            p = self.runs(tmp + "/x", other_seed=True)
        self.assertIn("The work differs between the runs in 8 of 8 cells", p.stdout)

    def test_runs_of_one_seed_are_not_told_to_give_them_one(self):
        # contention's loop between operations is calibrated in each run: its
        # inputs differ between two runs of one seed
        with tempfile.TemporaryDirectory() as tmp:
            one = self.runs(tmp, other_seed=True)
            two = self.runs(tmp + "/x", other_seed=True, seeds=(1, 2))
        self.assertIn("though both ran seed 1", one.stdout)
        self.assertNotIn("Give both runs one SEED", one.stdout)
        self.assertIn("Give both runs one SEED", two.stdout)

    def test_a_slower_baseline_cell_moves_itself_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = self.runs(tmp, base_drift=1.1)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(len(self.moved(p)), 1, p.stdout)
        self.assertRegex(self.moved(p)[0], r"^moved: gcc monotonic list_dupe 1810: 0\.5\d* -> 0\.5\d* of minimal \(\+")

    def test_a_strategy_ten_percent_slower_moves_in_every_cell(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = self.runs(tmp, slower={"system": 1.1})
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(sorted(m.split()[2] + " " + m.split()[3] for m in self.moved(p)),
                         ["system list_dupe", "system thrash_pool"], p.stdout)


class GateOnABrokenRun(unittest.TestCase):
    """A run that cannot be judged (cells of the base missing or failed in it,
    interrupted, no cells) fails the gate with exit 3, and the gate says why."""

    def check(self, b_cells, meta=None, expect=()):
        with tempfile.TemporaryDirectory() as tmp:
            a, _ = gate_runs(tmp)
            b = syn.write_run(os.path.join(tmp, "broken"), b_cells, ["gcc"], baseline="monotonic",
                              meta=dict(CONTROL, **(meta or {})))
            p = compare(["--base", a, b, "--out", os.path.join(tmp, "cmp")])
            with open(os.path.join(tmp, "cmp", "compare.md")) as f:
                md = f.read()
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("cannot be judged", p.stderr)
        gate_md = md[md.index("## Gate: B against A"):]
        for text in expect:
            self.assertIn(text, gate_md)
        return p, gate_md

    def cells(self):
        with tempfile.TemporaryDirectory() as tmp:
            _, b = gate_runs(tmp)
            return {(r["compiler"], r["strategy"], r["workload"], int(r["size"])): None
                    for r in syn.read_csv(os.path.join(b, "summary.csv"))[1]}

    def test_every_cell_failed(self):
        self.check(self.cells(), expect=("0 of 0 cells moved", "36 cell(s) of the base could not be judged",
                                                 "not judged: gcc system list_dupe 1810: failed"))

    def test_an_interrupted_run_with_cells_missing(self):
        with tempfile.TemporaryDirectory() as tmp:
            _, b = gate_runs(tmp)
            header, rows = syn.read_csv(os.path.join(b, "summary.csv"))
            keep = {(r["strategy"], r["workload"], r["size"]) for r in rows[:-12]}
            summary = [[r[c] for c in header] for r in rows[:-12]]
            _, samples = syn.read_csv(os.path.join(b, "samples.csv"))
            samples = [[s[c] for c in syn.schema.SAMPLE_COLS] for s in samples
                       if (s["strategy"], s["workload"], s["size"]) in keep]
            broken = os.path.join(tmp, "interrupted")
            os.makedirs(broken)
            syn.write_lines(broken, summary, samples)
            with open(os.path.join(b, "meta.json")) as f:
                meta = syn.json.load(f)
            meta.update(state="interrupted", cells={"planned": 48, "not_run": 12})
            with open(os.path.join(broken, "meta.json"), "w") as f:
                syn.json.dump(meta, f)
            a, _ = gate_runs(os.path.join(tmp, "again"))
            p = compare(["--base", a, broken, "--out", os.path.join(tmp, "cmp")])
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("cannot be judged: the run was interrupted (12 of 48 cells not run)", p.stdout)
        self.assertRegex(p.stdout, r"not judged: gcc \w+ \w+ \d+: missing")
        self.assertIn("9 cell(s) of the base could not be judged", p.stdout)

    def test_a_run_with_no_cells(self):
        self.check({}, expect=("cannot be judged: the run has no cells",))

    def test_a_failed_baseline_cell_leaves_its_block_unjudged(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = gate_runs(tmp)
            header, rows = syn.read_csv(os.path.join(b, "summary.csv"))
            for r in rows:
                if (r["strategy"], r["workload"], r["size"]) == ("monotonic", "list_dupe", "1810"):
                    r.update(status="failed", reason="crashed (SIGSEGV)", median_ns_per_op="")
            syn.write_lines(b, [[r[c] for c in header] for r in rows],
                            [[s[c] for c in syn.schema.SAMPLE_COLS] for s in syn.read_csv(
                                os.path.join(b, "samples.csv"))[1]
                             if (s["strategy"], s["workload"], s["size"]) != ("monotonic", "list_dupe", "1810")])
            p = compare(["--base", a, b, "--out", os.path.join(tmp, "cmp")])
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("not judged: gcc pool list_dupe 1810: no ratio (its monotonic cell failed or is missing)",
                      p.stdout)
        self.assertIn("3 cell(s) of the base could not be judged", p.stdout)


class BadInput(unittest.TestCase):
    def test_folder_without_summary_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            good = syn.write_run(os.path.join(tmp, "good"), RUN_A, ["gcc"])
            empty = os.path.join(tmp, "empty")
            os.makedirs(empty)
            out = os.path.join(tmp, "cmp")
            p = compare([good, empty, "--out", out])
            self.assertEqual(p.returncode, 2)
            self.assertIn(os.path.join(empty, "summary.csv"), p.stderr)
            self.assertFalse(os.path.exists(out))

    def test_folder_without_samples_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            good = syn.write_run(os.path.join(tmp, "good"), RUN_A, ["gcc"])
            other = syn.write_run(os.path.join(tmp, "other"), RUN_B, ["gcc"])
            os.remove(os.path.join(other, "samples.csv"))
            p = compare([good, other, "--out", os.path.join(tmp, "cmp")])
            self.assertEqual(p.returncode, 2)
            self.assertIn(os.path.join(other, "samples.csv"), p.stderr)

    def test_not_a_folder_and_too_few_runs(self):
        p = compare(["/nonexistent/run-x", "/nonexistent/run-y"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("/nonexistent/run-x", p.stderr)
        p = compare([])
        self.assertEqual(p.returncode, 2)
        self.assertIn("at least two", p.stderr)


if __name__ == "__main__":
    unittest.main()
