"""run.py: one run of a planned matrix (config.RunConfig): creates the run
folder, visits every cell round after round, rewrites the files every few
seconds (at most a twentieth of the run's time), and at the end writes them whole (or rescues them), then the
counting tables and, with several compilers, the cross-compiler tables."""
import datetime
import os
import shutil
import signal
import sys
import tempfile
import time

from runfolder import aggregate, outputs, runlock, stats
from runfolder.errors import EXIT_ALL_FAILED, EXIT_INTERRUPTED, EXIT_NOT_WRITTEN, RunError, UsageError
from runner import config, counting_tables, crosscc, environment, layout, matrix, meta, pinning, rounds
from runner.cell_process import Launcher
from runner.progress import Progress, clock

WRITE_EVERY_S = 10.0
# ... or, once a rewrite of the files takes longer (they grow with the run),
# this many times its duration, so that rewriting takes at most a twentieth
# of the run's time
WRITE_SPACING = 20.0
# the revisits of unstable blocks take at most this share of the planned
# visits: on a machine too busy for any block to settle, a run takes at most
# a quarter longer, and its unstable cells are flagged
REVISIT_SHARE = 0.25


def create_folder(out_dir):
    """The run folder, created and locked for this run (the lock is also the
    check that it can be written): the first thing a run creates. Returns
    whether the folder was made here. A folder that cannot be written is left
    as it was found."""
    try:
        made = runlock.take_folder(out_dir)
    except OSError as e:
        if isinstance(e, FileExistsError):
            config.check_not_a_run(out_dir)  # another run took it first
        raise UsageError(f"cannot write the run folder '{out_dir}': {e.strerror or e}")
    try:
        # a run that finished there since the plan looked
        config.check_not_a_run(out_dir, locked=True)
    except UsageError:
        runlock.release(out_dir)
        raise
    return made


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


def print_plan(cfg):
    for n in cfg.notes:
        print(f"note: {n}")
    print(f"allocmark: {len(cfg.cells)} cells ({', '.join(cfg.compilers)}; {len(cfg.order)} strategies; "
          f"{len(cfg.workloads)} workloads), {cfg.samples} samples of >= {cfg.min_ms:g} ms "
          f"{f'(a trace: >= {cfg.trace_min_ms:g} ms) ' if cfg.traces else ''}"
          f"in {cfg.rounds} round{'s' if cfg.rounds > 1 else ''} (up to {cfg.revisits} more for "
          f"unstable blocks{f', within {cfg.budget_s:g} s' if cfg.budget_s else ''}), seed {cfg.seed}, "
          f"baseline {cfg.baseline} "
          f"({config.BASELINE_SAMPLES} times the samples)"
          f"{f', A/A control {cfg.control}' if cfg.control else ''}; writing {cfg.out_dir}", flush=True)
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
        self.visits = None
        self.cpu_times = environment.cpu_times()
        self.writing = 0.0  # seconds spent rewriting the files during the run
        self.last_took = 0.0  # seconds the last rewrite took

    def meta(self, state):
        m = meta.make_meta(self.cfg, self.static, self.measurements, self.started, state, self.pinner.note,
                           self.visits.note() if self.visits else None, self.cpu_times)
        if self.visits:
            m["time"] = dict(self.visits.time_note(), **{"writing the files": {"seconds": round(self.writing, 2)}})
        return m

    def maybe(self):
        t0 = time.monotonic()
        if t0 - self.last < max(WRITE_EVERY_S, WRITE_SPACING * self.last_took):
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
        self.last_took = self.last - t0
        self.writing += self.last_took

    def last_write(self, state):
        """The files whole at the end; the tables' text."""
        m = self.meta(state)
        try:
            text = outputs.write_all(self.cfg.out_dir, self.measurements, self.ratios, m, self.cfg.order)
            self.error = None
            if os.path.realpath(os.path.dirname(self.cfg.out_dir)) == os.path.realpath(config.RESULTS):
                outputs.point_latest(self.cfg.out_dir)
            return text
        except OSError as e:
            self.error = e
            return outputs.rescue(self.cfg.out_dir, e, self.measurements, self.ratios, m, self.cfg.order)


