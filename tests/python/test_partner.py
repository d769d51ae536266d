"""Tests of the partner (cell/partner.h): every cell's executable also holds
the PARTNER row's unit, its global names prefixed by cell/partner_names.h.
The list must cover every global name a unit of any strategy source defines,
a one-thread cell's answer holds both rows' samples, a threaded one and
--alone none, a row that cannot be every cell's partner is refused, and a
ratio to the partner's own row is the one measured beside it."""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_runner import BUILD, ROOT, ensure_cells  # noqa: E402

sys.path.insert(0, ROOT)
from runner import matrix  # noqa: E402
from runfolder import aggregate, answer, catalog, outputs, tables  # noqa: E402


def defined_globals(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[-1] for line in out.splitlines() if line.strip())


def partner_unit(row, obj):
    """Compiles row's unit as a partner (the Makefile's flags, in short; -O0:
    the names a unit defines do not depend on the optimization, and it
    compiles in half the time)."""
    flags = row.cflags.split()
    cmd = ["gcc", "-std=c11", "-O0", "-Iplatform", "-Iallocators", "-Icontainers", "-Iworkloads",
           f"-DAM_STRATEGY={row.source}", f'-DAM_STRATEGY_H="{row.source}.h"', f'-DAM_STRATEGY_C="{row.source}.c"',
           f'-DAM_ROW_NAME="{row.name}"', "-DAM_STATS=0", "-DAM_PARTNER_BUILD=1", *flags,
           "-c", "cell/row_unit.c", "-o", obj]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)


@unittest.skipUnless(sys.platform.startswith("linux"), "nm and gcc")
class PartnerNames(unittest.TestCase):
    def test_a_partner_unit_defines_only_the_table(self):
        # a C++ row cannot be the partner (the Makefile refuses it): its unit is never one
        rows = [r for r in catalog.read_rows() if not r.libs
                and not os.path.exists(os.path.join(ROOT, "allocators", r.source + ".cc"))]
        self.assertGreater(len(rows), 5)
        with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
            objs = {row.name: os.path.join(tmp, row.name + ".o") for row in rows}
            compiled = pool.map(lambda row: partner_unit(row, objs[row.name]), rows)  # two compilers at once
            for row, p in zip(rows, compiled):
                with self.subTest(row=row.name):
                    obj = objs[row.name]
                    self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                    extra = [n for n in defined_globals(obj) if n != "am_partner" and not n.startswith("partner_")]
                    self.assertEqual(extra, [], "add to cell/partner_names.h:\n" +
                                     "\n".join(f"#define {n} partner_{n}" for n in extra))


def cell(row, *args):
    exe = os.path.join(BUILD, "bin", "am-cell-" + row)
    p = subprocess.run([exe, "--seed", "3", "--min-ms", "0.2", *map(str, args)], capture_output=True, text=True,
                       timeout=120)
    lines = p.stdout.strip().splitlines()
    return p.returncode, (json.loads(lines[-1]) if lines else {}), p.stderr


