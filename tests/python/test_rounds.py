"""Rounds without processes (made-up answers): how a cell's samples are split
between rounds, the order of visits (blocks, a new blocked shuffle each
round), what a later round does to the cell, and that a later round passes
round 1's repetitions and oracle checksum; and the cell's own check of
--expect (Expect, which runs the system cell)."""
import json
import os
import random
import subprocess
import sys
import types
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_runner import BUILD, ensure_cells  # noqa: E402
from runner import config, matrix, progress, rounds, run  # noqa: E402
from runfolder import aggregate, answer, catalog, outputs, schema  # noqa: E402


def made_up_config(**settings):
    """The run settings rounds.measure reads, made up, and cells that need no build."""
    settings.setdefault("baseline", "minimal")
    settings.setdefault("traces", {})
    return types.SimpleNamespace(seed=1, mem_limits={}, settings=aggregate.Settings(), layout="random",
                                 cell_exe=lambda compiler, row, stats_build=False: "am-cell-" + row, **settings)


def measure_commands(m, cfg, rnd=0, answer=(None, "stop")):
    """The commands rounds.measure starts for one visit of m, each answered with answer."""
    seen = []

    class FakeLauncher:
        def run(self, cmd, many_threads=False, kind=None):
            seen.append(cmd)
            return answer
    rounds.measure(m, cfg, FakeLauncher(), rnd=rnd)
    return seen