class Visits:
    """The run's visits: the planned rounds over every block, then revisits of
    the blocks that need them, each block's cells one after the other."""

    def __init__(self, cfg, measurements, pinner, writer, launcher, progress):
        self.cfg, self.pinner, self.writer, self.launcher, self.progress = \
            cfg, pinner, writer, launcher, progress
        self.ratios = writer.ratios
        self.of = {m.cell: m for m in measurements}
        self.moved = {}      # block -> visits of it during which a CPU it ran on changed state
        self.revisited = {}  # block -> revisits made
        self.late = set()    # blocks that wanted a revisit the time budget had no room for
        self.spent = {}      # cell -> (seconds, visits) so far: what a revisit of it will cost
        self.started = time.monotonic()
        self.rounds_run = 0  # the planned rounds taken: fewer than cfg.rounds where the budget cut them
        self.work_loops = {}  # rounds.work_key -> W's loop count, from the first cell that measured it

    def block(self, rnd, cells):
        """One visit of a block: its cells in the order given, between two
        probes. Cells timed beside a partner need them too: a vCPU's slow
        state slows the partner and the row by different amounts
        (docs/measurements.md), so their ratio moves with it."""
        before = self.pinner.before_block()
        for c in cells:
            m = self.of[c]
            if rnd and m.status != "ok":
                self.progress.skip(rnd)
                continue
            self.progress.before(m, rnd)
            t0 = time.monotonic()
            key = rounds.work_key(c)
            rounds.measure(m, self.cfg, self.launcher, rnd, self.work_loops.get(key))
            loops = m.result.metrics.get("work_loops") if m.status == "ok" else None
            if loops is not None:
                self.work_loops.setdefault(key, int(loops))
            took = time.monotonic() - t0
            seconds, visits = self.spent.get(c, (0.0, 0))
            self.spent[c] = (seconds + took, visits + 1)
            self.progress.after(m, took, rnd)
            self.writer.maybe()
        many = any(c.threaded and c.threads > 1 for c in cells)
        if self.pinner.after_block(before, many):
            b = matrix.block_of(cells[0])
            self.moved[b] = self.moved.get(b, 0) + 1

    def planned(self):
        """The planned rounds; past the fewest that can mark a difference
        (stats.MIN_VISITS), a round starts only if the time budget has room
        for it, at what each cell's visits have cost so far: a run over its
        budget takes fewer rounds of every cell rather than none of some."""
        for rnd in range(self.cfg.rounds):
            if rnd >= stats.MIN_VISITS and self.cost(self.cfg.cells) > self.time_left():
                self.progress.rounds_cut(rnd, self.cfg.rounds, self.cfg.budget_s)
                break
            self.rounds_run = rnd + 1
            for cells in matrix.blocks(matrix.round_order(self.cfg.cells, rnd, self.cfg.seed)):
                self.block(rnd, cells)

    def cost(self, cells):
        """The seconds a visit of these cells takes: each one's visits so far."""
        return sum(s / n for s, n in (self.spent.get(c, (0.0, 1)) for c in cells))

    def time_left(self):
        """Seconds left of the run's time budget (cfg.budget_s), or infinity."""
        if self.cfg.budget_s is None:
            return float("inf")
        return self.cfg.budget_s - (time.monotonic() - self.started)

    def revisits(self):
        """Up to cfg.revisits more rounds over the cells that need one, the
        most needed block first while the revisits stay within REVISIT_SHARE
        of the planned visits and the run within its time budget (a block
        whose visits cost more than the time left is left out, a cheaper one
        may still fit): every round visits them in a new shuffled order, and
        a ratio's two cells stay in one round."""
        of_block = {}
        for c in self.cfg.cells:
            of_block.setdefault(matrix.block_of(c), []).append(c)
        self._revisit_rounds(of_block, int(REVISIT_SHARE * len(self.cfg.cells) * self.cfg.rounds))
        if self.late:
            self.progress.out_of_time(len(self.late), self.cfg.budget_s)

    def _revisit_rounds(self, of_block, visits_left):
        for extra in range(self.cfg.revisits):
            todo, left = [], self.time_left()
            for b, wanted in aggregate.to_revisit(self.ratios.of(list(self.of.values())), self.moved, self.revisited):
                cells = [c for c in of_block[b] if wanted is None or c in wanted]
                cost = self.cost(cells)
                if cost > left:
                    self.late.add(b)
                elif len(cells) <= visits_left:
                    todo += cells
                    visits_left -= len(cells)
                    left -= cost
                    self.revisited[b] = self.revisited.get(b, 0) + 1
            if not todo:
                return
            rnd = self.cfg.rounds + extra
            self.progress.revisit(extra, len(todo))
            for block in matrix.blocks(matrix.round_order(todo, rnd, self.cfg.seed)):
                self.block(rnd, block)

    def note(self):
        """What meta.json says of the revisits."""
        return {"limit": self.cfg.revisits, "blocks_revisited": len(self.revisited),
                "revisits": sum(self.revisited.values()),
                "visits_with_a_cpu_that_moved": sum(self.moved.values()),
                "budget_s": self.cfg.budget_s, "blocks_left_for_time": len(self.late),
                "planned_rounds_run": self.rounds_run}

    def time_note(self):
        """Where the run's time went (meta.json "time"): processes of each kind
        with their wall time, the time in samples, the CPU probes."""
        out = {k: {"processes": n, "seconds": round(s, 2), "ms_each": round(1000 * s / n, 1)}
               for k, (n, s) in sorted(self.launcher.spent.items()) if n}
        sampled = sum(sum(m.result.samples_ns) for m in self.of.values() if m.status == "ok") / 1e9
        out["in samples"] = {"seconds": round(sampled, 2)}
        out["CPU probes"] = {"probes": self.pinner.probes, "seconds": round(self.pinner.seconds, 2)}
        return out


