"""The figures and claims of the README's prose around its tables, recomputed
from the committed runs they come from (docs/reference-run/ and
docs/reference-dimensions/: summary.csv, and tables.md for the A/A control),
so that a new reference run cannot leave the prose telling of the old one.
Each test builds the README's phrase from the run and looks for it; when one
fails, the README's sentence needs the figure the message gives."""
import os
import re
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from report import dimensions, readme_table  # noqa: E402
from runfolder import rundir  # noqa: E402

RUN = os.path.join(ROOT, readme_table.REFERENCE_RUN)
DIMS = os.path.join(ROOT, readme_table.DIMENSIONS_RUN)
MALLOC_LIBRARIES = [s for s, _ in readme_table.COLUMNS if s.startswith("system")]


def prose():
    """README.md without its generated tables: the text a person wrote."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    for begin, end in ((readme_table.BEGIN, readme_table.END),
                       (readme_table.DIMENSIONS_BEGIN, readme_table.DIMENSIONS_END)):
        text = text.replace(readme_table.current_block(text, begin, end) or "", "")
    return " ".join(text.split())


def load(folder):
    return rundir.load_strict(folder, need=("summary.csv", "meta.json"))


def largest_findings(run, dimension):
    """The dimension's findings at each workload's largest point, as the README's table shows them."""
    last = {}
    for f in dimensions.findings(run.summary, run.meta.get("workload_facts")):
        if f["dimension"] == dimension:
            last[f["point"][:2]] = f
    return list(last.values())