class Rounds(unittest.TestCase):
    """How a cell's samples are split between rounds, and what a later round
    does to the cell (no processes: made-up answers)."""

    def test_samples_split_first_rounds_take_the_rest(self):
        self.assertEqual([rounds.samples_in_round(9, 3, r) for r in range(3)], [3, 3, 3])
        self.assertEqual([rounds.samples_in_round(7, 3, r) for r in range(3)], [3, 2, 2])
        self.assertEqual([rounds.samples_in_round(5, 1, 0)], [5])

    @staticmethod
    def block_cells():
        """two compilers x 4 strategies x 5 blocks (workload, size): 40 cells"""
        return [matrix.Cell(cc, s, w, size, 1, 0, False) for cc in ("gcc", "clang")
                for s in ("system", "minimal", "pool", "fast_pool")
                for w, size in (("thrash_pool", 10), ("thrash_pool", 1810), ("list_create", 10),
                                ("map_erase", 10), ("map_erase", 210))]

    def test_each_round_visits_every_cell_once_in_a_new_order(self):
        cells = matrix.blocked_shuffle(self.block_cells(), random.Random(5))
        seen = list(matrix.visits(cells, 3, 11))
        self.assertEqual([r for r, _ in seen], [0] * 40 + [1] * 40 + [2] * 40)
        rounds = [[c for r, c in seen if r == k] for k in range(3)]
        for order in rounds:
            self.assertEqual(sorted(map(id, order)), sorted(map(id, cells)))
        self.assertEqual(rounds[0], cells)  # round 1 keeps the plan's shuffled order
        self.assertNotEqual(rounds[1], rounds[2])
        self.assertEqual(seen, list(matrix.visits(cells, 3, 11)))  # the seed decides

    def test_a_block_runs_without_a_break_in_a_new_order_each_round(self):
        cells = matrix.blocked_shuffle(self.block_cells(), random.Random(5))
        seen = list(matrix.visits(cells, 3, 11))
        block_orders, inner = [], {}
        for k in range(3):
            order = [c for r, c in seen if r == k]
            blocks = [matrix.block_of(c) for c in order]
            # each block's 8 cells (2 compilers x 4 strategies) are contiguous
            runs = [b for i, b in enumerate(blocks) if i == 0 or blocks[i - 1] != b]
            self.assertEqual(len(runs), 5)
            self.assertEqual(len(set(runs)), 5)
            block_orders.append(runs)
            for b in runs:
                inner.setdefault(b, []).append([(c.compiler, c.strategy) for c in order
                                                if matrix.block_of(c) == b])
        self.assertGreater(len({tuple(o) for o in block_orders}), 1)  # blocks are shuffled
        # inside a block the order changes too (a strategy is not always first)
        self.assertTrue(any(len({tuple(o) for o in orders}) > 1 for orders in inner.values()))
        firsts = {orders[k][0] for orders in inner.values() for k in range(3)}
        self.assertGreater(len(firsts), 1)

    def test_progress_names_the_cell_of_the_matrix_and_the_round(self):
        p = progress.Progress(40, 3, False)
        self.assertEqual(p._where(0), "cell 1/40 round 1/3")
        for _ in range(45):
            p.skip(0 if p.i < 40 else 1)  # a later round of a failed cell is not visited
        self.assertEqual(p._where(1), "cell 6/40 round 2/3")
        self.assertEqual(p.total, 75)
        one = progress.Progress(40, 1, False)
        for _ in range(39):
            one.skip(0)
        self.assertEqual(one._where(0), "cell 40/40")

    def test_progress_names_a_revisit_and_counts_its_visits(self):
        p = progress.Progress(40, 3, False)
        for rnd in range(3):
            for _ in range(40):
                p.skip(rnd)
        p.revisit(0, 8)
        self.assertEqual(p.total, 8)  # every planned visit skipped, the 8 of the revisit to come
        p.skip(3)
        self.assertEqual(p._where(3), "cell 2/8 revisit 1")

    def made_up_cell(self):
        c = aggregate.Measurement(matrix.Cell("cc", "system", "thrash_pool", 10, 1, 0.0, False))
        c.status, c.stats = "ok", {}
        c.result = answer.Answer.from_json({"reps": 4, "ops_per_rep": 2, "samples_ns": [800, 880],
                                                   "peak_rss": 100})
        c.summary = aggregate.summarize(c)
        return c

    def test_a_later_round_adds_its_samples_as_one_more_visit(self):
        c = self.made_up_cell()
        rounds.add_round(c, {"status": "ok", "reps": 4, "samples_ns": [960], "peak_rss": 300}, None, 1)
        self.assertEqual(c.status, "ok")
        self.assertEqual(c.result.samples_ns, [800, 880, 960])
        self.assertEqual(c.result.sample_rounds, [0, 0, 1])
        self.assertEqual(c.result.peak_rss, 300)
        self.assertEqual((c.summary["samples"], c.summary["visits"]), (3, 2))
        # visits 105 (the median of 100 and 110 ns per op) and 120: every process counts once
        self.assertEqual(c.summary["median_ns_per_op"], 112.5)
        rows = outputs.sample_lines([c])
        at = schema.SAMPLE_COLS.index("round")
        self.assertEqual([r[at] for r in rows], [1, 1, 2])

    def test_a_revisit_is_one_more_round(self):
        self.assertEqual([rounds.samples_in_round(7, 3, r) for r in (3, 4)], [2, 2])
        c = self.made_up_cell()
        rounds.add_round(c, {"status": "ok", "reps": 4, "samples_ns": [960]}, None, 5)
        self.assertEqual(c.result.sample_rounds, [0, 0, 5])
        self.assertEqual(c.summary["visits"], 2)

    def test_a_failed_later_round_fails_the_cell(self):
        c = self.made_up_cell()
        rounds.add_round(c, None, "crashed (SIGSEGV)", 2)
        self.assertEqual((c.status, c.reason, c.summary), ("failed", "round 3: crashed (SIGSEGV)", None))
        c = self.made_up_cell()
        rounds.add_round(c, {"status": "ok", "reps": 5, "samples_ns": [1]}, None, 1)
        self.assertEqual(c.status, "failed")
        self.assertIn("reps 5", c.reason)


