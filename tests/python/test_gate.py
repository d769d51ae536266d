"""Tests of the regression gate of runner/compare.py (--base) on synthetic
run folders: runs of the same code pass, a slower strategy moves, the noise is
read from the A/A control, cells timed beside a partner are judged on their
time over the partner's, and a broken run is not passed."""
import math
import os
import random
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import synthetic_runs as syn  # noqa: E402
from test_compare import RUN_A, RUN_B, compare  # noqa: E402


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
        from runfolder import gate, stats

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


def change(strategy, workload, z, se=0.03, reach=None):
    """A one-thread change of a cell whose log moved by z standard errors se;
    reach: its interval's ends as logs (else 1.96 se either side)."""
    from runfolder import gate, stats
    est = z * se
    low, high = reach or (est - 1.96 * se, est + 1.96 * se)
    iv = stats.Interval(math.exp(est), math.exp(low), math.exp(high), 8, True)
    return gate.Change(("gcc", strategy, workload, 1810, 1, 0.0), "minimal", 1.0, iv.estimate, iv)


class GateTouchedCells(unittest.TestCase):
    """A strategy that moved beyond doubt in one cell is judged more closely in
    its others: those that changed the same way by 2 standard errors and the
    margin moved too (one slower fast path, seen in every cell it touches)."""

    def judge(self, *found):
        """The workloads of the cells that moved, among the cells given and
        six of the same row that did not change (so that it does not move
        as a whole)."""
        from runfolder import gate
        found = list(found) + [change(c.key[1], f"still{i}", 0.0) for c in found[:1] for i in range(6)]
        gate.judge(found, 0.02)
        return {c.key[2] for c in found if c.moved}

    def test_a_row_that_moved_in_one_cell_moves_in_those_that_changed_alike(self):
        self.assertEqual(self.judge(change("pool", "alloc_pair", 20), change("pool", "list_create", 3),
                                    change("pool", "map_erase", 0.5), change("pool", "list_dupe", -3)),
                         {"alloc_pair", "list_create"})

    def test_no_cell_beyond_doubt_moves_nothing(self):
        self.assertEqual(self.judge(change("pool", "alloc_pair", 4), change("pool", "list_create", 3),
                                    change("pool", "map_erase", 0.5)), set())

    def test_only_the_rows_own_cells(self):
        self.assertEqual(self.judge(change("pool", "alloc_pair", 20), change("system", "list_create", 3)),
                         {"alloc_pair"})

    def test_cells_that_moved_both_ways_say_no_direction(self):
        self.assertEqual(self.judge(change("pool", "alloc_pair", 20), change("pool", "alloc_bulk", -20),
                                    change("pool", "list_create", 3)), {"alloc_pair", "alloc_bulk"})

    def test_an_interval_that_holds_no_change_does_not_move(self):
        # +8.3%, [-1%, +15%]: z 2.1 from the interval's width, yet no change is inside it
        self.assertEqual(self.judge(change("pool", "alloc_pair", 20),
                                    change("pool", "list_create", 2.1, se=0.0383, reach=(-0.01, 0.14))),
                         {"alloc_pair"})

    def test_within_the_margin_does_not_move(self):
        self.assertEqual(self.judge(change("pool", "alloc_pair", 20), change("pool", "list_create", 3, se=0.005)),
                         {"alloc_pair"})


class GateThroughThePartner(unittest.TestCase):
    """Cells timed beside a partner are judged on their time over the
    partner's: a baseline cell that read slower in one run's processes moves
    itself, not every other cell of its block."""

    def runs(self, tmp, base_drift=1.0, slower=None, other_seed=False, seeds=(1, 1), layouts=(None, None)):
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
            layout = layouts[len(folders)]
            meta = dict(CONTROL, **({"layout": {"mode": layout}} if layout else {}))
            folders.append(syn.write_run(os.path.join(tmp, run), cells, ["gcc"], baseline="monotonic", meta=meta,
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

    def test_runs_placed_differently_are_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            same = self.runs(tmp, layouts=(None, "random"))  # a folder without the key placed at random
            other = self.runs(tmp + "/x", layouts=(None, "fixed"))
        self.assertNotIn("placed their cells differently", same.stdout)
        self.assertIn("The runs placed their cells differently (layout random in the base, fixed in this run;",
                      other.stdout)
        self.assertEqual(other.returncode, 0, other.stdout + other.stderr)  # a note, not a verdict

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


if __name__ == "__main__":
    unittest.main()
