"""The runner through its exits, in this process so that each can be placed
exactly: Ctrl-C at several moments (before the first cell, between cells,
during a write while measuring, during the last write), cells that crash,
hang, compute a wrong checksum or answer garbage, and a disk that fills at
each write of the run folder. After each: every finished cell is in whole
files that agree with each other (its samples, its summary line, the tables
regenerated from the samples), meta.json's state says what happened, and no
temporary file is left that a later run or report would read as results."""
import contextlib
import csv
import errno
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_runner import BUILD, COMPILER, ensure_cells  # noqa: E402
from test_regenerate import assert_regenerates  # noqa: E402
from runner import allocmark, meta, run  # noqa: E402
from runfolder import errors, outputs, schema  # noqa: E402

HOOKS = ("AM_TEST_CRASH", "AM_TEST_HANG", "AM_TEST_BADSUM", "AM_TEST_GARBAGE")
# two rows at two sizes: four cells, each a visit and a -stats run
ARGS = ["--allocators", "system,minimal", "--baseline", "system", "--workloads", "thrash_pool",
        "--sizes", "10,210", "--samples", "3", "--min-ms", "1", "--seed", "7", "--revisits", "0",
        "--cpu", "none", "--no-stats-tables", "--timeout", "2"]
CELLS = 4


class Disk:
    """Stands in for open() in runfolder/outputs.py: the writes into the run
    folder are counted, and from the write numbered `at` on (only that one
    when `once`) a write puts down part of its text and raises `error`."""

    def __init__(self, folder, at=None, error=None, once=False):
        self.folder, self.at, self.error, self.once = folder, at, error, once
        self.writes = 0

    def __call__(self, path, mode="r", *args, **kwargs):
        f = open(path, mode, *args, **kwargs)
        if "w" not in mode or not os.path.abspath(path).startswith(self.folder + os.sep):
            return f
        self.writes += 1
        if self.at is None or self.writes < self.at or (self.once and self.writes > self.at):
            return f
        return Cut(f, self.error)


