"""What a workload says of itself in its definition (am_workload, am_sweep)
reaches the runner and the report through am-cell --list: the params --quick
keeps, the row it is also set against, its extra tables, hyperfine's pick and
its dimension; a run keeps them in meta.json "workload_facts". Builds the
system row (make cells)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_runner as tr  # noqa: E402
from report import dimensions  # noqa: E402
from runner import cell_protocol, hyperfine, matrix  # noqa: E402
from runfolder import aggregate, catalog  # noqa: E402


def listing():
    tr.ensure_cells("system")
    return cell_protocol.list_workloads(catalog.cell_exe(tr.BUILD + "/bin", "system"))


class Listed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.listing = listing()
        cls.by_name = {w["name"]: w for w in cls.listing["workloads"]}

    def with_fact(self, key):
        named = [w for w in self.listing["workloads"] if w.get(key)]
        self.assertTrue(named, f"no workload of --list names its {key}")
        return named

    def test_quick_keeps_the_params_the_workload_names(self):
        for w in self.with_fact("quick_params"):
            self.assertLess(len(w["quick_params"]), len(w["params"]), w["name"])
            self.assertEqual(matrix.choose_params(w, None, True), [float(p) for p in w["quick_params"]])

    def test_versus_rows_are_the_workloads_own(self):
        facts = cell_protocol.workload_facts(self.listing, self.by_name)
        named = self.with_fact("versus")
        cells = [matrix.Cell("gcc", "system", w["name"], 10, 1, 0.0, bool(w["threaded"])) for w in self.by_name.values()]
        ratios = aggregate.Ratios("system")
        ratios.versus_rows([aggregate.Measurement(c) for c in cells], facts)
        self.assertEqual({w: r.baseline for w, r in ratios.versus.items()}, {w["name"]: w["versus"] for w in named})

    def test_extra_tables_kept_for_the_run(self):
        facts = cell_protocol.workload_facts(self.listing, self.by_name)
        self.assertEqual(set(facts), set(self.by_name))
        for key in ("bench_lines", "slowdown"):
            self.assertEqual({n for n, f in facts.items() if f[key]}, {w["name"] for w in self.with_fact(key)})

    def test_hyperfine_picks_the_first_ranked(self):
        ranked = sorted(self.with_fact("hyperfine"), key=lambda w: w["hyperfine"])
        self.assertEqual(hyperfine.default_workload(self.listing), ranked[0]["name"])

    def test_dimensions_from_the_listing(self):
        facts = cell_protocol.workload_facts(self.listing, self.by_name)
        got = {w: d for d, ws, _ in dimensions.dimensions(facts) for w in ws}
        self.assertEqual(got, {w["name"]: w["dimension"] for w in self.with_fact("dimension")})
        for d, _, study in dimensions.dimensions(facts):
            self.assertIn(d, dimensions.STUDY, "a dimension the report has no study figure for")


class RunKeepsThem(unittest.TestCase):
    def test_meta_json_keeps_the_facts_of_its_workloads(self):
        import json
        import tempfile
        want = cell_protocol.workload_facts(listing(), ["list_dupe"])
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            p = tr.run(["--allocators", "system", "--workloads", "list_dupe", "--sizes", "10", "--samples", "3",
                        "--min-ms", "1", "--seed", "7", "--revisits", "0", "--no-stats-tables", "--out", out])
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(os.path.join(out, "meta.json")) as f:
                self.assertEqual(json.load(f)["workload_facts"], want)


if __name__ == "__main__":
    unittest.main()
