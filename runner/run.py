"""run.py: one run of a planned matrix (config.RunConfig): creates the run
folder, visits every cell round after round, rewrites the files every few
seconds, and at the end writes them whole (or rescues them), then the
counting tables and, with several compilers, the cross-compiler tables."""
import datetime
import os
import shutil
import signal
import sys
import tempfile
import time

from runner import aggregate, counting_tables, crosscc, matrix, meta, outputs, pinning, rounds
from runner.cell_process import Launcher
from runner.errors import (EXIT_ALL_FAILED, EXIT_INTERRUPTED, EXIT_NOT_WRITTEN, RunError, UsageError)
from runner.progress import Progress, clock

WRITE_EVERY_S = 5.0


def create_folder(out_dir):
    """The run folder, created and checked writable: the first thing a run creates."""
    try:
        os.makedirs(out_dir, exist_ok=True)
        probe = os.path.join(out_dir, ".allocmark-write-test")
        with open(probe, "w") as f:
            f.write("x")
        os.remove(probe)
    except OSError as e:
        raise UsageError(f"cannot write the run folder '{out_dir}': {e.strerror or e}")


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


def print_plan(cfg):
    for n in cfg.notes:
        print(f"note: {n}")
    print(f"allocmark: {len(cfg.cells)} cells ({', '.join(cfg.compilers)}; {len(cfg.order)} strategies; "
          f"{len(cfg.workloads)} workloads), {cfg.samples} samples of >= {cfg.min_ms:g} ms "
          f"in {cfg.rounds} round{'s' if cfg.rounds > 1 else ''}, "
          f"seed {cfg.seed}, baseline {cfg.baseline}; writing {cfg.out_dir}", flush=True)
    note = cfg.mem_limit_note
    if note.get("not_applied_to"):
        print(f"note: no memory limit for {', '.join(note['not_applied_to'])}: sanitizer builds", flush=True)
    if not note["bytes"] and note["why"].startswith("not applied"):
        print(f"note: memory limit {note['why']}", flush=True)


class Writer:
    """Writes the run folder every few seconds while the run goes on; a write
    that fails (full disk) is said once and tried again at the end."""

    def __init__(self, cfg, static, measurements, ratios, pinner):
        self.cfg, self.static, self.measurements, self.ratios, self.pinner = \
            cfg, static, measurements, ratios, pinner
        self.started = datetime.datetime.now()
        self.last = time.monotonic()
        self.error = None

    def meta(self, state):
        return meta.make_meta(self.cfg, self.static, self.measurements, self.started, state, self.pinner.note)

    def maybe(self):
        if time.monotonic() - self.last < WRITE_EVERY_S:
            return
        try:
            outputs.write_all(self.cfg.out_dir, self.measurements, self.ratios, self.meta("running"),
                              self.cfg.order)
        except OSError as e:  # full disk: keep measuring, the last write tries again
            if not self.error:
                print(f"allocmark: cannot write {self.cfg.out_dir} ({e.strerror or e}); still measuring",
                      file=sys.stderr, flush=True)
            self.error = e
        self.last = time.monotonic()

    def last_write(self, state):
        """The files whole at the end; the tables' text."""
        m = self.meta(state)
        try:
            text = outputs.write_all(self.cfg.out_dir, self.measurements, self.ratios, m, self.cfg.order)
            self.error = None
            outputs.point_latest(self.cfg.out_dir)
            return text
        except OSError as e:
            self.error = e
            return outputs.rescue(self.cfg.out_dir, e, self.measurements, self.ratios, m, self.cfg.order)


def visit_all(cfg, measurements, pinner, writer):
    """Every visit of every round; raises KeyboardInterrupt on Ctrl-C or SIGTERM."""
    progress = Progress(len(measurements), cfg.rounds, len(cfg.compilers) > 1)
    of = {m.cell: m for m in measurements}
    # the run folder's temporary space (mmap_file's files, which the strategy
    # unlinks as soon as they are mapped): gone at the end, also on Ctrl-C
    tmpdir = os.path.join(cfg.out_dir, "tmp")
    try:
        os.makedirs(tmpdir, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="allocmark-") as scratch:
            launcher = Launcher(cfg.timeout, scratch, tmpdir, pinner)
            block = None
            for i, (rnd, cell) in enumerate(matrix.visits(list(cfg.cells), cfg.rounds, cfg.seed)):
                m = of[cell]
                if rnd and m.status != "ok":
                    progress.skip()
                    continue
                if matrix.block_of(cell) != block:  # the probe moves cells to another CPU between blocks only
                    block = matrix.block_of(cell)
                    pinner.refresh()
                progress.before(i, m, rnd)
                t0 = time.monotonic()
                rounds.measure(m, cfg, launcher, rnd)
                progress.after(i, m, time.monotonic() - t0, rnd)
                writer.maybe()
    finally:
        pinning.place(None)  # the counting tables and the report: every CPU again
        shutil.rmtree(tmpdir, ignore_errors=True)
        progress.finish()


def run(cfg):
    """Measures the planned matrix; returns the exit status."""
    create_folder(cfg.out_dir)
    print_plan(cfg)
    static = meta.static_meta(cfg)
    pinner = pinning.Pinner(cfg.probe_exe(), cfg.cpu)
    if pinner.cpu is not None:
        print(f"single-threaded cells run on CPU {pinner.cpu} ({pinner.note['why']})", flush=True)
    measurements = [aggregate.Measurement(c) for c in cfg.cells]
    ratios = aggregate.Ratios(cfg.baseline, cfg.seed)
    writer = Writer(cfg, static, measurements, ratios, pinner)
    state = "finished"
    prev = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        visit_all(cfg, measurements, pinner, writer)
    except KeyboardInterrupt:
        state = "interrupted"
    finally:
        signal.signal(signal.SIGTERM, prev)
    aggregate.finalize(measurements, cfg.seed)
    if state == "finished" and cfg.stats_tables:
        try:
            counting_tables.write(cfg)
        except KeyboardInterrupt:
            state = "interrupted"
    print(writer.last_write(state))
    if len(cfg.compilers) > 1:
        try:
            cross = crosscc.write(cfg.out_dir, list(cfg.compilers))
            if cross:
                print(cross)
        except (RunError, OSError) as e:
            print(f"allocmark: no cross-compiler tables: {e}", file=sys.stderr)
    return closing(cfg, measurements, state, writer)


def closing(cfg, measurements, state, writer):
    failed = [m for m in measurements if m.status == "failed"]
    done = [m for m in measurements if m.status != "pending"]
    for m in failed:
        c = m.cell
        print(f"failed: {c.compiler} {c.strategy} {c.workload} {c.size}: {m.reason}")
    elapsed = (datetime.datetime.now() - writer.started).total_seconds()
    if writer.error:
        print(f"{len(done)} of {len(measurements)} cells done; {cfg.out_dir} could not be written: "
              f"{writer.error.strerror or writer.error}")
        return EXIT_NOT_WRITTEN
    if state == "interrupted":
        print(f"interrupted: {len(done)} of {len(measurements)} cells done; results in {cfg.out_dir}")
        return EXIT_INTERRUPTED
    print(f"{len(measurements)} cells ({len(failed)} failed) in {clock(elapsed)}; results in {cfg.out_dir}")
    return EXIT_ALL_FAILED if measurements and len(failed) == len(measurements) else 0
