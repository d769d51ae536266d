"""Tests of runner/tables.py on fixed entries: columns, time units, ratio cells,
the not-significant mark, failed and missing cells, wrapping, Markdown. The
tables take numbers (summary and ratio entries in their types), not text."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from runner import tables  # noqa: E402


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
        self.t = tables.build(SUMMARY, RATIOS, "system", ["system", "pool", "minimal"])

    def test_one_table_per_compiler_and_workload(self):
        self.assertEqual(len(self.t), 1)
        self.assertEqual(self.t[0]["title"], "gcc: thrash_pool")
        two = tables.build(SUMMARY + [srow("system", 10, 5.0, compiler="clang")], RATIOS, "system")
        self.assertEqual([t["title"] for t in two], ["gcc: thrash_pool", "clang: thrash_pool"])

    def test_columns_are_strategies_in_order_then_ratios_to_baseline(self):
        self.assertEqual(self.t[0]["header"],
                         ["size", "system", "pool", "minimal", "pool/system", "minimal/system"])

    def test_rows_are_sizes_ascending_with_units_failures_and_gaps(self):
        rows = self.t[0]["lines"]
        self.assertEqual(rows[0], ["10", "29.6 ns", "31.0 ns", "12.3 ns", "~1.05 [0.98, 1.12]",
                                   "0.41 [0.40, 0.43]"])
        self.assertEqual(rows[1], ["1810", "1.23 \u00b5s", "failed", "2.50 ms", "-",
                                   "2026 [1900, 2100]"])

    def test_without_the_baseline_there_are_no_ratio_columns(self):
        t = tables.build([r for r in SUMMARY if r["strategy"] != "system"], RATIOS, "system")
        self.assertEqual(t[0]["header"], ["size", "minimal", "pool"])


class Render(unittest.TestCase):
    def setUp(self):
        self.t = tables.build(SUMMARY, RATIOS, "system", ["system", "pool", "minimal"])

    def test_text_is_right_aligned_with_title_and_legend(self):
        text = tables.render_text(self.t)
        lines = text.splitlines()
        self.assertEqual(lines[0], "== gcc: thrash_pool ==")
        header, row10, row1810 = lines[1], lines[2], lines[3]
        # right-aligned: every column ends at the same place in every line
        self.assertEqual(header.index("minimal/system") + len("minimal/system"), len(row10))
        self.assertEqual(len(row10), len(row1810))
        self.assertTrue(row10.rstrip().endswith("0.41 [0.40, 0.43]"))
        self.assertIn("~ = not marked as a difference", text)

    def test_narrow_text_wraps_into_blocks_that_repeat_the_size(self):
        text = tables.render_text(self.t, width=40)
        headers = [line for line in text.splitlines() if line.lstrip().startswith("size")]
        self.assertGreater(len(headers), 1)
        joined = " ".join(headers)
        for col in self.t[0]["header"]:
            self.assertIn(col, joined)
        for line in text.splitlines():
            if line.lstrip().startswith("size") or line.strip()[:1].isdigit():
                self.assertLessEqual(len(line), 40)

    def test_markdown_is_a_pipe_table_with_the_mark_escaped(self):
        md = tables.render_markdown(self.t)
        lines = md.splitlines()
        self.assertEqual(lines[0], "### gcc: thrash_pool")
        self.assertEqual(lines[2], "| size | system | pool | minimal | pool/system | minimal/system |")
        self.assertEqual(lines[3], "|---:|---:|---:|---:|---:|---:|")
        self.assertIn("\\~1.05 [0.98, 1.12]", lines[4])
        self.assertEqual(lines[4].count("|"), 7)


if __name__ == "__main__":
    unittest.main()