def visit_all(cfg, measurements, pinner, writer):
    """Every visit of every round, then the revisits; raises KeyboardInterrupt on
    Ctrl-C or SIGTERM. writer.visits keeps what meta.json says of them."""
    progress = Progress(len(measurements), cfg.rounds, len(cfg.compilers) > 1)
    # the run folder's temporary space (mmap_file's files, which the strategy
    # unlinks as soon as they are mapped): gone at the end, also on Ctrl-C
    tmpdir = os.path.join(cfg.out_dir, "tmp")
    try:
        os.makedirs(tmpdir, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="allocmark-") as scratch:
            visits = Visits(cfg, measurements, pinner, writer, Launcher(cfg.timeout, scratch, tmpdir, pinner,
                                                                cfg.keep_allocator_env),
                            progress)
            writer.visits = visits
            visits.planned()
            visits.revisits()
    finally:
        pinning.place(None)  # the counting tables and the report: every CPU again
        shutil.rmtree(tmpdir, ignore_errors=True)
        progress.finish()


def run(cfg):
    """Measures the planned matrix; returns the exit status. The run folder is
    locked while the run writes it."""
    made = create_folder(cfg.out_dir)
    try:
        return measure(cfg, made)
    finally:
        runlock.release(cfg.out_dir)


def prepare(cfg):
    """What is known before the first cell: the machine (meta.json's static
    part) and the CPU the cells run on."""
    print_plan(cfg)
    static = meta.static_meta(cfg)
    warning = environment.warning(static["environment"]["unfriendly"])
    if warning:
        print(warning, file=sys.stderr, flush=True)
    layout.apply(cfg.layout)  # before the probes: they are cells too
    pinner = pinning.Pinner(cfg.probe_exe(), cfg.cpu)
    if pinner.cpu is not None:
        print(f"single-threaded cells run on CPU {pinner.cpu} ({pinner.note['why']})", flush=True)
    return static, pinner


def interrupted_before_measuring(cfg, made):
    """Ctrl-C before the first cell: nothing to keep, so no folder is left either."""
    runlock.release(cfg.out_dir)
    if made:
        runlock.remove_empty(cfg.out_dir)
    print(f"interrupted before the first cell: nothing measured"
          f"{', no run folder written' if not os.path.exists(cfg.out_dir) else ''}", flush=True)
    return EXIT_INTERRUPTED


def measure(cfg, made):
    prev = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        static, pinner = prepare(cfg)
    except KeyboardInterrupt:
        signal.signal(signal.SIGTERM, prev)
        return interrupted_before_measuring(cfg, made)
    measurements = [aggregate.Measurement(c) for c in cfg.cells]
    ratios = aggregate.Ratios(cfg.baseline, cfg.settings)
    writer = Writer(cfg, static, measurements, ratios, pinner)
    state = "finished"
    try:
        visit_all(cfg, measurements, pinner, writer)
    except KeyboardInterrupt:
        state = "interrupted"
    finally:
        signal.signal(signal.SIGTERM, prev)
    aggregate.finalize(measurements, cfg.settings)
    if state == "finished" and cfg.stats_tables:
        try:
            counting_tables.write(cfg)
        except KeyboardInterrupt:
            state = "interrupted"
    try:
        text = writer.last_write(state)
    except KeyboardInterrupt:  # during the last write, which left the files of the one before: again, saying so
        state = "interrupted"
        text = writer.last_write(state)
    print(text)
    if len(cfg.compilers) > 1:
        try:
            if crosscc.write(cfg.out_dir, list(cfg.compilers)):
                print(f"Cross-compiler tables: {os.path.join(cfg.out_dir, 'compilers.txt')} (compilers.md)")
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