class Expect(unittest.TestCase):
    """Later rounds pass round 1's oracle checksum (--expect), and the cell
    checks its own against it: a wrong value fails the cell."""

    def test_the_cell_checks_against_the_given_oracle(self):
        ensure_cells()
        exe = catalog.cell_exe(os.path.join(BUILD, "bin"), "system")
        cmd = [exe, "--workload", "thrash_pool", "--size", "210", "--seed", "7", "--samples", "1", "--reps", "3"]
        first = json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout)
        self.assertEqual(first["status"], "ok")
        ok = subprocess.run(cmd + ["--expect", str(first["expect"])], capture_output=True, text=True, timeout=60)
        self.assertEqual((ok.returncode, json.loads(ok.stdout)["expect"]), (0, first["expect"]))
        wrong = subprocess.run(cmd + ["--expect", str(first["expect"] + 1)], capture_output=True, text=True,
                               timeout=60)
        self.assertEqual(wrong.returncode, 4)
        self.assertEqual(json.loads(wrong.stdout)["reason"], "checksum mismatch")
        bad = subprocess.run(cmd + ["--expect", "abc"], capture_output=True, text=True, timeout=60)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("'abc'", bad.stderr)
        no_reps = [a for a in cmd if a not in ("--reps", "3")] + ["--expect", "1"]
        p = subprocess.run(no_reps, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--expect needs --reps", p.stderr)

    def test_a_later_round_passes_round_one_s_reps_and_oracle(self):
        c = aggregate.Measurement(matrix.Cell("gcc", "system", "thrash_pool", 10, 1, 0.0, False))
        c.status = "ok"
        c.result = answer.Answer.from_json({"reps": 4, "expect": 2 ** 63 + 5, "ops_per_rep": 1,
                                                   "samples_ns": [8]})
        c.summary = aggregate.summarize(c)
        seen = measure_commands(c, made_up_config(samples=3, rounds=3, min_ms=1.0), rnd=1,
                                answer=({"status": "ok", "reps": 4, "samples_ns": [9]}, None))
        self.assertEqual(seen[0][seen[0].index("--reps") + 1], "4")
        self.assertEqual(seen[0][seen[0].index("--expect") + 1], str(2 ** 63 + 5))
        self.assertEqual(c.result.samples_ns, [8, 9])


class VisitBudget(unittest.TestCase):
    """A later visit takes its planned samples unless they would last far past
    --min-ms: a cell whose one repetition is slow takes fewer, never none."""

    def answer(self, row_ms, partner_ms=None):
        out = {"reps": 1, "samples_ns": [row_ms * 1e6] * 3}
        if partner_ms is not None:
            out.update(partner="minimal", partner_reps=1, partner_samples_ns=[partner_ms * 1e6] * 3)
        return answer.Answer.from_json(out)

    def test_samples_as_long_as_min_ms_are_all_taken(self):
        self.assertEqual(rounds.samples_this_visit(self.answer(0.5, 0.5), 8, 0.5), 8)
        self.assertEqual(rounds.samples_this_visit(self.answer(0.5), 8, 0.5), 8)

    def test_a_slow_cell_takes_fewer(self):
        # 8 pairs planned at 0.5 ms each side: 8 ms, twice that allowed; a pair lasts 4.5 ms
        self.assertEqual(rounds.samples_this_visit(self.answer(4.0, 0.5), 8, 0.5), 3)
        self.assertEqual(rounds.samples_this_visit(self.answer(1000.0, 0.5), 8, 0.5), 1)

    def test_a_first_visit_takes_the_count_a_later_one_is_given(self):
        # the first visit counts them from its calibration (cell/calibrate.h), the runner
        # a later visit's from the first one's samples: one rule, so the visits are alike;
        # at a min_ms of 1 us a repetition of 30 us takes one sample a visit.
        # The two counts come from different runs of the same repetitions, so a
        # loaded machine (make test runs beside the C tests) can slow the samples
        # past the calibration's twofold slack: a process counts when both agree,
        # and one of three must.
        ensure_cells()
        exe = catalog.cell_exe(os.path.join(BUILD, "bin"), "system")
        for min_ms, expect in ((0.5, 8), (0.001, 1)):
            cmd = [exe, "--workload", "thrash_pool_sort_list_int", "--size", "1010", "--seed", "7",
                   "--samples", "8", "--min-ms", repr(min_ms)]
            seen = []
            for _ in range(3):
                out = json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout)
                counts = (len(out["samples_ns"]),
                          rounds.samples_this_visit(answer.Answer.from_json(out), 8, min_ms))
                seen.append(counts)
                if counts == (expect, expect):
                    break
            self.assertEqual(seen[-1], (expect, expect), (min_ms, seen))

    def test_the_command_of_a_later_visit_carries_the_count(self):
        c = aggregate.Measurement(matrix.Cell("gcc", "pool", "list_dupe", 1810, 1, 0.0, False))
        c.status, c.result = "ok", self.answer(40.0, 0.5)
        c.summary = aggregate.summarize(c)
        seen = measure_commands(c, made_up_config(samples=48, rounds=6, min_ms=0.5), rnd=2)
        self.assertEqual(seen[0][seen[0].index("--samples") + 1], "1")

    def test_the_baseline_takes_more_samples_a_visit(self):
        # every ratio of a block goes through the baseline's visits
        cfg = made_up_config(samples=48, rounds=6, min_ms=0.5, threaded_min_ms=3.0)
        planned = {}
        for row in ("minimal", "pool"):
            seen = measure_commands(aggregate.Measurement(matrix.Cell("gcc", row, "list_dupe", 1810, 1, 0.0, False)), cfg)
            planned[row] = int(seen[0][seen[0].index("--samples") + 1])
        self.assertEqual(planned, {"pool": 8, "minimal": 8 * config.BASELINE_SAMPLES})
        self.assertGreater(config.BASELINE_SAMPLES, 1)
        c = aggregate.Measurement(matrix.Cell("gcc", "minimal", "list_dupe", 1810, 1, 0.0, False))
        c.status, c.result = "ok", self.answer(0.5, 0.5)
        c.summary = aggregate.summarize(c)
        seen = measure_commands(c, cfg, rnd=2)
        self.assertEqual(seen[0][seen[0].index("--samples") + 1], str(8 * config.BASELINE_SAMPLES))
        # a threaded baseline cell is timed alone: one sample a visit, as any
        c = aggregate.Measurement(matrix.Cell("gcc", "minimal", "contention", 100, 2, 0.0, True))
        seen = measure_commands(c, cfg)
        self.assertEqual(seen[0][seen[0].index("--samples") + 1], "1")

    def test_a_threaded_cell_takes_one_sample_a_visit(self):
        c = aggregate.Measurement(matrix.Cell("gcc", "system", "contention", 100, 2, 0.0, True))
        seen = measure_commands(c, made_up_config(samples=48, rounds=6, min_ms=0.5, threaded_min_ms=3.0))
        self.assertEqual(seen[0][seen[0].index("--samples") + 1], "1")
        self.assertEqual(seen[0][seen[0].index("--min-ms") + 1], "3.0")

    def test_a_trace_cell_takes_longer_samples(self):
        cfg = made_up_config(samples=48, rounds=6, min_ms=0.5, threaded_min_ms=3.0, trace_min_ms=2.0,
                             traces={"trace:calls": "calls.trace"})
        for workload, size, min_ms in (("trace:calls", 1, "2.0"), ("list_dupe", 1810, "0.5")):
            c = aggregate.Measurement(matrix.Cell("gcc", "system", workload, size, 1, 0.0, False))
            seen = measure_commands(c, cfg)
            self.assertEqual(seen[0][seen[0].index("--min-ms") + 1], min_ms, workload)


