"""The table "model against library" of make count (counts.txt through
runfolder/count_tables.py, and the report's Counts section): each C model
(pool, fast_pool, fast_pool-mutex, monotonic) beside the library it imitates
(boost-pool, boost-fast_pool, boost-fast_pool-mutex, pmr-monotonic) in the
same block, with the model/library ratio, and "off" where the instructions
differ by more than 10%. Made from typed entries as counts.csv holds them: no
valgrind here."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_runner  # noqa: E402,F401  (puts the top folder on the path)
from runfolder import catalog, count_tables  # noqa: E402

PAIRS = {"pool": "boost-pool", "fast_pool": "boost-fast_pool", "fast_pool-mutex": "boost-fast_pool-mutex",
         "monotonic": "pmr-monotonic"}


def entry(strategy, instr, workload="list_dupe", size=1010, status="ok", compiler="gcc"):
    """A counts.csv record; instr None: a cell not counted, its figures empty."""
    def per(x):
        return None if instr is None else instr * x
    return {"compiler": compiler, "strategy": strategy, "workload": workload, "size": size, "threads": 1,
            "param": 0.0, "status": status, "reason": "" if status == "ok" else "not built",
            "instructions_per_op": instr, "d1_misses_per_op": per(0.01), "lld_misses_per_op": 0.0,
            "i1_misses_per_op": 0.0, "lli_misses_per_op": 0.0, "est_cycles_per_op": per(1.5)}


META = {"tool": "valgrind-3.19.0", "caches": {}, "reps": 1, "seed": 1, "formula": "", "baseline": "minimal"}


class ModelAgainstLibrary(unittest.TestCase):
    def test_the_pairs_are_the_models_and_their_libraries(self):
        self.assertEqual(dict(catalog.MODELS), PAIRS)
        rows = {r.name for r in catalog.read_rows()}
        for model, library in catalog.MODELS:
            self.assertIn(model, rows)
            self.assertIn(library, rows)

    def test_each_pair_in_a_block_with_its_ratio(self):
        # the library 100 instructions an operation, each model 1.05x: near; pool 1.25x: off
        entries = [entry("minimal", 10.0)]
        for model, library in PAIRS.items():
            entries += [entry(model, 125.0 if model == "pool" else 105.0), entry(library, 100.0)]
        found = {(r[1], r[2]): r for r in count_tables.fidelity_rows(entries)}
        self.assertEqual(set(found), set(PAIRS.items()))
        for (model, library), r in found.items():
            self.assertEqual(r[0], "gcc list_dupe 1010")
            self.assertEqual(r[3:6], ["125" if model == "pool" else "105", "100",
                                      "1.250" if model == "pool" else "1.050"], model)
            self.assertEqual(r[-1], "off" if model == "pool" else "", model)
        text = count_tables.text(entries, "minimal", META)
        self.assertIn("Model against library", text)
        table = text.split("Model against library", 1)[1]
        for model, library in PAIRS.items():
            self.assertRegex(table, rf"gcc list_dupe 1010\s+{model}\s+{library}\s")
        self.assertNotIn("minimal", table)

    def test_a_pair_only_where_both_were_counted_in_the_same_block(self):
        entries = [entry("pool", 120.0), entry("boost-pool", 100.0, size=1810),
                   entry("fast_pool", 100.0), entry("boost-fast_pool", None, status="not counted"),
                   entry("monotonic", 100.0), entry("pmr-monotonic", 100.0, compiler="clang")]
        self.assertEqual(count_tables.fidelity_rows(entries), [])
        self.assertNotIn("Model against library", count_tables.text(entries, "minimal", META))


if __name__ == "__main__":
    unittest.main()
