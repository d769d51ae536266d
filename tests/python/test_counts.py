"""make count (runner/counts.py): instructions and simulated cache misses per
operation under valgrind's callgrind.

- The project's own gate on counts: the matrix of docs/reference-counts/<compiler>
  counted again and compared with the committed counts through make compare's
  gate (no cell may move by 1% or more); skipped, saying why, where the compiler
  or valgrind version or the build's flags are not the reference's.
- Cells a counter cannot run or see are in counts.csv as "not counted", with the reason.
- A matrix counted in two shards and merged equals the unsplit count, though
  the parts ran with a longer environment and in deeper folders.
- Bad input exits 2 and loses nothing: a threaded workload asked for by name,
  valgrind missing, an unreadable count output (the other cells are kept),
  a folder that holds counts, a merge of parts that are not one whole split.
- The gate on counts (compare --base): a cell 1% off is reported and fails it
  (exit 1), one missing cannot be judged (exit 3).
- The estimated cycles follow iai's formula; the report's list of blocks where
  times and counts point in opposite directions."""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_runner import BUILD, COMPILER, ROOT, ensure_cells, run  # noqa: E402
from runner import compare, counts, plain_copies  # noqa: E402
from runfolder import count_tables, gate, rundir, schema  # noqa: E402

REFERENCE = os.path.join(ROOT, "docs", "reference-counts")
HAS_VALGRIND = bool(shutil.which("valgrind"))
SMALL = ["--count", "--allocators", "monotonic,minimal", "--workloads", "alloc_pair,list_dupe,utilization",
         "--quick", "--no-control"]


def reference_args(folder):
    """The runner's arguments that count the matrix a reference folder holds."""
    with open(os.path.join(folder, "counts.json")) as f:
        meta = json.load(f)
    args = ["--count", "--allocators", ",".join(meta["strategies"]), "--workloads", ",".join(meta["workloads"]),
            "--seed", str(meta["seed"]), "--baseline", meta["baseline"]]
    if "control" not in meta["strategies"]:
        args.append("--no-control")
    if meta.get("quick"):
        args.append("--quick")
    if isinstance(meta["sizes"], list):
        args += ["--sizes", ",".join(map(str, meta["sizes"]))]
    return meta, args


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_rows(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=schema.COUNT_COLS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def measured_build():
    """Why BUILD's flags are not those the references are counted with, or None."""
    try:
        with open(os.path.join(BUILD, "flags.txt")) as f:
            flags = f.read().split()
    except OSError:
        return "no flags.txt in the build"
    if "-fsanitize" in " ".join(flags) or "-DAM_DEBUG=1" in flags or "-O2" not in flags:
        return "the build is not an -O2 measured build"
    return None


@unittest.skipUnless(HAS_VALGRIND, "needs valgrind (tools/need.sh valgrind valgrind)")
class Reference(unittest.TestCase):
    """The CI gate on counts: this build's counts against the committed ones."""

    @classmethod
    def setUpClass(cls):
        cls.ref = os.path.join(REFERENCE, COMPILER)
        if not os.path.isdir(cls.ref):
            raise unittest.SkipTest(f"no reference counts for {COMPILER} in docs/reference-counts")
        why = measured_build()
        if why:
            raise unittest.SkipTest(why)
        cls.meta, args = reference_args(cls.ref)
        ensure_cells(",".join(cls.meta["strategies"]))
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "count")
        cls.p = run(args + ["--out", cls.out], timeout=600)
        with open(os.path.join(cls.out, "counts.json")) as f:
            cls.mine = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_matches_reference(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        for what in ("compilers", "tool"):
            if self.mine[what] != self.meta[what]:
                self.skipTest(f"{what} {self.mine[what]}, the reference's {self.meta[what]}: counts differ by "
                              f"design (make the reference again: docs/measurements.md)")
        status = compare.main(["--base", self.ref, self.out, "--out", os.path.join(self.tmp.name, "cmp")])
        self.assertEqual(status, 0, "counts moved against docs/reference-counts (see the Counts section above); "
                                    "a deliberate change updates the reference in the same commit")

    def test_not_counted_with_reason(self):
        rows = read_rows(os.path.join(self.out, "counts.csv"))
        unseen = [r for r in rows if r["workload"] in counts.UNSEEN]
        self.assertTrue(unseen, "the reference matrix holds a workload a counter cannot see")
        for r in unseen:
            self.assertEqual((r["status"], r["reason"]), (counts.NOT_COUNTED, counts.UNSEEN[r["workload"]]))
        for r in rows:
            if r["status"] == "ok":
                self.assertGreater(float(r["instructions_per_op"]), 0)
                self.assertGreaterEqual(float(r["est_cycles_per_op"]), float(r["instructions_per_op"]))


@unittest.skipUnless(HAS_VALGRIND, "needs valgrind (tools/need.sh valgrind valgrind)")
class Shards(unittest.TestCase):
    def test_merged_shards_equal_the_unsplit_count(self):
        ensure_cells("monotonic,minimal")
        with tempfile.TemporaryDirectory() as tmp:
            whole = os.path.join(tmp, "whole")
            parts = [os.path.join(tmp, f"part{i}") for i in (1, 2)]
            # the parts also run with a longer environment and deeper folders, as on other machines
            deep = [os.path.join(p, "a" * 40) for p in parts]
            padding = {"ALLOCMARK_TEST_PADDING": "x" * 300}
            for out, extra, env in [(whole, [], None)] + [(p, ["--shard", f"{i}/2"], padding)
                                                          for i, p in enumerate(deep, 1)]:
                p = run(SMALL + extra + ["--out", out], env=env, timeout=300)
                self.assertEqual(p.returncode, 0, p.stderr)
            parts = deep
            sizes = [len(read_rows(os.path.join(p, "counts.csv"))) for p in parts]
            self.assertTrue(all(sizes), f"each shard holds cells: {sizes}")
            merged = os.path.join(tmp, "merged")
            p = run(["--merge"] + parts + ["--out", merged])
            self.assertEqual(p.returncode, 0, p.stderr)
            for name in ("counts.csv", "counts.json", "counts.txt"):
                with open(os.path.join(whole, name)) as a, open(os.path.join(merged, name)) as b:
                    self.assertEqual(a.read(), b.read(), name)
            p = run(["--merge", parts[0], "--out", os.path.join(tmp, "half")])
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("not every shard", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "half")))


