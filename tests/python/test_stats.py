"""Tests of runfolder/stats.py against values worked out by hand and against the
published tables of the sign and rank-sum tests, and of the paired ratio on
data whose answer is known (a constant ratio under a shift every row shares,
a slow round, one slow visit)."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from runfolder import stats  # noqa: E402


class Median(unittest.TestCase):
    def test_odd_count_takes_the_middle(self):
        self.assertEqual(stats.median([5, 1, 3]), 3)
        self.assertEqual(stats.median([7]), 7)

    def test_even_count_averages_the_two_middle(self):
        self.assertEqual(stats.median([4, 1, 3, 2]), 2.5)
        self.assertEqual(stats.median([10, 20]), 15)

    def test_no_samples_is_an_error(self):
        with self.assertRaises(ValueError):
            stats.median([])


class Variation(unittest.TestCase):
    def test_cv_is_sample_sd_over_mean(self):
        # mean 2, deviations -1 0 1, sample variance 2/2 = 1
        self.assertAlmostEqual(stats.cv([1, 2, 3]), 0.5)
        # mean 5, squares 9+1+1+9 = 20, /3, sqrt = 2.5820
        self.assertAlmostEqual(stats.cv([2, 4, 6, 8]), (20 / 3) ** 0.5 / 5)

    def test_cv_of_constant_or_single_sample_is_zero(self):
        self.assertEqual(stats.cv([4, 4, 4]), 0)
        self.assertEqual(stats.cv([4]), 0)

    def test_percentile_interpolates(self):
        xs = [10, 20, 30, 40, 50]
        self.assertEqual(stats.percentile(xs, 0), 10)
        self.assertEqual(stats.percentile(xs, 1), 50)
        self.assertEqual(stats.percentile(xs, 0.5), 30)
        self.assertAlmostEqual(stats.percentile(xs, 0.125), 15)


class MedianInterval(unittest.TestCase):
    def test_nine_values_interpolate_between_the_second_and_third(self):
        # [x(2), x(8)] holds the median with 1 - 2 (1 + 9) / 512 = 96.1%, [x(3), x(7)] with
        # 1 - 2 (1 + 9 + 36) / 512 = 82.0%: I = (0.9609 - 0.95) / (0.9609 - 0.8203) = 0.0776,
        # lambda = 7 I / (2 + 5 I) = 0.2272 (Hettmansperger and Sheather)
        iv = stats.median_interval([9, 1, 8, 2, 7, 3, 6, 4, 5])
        self.assertEqual((iv.estimate, iv.n, iv.reached), (5, 9, True))
        self.assertAlmostEqual(iv.low, 2.2279, places=4)
        self.assertAlmostEqual(iv.high, 7.7721, places=4)

    def test_constant_values_give_a_zero_width_interval(self):
        iv = stats.median_interval([42.0] * 9)
        self.assertEqual((iv.low, iv.estimate, iv.high), (42.0, 42.0, 42.0))

    def test_fewer_than_six_values_cannot_reach_95_percent(self):
        iv = stats.median_interval([3, 1, 2])
        self.assertEqual((iv.low, iv.estimate, iv.high, iv.reached), (1, 2, 3, False))
        self.assertTrue(stats.median_interval([1, 2, 3, 4, 5, 6]).reached)
        self.assertFalse(stats.median_interval([1, 2, 3, 4, 5]).reached)

    def test_the_interval_stays_within_the_data_and_holds_the_median(self):
        for n in range(6, 40):
            xs = [((i * 7919) % 101) / 10 for i in range(n)]
            iv = stats.median_interval(xs)
            self.assertTrue(min(xs) <= iv.low <= iv.estimate <= iv.high <= max(xs), n)

    def test_no_values_is_an_error(self):
        with self.assertRaises(ValueError):
            stats.median_interval([])


class RankSum(unittest.TestCase):
    def test_the_distribution_matches_a_count_by_hand(self):
        # 2 x's and 2 y's: 6 orders, U = 0, 1, 2, 2, 3, 4
        self.assertEqual(stats._rank_sum_cdf(2, 2), (1 / 6, 2 / 6, 4 / 6, 5 / 6, 1.0))

    def test_critical_values_match_the_published_table(self):
        # two-sided 5%, equal sizes: U = 2, 5, 8, 13, 17, 23 for n = 5..10
        for n, u in zip(range(5, 11), (2, 5, 8, 13, 17, 23)):
            cdf = stats._rank_sum_cdf(n, n)
            self.assertLessEqual(cdf[u], 0.025, n)
            self.assertGreater(cdf[u + 1], 0.025, n)

    def test_the_normal_approximation_agrees_with_the_exact_count(self):
        m = 30
        exact = stats._depth(stats._rank_sum_cdf(m, m), m * m, 0.95, 0, 0)
        normal = stats._depth(None, m * m, 0.95, m * m / 2, math.sqrt(m * m * (2 * m + 1) / 12))
        self.assertLessEqual(abs(exact - normal), 1)

    def test_a_clear_shift_is_found(self):
        iv = stats.shift_interval([11, 12, 13, 14, 15, 16, 17, 18], [1, 2, 3, 4, 5, 6, 7, 8])
        self.assertEqual(iv.estimate, 10)
        self.assertTrue(0 < iv.low < 10 < iv.high)


class PairedRatio(unittest.TestCase):
    def test_a_constant_ratio_survives_a_shift_every_row_shares(self):
        # B = 1.05 x A in every round, and round 4 is 1.6 times slower for both: every
        # paired ratio is 1.05, so the estimate and the interval are exactly 1.05
        a = {r: 100.0 * (1.6 if r == 4 else 1.0) * (1 + 0.01 * r) for r in range(9)}
        b = {r: 1.05 * v for r, v in a.items()}
        iv = stats.paired_ratio(b, a)
        self.assertAlmostEqual(iv.estimate, 1.05, places=12)
        self.assertAlmostEqual(iv.low, 1.05, places=12)
        self.assertAlmostEqual(iv.high, 1.05, places=12)
        self.assertTrue(stats.is_difference(iv, 0.02))

    def test_one_slow_visit_does_not_drag_the_interval_across_one(self):
        # eight pairs 1.10 apart (within 1%), one of them 40% slower on the baseline's side
        a = {r: 110.0 * (1 + 0.01 * ((r * 5) % 3 - 1)) for r in range(8)}
        b = {r: 100.0 * (1.4 if r == 3 else 1.0) for r in range(8)}
        iv = stats.paired_ratio(a, b)
        self.assertGreater(iv.low, 1.05)
        self.assertTrue(stats.is_difference(iv, 0.02))

    def test_only_rounds_both_visited_pair(self):
        a = {0: 2.0, 1: 2.0, 2: 2.0, 7: 50.0}
        b = {0: 1.0, 1: 1.0, 2: 1.0, 3: 9.0}
        iv = stats.paired_ratio(a, b)
        self.assertEqual((iv.estimate, iv.n, iv.reached), (2.0, 3, False))
        self.assertIsNone(stats.paired_ratio({1: 1.0}, {2: 1.0}))

    def test_unpaired_ratio_of_two_runs(self):
        iv = stats.unpaired_ratio([2.0, 2.1, 1.9, 2.05, 1.95, 2.0], [1.0, 1.05, 0.95, 1.0, 1.02, 0.98])
        self.assertAlmostEqual(iv.estimate, 2.0, delta=0.02)
        self.assertTrue(iv.low > 1.8 and iv.high < 2.2)


class Marks(unittest.TestCase):
    def iv(self, est, lo, hi, reached=True):
        return stats.Interval(est, lo, hi, 9, reached)

    def test_a_difference_excludes_one_and_clears_the_margin(self):
        self.assertTrue(stats.is_difference(self.iv(1.05, 1.01, 1.09), 0.02))
        self.assertTrue(stats.is_difference(self.iv(0.9, 0.8, 0.99), 0.02))
        self.assertFalse(stats.is_difference(self.iv(1.05, 0.99, 1.09), 0.02))   # holds 1
        self.assertFalse(stats.is_difference(self.iv(1.015, 1.01, 1.02), 0.02))  # within the margin
        self.assertTrue(stats.is_difference(self.iv(1.015, 1.01, 1.02), 0.0))
        self.assertFalse(stats.is_difference(self.iv(1 / 1.015, 0.98, 0.99), 0.02))
        self.assertTrue(stats.is_difference(self.iv(1 / 1.02, 0.97, 0.99), 0.02))  # the same on both sides

    def test_an_interval_short_of_the_level_marks_nothing(self):
        self.assertFalse(stats.is_difference(self.iv(2.0, 1.5, 2.5, reached=False), 0.02))
        self.assertFalse(stats.is_difference(None, 0.02))

    def test_undecided_is_too_wide_to_say_what_the_margin_asks(self):
        m = 0.02
        self.assertFalse(stats.is_undecided(self.iv(3.4, 3.2, 3.7), m))     # wide, but a difference
        self.assertFalse(stats.is_undecided(self.iv(1.0, 0.99, 1.015), m))  # within the margin
        self.assertTrue(stats.is_undecided(self.iv(1.0, 0.96, 1.03), m))    # holds 1 and reaches past 1.02
        self.assertTrue(stats.is_undecided(self.iv(1.05, 0.99, 1.09), m))
        self.assertTrue(stats.is_undecided(self.iv(1.0, 0.995, 1.005, reached=False), m))
        self.assertTrue(stats.is_undecided(None, m))

    def test_relative_width(self):
        self.assertAlmostEqual(stats.relative_width(self.iv(1, 100, 110)), 0.1)
        self.assertEqual(stats.relative_width(self.iv(1, 0, 1)), math.inf)


if __name__ == "__main__":
    unittest.main()
