"""End-to-end tests of runner/allocmark.py on a tiny matrix (system and minimal,
thrash_pool, a few sizes, 3 samples of 1 ms): the files and their columns,
ratios that agree with the medians, every kind of bad input. The cells that
fail: test_failing_cells.py. Builds the two rows if needed."""
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RUNNER = [sys.executable, "-m", "runner.allocmark"]  # as a user starts it: in ROOT (cwd=ROOT)
sys.path.insert(0, ROOT)
from runner import cli, config  # noqa: E402
from runfolder import catalog, schema  # noqa: E402


def build_dir():
    b = os.environ.get("AM_BUILD")
    if not b:
        b = os.path.join("build", config.default_compiler())
    return os.path.join(ROOT, b)


BUILD = build_dir()
COMPILER = os.path.basename(BUILD)
TINY = ["--allocators", "system,minimal", "--workloads", "thrash_pool", "--samples", "3",
        "--min-ms", "1", "--seed", "7", "--revisits", "0"]


_built = set()


def ensure_cells(rows="system,minimal"):
    """Brings the rows' cells up to date once per test process (make is
    incremental; `make test` itself builds only the test binaries)."""
    if rows in _built:
        return
    # inherits MAKEFLAGS from `make test`, so CC, VARIANT and flags match
    subprocess.run(["make", "--no-print-directory", "-j2", "cells", "ALLOCATORS=" + rows],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    _built.add(rows)


def run(args, env=None, timeout=120):
    full_env = dict(os.environ)
    for k in ("AM_TEST_CRASH", "AM_TEST_HANG", "AM_TEST_BADSUM"):
        full_env.pop(k, None)
    full_env.update(env or {})
    cmd = [*RUNNER, "--compilers", COMPILER, "--build-root", os.path.dirname(BUILD)] + args
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=full_env, timeout=timeout)


def read_csv(path):
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        return header, [dict(zip(header, row)) for row in r]


