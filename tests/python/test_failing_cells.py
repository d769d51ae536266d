"""End-to-end tests of runner/allocmark.py on cells that fail: cells that
crash, hang or fail their checksum (through the cell's AM_TEST_* hooks), a
size no heap can hold and a size over the memory limit are each recorded as
failed, with the reason, while the others complete."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import resource
except ImportError:  # Windows
    resource = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_runner import BUILD, ROOT, RUNNER, TINY, ensure_cells, read_csv, run  # noqa: E402
from runner import memlimit  # noqa: E402
from runfolder import catalog  # noqa: E402


class FailingCells(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run")
        cls.p = run(TINY + ["--sizes", "10,210,410", "--timeout", "2", "--baseline", "system",
                            "--out", cls.out],
                    env={"AM_TEST_HANG": "system/thrash_pool:10", "AM_TEST_CRASH": "minimal/thrash_pool:210",
                         "AM_TEST_BADSUM": "minimal/thrash_pool:410"})
        _, rows = read_csv(os.path.join(cls.out, "summary.csv"))
        cls.rows = {(r["strategy"], int(r["size"])): r for r in rows}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_run_goes_on(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        self.assertEqual(len(self.rows), 6)
        for key in (("system", 210), ("system", 410), ("minimal", 10)):
            self.assertEqual(self.rows[key]["status"], "ok", key)

    def test_a_crash_is_failed_with_the_signal(self):
        r = self.rows[("minimal", 210)]
        self.assertEqual(r["status"], "failed")
        # a sanitizer build reports the crash itself instead of dying of the signal
        self.assertTrue("SIGSEGV" in r["reason"] or "SEGV" in r["reason"], r["reason"])
        self.assertEqual(r["median_ns_per_op"], "")

    def test_a_hang_is_failed_as_timed_out(self):
        r = self.rows[("system", 10)]
        self.assertEqual(r["status"], "failed")
        self.assertIn("timed out after 2 s", r["reason"])

    def test_a_wrong_checksum_is_failed(self):
        r = self.rows[("minimal", 410)]
        self.assertEqual(r["status"], "failed")
        self.assertIn("checksum mismatch", r["reason"])

    def test_regenerated_from_samples_the_files_are_the_same(self):
        from test_regenerate import assert_regenerates
        assert_regenerates(self, self.out)

    def test_failed_cells_show_in_the_table_and_have_no_ratio(self):
        self.assertIn("failed", self.p.stdout)
        _, ratios = read_csv(os.path.join(self.out, "ratios.csv"))
        self.assertEqual([], ratios)  # no (minimal, system) pair finished at the same size


class TooLargeForMemory(unittest.TestCase):
    """A size under the cap that no heap can hold: its cells fail with "out of
    memory" and the run goes on (thrash_pool asks for one 4 TB vector, which
    malloc and minimal refuse at once: no memory is taken)."""

    def test_cells_fail_out_of_memory_and_the_rest_finish(self):
        ensure_cells()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            p = run(TINY + ["--sizes", "10,1000000000000", "--baseline", "system", "--out", out])
            self.assertEqual(p.returncode, 0, p.stderr)
            _, rows = read_csv(os.path.join(out, "summary.csv"))
            by = {(r["strategy"], int(r["size"])): r for r in rows}
            self.assertEqual(len(by), 4)
            for s in ("system", "minimal"):
                self.assertEqual(by[(s, 10)]["status"], "ok")
                self.assertEqual(by[(s, 10 ** 12)]["status"], "failed")
                self.assertIn("out of memory", by[(s, 10 ** 12)]["reason"])

    # Their size counts operations on a bounded set of live blocks: 10^12 is
    # a long cell, not a large one, and --timeout answers it.
    # (trace: its memory is the recorded program's, whatever the size)
    CONSTANT_MEMORY = {"contention", "producer_consumer", "trace"}

    def test_every_workload_refuses_it_before_its_oracle(self):
        # Every workload the cell lists, on both rows: "out of memory", or
        # "skipped" where the workload does not apply to the row. A workload
        # whose oracle or run loops over the size first would hit the
        # subprocess timeout instead.
        ensure_cells()
        bin_dir = os.path.join(BUILD, "bin")
        listing = subprocess.run([catalog.cell_exe(bin_dir, "system"), "--list"], capture_output=True, text=True,
                                 check=True, timeout=60)
        names = [w["name"] for w in json.loads(listing.stdout)["workloads"]]
        self.assertIn("list_dupe", names)
        for name in names:
            if name in self.CONSTANT_MEMORY:
                continue
            refused = []
            for row in ("system", "minimal"):
                cell = "%s on %s" % (name, row)
                try:
                    p = subprocess.run([catalog.cell_exe(bin_dir, row), "--workload", name, "--size", str(10 ** 12),
                                        "--samples", "3", "--min-ms", "1"], capture_output=True, text=True, timeout=60)
                except subprocess.TimeoutExpired:
                    self.fail(cell + ": no answer before the timeout")
                line = json.loads(p.stdout.splitlines()[-1])
                if line["status"] == "skipped":
                    self.assertEqual(p.returncode, 0, cell + ": " + p.stderr)
                    continue
                self.assertEqual((line["status"], line["reason"], p.returncode), ("failed", "out of memory", 3), cell)
                refused.append(row)
            self.assertTrue(refused, name + " applies to neither row")


@unittest.skipIf(resource is None, "needs setrlimit (POSIX)")
class MemLimit(unittest.TestCase):
    """--mem-limit: each cell runs under RLIMIT_AS, so a size that does not fit
    fails with "out of memory" (malloc returns NULL), the run goes on, and
    meta.json records the limit. mmap_pressure's size is the MiB of its
    structure: 80 does not fit under 64M, 1 does."""

    BIG = 80
    CELLS = ["--allocators", "system", "--baseline", "system", "--workloads", "mmap_pressure", "--threads", "1",
             "--param", "0", "--samples", "3", "--min-ms", "1", "--seed", "7", "--cpu", "none", "--revisits", "0",
             "--no-stats-tables"]

    def test_the_size_needs_more_than_the_limit(self):
        # the failure below must come from the limit: without it this cell runs
        ensure_cells()
        exe = catalog.cell_exe(os.path.join(BUILD, "bin"), "system")
        cmd = [exe, "--workload", "mmap_pressure", "--size", str(self.BIG), "--threads", "1", "--seed", "7",
               "--samples", "3", "--reps", "1"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        lim = subprocess.run(cmd + ["--mem-limit", str(64 << 20)], capture_output=True, text=True, timeout=60)
        self.assertEqual(json.loads(lim.stdout.strip().splitlines()[-1])["reason"], "out of memory")
        for bad in ("0", "64M", "-1"):  # the cell itself takes bytes only
            p = subprocess.run(cmd + ["--mem-limit", bad], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, bad)
            self.assertIn(f"'{bad}'", p.stderr)

    def test_a_cell_too_large_for_the_limit_fails_out_of_memory(self):
        ensure_cells()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            p = run(self.CELLS + ["--sizes", f"1,{self.BIG}", "--mem-limit", "64M", "--out", out])
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            _, rows = read_csv(os.path.join(out, "summary.csv"))
            by = {int(r["size"]): r for r in rows}
            self.assertEqual(by[1]["status"], "ok", by[1]["reason"])
            self.assertEqual(by[self.BIG]["status"], "failed")
            self.assertIn("out of memory", by[self.BIG]["reason"])
            self.assertIn("memory limit of 64 MiB", by[self.BIG]["reason"])
            with open(os.path.join(out, "meta.json")) as f:
                meta = json.load(f)
            self.assertEqual(meta["mem_limit"]["bytes"], 64 << 20)
            self.assertEqual(meta["cells"]["failed"], 1)

    def test_default_is_half_of_physical_memory_and_none_disables(self):
        ensure_cells()
        ram = memlimit.physical_memory()
        with tempfile.TemporaryDirectory() as tmp:
            for arg, want in ((None, ram // 2), ("none", None)):
                out = os.path.join(tmp, "run-" + str(arg))
                extra = ["--mem-limit", arg] if arg else []
                p = run(TINY + ["--allocators", "system,minimal", "--baseline", "system", "--sizes", "10",
                                "--cpu", "none", "--no-stats-tables", "--out", out] + extra)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                _, rows = read_csv(os.path.join(out, "summary.csv"))
                self.assertEqual([r["status"] for r in rows], ["ok", "ok"])
                with open(os.path.join(out, "meta.json")) as f:
                    self.assertEqual(json.load(f)["mem_limit"]["bytes"], want)

    def test_not_applied_to_sanitizer_builds(self):
        ensure_cells()
        with tempfile.TemporaryDirectory() as tmp:
            # a build folder whose flags say -fsanitize (the cells are the plain ones)
            fake = os.path.join(tmp, "build", "cc-asan")
            os.makedirs(fake)
            os.symlink(os.path.join(BUILD, "bin"), os.path.join(fake, "bin"))
            with open(os.path.join(fake, "flags.txt"), "w") as f:
                f.write("clang -std=c11 -O2 -fsanitize=address,undefined | -fsanitize=address\n")
            out = os.path.join(tmp, "run")
            cmd = [*RUNNER, "--compilers", "cc-asan", "--build-root", os.path.dirname(fake)]
            p = subprocess.run(cmd + TINY + ["--allocators", "system", "--baseline", "system", "--sizes", "10",
                                             "--mem-limit", "64M", "--cpu", "none", "--no-stats-tables",
                                             "--out", out], cwd=ROOT, capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("no memory limit for cc-asan", p.stdout)
            with open(os.path.join(out, "meta.json")) as f:
                self.assertEqual(json.load(f)["mem_limit"]["not_applied_to"], ["cc-asan"])

    def test_parse(self):
        parse = memlimit.parse
        self.assertEqual(parse("512M"), 512 << 20)
        self.assertEqual(parse("4G"), 4 << 30)
        self.assertEqual(parse("4gib"), 4 << 30)
        self.assertEqual(parse(str(1 << 30)), 1 << 30)
        self.assertEqual(parse("none"), "none")
        for bad in ("abc", "0", "1M", "-4G", "4.5G", ""):
            with self.assertRaises(ValueError, msg=bad):
                parse(bad)


if __name__ == "__main__":
    unittest.main()
