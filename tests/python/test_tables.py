"""Tests of runfolder/tables.py on fixed entries: a table per block, strategies
ranked by time, the fastest group's mark, time units, ratio cells, the
not-significant mark, failed cells, wrapping, legends once, Markdown, the
wide CSV. The
tables take numbers (summary and ratio entries in their types), not text."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from runfolder import tables  # noqa: E402


def srow(strategy, size, median, status="ok", compiler="gcc", workload="thrash_pool"):
    return {"compiler": compiler, "strategy": strategy, "workload": workload, "size": size,
            "threads": 1, "param": 0.0, "status": status, "median_ns_per_op": median}


def rrow(strategy, size, ratio, lo, hi, sig, baseline="system"):
    return {"compiler": "gcc", "workload": "thrash_pool", "size": size, "threads": 1,
            "param": 0.0, "strategy": strategy, "baseline": baseline, "ratio": ratio,
            "ci_low": lo, "ci_high": hi, "significant": sig}


SUMMARY = [srow("system", 10, 29.6), srow("minimal", 10, 12.26), srow("pool", 10, 31.0),
           srow("system", 1810, 1234.0), srow("minimal", 1810, 2500000.0), srow("pool", 1810, None, "failed")]
RATIOS = [rrow("minimal", 10, 0.4138, 0.40, 0.43, True), rrow("pool", 10, 1.047, 0.98, 1.12, False),
          rrow("minimal", 1810, 2025.9, 1900.0, 2100.0, True)]


class Units(unittest.TestCase):
    def test_time_keeps_three_digits_and_moves_unit_at_1000(self):
        self.assertEqual(tables.format_time(0.5), "0.50 ns")
        self.assertEqual(tables.format_time(12.345), "12.3 ns")
        self.assertEqual(tables.format_time(999.4), "999 ns")
        self.assertEqual(tables.format_time(999.6), "1.00 \u00b5s")
        self.assertEqual(tables.format_time(1234), "1.23 \u00b5s")
        self.assertEqual(tables.format_time(45600), "45.6 \u00b5s")
        self.assertEqual(tables.format_time(2.5e6), "2.50 ms")
        self.assertEqual(tables.format_time(3e9), "3.00 s")
        self.assertEqual(tables.format_time(None), "-")

    def test_variant_suffix_names_only_threads_and_params_off_the_default(self):
        self.assertEqual(tables.variant_suffix(1, 0.0), "")
        self.assertEqual(tables.variant_suffix(4, 0.0), " (threads 4)")
        self.assertEqual(tables.variant_suffix(1, 100.0), " (param 100)")
        self.assertEqual(tables.variant_suffix(2, 10.0), " (threads 2, param 10)")
        self.assertEqual(tables.variant_suffix(1, 0.5), " (param 0.5)")

    def test_ratio_carries_interval_and_mark_only_when_not_significant(self):
        self.assertEqual(tables.format_ratio(1.047, 0.98, 1.12, False), "~1.05 [0.98, 1.12]")
        self.assertEqual(tables.format_ratio(3.5, 3.1, 12.0, True), "3.50 [3.10, 12.0]")
        self.assertEqual(tables.format_ratio(0.8, 0.65, 0.9981, True), "0.80 [0.65, 0.998]")
        self.assertEqual(tables.format_ratio(1.2, 1.0, 1.4, False), "~1.20 [1.00, 1.40]")


class Build(unittest.TestCase):
    def setUp(self):
        self.t = tables.build(SUMMARY, RATIOS, "system", ["system", "pool", "minimal"],
                              groups={("gcc", "thrash_pool", 10, 1, 0.0): ["minimal"]})

    def test_one_table_per_block(self):
        self.assertEqual([t["title"] for t in self.t], ["gcc: thrash_pool size 10", "gcc: thrash_pool size 1810"])
        two = tables.build(SUMMARY + [srow("system", 10, 5.0, compiler="clang")], RATIOS, "system")
        self.assertEqual(len(two), 3)
        self.assertEqual(two[2]["title"], "clang: thrash_pool size 10")

    def test_columns_are_group_strategy_time_ratio_and_spread(self):
        self.assertEqual(self.t[0]["header"], ["", "strategy", "time/op [95%]", "/system [95%]", "spread"])

    def test_lines_are_strategies_ranked_by_time_with_the_group_marked(self):
        lines = self.t[0]["lines"]
        self.assertEqual([line[1] for line in lines], ["minimal", "system", "pool"])
        self.assertEqual([line[0] for line in lines], ["=", "", ""])
        self.assertEqual(lines[0][2:4], ["12.3 ns", "0.41 [0.40, 0.43]"])
        self.assertEqual(lines[1][3], "baseline")
        self.assertEqual(lines[2][3], "~1.05 [0.98, 1.12]")

    def test_failed_cells_come_last(self):
        lines = self.t[1]["lines"]
        self.assertEqual([line[1] for line in lines], ["system", "minimal", "pool"])
        self.assertEqual(lines[2][2:4], ["failed", "-"])
        self.assertEqual(lines[1][3], "2026 [1900, 2100]")

    def test_time_carries_its_interval_in_its_unit_and_the_spread(self):
        r = dict(srow("system", 10, 1234.0), ci_low_ns=1200.0, ci_high_ns=1300.0, process_spread=1.234)
        t = tables.build([r], [], "system")
        self.assertEqual(t[0]["lines"][0][2:], ["1.23 \u00b5s [1.20, 1.30]", "baseline", "1.2%"])

    def test_without_the_baseline_there_is_no_ratio_column(self):
        t = tables.build([r for r in SUMMARY if r["strategy"] != "system"], RATIOS, "system")
        self.assertEqual(t[0]["header"], ["", "strategy", "time/op [95%]", "spread"])

    def test_a_time_apart_from_its_ratio_is_marked_and_named_with_the_partners_own(self):
        # pool's time reads 1.20 of system's, its ratio through the partner 1.05: 1.14x apart,
        # and the partner beside it ran 1.12x its time beside system's
        summary = [srow("system", 10, 10.0), srow("pool", 10, 12.0), srow("minimal", 10, 5.1)]
        ratios = [dict(rrow("pool", 10, 1.05, 1.0, 1.1, True), partner_shift=1.12, through_partner=1),
                  dict(rrow("minimal", 10, 0.50, 0.49, 0.51, True), partner_shift=1.0, through_partner=1)]
        t = tables.build(summary, ratios, "system")[0]
        times = {line[1]: line[2] for line in t["lines"]}
        self.assertEqual(times, {"minimal": "5.10 ns", "system": "10.0 ns", "pool": "12.0 ns^"})
        self.assertIn("^ times apart from their ratios, the time ratio over the ratio: pool 1.14x (the partner "
                      "1.12x)", t["note"])
        self.assertIn("pool 1.14x (the partner 1.12x): the partner beside it ran as much off its time beside "
                      "system", t["note"])
        self.assertNotIn("does not account", t["note"])
        self.assertNotIn("minimal", t["note"])
        self.assertEqual(tables.build(SUMMARY, RATIOS, "system")[0]["note"], "")
        # timed alone (a threaded workload): no partner's figure, the rounds' pairing said instead
        alone = [dict(q, partner_shift=None, through_partner=0) for q in ratios]
        note = tables.build(summary, alone, "system")[0]["note"]
        self.assertIn("pool 1.14x: the ratio pairs the two rows' visits round by round", note)

    def test_a_time_apart_that_the_partner_does_not_account_for_is_not_put_on_the_partner(self):
        # pool 1.14x apart with its partner at 1.00x, tls_size_class 1.14x with its partner at 1.13x:
        # each named with its own reason, the first not on the partner's word
        summary = [srow("system", 10, 10.0), srow("pool", 10, 12.0), srow("tls_size_class", 10, 6.0)]
        ratios = [dict(rrow("pool", 10, 1.05, 1.0, 1.1, True), partner_shift=1.0, through_partner=1),
                  dict(rrow("tls_size_class", 10, 0.525, 0.5, 0.55, True), partner_shift=1.13, through_partner=1)]
        note = tables.build(summary, ratios, "system")[0]["note"]
        self.assertIn("pool 1.14x (the partner 1.00x): the partner's own time does not account for it", note)
        self.assertIn("tls_size_class 1.14x (the partner 1.13x): the partner beside it ran as much off", note)

    def test_matrix_csv_is_the_wide_form(self):
        header, lines = tables.matrix_csv(SUMMARY, RATIOS, "system", ["system", "pool", "minimal"])
        self.assertEqual(header[:8], ["compiler", "workload", "size", "threads", "param", "system ns/op",
                                      "pool ns/op", "minimal ns/op"])
        self.assertEqual(len(lines), 2)
        self.assertEqual(lines[1][5:8], [1234.0, "failed", 2500000.0])
        self.assertEqual(lines[0][header.index("minimal/system")], 0.4138)


class Counts(unittest.TestCase):
    """make count's figures beside the times, in the blocks that have counted cells."""

    def test_a_counted_block_has_instructions_and_cycles_over_the_baseline(self):
        def count(strategy, size, instr, cycles, status="ok"):
            return {"compiler": "gcc", "strategy": strategy, "workload": "thrash_pool", "size": size, "threads": 1,
                    "param": 0.0, "status": status, "instructions_per_op": instr, "est_cycles_per_op": cycles}
        entries = [count("system", 10, 120.0, 200.0), count("minimal", 10, 30.0, 50.0),
                   count("pool", 10, None, None, "not counted")]
        counts = {(e["compiler"], e["strategy"], e["workload"], e["size"], e["threads"], e["param"]): e
                  for e in entries}
        t = tables.build(SUMMARY, RATIOS, "system", ["system", "pool", "minimal"], counts=counts)
        small, large = t
        self.assertEqual(small["header"][-2:], ["instr/op", "cyc/base"])
        by = {line[1]: line for line in small["lines"]}
        self.assertEqual(by["minimal"][-2:], ["30", "0.250"])
        self.assertEqual(by["system"][-2:], ["120", "1.000"])
        self.assertEqual(by["pool"][-2:], ["-", "-"])
        self.assertIn("instr/op = instructions per operation", small["legend"])
        self.assertNotIn("instr/op", large["header"])  # size 1810 has no counted cell
        self.assertNotIn("instr/op", large["legend"])
        self.assertEqual(len(small["align"]), len(small["header"]))


