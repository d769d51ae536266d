"""runner/accuracy.py's lines: a line's reported ratio against the ratio of
its median time to the baseline's, in all and by how the ratio was judged
(through the partner, from the times where the partner moved, timed alone),
and through the partner with the partner's own time ratio taken out, on
made-up runs whose figures are known."""
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from runner import accuracy  # noqa: E402
from runfolder.schema import MEDIAN  # noqa: E402


def made_up_run(lines):
    """lines: (workload, strategy, its median, the baseline's median, reported ratio,
    through_partner, partner_shift): one one-thread line each, baseline minimal."""
    by_key, ratios = {}, []
    for workload, strategy, mine, base, ratio, through, shift in lines:
        by_key[("gcc", strategy, workload, 10, 1, 0.0)] = {MEDIAN: mine}
        by_key[("gcc", "minimal", workload, 10, 1, 0.0)] = {MEDIAN: base}
        ratios.append({"compiler": "gcc", "workload": workload, "size": 10, "threads": 1, "param": 0.0,
                       "strategy": strategy, "baseline": "minimal", "ratio": ratio,
                       "through_partner": through, "partner_shift": shift})
    return types.SimpleNamespace(by_key=by_key, ratios=ratios)


class Lines(unittest.TestCase):
    def test_each_line_counts_in_all_and_in_its_kind(self):
        run = made_up_run([
            ("a", "x", 10.0, 10.0, 1.01, 1.0, 1.0),   # through the partner, agrees
            ("a", "y", 12.0, 10.0, 0.90, 1.0, 0.97),  # through the partner, opposite sides
            ("b", "x", 20.0, 10.0, 2.30, 0.0, 1.3),   # from the times, the partner moved: 15% off
            ("c", "x", 30.0, 10.0, 3.00, 0.0, None),  # timed alone, agrees
            ("c", "y", 10.0, 10.0, 1.20, 0.0, None),  # timed alone, 20% off, 1 against 1.2: not opposite
        ])
        figures = accuracy.line_figures(run, 0.02)
        through, moved, alone = accuracy.LINE_KINDS
        self.assertEqual(figures["all"], [5, 3, 1])
        self.assertEqual(figures[through], [2, 1, 1])
        self.assertEqual(figures[moved], [1, 1, 0])
        self.assertEqual(figures[alone], [2, 1, 0])

    def test_the_partners_own_time_ratio_taken_out(self):
        # x's processes ran 20% slow, and so did the partner beside it: the time ratio
        # reads 1.2, the paired ratio 1.0, and the partner's own 1.2 accounts for it
        run = made_up_run([("a", "x", 12.0, 10.0, 1.0, 1.0, 1.2),
                           ("a", "y", 12.0, 10.0, 1.0, 1.0, 1.0),    # the partner did not move: still off
                           ("a", "z", 12.0, 10.0, 1.0, 0.0, None)])  # timed alone: not through the partner
        partners = {("gcc", "a", 10, 1, 0.0): {"minimal": 100.0, "x": 120.0, "y": 100.0}}
        figures = accuracy.line_figures(run, 0.02, partners)
        self.assertEqual(figures["all"], [3, 3, 0])
        self.assertEqual(figures[accuracy.HOST_OUT], [2, 1, 0])
        self.assertEqual(accuracy.line_figures(run, 0.02)[accuracy.HOST_OUT], [0, 0, 0])

    def test_a_line_without_its_baseline_or_with_threads_is_left_out(self):
        run = made_up_run([("a", "x", 10.0, 10.0, 1.0, 1.0, 1.0)])
        run.ratios.append(dict(run.ratios[0], strategy="z"))               # no median of its own
        run.ratios.append(dict(run.ratios[0], threads=2))                  # a threaded line
        run.ratios.append(dict(run.ratios[0], ratio=None))                 # no ratio
        self.assertEqual(accuracy.line_figures(run, 0.02)["all"], [1, 0, 0])


if __name__ == "__main__":
    unittest.main()
