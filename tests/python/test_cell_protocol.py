"""Tests of runner/cell_protocol.py, the one speaker of the cell's protocol:
the command line it builds is the one the cell reads, and a measured cell's
answer typed from its JSON line (Answer.from_json) equals the one typed back
from the run folder's CSV files (Answer.from_csv), partner samples included,
so that a live run and --regenerate hold the same thing."""
import dataclasses
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_runner import BUILD, ensure_cells  # noqa: E402
from runner import cell_protocol, matrix  # noqa: E402
from runfolder import aggregate, answer, catalog, cells, outputs, rundir  # noqa: E402


class Command(unittest.TestCase):
    def test_a_later_visit_names_both_counts_and_the_oracle(self):
        cmd = cell_protocol.command("am-cell-x", "list_dupe", 10, seed=3, threads=1, param=0.5, samples=4,
                                    min_ms=1, reps=6, partner_reps=9, expect=2 ** 63)
        self.assertEqual(cmd, ["am-cell-x", "--workload", "list_dupe", "--size", "10", "--seed", "3",
                               "--param", "0.5", "--samples", "4", "--min-ms", "1.0", "--reps", "6",
                               "--partner-reps", "9", "--expect", str(2 ** 63)])

    def test_a_mode_takes_no_sampling_options(self):
        cmd = cell_protocol.command("x", "contention", 5, threads=4, mem_limit=1 << 30, mode="stats-only")
        self.assertEqual(cmd, ["x", "--workload", "contention", "--size", "5", "--threads", "4",
                               "--mem-limit", str(1 << 30), "--stats-only"])


class AnswerBothWays(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells("system,minimal")

    def answer(self, row, *extra):
        exe = catalog.cell_exe(os.path.join(BUILD, "bin"), row)
        cmd = cell_protocol.command(exe, "thrash_pool", 10, seed=2, samples=3, min_ms=0.2)
        out, why = cell_protocol.run(list(cmd) + list(extra), 60)
        self.assertIsNone(why)
        self.assertIsNone(cell_protocol.check_answer(out))
        return out

    def test_from_json_and_from_csv_hold_the_same(self):
        for extra in ((), ("--alone",)):
            with self.subTest(extra=extra), tempfile.TemporaryDirectory() as tmp:
                out = self.answer("system", *extra)
                m = aggregate.Measurement(matrix.Cell("gcc", "system", "thrash_pool", 10, 1, 0.0, False))
                m.status, m.stats, m.result = "ok", {}, answer.Answer.from_json(out)
                m.result.join(self.answer("system", "--reps", str(out["reps"]), *(
                    ("--partner-reps", str(out["partner_reps"])) if "partner_reps" in out else ())), 1)
                m.summary = aggregate.summarize(m)
                outputs.write_data(tmp, [m], {"state": "finished"})
                outputs.write_derived(tmp, [m], aggregate.Ratios("minimal"), ("system",), "x", 1)
                back = cells.measurements_of(rundir.load(tmp))[0].result
                live = dataclasses.asdict(m.result)
                for field in ("expect", "hw_counters", "timer_resolution_ns"):  # not in the CSV files
                    live.pop(field)
                again = dataclasses.asdict(back)
                for field in ("expect", "hw_counters", "timer_resolution_ns"):
                    again.pop(field)
                self.assertEqual(again, live)
                self.assertEqual(back.is_paired(), not extra)


if __name__ == "__main__":
    unittest.main()
