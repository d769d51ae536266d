"""Tests of runner/stats.py against values worked out by hand, and of the
bootstrap on data whose answer is known (constant samples, scaled samples)."""
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from runner import stats  # noqa: E402


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
    def test_constant_samples_give_a_zero_width_interval(self):
        self.assertEqual(stats.median_ci([42.0] * 9, seed=1), (42.0, 42.0))

    def test_interval_holds_the_median_within_the_data(self):
        rng = random.Random(3)
        xs = [100 + rng.gauss(0, 5) for _ in range(15)]
        lo, hi = stats.median_ci(xs, seed=9)
        self.assertLessEqual(min(xs), lo)
        self.assertLessEqual(lo, stats.median(xs))
        self.assertLessEqual(stats.median(xs), hi)
        self.assertLessEqual(hi, max(xs))
        self.assertLess(lo, hi)

    def test_same_seed_same_interval_other_seed_differs(self):
        rng = random.Random(4)
        xs = [rng.random() for _ in range(9)]
        self.assertEqual(stats.median_ci(xs, seed=5), stats.median_ci(xs, seed=5))
        self.assertNotEqual(stats.median_ci(xs, seed=5, resamples=50),
                            stats.median_ci(xs, seed=6, resamples=50))

    def test_even_sample_count_uses_the_middle_pair(self):
        # every resample of [1, 3] has median 1, 2 or 3
        lo, hi = stats.median_ci([1, 3], seed=2)
        self.assertEqual((lo, hi), (1, 3))


class RatioInterval(unittest.TestCase):
    def test_constant_groups_give_the_exact_ratio(self):
        self.assertEqual(stats.ratio_ci([20.0] * 5, [10.0] * 5, seed=1), (2.0, 2.0, 2.0))

    def test_interval_contains_the_true_ratio_and_is_significant(self):
        rng = random.Random(11)
        base = [100 * (1 + rng.gauss(0, 0.02)) for _ in range(9)]
        slow = [150 * (1 + rng.gauss(0, 0.02)) for _ in range(9)]
        r, lo, hi = stats.ratio_ci(slow, base, seed=3)
        self.assertAlmostEqual(r, stats.median(slow) / stats.median(base))
        self.assertLess(lo, 1.5)
        self.assertGreater(hi, 1.5)
        self.assertTrue(stats.significant(lo, hi))

    def test_same_distribution_is_not_significant(self):
        rng = random.Random(12)
        a = [100 * (1 + rng.gauss(0, 0.05)) for _ in range(9)]
        b = [100 * (1 + rng.gauss(0, 0.05)) for _ in range(9)]
        r, lo, hi = stats.ratio_ci(a, b, seed=3)
        self.assertLessEqual(lo, 1.0)
        self.assertGreaterEqual(hi, 1.0)
        self.assertFalse(stats.significant(lo, hi))

    def test_deterministic_with_seed(self):
        a, b = [3, 5, 4, 6, 5], [2, 3, 2, 4, 3]
        self.assertEqual(stats.ratio_ci(a, b, seed=8), stats.ratio_ci(a, b, seed=8))

    def test_significance_is_an_interval_excluding_one(self):
        self.assertTrue(stats.significant(1.01, 1.2))
        self.assertTrue(stats.significant(0.5, 0.99))
        self.assertFalse(stats.significant(0.9, 1.1))
        self.assertFalse(stats.significant(1.0, 1.3))


class Seeds(unittest.TestCase):
    def test_cell_seed_is_stable_across_processes(self):
        # FNV-1a of "7|cc|system", fixed: Python's own str hash changes per process
        self.assertEqual(stats.seed_for(7, "cc", "system"), stats.seed_for(7, "cc", "system"))
        self.assertNotEqual(stats.seed_for(7, "cc", "system"), stats.seed_for(8, "cc", "system"))
        h = 1469598103934665603
        for ch in b"7|cc|system":
            h = ((h ^ ch) * 1099511628211) % 2 ** 64
        self.assertEqual(stats.seed_for(7, "cc", "system"), h)


if __name__ == "__main__":
    unittest.main()