class TraceMemory(unittest.TestCase):
    """a replayed trace's block: each row's memory beside its time"""

    def test_reserved_over_the_traces_peak_live_and_peak_rss(self):
        def trace_row(strategy, median, reserved, rss):
            return dict(srow(strategy, 1, median, workload="trace:prog"), bytes_peak=4 << 20,
                        reserved_peak=reserved, peak_rss_bytes=rss)
        summary = [trace_row("system", 30.0, 0, 50 << 20), trace_row("monotonic", 10.0, 10 << 20, 60 << 20),
                   srow("system", 10, 29.6)]
        replay, other = tables.build(summary, [], "system")
        self.assertEqual(replay["header"][-2:], ["reserved/live", "peak RSS"])
        by = {line[1]: line for line in replay["lines"]}
        self.assertEqual(by["monotonic"][-2:], ["2.50", "60.0MB"])
        self.assertEqual(by["system"][-2:], ["-", "50.0MB"])  # malloc cannot say what it reserved
        self.assertIn("reserved/live = ", replay["legend"])
        self.assertNotIn("reserved/live", other["header"])
        self.assertEqual(len(replay["align"]), len(replay["header"]))


class Render(unittest.TestCase):
    def setUp(self):
        self.t = tables.build(SUMMARY, RATIOS, "system", ["system", "pool", "minimal"])

    def test_text_aligns_names_left_figures_right_with_title_and_legend_once(self):
        text = tables.render_text(self.t, width=100, legend_once=True)
        lines = text.splitlines()
        self.assertEqual(lines[0], "== gcc: thrash_pool size 10 ==")
        header, first, second = lines[1], lines[2], lines[3]
        self.assertEqual(first.index("minimal"), second.index("system"))
        self.assertEqual(len(header), len(first))
        self.assertTrue(first.endswith("-"))
        self.assertEqual(text.count("~ = not marked as a difference"), 1)
        self.assertEqual([line for line in lines if len(line) > 100], [])

    def test_narrow_text_wraps_into_parts_that_repeat_the_first_column(self):
        text = tables.render_text(self.t, width=30)
        headers = [line for line in text.splitlines() if "strategy" in line or "/system" in line]
        self.assertGreater(len(headers), 2)

    def test_markdown_is_a_pipe_table_with_the_mark_escaped(self):
        md = tables.render_markdown(self.t, legend_once=True)
        lines = md.splitlines()
        self.assertEqual(lines[0], "### gcc: thrash_pool size 10")
        self.assertEqual(lines[2], "|  | strategy | time/op [95%] | /system [95%] | spread |")
        self.assertEqual(lines[3], "|:---|:---|---:|---:|---:|")
        self.assertIn("\\~1.05 [0.98, 1.12]", md)
        self.assertEqual(md.count("~ = not marked"), 1)

    def test_a_wide_markdown_table_is_split_into_tables_that_fit_and_repeat_the_first_column(self):
        names = [f"strategy-number-{i}" for i in range(12)]
        wide = [{"title": "wide", "header": ["threads / param"] + [f"{n}/system" for n in names],
                 "lines": [["1 / 0"] + ["~1.02 [0.95, 1.09]?"] * 12, ["2 / 0"] + ["0.88 [0.82, 0.96]"] * 12],
                 "legend": "a legend long enough to wrap " * 10}]
        md = tables.render_markdown(wide)
        lines = md.splitlines()
        self.assertEqual([line for line in lines if len(line) > tables.WIDTH], [])
        heads = [line for line in lines if line.startswith("| threads / param |")]
        self.assertGreater(len(heads), 2)
        # every column is in exactly one part, and each part's lines have its columns
        self.assertEqual(sum(h.count("/system") for h in heads), 12)
        self.assertEqual(md.count("\\~1.02 [0.95, 1.09]?"), 12)
        self.assertEqual(len(tables.render_markdown(wide, width=None).splitlines()[2].split(" | ")), 13)


if __name__ == "__main__":
    unittest.main()