class PairedAnswer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells("system,monotonic,minimal")

    def test_a_one_thread_cell_has_its_partners_samples(self):
        rc, out, _ = cell("system", "--workload", "list_dupe", "--size", 100, "--samples", 5)
        self.assertEqual(rc, 0)
        self.assertTrue(out["partner"])
        # one of the partner's beside each of the row's: five, or fewer where the
        # calibration ran slow enough (a loaded machine) that a visit takes fewer
        # (cell/calibrate.h, am_visit_samples)
        self.assertEqual(len(out["partner_samples_ns"]), len(out["samples_ns"]))
        self.assertIn(len(out["samples_ns"]), range(1, 6))
        self.assertTrue(all(ns > 0 for ns in out["partner_samples_ns"]))

    def test_given_counts_are_kept(self):
        rc, out, _ = cell("monotonic", "--workload", "list_dupe", "--size", 100, "--samples", 2,
                          "--reps", 6, "--partner-reps", 9)
        self.assertEqual(rc, 0)
        self.assertEqual((out["reps"], out["partner_reps"]), (6, 9))

    def test_a_row_s_first_sample_follows_its_own_warm_up(self):
        # timed alone, a row's first sample comes right after its warm-up;
        # beside the partner it should too, with no repetition more: for a
        # row whose one repetition lasts 100 ms (pool at alloc_bulk 256) one
        # more is a third of a one-sample visit
        args = ("--workload", "list_dupe", "--size", 100, "--reps", 6, "--partner-reps", 5)
        for samples in (1, 2, 3):
            with self.subTest(samples=samples):
                rc, alone, _ = cell("monotonic", *args, "--samples", samples, "--alone")
                rc2, paired, _ = cell("monotonic", *args, "--samples", samples)
                self.assertEqual((rc, rc2), (0, 0))
                seeds = paired["seeds"]
                self.assertEqual(alone["untimed_reps"], seeds)
                # in the order row-partner, partner-row (ABBA) a side runs half
                # a sample's repetitions untimed before a sample when the other
                # ran last: the row before its odd samples, the partner before
                # its even
                self.assertEqual(paired["untimed_reps"], seeds + samples // 2 * 3)
                self.assertEqual(paired["partner_untimed_reps"], seeds + (samples + 1) // 2 * 3)

    def test_alone_and_threaded_cells_have_no_partner(self):
        rc, out, _ = cell("system", "--workload", "list_dupe", "--size", 100, "--samples", 2, "--alone")
        self.assertEqual((rc, out.get("alone")), (0, "--alone"))
        self.assertNotIn("partner_samples_ns", out)
        rc, out, _ = cell("system", "--workload", "contention", "--size", 50, "--samples", 2, "--threads", 2)
        self.assertEqual((rc, out.get("alone")), (0, "threaded"))

    def test_partner_reps_without_reps_is_bad_input(self):
        rc, _, err = cell("system", "--workload", "list_dupe", "--size", 100, "--partner-reps", 4)
        self.assertEqual(rc, 2)
        self.assertIn("--partner-reps needs --reps", err)


class PartnerCheck(unittest.TestCase):
    """runner/partner_check.py, the measuring aid behind the partner's
    figures: it runs, and refuses what it cannot measure."""

    @classmethod
    def setUpClass(cls):
        ensure_cells("system,monotonic,minimal")

    def check(self, *args):
        return subprocess.run([sys.executable, "-m", "runner.partner_check", "--build", BUILD, *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)

    def test_a_short_check_names_each_row(self):
        p = self.check("--rows", "system,monotonic", "--size", "10", "--rounds", "6", "--samples", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertTrue(lines[-2].startswith("system "), p.stdout)
        self.assertTrue(lines[-1].startswith("monotonic "), p.stdout)

    def test_a_row_not_built_or_a_threaded_workload_is_refused(self):
        p = self.check("--rows", "system,no-such-row")
        self.assertEqual(p.returncode, 2)
        self.assertIn("no-such-row", p.stderr)
        p = self.check("--rows", "system", "--workload", "contention", "--size", "10", "--rounds", "6")
        self.assertEqual(p.returncode, 2)
        self.assertIn("not timed beside a partner", p.stderr)


class PartnerChoice(unittest.TestCase):
    def make(self, partner):
        return subprocess.run(["make", "-n", "cells", "ALLOCATORS=system", "PARTNER=" + partner,
                               "LINKED_ROWS=system"], cwd=ROOT, capture_output=True, text=True)

    def test_an_unknown_partner_is_refused(self):
        p = self.make("no-such-row")
        self.assertEqual(p.returncode, 2)
        self.assertIn("PARTNER=no-such-row is not a row", p.stderr)

    def test_a_partner_with_a_library_is_refused(self):
        p = self.make("system-jemalloc")
        self.assertEqual(p.returncode, 2)
        self.assertIn("links a library of its own", p.stderr)


def paired_cell(row, over_partner):
    """A cell of one visit per value of over_partner, 4 samples each: the
    row's time is that many times its partner's (minimal) beside it."""
    samples, partner, rounds = [], [], []
    for rnd, ratio in enumerate(over_partner):
        for _ in range(4):
            samples.append(round(100_000 * ratio))
            partner.append(100_000)
            rounds.append(rnd)
    m = aggregate.Measurement(matrix.Cell("gcc", row, "list_dupe", 10, 1, 0.0, False))
    m.status = "ok"
    m.result = answer.Answer(reps=10, samples_ns=samples, sample_rounds=rounds, partner="minimal",
                                    partner_reps=10, partner_samples_ns=partner)
    return m


class BaselineIsThePartnersRow(unittest.TestCase):
    def test_the_ratio_to_the_partners_row_holds_that_rows_own_time(self):
        # the same code as the partner, placed elsewhere in its executable,
        # can run at half the partner's time (minimal on thrash_pool): the
        # ratio to it must agree with the two rows' times, not with the partner's
        row = paired_cell("system", [1.5] * 8)
        base = paired_cell("minimal", [0.5] * 8)
        [r] = aggregate.Ratios("minimal").of([row, base])
        self.assertAlmostEqual(r.ratio, 3.0, places=3)

    def test_a_ratio_goes_through_the_partner_and_holds_the_spread_of_both_rows(self):
        for baseline in ("minimal", "monotonic"):  # the partner's own row, or any other
            row = paired_cell("system", [1.5] * 8)
            base = paired_cell(baseline, [1.0, 1.2, 0.8, 1.1, 0.9, 1.3, 0.7, 1.0])
            [r] = aggregate.Ratios(baseline).of([row, base])
            self.assertAlmostEqual(r.ratio, 1.5, delta=0.1)
            self.assertLess(r.ci_low, 1.4)
            self.assertGreater(r.ci_high, 1.6)


def bent_cell(row, row_ns, partner_ns, rounds=8):
    """A cell of `rounds` visits, 4 samples each, the row taking row_ns a
    repetition and its partner (minimal) partner_ns beside it."""
    m = aggregate.Measurement(matrix.Cell("gcc", row, "thrash_pool_sort_list_int", 1010, 1, 0.0, False))
    m.status = "ok"
    m.result = answer.Answer(reps=10, samples_ns=[row_ns * 10] * 4 * rounds,
                                    sample_rounds=[r for r in range(rounds) for _ in range(4)], partner="minimal",
                                    partner_reps=10, partner_samples_ns=[partner_ns * 10] * 4 * rounds)
    return m


class WhenThePartnerMoves(unittest.TestCase):
    def test_a_partner_bent_by_the_row_beside_it_is_not_the_yardstick(self):
        # minimal ran at 34 us a repetition beside itself and 13 us beside
        # system-scudo (a branch predictor learning its inputs): through the
        # partner, scudo read 2.6x slower than its own time says
        base = bent_cell("minimal", 34_000, 34_000)
        row = bent_cell("system-scudo", 68_000, 13_000)
        [r] = aggregate.Ratios("minimal").of([row, base])
        self.assertAlmostEqual(r.ratio, 2.0, places=3)
        self.assertFalse(r.through_partner)
        self.assertAlmostEqual(r.partner_shift, 13 / 34, places=3)
        aggregate.finalize([row, base])
        groups = aggregate.fastest_groups([row, base])
        self.assertAlmostEqual(groups[aggregate.point(row.cell)].to_fastest["system-scudo"].estimate, 2.0, places=3)

    def test_a_partner_that_kept_its_time_is_the_yardstick(self):
        base = bent_cell("minimal", 34_000, 34_000)
        row = bent_cell("monotonic", 40_000, 34_500)
        [r] = aggregate.Ratios("minimal").of([row, base])
        self.assertTrue(r.through_partner)
        self.assertAlmostEqual(r.ratio, (40 / 34.5), places=3)

    def test_a_few_rounds_leave_the_partner_the_yardstick(self):
        # 13% in three rounds: a noisy host can do that to a tiny run
        base = bent_cell("minimal", 34_000, 34_000, rounds=3)
        row = bent_cell("monotonic", 40_000, 38_500, rounds=3)
        [r] = aggregate.Ratios("minimal").of([row, base])
        self.assertTrue(r.through_partner)

    def test_a_partner_within_its_noise_is_the_yardstick(self):
        # beside the row, the partner's rounds read 0.9x to 1.3x its time
        # beside the baseline, 1.1x by their median: within its noise
        base = bent_cell("minimal", 34_000, 34_000)
        row = bent_cell("monotonic", 40_000, 34_000)
        shifts = [0.9, 1.3, 0.95, 1.25, 1.1, 1.12, 0.92, 1.2]
        row.result.partner_samples_ns = [int(34_000 * 10 * f) for f in shifts for _ in range(4)]
        [r] = aggregate.Ratios("minimal").of([row, base])
        self.assertGreater(r.partner_shift, 1.05)
        self.assertTrue(r.through_partner)

    def test_the_tables_name_the_block_and_mark_its_ratios(self):
        base = bent_cell("minimal", 34_000, 34_000)
        row = bent_cell("system-scudo", 68_000, 13_000)
        aggregate.finalize([row, base])
        [r] = aggregate.Ratios("minimal").of([row, base])
        summary = [outputs.summary_entry(m) for m in (base, row)]
        [t] = tables.build(summary, [outputs.ratio_entry(r)], "minimal")
        self.assertIn("(partner moved)", t["title"])
        self.assertIn("system-scudo 0.38x", t["note"])
        text = tables.render_text([t])
        self.assertIn("2.00 [2.00, 2.00]t", text)
        self.assertIn("Note: partner moved", text)


if __name__ == "__main__":
    unittest.main()