class Tiny(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run1")
        cls.p = run(TINY + ["--sizes", "10,210", "--baseline", "system", "--out", cls.out])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_run_succeeds_and_prints_its_fastest_group_and_where(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        self.assertIn("Fastest group per workload", self.p.stdout)
        self.assertRegex(self.p.stdout, r"\n  thrash_pool 210: [12] of 2: ")
        self.assertIn(os.path.join(self.out, "tables.txt"), self.p.stdout)
        self.assertIn(self.out, self.p.stdout.splitlines()[-1])
        with open(os.path.join(self.out, "tables.txt")) as f:
            text = f.read()
        for size in (10, 210):
            self.assertIn(f"== {COMPILER}: thrash_pool size {size} ==", text)
        self.assertIn("/system [95%]", text)

    def test_every_file_is_there_with_its_columns(self):
        expect = {"samples.csv": schema.SAMPLE_COLS, "summary.csv": schema.SUMMARY_COLS,
                  "ratios.csv": schema.RATIO_COLS, "metrics.csv": schema.METRIC_COLS}
        for name, cols in expect.items():
            header, _ = read_csv(os.path.join(self.out, name))
            self.assertEqual(header, cols, name)
        for name in ("meta.json", "tables.txt", "tables.md"):
            self.assertGreater(os.path.getsize(os.path.join(self.out, name)), 0, name)
        self.assertFalse([f for f in os.listdir(self.out) if f.endswith(".tmp")])
        # only the project's results/ folder gets a latest link (test_run_folder.LatestLink)
        self.assertFalse(os.path.lexists(os.path.join(self.tmp.name, "latest")))

    def test_summary_has_every_cell_with_stats(self):
        _, rows = read_csv(os.path.join(self.out, "summary.csv"))
        cells = sorted((r["strategy"], int(r["size"])) for r in rows)
        self.assertEqual(cells, [("minimal", 10), ("minimal", 210), ("system", 10), ("system", 210)])
        for r in rows:
            self.assertEqual(r["status"], "ok")
            self.assertEqual(r["compiler"], COMPILER)
            # 3 rounds of one sample; the baseline's round 1 takes more, and so
            # do its later rounds unless its samples outlast the visit's budget
            if r["strategy"] == "system":
                self.assertIn(int(r["samples"]), range(config.BASELINE_SAMPLES + 2, 3 * config.BASELINE_SAMPLES + 1))
            else:
                self.assertEqual(r["samples"], "3")
            lo, med, hi = float(r["ci_low_ns"]), float(r["median_ns_per_op"]), float(r["ci_high_ns"])
            self.assertLessEqual(float(r["min_ns_per_op"]), med)
            self.assertLessEqual(lo, med)
            self.assertLessEqual(med, hi)
            self.assertGreater(int(r["peak_rss_bytes"]), 0)
            # one repetition allocates one vector and frees it
            self.assertEqual((r["allocs"], r["frees"]), ("1", "1"))
            self.assertGreaterEqual(int(r["bytes_peak"]), 0)
            self.assertEqual(r["instructions_per_op"] == "", r["cycles_per_op"] == "")
        minimal = [r for r in rows if r["strategy"] == "minimal"]
        for r in minimal:  # minimal knows what it reserved
            self.assertGreater(int(r["reserved_peak"]), 0)

    def test_samples_match_summary(self):
        _, samples = read_csv(os.path.join(self.out, "samples.csv"))
        _, summary = read_csv(os.path.join(self.out, "summary.csv"))
        self.assertEqual(len(samples), sum(int(s["samples"]) for s in summary))
        for s in summary:
            mine = [x for x in samples if (x["strategy"], x["size"]) == (s["strategy"], s["size"])]
            # the default 3 rounds: a sample from each process (the baseline,
            # system, more), all with the repetitions round 1 calibrated
            each = config.BASELINE_SAMPLES if s["strategy"] == "system" else 1
            rounds = [x["round"] for x in mine]
            self.assertEqual([x["sample"] for x in mine], [str(i) for i in range(len(mine))])
            self.assertEqual(rounds, sorted(rounds))
            # each visit takes its planned samples, or fewer where its calibration
            # or its first visit's samples ran slow (a loaded machine: rounds.samples_this_visit)
            self.assertTrue(all(1 <= rounds.count(r) <= each for r in ("1", "2", "3")))
            self.assertEqual({x["reps"] for x in mine}, {s["reps"]})
            # the median of the visits' medians
            visits = sorted(statistics.median(float(x["ns"]) / int(x["reps"]) for x in mine if x["round"] == r)
                            for r in ("1", "2", "3"))
            self.assertAlmostEqual(visits[1] / float(s["median_ns_per_op"]), 1, places=4)
            for x in mine:
                self.assertAlmostEqual(float(x["ns_per_op"]) * int(x["reps"]) / float(x["ns"]), 1, places=4)

    def test_ratios_pair_the_visits_of_one_round(self):
        _, ratios = read_csv(os.path.join(self.out, "ratios.csv"))
        _, samples = read_csv(os.path.join(self.out, "samples.csv"))
        self.assertEqual(sorted(r["size"] for r in ratios), ["10", "210"])
        for r in ratios:
            self.assertEqual((r["strategy"], r["baseline"], r["pairs"]), ("minimal", "system", "3"))
            # each sample beside its partner's: the log of the row over the
            # partner, sample by sample; a round's log ratio of two cells is
            # the difference of theirs
            logs = {}
            for x in samples:
                if x["size"] == r["size"]:
                    logs.setdefault((x["strategy"], x["round"]), []).append(
                        math.log(float(x["ns"]) / int(x["reps"]) / (float(x["partner_ns"]) / int(x["partner_reps"]))))
            # a visit's log ratio to the partner: the median of its samples'
            at = {k: statistics.median(v) for k, v in logs.items()}
            d = [at[("minimal", k)] - at[("system", k)] for k in ("1", "2", "3")]
            # the median of the three log ratios of the visits paired by round
            self.assertAlmostEqual(float(r["ratio"]) / math.exp(sorted(d)[1]), 1, places=4)
            lo, hi = float(r["ci_low"]), float(r["ci_high"])
            self.assertLessEqual(lo, float(r["ratio"]) * 1.0001)
            self.assertGreaterEqual(hi, float(r["ratio"]) * 0.9999)
            self.assertEqual(r["significant"], "0")  # three pairs cannot reach 95%

    def test_meta_records_the_run(self):
        with open(os.path.join(self.out, "meta.json")) as f:
            meta = json.load(f)
        for key in ("run_id", "date", "host", "cpu_model", "kernel", "compilers", "libraries",
                    "git_revision", "seed", "command_line", "samples", "min_ms", "baseline", "quick",
                    "timer_resolution_ns", "hardware_counters"):
            self.assertIn(key, meta)
        self.assertEqual((meta["seed"], meta["samples"], meta["rounds"], meta["min_ms"]), (7, 3, 3, 1.0))
        self.assertEqual(meta["baseline"], "system")
        self.assertEqual(meta["state"], "finished")
        self.assertEqual(meta["compilers"][0]["name"], COMPILER)
        # the command as typed in the top folder, not the path of runner/ on this machine
        self.assertTrue(meta["command_line"].startswith("python3 -m runner.allocmark --compilers "), meta["command_line"])
        self.assertTrue(meta["hardware_counters"] == "available" or
                        meta["hardware_counters"].startswith("unavailable: "))
        self.assertEqual({k: v for k, v in meta["cells"].items() if k != "unstable"},
                         {"planned": 4, "ok": 4, "failed": 0, "not_run": 0})
        self.assertEqual(meta["statistics"]["margin"], 0.02)
        self.assertEqual(meta["revisits"]["limit"], 0)
        self.assertIn("load_average", meta["environment"])
        self.assertEqual(meta["cpu_count"], os.cpu_count())  # the tables' oversubscription mark
        pin = meta["cpu_pinning"]
        if hasattr(os, "sched_getaffinity"):
            # where the OS can pin, the cells ran on a CPU this process may use
            self.assertIn(pin["pinned"], os.sched_getaffinity(0))
            self.assertTrue(pin["why"])
        else:
            self.assertIsNone(pin["pinned"])


class Control(unittest.TestCase):
    """The A/A control row (a second build of monotonic) joins every run that
    measures monotonic, in every block; the tables say how often it was marked."""

    @classmethod
    def setUpClass(cls):
        ensure_cells("minimal,monotonic,control")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run")
        # the twin as the baseline: ratios.csv then holds the control's ratios to it
        cls.p = run(["--allocators", "minimal", "--baseline", "monotonic", "--workloads", "thrash_pool",
                     "--sizes", "10,210", "--samples", "6", "--min-ms", "1", "--seed", "7", "--revisits", "0",
                     "--cpu", "none", "--no-stats-tables", "--out", cls.out])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_control_runs_in_every_block_against_its_twin(self):
        self.assertEqual(self.p.returncode, 0, self.p.stdout + self.p.stderr)
        _, rows = read_csv(os.path.join(self.out, "summary.csv"))
        self.assertEqual(sorted((r["strategy"], r["size"]) for r in rows),
                         [(s, z) for s in ("control", "minimal", "monotonic") for z in ("10", "210")])
        with open(os.path.join(self.out, "meta.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["control"], {"row": "control", "twin": "monotonic"})
        _, ratios = read_csv(os.path.join(self.out, "ratios.csv"))
        mine = [r for r in ratios if r["strategy"] == "control"]
        self.assertEqual(len(mine), 2)
        marked = sum(r["significant"] == "1" for r in mine)
        with open(os.path.join(self.out, "tables.txt")) as f:
            first = " ".join(f.read().split("Undecided ratios")[0].split())  # wrapped to the tables' width
        self.assertEqual(first, f"A/A control: control, a second build of monotonic, was marked as a difference "
                                f"from it in {marked} of 2 cells ({50.0 * marked:.1f}%)")
        with open(os.path.join(self.out, "tables.md")) as f:
            self.assertIn("- A/A control: control", f.read())

    def test_no_control_leaves_it_out_and_a_run_without_its_twin_says_so(self):
        out = os.path.join(self.tmp.name, "without")
        p = run(["--allocators", "minimal", "--workloads", "thrash_pool", "--sizes", "10", "--samples", "3",
                 "--min-ms", "1", "--revisits", "0", "--cpu", "none", "--no-stats-tables", "--no-control",
                 "--out", out])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        _, rows = read_csv(os.path.join(out, "summary.csv"))
        self.assertNotIn("control", {r["strategy"] for r in rows})
        p = run(["--allocators", "minimal", "--baseline", "minimal", "--workloads", "thrash_pool", "--sizes", "10",
                 "--samples", "3", "--min-ms", "1", "--revisits", "0", "--cpu", "none", "--no-stats-tables",
                 "--out", os.path.join(self.tmp.name, "no-twin")])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("note: no A/A control: control is a second build of monotonic, which this run does not "
                      "measure", p.stdout)


class Terminal(unittest.TestCase):
    """A run like `make bench QUICK=1` (fewer samples) says little on the
    terminal: at most 60 lines, the full tables in the run folder, no line
    of them wider than 100 characters, each legend once."""

    @classmethod
    def setUpClass(cls):
        ensure_cells("system,minimal,monotonic,control")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run")
        cls.p = run(["--allocators", "system,minimal", "--quick", "--samples", "3", "--rounds", "3", "--min-ms", "1",
                     "--revisits", "0", "--cpu", "none", "--no-stats-tables", "--out", cls.out], timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_at_most_60_lines(self):
        self.assertEqual(self.p.returncode, 0, self.p.stdout + self.p.stderr)
        lines = (self.p.stdout + self.p.stderr).splitlines()
        self.assertLessEqual(len(lines), 60, "\n".join(lines))
        _, rows = read_csv(os.path.join(self.out, "summary.csv"))
        self.assertGreater(len(rows) * 3, 60)  # more visits than lines: progress is not a line a visit

    def test_tables_fit_100_columns_with_each_legend_once(self):
        with open(os.path.join(self.out, "tables.txt"), encoding="utf-8") as f:
            text = f.read()
        wide = [line for line in text.splitlines() if len(line) > 100]
        self.assertEqual(wide, [])
        self.assertEqual(text.count("in the first column: in the fastest group"), 1)
        self.assertGreater(text.count("== "), 10)


class RelativeOut(unittest.TestCase):
    """--out relative to the working directory, as `make bench OUT=results/x`
    gives it: the cells run in a scratch folder, and mmap_file puts its heap's
    file in the run folder's tmp/, so that folder must reach them absolute."""

    def test_every_row_runs_with_a_relative_out(self):
        ensure_cells("system,mmap_file")
        with tempfile.TemporaryDirectory() as tmp:
            rel = os.path.join("results", "x")
            p = subprocess.run([*RUNNER, "--compilers", COMPILER, "--build-root", os.path.dirname(BUILD),
                                "--allocators", "system,mmap_file", "--baseline", "system", "--workloads",
                                "thrash_pool", "--sizes", "10", "--samples", "3", "--min-ms", "1", "--seed", "7",
                                "--revisits", "0", "--cpu", "none", "--no-stats-tables", "--out", rel],
                               cwd=tmp, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            _, rows = read_csv(os.path.join(tmp, rel, "summary.csv"))
            self.assertEqual(sorted((r["strategy"], r["status"], r["reason"]) for r in rows),
                             [("mmap_file", "ok", ""), ("system", "ok", "")])
            # another folder named results is not the project's: no latest link in it
            self.assertFalse(os.path.lexists(os.path.join(tmp, "results", "latest")))


class BadInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells()
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, args, *needles):
        out = os.path.join(self.tmp.name, "never")
        p = run(args + ["--out", out])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        for n in needles:
            self.assertIn(n, p.stderr)
        self.assertNotIn(" visits ", p.stdout)  # no progress: nothing measured
        # bad input leaves nothing behind, not even an empty run folder
        self.assertFalse(os.path.exists(out), os.listdir(out) if os.path.isdir(out) else out)
        return p

    def test_unknown_strategy_names_the_valid_ones(self):
        self.check(["--allocators", "system,nosuch"], "nosuch", "system", "minimal")

    def test_unknown_workload_names_the_valid_ones(self):
        self.check(["--allocators", "system", "--workloads", "nosuch"], "nosuch", "thrash_pool")

    def test_unknown_baseline(self):
        self.check(["--allocators", "system", "--baseline", "nosuch"], "nosuch", "system")

    def test_bad_numbers_echo_the_value(self):
        self.check(["--samples", "abc"], "'abc'")
        self.check(["--samples", "2"], "'2'")
        self.check(["--min-ms", "fast"], "'fast'")
        self.check(["--sizes", "10,x1"], "'x1'")
        self.check(["--seed", "-3"], "'-3'")
        self.check(["--timeout", "0"], "'0'")
        self.check(["--rounds", "0"], "'0'")
        self.check(["--rounds", "two"], "'two'")
        self.check(["--revisits", "-1"], "'-1'")
        self.check(["--margin", "abc"], "'abc'", "0.02 or 2%")
        self.check(["--margin", "150%"], "'150%'", "from 0 to 1")
        self.check(["--margin", "nan"], "'nan'")

    def test_seed_past_2_to_the_64_is_refused_before_any_folder(self):
        # the cells read a 64-bit seed: 2^64 used to fail every cell in a new run folder
        self.check(["--seed", str(2 ** 64)], f"'{2 ** 64}'", "2^64 - 1")
        self.assertEqual(cli.parse(["--seed", str(2 ** 64 - 1)]).seed, 2 ** 64 - 1)

    def test_more_rounds_than_samples(self):
        self.check(["--allocators", "system", "--samples", "3", "--rounds", "4"], "--rounds 4", "--samples 3")

    def test_bad_mem_limit(self):
        self.check(["--mem-limit", "abc"], "'abc'", "not a memory size")
        self.check(["--mem-limit", "0"], "'0'", "too small")
        self.check(["--mem-limit", "4X"], "'4X'")

    def test_a_mem_limit_past_2_to_the_64_is_refused_before_any_folder(self):
        # 99999999T used to make a folder, fail every cell and exit 3
        self.check(["--allocators", "system", "--workloads", "alloc_pair", "--quick", "--mem-limit", "99999999T"],
                   "'99999999T'", "2^64")

    def test_a_size_given_twice_is_refused(self):
        # each cell used to be visited twice a round, the two pooled as one visit
        self.check(["--allocators", "system", "--workloads", "alloc_pair", "--quick", "--sizes", "100,7,100"],
                   "'100'", "twice")

    def test_bad_cpu(self):
        self.check(["--cpu", "fast"], "'fast'")
        if hasattr(os, "sched_getaffinity"):
            self.check(["--allocators", "system", "--cpu", "4096"], "--cpu 4096", "may use CPUs")
            # one past the CPUs this process may use: known only from the machine
            past = max(os.sched_getaffinity(0)) + 1
            self.check(["--allocators", "system", "--cpu", str(past)], f"--cpu {past}", "may use CPUs")

    def test_unknown_compiler(self):
        self.check(["--compilers", "nosuchcc"], "nosuchcc")

    def test_unwritable_out_fails_before_measuring(self):
        blocker = os.path.join(self.tmp.name, "a-file")
        with open(blocker, "w") as f:
            f.write("x")
        p = run(TINY + ["--out", os.path.join(blocker, "run")])
        self.assertEqual(p.returncode, 2)
        self.assertIn(os.path.join(blocker, "run"), p.stderr)
        self.assertNotIn(" visits ", p.stdout)  # no progress: nothing measured

    def test_sizes_past_2_to_the_40_cannot_fit(self):
        self.check(["--sizes", "10,1099511627777"], "'1099511627777'", "cannot fit in memory")
        self.check(["--sizes", "18446744073709551616"], "cannot fit in memory")

    def test_the_cell_refuses_a_size_past_2_to_the_40(self):
        # 2^64 - 1 used to reach the workload and die of SIGFPE (rand % (len + 1))
        exe = catalog.cell_exe(os.path.join(BUILD, "bin"), "system")
        p = subprocess.run([exe, "--workload", "thrash_pool", "--size", "18446744073709551615"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("cannot fit in memory", p.stderr)

    def test_the_cell_names_an_unknown_option(self):
        exe = catalog.cell_exe(os.path.join(BUILD, "bin"), "system")
        for args in (["--bogus"], ["--workload", "thrash_pool", "--size", "10", "--bogus"], ["--bogus", "1"]):
            with self.subTest(args=args):
                p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("unknown option --bogus", p.stderr)
        p = subprocess.run([exe, "--workload"], capture_output=True, text=True, timeout=60)
        self.assertIn("--workload needs a value", p.stderr)

    def test_help_lists_the_options(self):
        p = subprocess.run([*RUNNER, "--help"], cwd=ROOT, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        for opt in ("--allocators", "--workloads", "--sizes", "--samples", "--min-ms", "--baseline",
                    "--seed", "--out", "--compilers", "--quick", "--timeout", "--list", "--mem-limit"):
            self.assertIn(opt, p.stdout)
        self.assertNotIn("--jobs", p.stdout)
