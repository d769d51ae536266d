"""Tests of runner/noise.py, where a run's spread is: for cells timed beside a
partner it also reads each sample over the partner's beside it, so that what
moved a whole process shows in the plain figures and not in those."""
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
from runner import matrix, noise  # noqa: E402
from runfolder import aggregate, answer, outputs, rundir  # noqa: E402


def cell(row, speeds, own):
    """A cell of six visits of 4 samples: each visit's process runs at the
    speed given (the row and its partner alike), and the row's own time is own."""
    samples, partner, rounds = [], [], []
    for rnd, speed in enumerate(speeds):
        for i in range(4):
            samples.append(round(own * speed * (1 + 0.001 * i) * 1000))
            partner.append(round(100 * speed * 1000))
            rounds.append(rnd)
    m = aggregate.Measurement(matrix.Cell("gcc", row, "list_dupe", 10, 1, 0.0, False))
    m.status, m.stats = "ok", {}
    m.result = answer.Answer(reps=1000, samples_ns=samples, sample_rounds=rounds, partner="minimal",
                                    partner_reps=1000, partner_samples_ns=partner,
                                    minor_faults=[0] * len(samples), major_faults=[0] * len(samples))
    m.summary = aggregate.summarize(m)
    return m


class OverThePartner(unittest.TestCase):
    def test_a_process_wide_shift_cancels_over_the_partner(self):
        speeds = [1.0, 1.3, 0.9, 1.2, 1.0, 1.1]
        done = [cell("monotonic", speeds, 50), cell("system", list(reversed(speeds)), 80)]
        with tempfile.TemporaryDirectory() as tmp:
            outputs.write_data(tmp, done, {"state": "finished", "baseline": "monotonic", "samples": 24, "rounds": 6})
            outputs.write_derived(tmp, done, aggregate.Ratios("monotonic"), ("system", "monotonic"), "x", 1)
            run = rundir.load(tmp)
        plain = noise.spreads(run, "monotonic")["one thread"]
        over = noise.spreads(run, "monotonic", over_partner=True)["one thread, over the partner"]
        self.assertGreater(min(plain["between processes"]), 0.05)
        self.assertLess(max(over["between processes"]), 0.002)
        self.assertLess(max(over["pair_4"]), 0.002)
        self.assertIn("over the partner", noise.report(run))


class Costs(unittest.TestCase):
    def test_a_later_visit_s_samples_are_counted_not_planned(self):
        # two later visits of 10 ms: one of three samples (a baseline's), one of one (a
        # threaded cell's); six samples of 1 ms in all, two of them in first visits
        meta = {"time": {"later visits": {"processes": 2, "ms_each": 10.0}, "in samples": {"seconds": 0.006}}}
        samples = [{"round": r} for r in (1, 1, 2, 2, 2, 2)]
        fixed, sample_ms = noise.costs(meta, samples)
        self.assertAlmostEqual(sample_ms, 1.0)
        self.assertAlmostEqual(fixed, 8.0)
        self.assertIsNone(noise.costs({"time": {}}, samples))


if __name__ == "__main__":
    unittest.main()
