"""The run's rewrites of its folder while it runs (runner/run.py, Writer):
every WRITE_EVERY_S at first, then spaced by WRITE_SPACING times what the
last rewrite took, so that files that grow with the run take a bounded share
of its time."""
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from runner import run  # noqa: E402


class Spacing(unittest.TestCase):
    def writes(self, took, until):
        """The clock times at which a writer rewrites, asked every second up to
        `until`, when each rewrite takes `took` seconds."""
        now = [0.0]
        done = []

        def write_all(*args):
            done.append(now[0])
            now[0] += took

        with mock.patch.object(run.time, "monotonic", lambda: now[0]), \
                mock.patch.object(run.outputs, "write_all", write_all), \
                mock.patch.object(run.environment, "cpu_times", lambda: None), \
                mock.patch.object(run.Writer, "meta", lambda self, state: {}):
            w = run.Writer(mock.Mock(out_dir="x", order=[]), None, [], None, None)
            while now[0] < until:
                now[0] += 1.0
                w.maybe()
        return done, w

    def test_quick_rewrites_come_every_ten_seconds(self):
        done, w = self.writes(took=0.01, until=60)
        gaps = [b - a for a, b in zip(done, done[1:])]
        self.assertEqual(len(done), 5, done)
        self.assertTrue(all(10 <= g <= 11.01 for g in gaps), gaps)

    def test_slow_rewrites_take_at_most_a_twentieth_of_the_time(self):
        done, w = self.writes(took=2.0, until=200)
        gaps = [b - a for a, b in zip(done, done[1:])]
        self.assertTrue(all(g >= run.WRITE_SPACING * 2.0 for g in gaps), gaps)
        self.assertLessEqual(w.writing, 200 / run.WRITE_SPACING + 2.0)


if __name__ == "__main__":
    unittest.main()
