"""The fastest group (runfolder/aggregate.py fastest_groups): the fastest strategy
of a block by median and every strategy whose paired ratio to it is not
marked as a difference, on made-up run folders (synthetic_runs.py) read back
as --regenerate and the report read them; and the tables mark it."""
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from synthetic_runs import spread, write_run  # noqa: E402
from runner import regenerate  # noqa: E402
from runfolder import cells, rundir  # noqa: E402

POINT = ("gcc", "list_dupe", 10, 1, 0.0)


def groups_of(points):
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_run(os.path.join(tmp, "run"), points, ["gcc"], baseline="system")
        return cells.fastest_groups_of(rundir.load_strict(folder))


class FastestGroup(unittest.TestCase):
    def test_rows_within_the_margin_join_the_fastest_and_a_clear_difference_does_not(self):
        g = groups_of({("gcc", "fast", "list_dupe", 10): spread(10.0),
                       ("gcc", "close", "list_dupe", 10): spread(10.1),  # 1% slower in every round
                       ("gcc", "system", "list_dupe", 10): spread(13.0)})[POINT]
        self.assertEqual(g.fastest, "fast")
        self.assertEqual(g.members, ["fast", "close"])
        self.assertAlmostEqual(g.to_fastest["system"].estimate, 1.3)

    def test_a_lucky_median_does_not_make_a_lone_winner(self):
        # two rows that swap places round by round: the one ahead by median is
        # not told apart from the other
        a = [10.0, 12.0, 10.0, 12.0, 10.0, 12.0, 10.0, 12.0, 10.0]
        b = [12.0, 10.0, 12.0, 10.0, 12.0, 10.0, 12.0, 10.0, 11.0]
        g = groups_of({("gcc", "a", "list_dupe", 10): a, ("gcc", "b", "list_dupe", 10): b,
                       ("gcc", "system", "list_dupe", 10): spread(20.0)})[POINT]
        self.assertEqual(sorted(g.members), ["a", "b"])

    def test_too_few_rounds_tell_nothing_apart(self):
        g = groups_of({("gcc", "fast", "list_dupe", 10): spread(10.0, n=3),
                       ("gcc", "system", "list_dupe", 10): spread(13.0, n=3)})[POINT]
        self.assertEqual(g.members, ["fast", "system"])

    def test_failed_cells_are_not_in_any_group(self):
        g = groups_of({("gcc", "fast", "list_dupe", 10): spread(10.0),
                       ("gcc", "broken", "list_dupe", 10): None,
                       ("gcc", "system", "list_dupe", 10): spread(13.0)})[POINT]
        self.assertEqual(g.members, ["fast"])

    def test_the_tables_mark_the_group(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = write_run(os.path.join(tmp, "run"), {
                ("gcc", "fast", "list_dupe", 10): spread(10.0), ("gcc", "close", "list_dupe", 10): spread(10.1),
                ("gcc", "system", "list_dupe", 10): spread(13.0)}, ["gcc"], baseline="system")
            regenerate.regenerate(folder)
            with open(os.path.join(folder, "tables.txt")) as f:
                lines = f.read().splitlines()
        marked = [line.split()[1] for line in lines if line.startswith("=  ")]
        self.assertEqual(marked, ["fast", "close"])


if __name__ == "__main__":
    unittest.main()
