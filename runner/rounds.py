"""rounds.py: one visit to a cell. Round 1 calibrates the repetitions, checks
the checksum and runs the -stats twin for the counts; each later round (and
each revisit of an unstable block) takes more samples with round 1's
repetitions and oracle checksum. A failure in any round fails the cell.
The processes are started by cell_process.py, their command lines and
answers are cell_protocol.py's."""
import os

from runner import cell_protocol, config, layout, memlimit
from runfolder import aggregate, answer, catalog, stats
from runner.cell_protocol import check_answer


def samples_in_round(samples, rounds, rnd):
    """The share of a cell's samples taken in round rnd (0-based): the first
    rounds take one more when samples do not divide evenly; a revisit after
    the planned rounds (rnd >= rounds) takes the smaller share."""
    return samples // rounds + (rnd < samples % rounds)


# A later visit spends in its samples at most this many times what its planned
# samples take at --min-ms: a cell whose one repetition outlasts min_ms many
# times over (an ordered free list walked on every free) takes fewer samples a
# visit instead of holding up the run; its visits still count one each. The
# first visit, which calibrates, counts its own by the same rule
# (AM_VISIT_SLACK, cell/calibrate.h; test_rounds.VisitBudget holds them together).
VISIT_SLACK = 2.0


def samples_this_visit(answer, planned, min_ms):
    """The samples of a later visit to a cell whose first visit answered
    `answer`: the planned count, fewer when its samples (and its partner's)
    last longer than min_ms, at least one."""
    pair_ns = stats.median(answer.samples_ns)
    sides = 1
    if answer.is_paired():
        pair_ns += stats.median(answer.partner_samples_ns)
        sides = 2
    budget_ns = VISIT_SLACK * planned * sides * min_ms * 1e6
    return max(1, min(planned, int(budget_ns // pair_ns)))


def cell_command(exe, cell, seed, limit, work_loops=None, **more):
    """The command of one of the cell's processes (cell_protocol.command)."""
    return cell_protocol.command(exe, cell.workload, cell.size, seed=seed,
                                 threads=cell.threads if cell.threaded else 1, param=cell.param,
                                 mem_limit=limit, work_loops=work_loops, **more)


def trace_of(cfg, cell):
    """The trace file a cell of the workload trace:NAME replays, or None."""
    return cfg.traces.get(cell.workload)


def work_key(cell):
    """The cells that share W's loop count: contention's threads vary the
    contention, not the work between two operations."""
    return cell.compiler, cell.workload, cell.size, cell.param


def layout_mismatch(out, asked):
    """Why an answer cannot be kept under --layout fixed or shifted: a process
    whose addresses were drawn at random (something between the runner and
    the cell reset the persona), or that did not move its memory, would mix
    two kinds of layout in one cell."""
    said = out.get("layout")
    if asked == "random" or out.get("status") != "ok":
        return None
    if said == "random":
        return f"its addresses were drawn at random, though the run asked for --layout {asked}"
    if asked == "shifted" and said != "shifted":
        return f"it ran at layout {said or 'unknown'}, though the run asked for --layout shifted"
    return None


def measure(m, cfg, launcher, rnd=0, work_loops=None):
    """One round of the cell of Measurement m. work_loops: W's loop count as
    the first cell of its kind measured it (a cell reports it as the metric
    work_loops), so that every row does the same work between operations."""
    cell = m.cell
    limit = cfg.mem_limits.get(cell.compiler)
    later = {}
    if cell.threaded:  # timed alone: one sample a visit (config.THREADED_MIN_MS)
        samples, min_ms = 1, cfg.threaded_min_ms
    else:  # a trace's repetitions are short: longer samples (config.TRACE_MIN_MS)
        samples = samples_in_round(cfg.samples, cfg.rounds, rnd)
        min_ms = cfg.trace_min_ms if trace_of(cfg, cell) else cfg.min_ms
        if cell.strategy == cfg.baseline:
            samples *= config.BASELINE_SAMPLES
    if rnd:  # round 1's counts, and its oracle checksum: the cell need not compute it again
        later = {"reps": m.result.reps, "partner_reps": m.result.partner_reps, "expect": m.result.expect}
        samples = samples_this_visit(m.result, samples, min_ms)
    cmd = cell_command(cfg.cell_exe(cell.compiler, cell.strategy), cell, cfg.seed, limit, work_loops,
                       samples=samples, min_ms=min_ms, trace=trace_of(cfg, cell),
                       place=layout.place_of(cfg.layout, rnd), **later)
    out, why = launcher.run(cmd, cell.threaded and cell.threads > 1, "later visits" if rnd else "first visits")
    if not why:
        why = check_answer(out) or layout_mismatch(out, cfg.layout)
    if rnd:
        add_round(m, out, why, rnd, cfg.settings)
        return
    if why:
        if limit and ("out of memory" in why or why.startswith("crashed")):
            why += f", under the memory limit of {memlimit.human(limit)}"
        m.status, m.reason = "failed", why
        return
    if out.get("status") == "skipped":  # the workload does not apply to this strategy
        m.status, m.reason = "skipped", out.get("reason", "not applicable")
        return
    row = cfg.row(cell.strategy)
    if row and row.source == "system" and not catalog.served_by_its_library(row, out.get("malloc")):
        m.status = "failed"
        m.reason = (f"malloc served by {out.get('malloc') or 'an unknown library'}, not by "
                    f"{', '.join('lib' + n for n in catalog.library_names(row.libs)) or 'the C library'}")
        return
    # the cell counts as done only once everything about it is known, so an
    # interrupt during the -stats run leaves it pending, not half-filled
    note, counted = "", None
    if not cell.threaded:
        exe = cfg.cell_exe(cell.compiler, cell.strategy, stats_build=True)
        if not os.path.exists(exe):
            note = "no -stats binary"
        else:
            scmd = cell_command(exe, cell, cfg.seed, limit, work_loops, mode="stats-only",
                                trace=trace_of(cfg, cell))
            sout, swhy = launcher.run(scmd, kind="-stats runs")
            if swhy:
                note = "stats run: " + swhy
            else:
                counted = sout.get("stats", {})
    m.result, m.stats, m.reason = answer.Answer.from_json(out), counted, note
    m.summary = aggregate.summarize(m, cfg.settings)
    m.status = "ok"


def add_round(m, out, why, rnd, settings=aggregate.Settings()):
    """A later round's samples join round 1's; a round that fails fails the cell:
    a crash or a wrong checksum in any process is the cell's result."""
    if not why and out.get("status") != "ok":
        why = f"unexpected answer: status {out.get('status')}"
    if not why:
        why = m.result.mismatch(out)
    if why:
        m.status, m.reason, m.summary = "failed", f"round {rnd + 1}: {why}", None
        return
    m.result.join(out, rnd)
    m.summary = aggregate.summarize(m, settings)