class Revisits(unittest.TestCase):
    """Blocks whose ratios are unstable, or during which a CPU changed state,
    are visited again (run.Visits), within the limits; no processes: made-up answers."""

    def visit_all(self, noisy_size, moved_sizes=(), revisits=3, rounds_=6, rows=("base", "other"), budget_s=None):
        """Every process takes one second of a made-up clock."""
        cells = matrix.blocked_shuffle([matrix.Cell("cc", s, "thrash_pool", size, 1, 0.0, False)
                                        for s in rows for size in (1, 2, 3, 4)], random.Random(1))
        cfg = types.SimpleNamespace(seed=1, traces={}, layout="random",
                                    samples=rounds_, rounds=rounds_, revisits=revisits, min_ms=1.0, threaded_min_ms=1.0,
                                    baseline="base", budget_s=budget_s,
                                    mem_limits={}, settings=aggregate.Settings(), cells=cells,
                                    cell_exe=lambda compiler, row, stats_build=False: "am-cell-" + row,
                                    row=lambda name: None)
        answers = {}
        clock = [0.0]

        class Launcher:
            def run(self, cmd, many_threads=False, kind=None):
                clock[0] += 1.0
                row, size = cmd[0][len("am-cell-"):], int(cmd[cmd.index("--size") + 1])
                n = answers[(row, size)] = answers.get((row, size), -1) + 1
                # the other row's visits of the noisy block spread 30%, every other pair is exact
                ns = 100 * (1 + 0.3 * (n % 3) * (row == "other" and size == noisy_size))
                return {"status": "ok", "reps": 1, "expect": 1, "samples_ns": [ns]}, None

        class Pinner:
            def __init__(self):
                self.current = None

            def before_block(self):
                return {0: 1.0}

            def after_block(self, before, many_threads):
                return self.current in moved_sizes and answers.get(("base", self.current)) == 0

        pinner = Pinner()
        measurements = [aggregate.Measurement(c) for c in cells]
        writer = types.SimpleNamespace(ratios=aggregate.Ratios("base"), maybe=lambda: None)
        visits = run.Visits(cfg, measurements, pinner, writer, Launcher(), progress.Progress(8, rounds_, False))
        measure = rounds.measure

        def tracking(m, cfg_, launcher, rnd=0, work_loops=None):
            pinner.current = m.cell.size
            return measure(m, cfg_, launcher, rnd, work_loops)
        with unittest.mock.patch.object(rounds, "measure", tracking), \
                unittest.mock.patch.object(run.time, "monotonic", lambda: clock[0]):
            visits.started = clock[0]
            visits.planned()
            visits.revisits()
        return {(m.cell.strategy, m.cell.size): sorted(set(m.result.sample_rounds)) for m in measurements}, visits

    def test_an_unstable_block_is_visited_again_up_to_the_limit(self):
        seen, visits = self.visit_all(noisy_size=2)
        self.assertEqual(seen[("other", 2)], list(range(9)))  # 6 rounds and 3 revisits
        self.assertEqual(seen[("base", 2)], list(range(9)))   # the pairs stay in one round
        self.assertEqual(seen[("other", 1)], list(range(6)))
        self.assertEqual(visits.note()["blocks_revisited"], 1)

    def test_a_revisit_takes_the_undecided_ratios_cells_and_their_baseline_alone(self):
        # "third" times as the baseline does in every visit: its ratio is decided
        seen, _ = self.visit_all(noisy_size=2, rows=("base", "other", "third"))
        self.assertEqual(seen[("other", 2)], list(range(9)))
        self.assertEqual(seen[("base", 2)], list(range(9)))
        self.assertEqual(seen[("third", 2)], list(range(6)))
        # a CPU that changed state during a block's visit: every cell again
        seen, _ = self.visit_all(noisy_size=None, moved_sizes=(3,), rows=("base", "other", "third"))
        self.assertEqual(seen[("third", 3)], list(range(7)))

    def test_a_block_whose_cpu_moved_is_visited_once_more(self):
        seen, visits = self.visit_all(noisy_size=None, moved_sizes=(3,))
        self.assertEqual(seen[("other", 3)], list(range(7)))
        self.assertEqual(seen[("other", 4)], list(range(6)))
        self.assertEqual(visits.note()["visits_with_a_cpu_that_moved"], 1)

    def test_revisits_stay_within_a_quarter_of_the_planned_visits(self):
        # 8 cells x 2 rounds planned: 4 revisit visits at most. Two rounds decide no
        # ratio (fewer than 6 pairs), so every block wants more: the noisiest first
        seen, _ = self.visit_all(noisy_size=2, rounds_=2)
        self.assertLessEqual(sum(len([r for r in v if r >= 2]) for v in seen.values()), 4)
        self.assertEqual(seen[("other", 2)], [0, 1, 2])
        seen, _ = self.visit_all(noisy_size=2, revisits=0)
        self.assertEqual(seen[("other", 2)], list(range(6)))

    def test_revisits_stop_where_the_run_would_pass_its_time_budget(self):
        # 8 cells x 6 rounds take 48 s; a revisit of the noisy block's two cells, 2 s
        seen, visits = self.visit_all(noisy_size=2, budget_s=51)
        self.assertEqual(seen[("other", 2)], list(range(7)))
        self.assertEqual(seen[("base", 2)], list(range(7)))
        self.assertEqual(visits.note()["blocks_left_for_time"], 1)
        # the planned rounds run whatever the budget
        seen, visits = self.visit_all(noisy_size=2, budget_s=10)
        self.assertEqual(seen[("other", 2)], list(range(6)))
        self.assertEqual(seen[("other", 1)], list(range(6)))
        self.assertEqual(visits.note()["revisits"], 0)

    def test_planned_rounds_past_the_sixth_stop_where_the_budget_has_no_room_for_one(self):
        # 8 cells, a second a visit: a round costs 8 s
        seen, visits = self.visit_all(noisy_size=None, rounds_=8, revisits=0, budget_s=57)
        self.assertEqual(seen[("other", 1)], list(range(7)))   # 56 s: the eighth would pass 57
        self.assertEqual(visits.note()["planned_rounds_run"], 7)
        seen, visits = self.visit_all(noisy_size=None, rounds_=8, revisits=0, budget_s=10)
        self.assertEqual(seen[("base", 4)], list(range(6)))    # never fewer than six
        seen, visits = self.visit_all(noisy_size=None, rounds_=8, revisits=0)
        self.assertEqual(seen[("other", 1)], list(range(8)))   # no budget: every planned round
        self.assertEqual(visits.note()["planned_rounds_run"], 8)


if __name__ == "__main__":
    unittest.main()
