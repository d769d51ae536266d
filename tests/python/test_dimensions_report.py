"""The dimensions of allocation as the report and the README read them
(report/dimensions.py): the fastest strategy a program could use at each
point (never minimal, the A/A control or a @virtual row), its ratio to system,
drop against destroy, and @virtual against its own row; and the report's
section, present only when the run measured such workloads."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_runner  # noqa: E402,F401  (puts the repository on the path)
from report import dimensions  # noqa: E402
from synthetic_runs import spread, write_run  # noqa: E402


def entry(strategy, workload, median, size=1810, threads=1, param=0.0, status="ok"):
    return {"compiler": "gcc", "strategy": strategy, "workload": workload, "size": size, "threads": threads,
            "param": param, "status": status, "median_ns_per_op": median}


SUMMARY = [
    entry("system", "vector_of_lists", 20.0), entry("monotonic", "vector_of_lists", 5.0),
    entry("minimal", "vector_of_lists", 1.0), entry("control", "vector_of_lists", 4.0),
    entry("monotonic@virtual", "vector_of_lists", 2.0), entry("pool", "vector_of_lists", 4.5, status="failed"),
    entry("system", "list_create", 12.0), entry("monotonic", "list_create", 4.0),
    entry("monotonic", "list_create_drop", 1.0), entry("control", "list_create_drop", 1.0),
    entry("control", "list_create", 4.0),
]
# each workload's dimension, as meta.json keeps it from --list
FACTS = {"vector_of_lists": {"dimension": "nested containers"}, "list_create": {"dimension": None},
         "list_create_drop": {"dimension": "wink-out"}}


class Findings(unittest.TestCase):
    def test_the_fastest_a_program_could_use(self):
        lines = dimensions.findings(SUMMARY, FACTS)
        nested = [f for f in lines if f["dimension"] == "nested containers"]
        self.assertEqual(len(nested), 1)
        f = nested[0]
        # minimal (a bound), control, the @virtual row and the failed pool cell are no choice
        self.assertEqual((f["winner"], f["median"]), ("monotonic", 5.0))
        self.assertAlmostEqual(f["winner_vs_system"], 0.25)
        self.assertAlmostEqual(f["monotonic_vs_system"], 0.25)

    def test_a_drop_is_set_against_system_destroying(self):
        drop = [f for f in dimensions.findings(SUMMARY, FACTS) if f["dimension"] == "wink-out"]
        self.assertEqual(len(drop), 1)
        self.assertEqual(drop[0]["winner"], "monotonic")
        self.assertAlmostEqual(drop[0]["winner_vs_system"], 1.0 / 12.0)

    def test_drop_against_its_own_destroying_twin(self):
        drops = dimensions.drop_against_destroy(SUMMARY)
        self.assertEqual(drops, {("gcc", "list_create_drop", 1810): {"monotonic": 0.25}})

    def test_virtual_against_its_own_row(self):
        virtual = dimensions.virtual_against_inline(SUMMARY)
        self.assertEqual(virtual, {("gcc", "vector_of_lists", 1810, 1, 0.0): {"monotonic": 0.4}})


class Section(unittest.TestCase):
    def report_of(self, workload, rows=("system", "monotonic", "monotonic@virtual"), medians=(20.0, 5.0, 6.0)):
        from report import report
        with tempfile.TemporaryDirectory() as tmp:
            cells = {("gcc", s, workload, 1810): spread(c) for s, c in zip(rows, medians)}
            write_run(tmp, cells, ["gcc"], baseline="monotonic",
                      meta={"workload_facts": {w: f for w, f in FACTS.items() if w == workload}})
            out, _ = report.build(tmp, draw_plots=False)
            with open(out, encoding="utf-8") as f:
                return f.read()

    def test_shown_for_a_dimension_workload(self):
        html = self.report_of("vector_of_lists")
        self.assertIn('id="dimensions"', html)
        self.assertIn('id="d-nested-containers"', html)
        self.assertIn('id="d-binding"', html)

    def test_the_strategies_it_cannot_tell_from_the_fastest_are_named_tied(self):
        html = self.report_of("vector_of_lists", ("system", "monotonic", "pool"), (20.0, 5.0, 5.01))
        table = html.split('id="d-nested-containers"')[1].split("</table>")[0]
        self.assertIn('<td class="row best">monotonic</td>', table)
        self.assertIn('<td class="row group">pool</td>', table)
        html = self.report_of("vector_of_lists", ("system", "monotonic", "pool"), (20.0, 5.0, 8.0))
        table = html.split('id="d-nested-containers"')[1].split("</table>")[0]
        self.assertIn('<td class="row group">—</td>', table)

    def test_a_dimension_opens_with_its_forest_at_the_largest_point(self):
        # a plot over sizes draws every row of the run (41 with the @virtual twins)
        from report import dimension_sections
        plots = [{"kind": "time", "x": None}, {"kind": "ratio", "x": None}, {"kind": "forest", "x": "4"},
                 {"kind": "forest", "x": "10"}, {"kind": "forest", "x": "1"}, {"kind": "bars", "x": None}]
        self.assertEqual(dimension_sections.dimension_picture(plots), [{"kind": "forest", "x": "10"}])
        self.assertEqual(dimension_sections.dimension_picture(plots[:2]), [{"kind": "time", "x": None}])

    def test_left_out_without_one(self):
        self.assertNotIn('id="dimensions"', self.report_of("alloc_pair", ("system", "monotonic")))
        # a @virtual row alone brings the run-time binding
        self.assertIn('id="d-binding"', self.report_of("alloc_pair"))


if __name__ == "__main__":
    unittest.main()