class ReadmeFigures(unittest.TestCase):
    longMessage = False  # the phrase to write, not the whole README
    @classmethod
    def setUpClass(cls):
        cls.text, cls.ref, cls.dims = prose(), load(RUN), load(DIMS)
        cls.groups = readme_table.groups_of(cls.ref)

    def assertSays(self, phrase):
        self.assertIn(" ".join(phrase.split()), self.text, "README.md should say, from the committed runs: " + phrase)

    def median(self, run, compiler, strategy, workload, size, threads=1, param=0.0):
        return run.by_key[(compiler, strategy, workload, size, threads, param)]["median_ns_per_op"]

    # the results table's reading (docs/reference-run)
    def table_lines(self):
        """(workload, compiler, {strategy: median}) of each line of the README's table of results"""
        out = []
        for workload in readme_table.WORKLOADS:
            size = readme_table._largest_size(self.ref, workload)
            for compiler in self.ref.compiler_names():
                at = {k[1]: e["median_ns_per_op"] for k, e in self.ref.by_key.items()
                      if (k[0], k[2], k[3], k[4], k[5]) == (compiler, workload, size, 1, 0) and e["status"] == "ok"}
                if at:
                    out.append((workload, compiler, at))
        return out

    def fastest(self, at):
        return min(at, key=at.get)

    def group(self, workload, compiler):
        size = readme_table._largest_size(self.ref, workload)
        return self.groups[(compiler, workload, size, 1, 0.0)]

    def test_no_malloc_library_is_in_a_fastest_group_but_where_the_readme_says(self):
        self.assertSays("No malloc library is in the fastest group of a line, but for the list sort with clang, "
                        "where 10 of the 27 rows cannot be told apart, tcmalloc's and mimalloc's among them")
        for workload, compiler, at in self.table_lines():
            libraries = {m for m in self.group(workload, compiler) if m.startswith("system")}
            if (workload, compiler) == ("thrash_pool_sort_list_int", "clang"):
                self.assertEqual(len(self.group(workload, compiler)), 10)
                self.assertEqual({lib.split("-")[1] for lib in libraries}, {"tcmalloc", "mimalloc"})
            else:
                self.assertEqual(libraries, set(), (workload, compiler))

    def test_the_monotonic_arenas_are_in_the_fastest_groups_where_the_readme_says(self):
        self.assertSays("The monotonic arena (the allocator of the 2009 Boost monotonic comparison) or its "
                        "thread-local-buffer variant is in the fastest group of every line but the list traversal, "
                        "where `fast_pool` and Boost's own `fast_pool_allocator` are, and the map of lists, where "
                        "the arena's A/A twin `control` is, with `fast_pool`, `mmap_arena` and `tls_size_class`")
        for workload, compiler, at in self.table_lines():
            members = self.group(workload, compiler)
            if workload == "list_iterate":
                self.assertEqual(set(members), {"fast_pool", "boost-fast_pool"}, compiler)
            elif workload == "thrash_pool_map_list_unaligned":
                self.assertFalse({"monotonic", "monotonic-local"} & set(members), compiler)
                self.assertLessEqual({"control", "fast_pool", "mmap_arena", "tls_size_class"}, set(members), compiler)
            else:
                self.assertTrue({"monotonic", "monotonic-local"} & set(members), (workload, compiler))

    def test_boost_pool_is_more_than_ten_times_slower_in_every_line(self):
        self.assertSays("is more than ten times slower than the fastest in every line")
        for workload, compiler, at in self.table_lines():
            self.assertGreater(at["pool"], 10 * at[self.fastest(at)], (workload, compiler))

    def test_minimal_is_beaten_where_the_readme_says(self):
        self.assertSays("`fast_pool` and Boost's `fast_pool_allocator` traverse their lists faster here, alone in "
                        "that line's fastest group")
        for compiler in self.ref.compiler_names():
            self.assertEqual(set(self.group("list_iterate", compiler)), {"fast_pool", "boost-fast_pool"}, compiler)

    def test_each_model_beside_its_library_where_the_readme_says(self):
        self.assertSays("`fast_pool` within 4% of Boost's `fast_pool_allocator` and `pool` within 2% of Boost's "
                        "`pool_allocator` in every line of the table, `monotonic` faster than "
                        "`std::pmr::monotonic_buffer_resource` in every line but the list sort with clang (1% "
                        "slower, the two in one fastest group)")
        for workload, compiler, at in self.table_lines():
            for model, library, within in (("fast_pool", "boost-fast_pool", 0.04), ("pool", "boost-pool", 0.02)):
                self.assertLess(abs(at[model] / at[library] - 1), within, (workload, compiler, model))
            if (workload, compiler) == ("thrash_pool_sort_list_int", "clang"):
                self.assertEqual(round(100 * (at["monotonic"] / at["pmr-monotonic"] - 1)), 1)
                self.assertLessEqual({"monotonic", "pmr-monotonic"}, set(self.group(workload, compiler)))
            else:
                self.assertLess(at["monotonic"], at["pmr-monotonic"], (workload, compiler))

    def test_the_contention_figures(self):
        size = max(k[3] for k in self.ref.by_key if k[2] == "contention")
        tls = self.median(self.ref, "gcc", "tls_size_class", "contention", size, 2, 0.0)
        system = self.median(self.ref, "gcc", "system", "contention", size, 2, 0.0)
        self.assertSays(f"`tls_size_class` at {tls:.1f} ns an operation against `system`'s {system:.1f} "
                        f"({tls / system:.2f}; the study 8-36)")

    # the dimensions table's reading (docs/reference-dimensions)
    def test_the_locality_figure(self):
        (f,) = largest_findings(self.dims, "locality")
        self.assertSays(f"(`{f['winner']}`, a heap per subsystem) at {f['winner_vs_system']:.2f} of `system`")

    def test_the_nested_containers_range(self):
        ratios = sorted(f["winner_vs_system"] for f in largest_findings(self.dims, "nested containers"))
        self.assertSays(f"under nested containers ({ratios[0]:.2f} to {ratios[-1]:.2f}; the study 22-35)")

    def test_the_utilization_figure(self):
        (f,) = largest_findings(self.dims, "utilization")
        self.assertEqual(f["point"][2], 32768, "the README speaks of 32 KiB")
        self.assertSays(f"({f['monotonic_vs_system']:.0f}x at 32 KiB; the study up to 128x)")

    def test_the_cost_of_run_time_binding(self):
        ratios = sorted(r for v in dimensions.virtual_against_inline(self.dims.summary).values() for r in v.values())
        self.assertSays(f"cost a median {ratios[len(ratios) // 2]:.2f}x, and up to {ratios[-1]:.1f}x on the "
                        "cheapest allocators, with gcc")

    def test_the_aa_control_of_the_dimensions_run(self):
        with open(os.path.join(DIMS, "tables.md"), encoding="utf-8") as f:
            marked = re.search(r"A/A control: .*? marked as a difference from it in (\d+) of (\d+)\s+cells", f.read(), re.S)
        self.assertIsNotNone(marked, "tables.md of the dimensions run has no A/A line")
        self.assertSays(f"The A/A control of this run was marked in {marked.group(1)} of its {marked.group(2)} cells")


if __name__ == "__main__":
    unittest.main()