@unittest.skipUnless(HAS_VALGRIND, "needs valgrind (tools/need.sh valgrind valgrind)")
class ValgrindStart(unittest.TestCase):
    """Most of a count is valgrind's, not the cell's: it simulates the caches
    from the cell's warm-up on (cell/count_start.h), not through the aging of
    a heap, and reads no debug information of the cell or its libraries."""

    def setUp(self):
        ensure_cells("monotonic,minimal")
        self.exe = os.path.join(BUILD, "bin", "am-cell-monotonic")
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_the_aging_of_a_heap_is_not_simulated(self):
        listing = json.loads(subprocess.run([self.exe, "--list"], capture_output=True, text=True).stdout)
        if not listing.get("count_start"):
            self.skipTest("this build cannot start callgrind's simulation (cell/count_start.h)")
        aged = [w for w in listing["workloads"] if w["age"] and not w["threaded"]]
        self.assertTrue(aged, "a workload that ages its heap")
        out = os.path.join(self.tmp.name, "callgrind.out")
        # the warm-up's inputs: each of the workload's seeds once, as a count run's sample
        reps = str(aged[0]["seeds"])
        cmd = counts.prefix(out, True) + [self.exe, "--workload", aged[0]["name"], "--size", "10", "--reps", reps,
                                          "--samples", "1", "--alone"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        dumps = sorted(f for f in os.listdir(self.tmp.name) if f.startswith("callgrind.out."))
        self.assertEqual(dumps, ["callgrind.out.1", "callgrind.out.2"],
                         "callgrind saw the warm-up and the measured sample, not the aging")
        warm_up, measured = (counts.read_events(os.path.join(self.tmp.name, d)) for d in dumps)
        self.assertEqual(warm_up["Ir"], measured["Ir"], "the same work, one sample each")

    def test_copies_of_the_libraries_differ_in_the_build_id_alone(self):
        originals = plain_copies.loaded_libraries([self.exe])
        self.assertIn("libc.so.6", originals)
        plain_copies.libraries([self.exe], self.tmp.name)
        for name, path in originals.items():
            with open(path, "rb") as a, open(os.path.join(self.tmp.name, name), "rb") as b:
                original, copy = a.read(), b.read()
            self.assertEqual(len(copy), len(original), name)
            differ = [i for i, (x, y) in enumerate(zip(original, copy)) if x != y]
            if differ:
                self.assertLessEqual(differ[-1] - differ[0], 64, f"{name}: only its build-id differs")
            note = subprocess.run(["readelf", "-n", os.path.join(self.tmp.name, name)], capture_output=True,
                                  text=True).stdout
            for build_id in re.findall(r"Build ID: (\w+)", note):
                self.assertEqual(set(build_id), {"0"}, name)

    def test_no_debug_information_is_read(self):
        def considered(cwd, exe, env):
            """{object: the detached debug file valgrind looked at for it} of
            the cell's objects: not valgrind's own tool and preload objects
            (valgrind-dbg, which apt installs beside valgrind), which cannot
            be copied."""
            p = subprocess.run(["valgrind", "--tool=none", "-v", exe, "--list"], cwd=cwd, env=env,
                               capture_output=True, text=True, timeout=120)
            out, current = {}, None
            for line in p.stderr.splitlines():
                read = re.search(r"Reading syms from (\S+)", line)
                if read:
                    current = read.group(1)
                debug = re.search(r"Considering (\S+)", line)
                if debug and current and "/valgrind/" not in current:
                    out[current] = debug.group(1)
            return out

        if len(considered(None, self.exe, None)) < 2:
            self.skipTest("no detached debug files of the cell's libraries here (libc6-dbg)")
        folder = os.path.join(self.tmp.name, "cell")
        os.makedirs(folder)
        exe = plain_copies.cell(self.exe, self.tmp.name)
        libraries = os.path.join(self.tmp.name, "libraries")
        plain_copies.libraries([exe], libraries)
        counts.cell_folder(folder, exe, libraries)
        read = considered(folder, "./" + counts.CELL_NAME, dict(counts.CELL_ENV))
        self.assertLessEqual(len(read), 1, f"only the dynamic loader's, which cannot be copied: {read}")


class BadInput(unittest.TestCase):
    def setUp(self):
        ensure_cells("monotonic,minimal")
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "count")

    def tearDown(self):
        self.tmp.cleanup()

    def test_threaded_workload_by_name(self):
        p = run(["--count", "--allocators", "monotonic", "--workloads", "contention", "--out", self.out])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("threaded", p.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_valgrind_missing(self):
        bare = os.path.join(self.tmp.name, "bin")
        os.makedirs(bare)
        p = run(SMALL + ["--out", self.out], env={"PATH": bare})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("valgrind is not installed", p.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_shard_without_count_and_bad_shard(self):
        for args, words in ((["--shard", "1/2"], "--count"), (["--count", "--shard", "3/2"], "not a shard")):
            p = run(args + ["--out", self.out])
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(words, p.stderr)

    @unittest.skipUnless(HAS_VALGRIND, "needs valgrind")
    def test_unreadable_count_output_keeps_the_rest(self):
        fake = os.path.join(self.tmp.name, "bin")
        os.makedirs(fake)
        measured = counts.measured_dump(True, False)
        with open(os.path.join(fake, "valgrind"), "w") as f:
            f.write(f"""#!/bin/sh
out=
for a in "$@"; do case $a in --callgrind-out-file=*) out=${{a#*=}};; esac; done
{shutil.which('valgrind')} "$@"; st=$?
case " $* " in *" list_dupe "*) printf 'events: Ir\\nsummary: garbage\\n' > "$out{measured}";; esac
exit $st
""")
        os.chmod(os.path.join(fake, "valgrind"), 0o755)
        p = run(SMALL + ["--out", self.out], env={"PATH": fake + os.pathsep + os.environ.get("PATH", "")},
                timeout=300)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("count output unreadable", p.stderr)
        rows = read_rows(os.path.join(self.out, "counts.csv"))
        by_workload = {}
        for r in rows:
            by_workload.setdefault(r["workload"], set()).add(r["status"])
        self.assertEqual(by_workload["list_dupe"], {"failed"})
        self.assertEqual(by_workload["alloc_pair"], {"ok"})
        # a second count into the same folder is refused and changes nothing
        with open(os.path.join(self.out, "counts.csv")) as f:
            before = f.read()
        p = run(SMALL + ["--out", self.out])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("holds counts already", p.stderr)
        with open(os.path.join(self.out, "counts.csv")) as f:
            self.assertEqual(f.read(), before)


class ClockFree(unittest.TestCase):
    """A count runs its cell with the clock-driven return of memory of jemalloc
    and mimalloc turned off, so that their work does not depend on how slowly
    valgrind runs them: each library reads and accepts those settings."""

    def cell(self, row):
        exe = os.path.join(BUILD, "bin", f"am-cell-{row}")
        if not os.path.exists(exe):
            self.skipTest(f"the {row} row is not built here (its library is not installed)")
        return exe

    def test_jemalloc_never_decays(self):
        env = dict(counts.CELL_ENV)
        env["MALLOC_CONF"] += ",stats_print:true"  # prints the options it runs with at exit
        p = subprocess.run([self.cell("system-jemalloc"), "--list"], env=env, capture_output=True, text=True,
                           timeout=60)
        text = p.stdout + p.stderr
        self.assertNotIn("Invalid conf", text)
        self.assertIn("opt.dirty_decay_ms: -1", text)
        self.assertIn("opt.muzzy_decay_ms: -1", text)

    def test_mimalloc_never_decommits(self):
        env = dict(counts.CELL_ENV, MIMALLOC_VERBOSE="1")
        p = subprocess.run([self.cell("system-mimalloc"), "--list"], env=env, capture_output=True, text=True,
                           timeout=60)
        self.assertIn("option 'allow_decommit': 0", p.stderr)

    def test_the_settings_are_in_counts_json_and_the_legend(self):
        meta = counts.settings(argparse.Namespace(baseline="monotonic", order=[], workloads=[], quick=True,
                                                  sizes=[], compilers=[], listing={}, traces={}), 1, "valgrind-3.19.0")
        self.assertEqual(meta["environment"]["MIMALLOC_ALLOW_DECOMMIT"], "0")
        self.assertIn("MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1", count_tables.legend(meta))


class Gate(unittest.TestCase):
    """compare --base on count folders, with the committed reference as the base."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        src = os.path.join(REFERENCE, "gcc")
        self.base, self.run_dir = os.path.join(self.tmp.name, "a"), os.path.join(self.tmp.name, "b")
        shutil.copytree(src, self.base)
        shutil.copytree(src, self.run_dir)
        self.rows = read_rows(os.path.join(self.run_dir, "counts.csv"))
        self.cell = next(r for r in self.rows if r["status"] == "ok" and r["strategy"] != "monotonic")

    def tearDown(self):
        self.tmp.cleanup()

    def gate(self, scale=None, drop=False):
        rows = [r for r in self.rows if not (drop and r is self.cell)]
        if scale:
            self.cell["instructions_per_op"] = repr(float(self.cell["instructions_per_op"]) * scale)
        write_rows(os.path.join(self.run_dir, "counts.csv"), rows)
        return compare.main(["--base", self.base, self.run_dir, "--out", os.path.join(self.tmp.name, "cmp")])

    def report(self):
        with open(os.path.join(self.tmp.name, "cmp", "compare.txt")) as f:
            return f.read()

    def test_unchanged_passes(self):
        self.assertEqual(self.gate(), 0)

    def test_one_percent_in_one_cell_fails(self):
        self.assertEqual(self.gate(scale=1.01), 1)
        text = self.report()
        self.assertIn(f"{self.cell['compiler']} {self.cell['strategy']} {self.cell['workload']} {self.cell['size']}",
                      text)
        self.assertEqual(text.count("moved by 1% or more"), 1)

    def test_below_one_percent_passes(self):
        self.assertEqual(self.gate(scale=1 + gate.COUNT_THRESHOLD / 2), 0)

    def test_missing_cell_cannot_be_judged(self):
        self.assertEqual(self.gate(drop=True), compare.EXIT_UNJUDGED)


class Figures(unittest.TestCase):
    def test_estimated_cycles_follow_iai(self):
        e = {"Ir": 1000, "I1mr": 20, "ILmr": 5, "Dr": 400, "D1mr": 40, "DLmr": 10, "Dw": 200, "D1mw": 30, "DLmw": 6}
        ops = 10
        accesses = e["Ir"] + e["Dr"] + e["Dw"]
        l1_misses = e["I1mr"] + e["D1mr"] + e["D1mw"]
        ram = e["ILmr"] + e["DLmr"] + e["DLmw"]
        got = counts.per_op(e, ops)
        self.assertAlmostEqual(got["est_cycles_per_op"],
                               ((accesses - l1_misses) + 5 * (l1_misses - ram) + 35 * ram) / ops)
        self.assertAlmostEqual(got["d1_misses_per_op"], (e["D1mr"] + e["D1mw"]) / ops)
        self.assertAlmostEqual(got["lld_misses_per_op"], (e["DLmr"] + e["DLmw"]) / ops)

    def test_unreadable_output(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out")
            for text in ("", "events: Ir Dr\nsummary: 1\n", "events: Ir\nsummary: x\n", "events: Ir\nsummary: 0\n"):
                with open(path, "w") as f:
                    f.write(text)
                with self.assertRaises(counts.CountError):
                    counts.read_events(path)

    def test_the_table_reads_the_figures_the_csv_holds(self):
        # a merge of shards writes counts.txt from counts.csv (six digits);
        # a run wrote it from its own figures, and 66.40496 read 66.4 in the
        # one and 66.41 in the other
        key = dict(compiler="gcc", workload="w", size=10, threads=1, param=0.0, reason=None, reps=4,
                   ops_per_rep=100.0, i1_misses_per_op=0.5, lli_misses_per_op=0.1, d1_misses_per_op=1.0,
                   lld_misses_per_op=0.2)
        entries = [dict(key, strategy="a", status="ok", instructions_per_op=66.40496, est_cycles_per_op=120.4),
                   dict(key, strategy="base", status="ok", instructions_per_op=50.0, est_cycles_per_op=100.0)]
        meta = {"baseline": "base", "reps": 4, "seed": 1}
        with tempfile.TemporaryDirectory() as tmp:
            counts.write(tmp, entries, meta)
            _, read_back = rundir.read_counts(tmp)
            with open(os.path.join(tmp, "counts.txt")) as f:
                self.assertEqual(f.read(), count_tables.text(read_back, "base", meta))

    def test_disagreements(self):
        key = dict(compiler="gcc", workload="w", size=10, threads=1, param=0.0)
        cnt = [dict(key, strategy="base", status="ok", est_cycles_per_op=100.0),
               dict(key, strategy="a", status="ok", est_cycles_per_op=90.0),
               dict(key, strategy="b", status="ok", est_cycles_per_op=120.0)]
        ratios = [dict(key, strategy="a", baseline="base", ratio=1.2, significant=True),
                  dict(key, strategy="b", baseline="base", ratio=1.2, significant=True)]
        found = count_tables.disagreements(cnt, ratios, 0.02)
        self.assertEqual([f[0] for f in found], ["gcc a w 10"])
        ratios[0]["significant"] = False
        self.assertEqual(count_tables.disagreements(cnt, ratios, 0.02), [])


if __name__ == "__main__":
    unittest.main()


class Report(unittest.TestCase):
    """The report of a timed run with counts beside it: the Counts section, and
    the cells where the time and the counts point in opposite directions; its
    tables with the counts beside the times."""

    def test_counts_added_to_a_timed_run_reach_its_tables(self):
        import fake_results
        with tempfile.TemporaryDirectory() as tmp:
            fake_results.make(tmp, **fake_results.SMALL)
            cell = read_rows(os.path.join(tmp, "summary.csv"))[0]
            key = dict(compiler=cell["compiler"], workload=cell["workload"], size=int(cell["size"]),
                       threads=int(cell["threads"]), param=float(cell["param"] or 0), status="ok", reason="")
            with open(os.path.join(tmp, "meta.json")) as f:
                baseline = json.load(f)["baseline"]
            entries = [dict(key, strategy=baseline, instructions_per_op=10.0, est_cycles_per_op=10.0),
                       dict(key, strategy=cell["strategy"], instructions_per_op=20.0, est_cycles_per_op=25.0)]
            counts.write(tmp, entries, dict(baseline=baseline, reps=1, seed=1, caches={}))
            counts.beside_times(tmp)
            with open(os.path.join(tmp, "tables.txt")) as f:
                text = f.read()
        self.assertIn("instr/op", text)
        self.assertIn("cyc/base", text)
        self.assertEqual([line for line in text.splitlines() if len(line) > 100], [])

    def test_counts_section_names_the_split(self):
        import fake_results
        from report import report
        with tempfile.TemporaryDirectory() as tmp:
            fake_results.make(tmp, **fake_results.SMALL)
            ratios = read_rows(os.path.join(tmp, "ratios.csv"))
            faster = next(r for r in ratios if r["significant"] == "1" and float(r["ratio"]) < 1)
            key = dict(compiler=faster["compiler"], workload=faster["workload"], size=int(faster["size"]),
                       threads=1, param=0.0, status="ok", reason="")
            entries = [dict(key, strategy=faster["baseline"], instructions_per_op=10.0, est_cycles_per_op=10.0),
                       dict(key, strategy=faster["strategy"], instructions_per_op=20.0, est_cycles_per_op=20.0)]
            counts.write(tmp, entries, dict(baseline=faster["baseline"], reps=1, seed=1, caches={}))
            report.build(tmp, draw_plots=False)
            with open(os.path.join(tmp, "report.html")) as f:
                page = f.read()
        section = page[page.index('id="counts"'):]
        section = section[:section.index("</section>")]
        self.assertIn("opposite directions", section)
        self.assertIn(f"{faster['compiler']} {faster['strategy']} {faster['workload']} {faster['size']}", section)
        self.assertIn("time × ", section)