class Cut:
    def __init__(self, f, error):
        self.f, self.error = f, error

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def write(self, text):
        self.f.write(text[:len(text) // 2])
        raise self.error


def enospc():
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class Exits(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_cells()
        cls.static = None

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.out = os.path.join(self.tmp.name, "runs", "run")
        self.rescue = os.path.join(self.tmp.name, "tmp")
        os.makedirs(self.rescue)

    def runner(self, env=None, disk=None, launch=None, write_every=0.0):
        """The runner's main in this process: (exit status, stdout, stderr).
        disk: a Disk; launch: the cell start, numbered from 1, that Ctrl-C
        interrupts; write_every: the seconds between writes while measuring
        (0: after every cell)."""
        disk = disk or Disk(self.out)
        real_start = run.Launcher.run
        self.starts = 0

        def start(launcher, *a, **k):
            self.starts += 1
            if self.starts == launch:
                raise KeyboardInterrupt
            return real_start(launcher, *a, **k)

        real_static = meta.static_meta

        def static(cfg):  # the host, its compilers and libraries: the same for every run here, found once
            if Exits.static is None:
                Exits.static = real_static(cfg)
            return Exits.static

        clean = {k: v for k, v in os.environ.items() if k not in HOOKS}
        clean.update(env or {})
        out, err = io.StringIO(), io.StringIO()
        with contextlib.ExitStack() as stack:
            stack.enter_context(mock.patch.dict(os.environ, clean, clear=True))
            stack.enter_context(mock.patch.object(tempfile, "tempdir", self.rescue))
            stack.enter_context(mock.patch.object(run, "WRITE_EVERY_S", write_every))
            stack.enter_context(mock.patch.object(run, "WRITE_SPACING", 0.0))
            stack.enter_context(mock.patch.object(outputs, "open", disk, create=True))
            stack.enter_context(mock.patch.object(run.Launcher, "run", start))
            stack.enter_context(mock.patch.object(meta, "static_meta", static))
            stack.enter_context(contextlib.redirect_stdout(out))
            stack.enter_context(contextlib.redirect_stderr(err))
            try:
                rc = allocmark.main(["--compilers", COMPILER, "--build-root", os.path.dirname(BUILD),
                                     "--out", self.out] + ARGS)
            except KeyboardInterrupt:
                rc = "Ctrl-C escaped the runner"
        return rc, out.getvalue(), err.getvalue()

    # ------------------------------------------------------------ the checks

    def assert_no_leftovers(self):
        for dirpath, dirs, files in os.walk(self.tmp.name):
            self.assertEqual([f for f in files if f.endswith(".tmp")], [], dirpath)
        if os.path.isdir(self.out):
            self.assertNotIn("tmp", os.listdir(self.out))  # the cells' scratch space

    def assert_whole(self, folder, state):
        """folder's files are whole and agree; returns {cell key: status}."""
        with open(os.path.join(folder, "meta.json")) as f:
            self.assertEqual(json.load(f)["state"], state, folder)
        with open(os.path.join(folder, "summary.csv"), newline="") as f:
            lines = list(csv.reader(f))
        self.assertEqual(lines[0], schema.SUMMARY_COLS)
        for line in lines[1:]:
            self.assertEqual(len(line), len(schema.SUMMARY_COLS), line)
        summary = [dict(zip(lines[0], line)) for line in lines[1:]]
        key = schema.KEY
        status = {tuple(r[k] for k in key): r["status"] for r in summary}
        self.assertTrue(set(status.values()) <= {"ok", "failed", "skipped"}, status)
        with open(os.path.join(folder, "samples.csv"), newline="") as f:
            samples = list(csv.DictReader(f))
        for r in summary:
            k = tuple(r[c] for c in key)
            n = sum(1 for s in samples if tuple(s[c] for c in key) == k)
            self.assertEqual(n, int(r["samples"]) if r["status"] == "ok" else 0, k)
        self.assertTrue(all(status.get(tuple(s[c] for c in key)) == "ok" for s in samples))
        assert_regenerates(self, folder)
        return status

    def files_per_write(self):
        """How many files one write of the run folder writes: the last write
        of a run that writes nothing while measuring."""
        count = Disk(self.out)
        self.runner(disk=count, write_every=1e9)
        self.setUp()
        return count.writes

    def rescued(self):
        return [os.path.join(self.rescue, d) for d in os.listdir(self.rescue)]

    # ------------------------------------------------------------ the exits

    def test_a_run_that_finishes(self):
        rc, _, err = self.runner()
        self.assertEqual(rc, 0, err)
        self.assertEqual(list(self.assert_whole(self.out, "finished").values()), ["ok"] * CELLS)
        self.assert_no_leftovers()

    def test_ctrl_c_at_several_cell_starts(self):
        self.runner()
        starts = self.starts  # every visit, and each cell's -stats run after its first
        # the first cell's visit, its -stats run, the next cell, a later round, the last visit
        for launch in sorted({1, 2, 3, 2 * CELLS + 1, starts}):
            with self.subTest(launch=launch):
                self.setUp()
                rc, out, err = self.runner(launch=launch)
                self.assertEqual(rc, errors.EXIT_INTERRUPTED, err)
                self.assertIn("interrupted:", out)
                self.assert_no_leftovers()
                if launch < 3 and not os.path.exists(os.path.join(self.out, "meta.json")):
                    continue  # nothing finished: no run folder is as good as an empty one
                status = self.assert_whole(self.out, "interrupted")
                self.assertEqual(len(status), min(CELLS, (launch - 1) // 2))

    def test_ctrl_c_during_each_write_while_measuring(self):
        for at in range(1, self.files_per_write() + 1):
            with self.subTest(write=at):
                self.setUp()
                rc, out, err = self.runner(disk=Disk(self.out, at, KeyboardInterrupt(), once=True))
                self.assertEqual(rc, errors.EXIT_INTERRUPTED, err)
                self.assert_no_leftovers()
                self.assertEqual(list(self.assert_whole(self.out, "interrupted").values()), ["ok"])

    def test_ctrl_c_during_the_last_write(self):
        for at in range(1, self.files_per_write() + 1):
            with self.subTest(write=at):
                self.setUp()
                rc, out, err = self.runner(disk=Disk(self.out, at, KeyboardInterrupt(), once=True),
                                           write_every=1e9)
                self.assertEqual(rc, errors.EXIT_INTERRUPTED, err)
                self.assert_no_leftovers()
                self.assertEqual(list(self.assert_whole(self.out, "interrupted").values()), ["ok"] * CELLS)

    def test_a_full_disk_at_each_write(self):
        # from each file of the second write while measuring, or of the last
        # write alone, the disk stays full
        files = self.files_per_write()
        for at, write_every in [(files + at, 0.0) for at in range(1, files + 1)] + \
                [(at, 1e9) for at in range(1, files + 1)]:
            with self.subTest(write=at, write_every=write_every):
                self.setUp()
                rc, out, err = self.runner(disk=Disk(self.out, at, enospc()), write_every=write_every)
                self.assertEqual(rc, errors.EXIT_NOT_WRITTEN, err)
                self.assert_no_leftovers()
                # the results are whole in the rescue folder, the run folder
                # keeps what it had whole, and says it was not finished there
                rescued = self.rescued()
                self.assertEqual(len(rescued), 1, err)
                self.assertIn(rescued[0], err)
                self.assertEqual(list(self.assert_whole(rescued[0], "finished").values()), ["ok"] * CELLS)
                if at > files:
                    self.assertEqual(list(self.assert_whole(self.out, "running").values()), ["ok"])
                else:
                    self.assertFalse(os.path.exists(os.path.join(self.out, "summary.csv")))

    def test_cells_that_crash_hang_or_miscount(self):
        rc, out, err = self.runner(env={"AM_TEST_CRASH": "minimal/thrash_pool:10",
                                        "AM_TEST_HANG": "system/thrash_pool:210",
                                        "AM_TEST_BADSUM": "minimal/thrash_pool:210"})
        self.assertEqual(rc, 0, err)
        self.assert_no_leftovers()
        status = self.assert_whole(self.out, "finished")
        self.assertEqual(sorted(status.values()), ["failed", "failed", "failed", "ok"])

    def test_a_cell_that_answers_garbage(self):
        rc, out, err = self.runner(env={"AM_TEST_GARBAGE": "minimal/thrash_pool:10"})
        self.assertEqual(rc, 0, err)
        self.assert_no_leftovers()
        status = self.assert_whole(self.out, "finished")
        self.assertEqual(sorted(status.values()), ["failed", "ok", "ok", "ok"])


if __name__ == "__main__":
    unittest.main()
