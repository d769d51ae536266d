"""rounds.py: one visit to a cell. Round 1 calibrates the repetitions, checks
the checksum and runs the -stats twin for the counts; each later round (and
each revisit of an unstable block) takes more samples with round 1's
repetitions and reference checksum. A failure in any round fails the cell.
The processes are started by cell_process.py."""
import os

from runner import aggregate, catalog, memlimit
from runner.cell_process import check_answer


def samples_in_round(samples, rounds, rnd):
    """The share of a cell's samples taken in round rnd (0-based): the first
    rounds take one more when samples do not divide evenly; a revisit after
    the planned rounds (rnd >= rounds) takes the smaller share."""
    return samples // rounds + (rnd < samples % rounds)


def cell_options(cell, seed, limit):
    """The options every process of a cell gets."""
    opts = ["--workload", cell.workload, "--size", str(cell.size), "--seed", str(seed)]
    if cell.threaded:
        opts += ["--threads", str(cell.threads)]
    if cell.param:
        opts += ["--param", repr(float(cell.param))]
    if limit:  # the cell caps itself: a preexec_fn here would cost a fork of this process
        opts += ["--mem-limit", str(limit)]
    return opts


def work_key(cell):
    """The cells that share W's loop count: contention's threads vary the
    contention, not the work between two operations."""
    return cell.compiler, cell.workload, cell.size, cell.param


def measure(m, cfg, launcher, rnd=0, work_loops=None):
    """One round of the cell of Measurement m. work_loops: W's loop count as
    the first cell of its kind measured it (a cell reports it as the metric
    work_loops), so that every row does the same work between operations."""
    cell = m.cell
    limit = cfg.mem_limits.get(cell.compiler)
    common = cell_options(cell, cfg.seed, limit)
    if work_loops is not None:
        common += ["--work-loops", str(work_loops)]
    cmd = [cfg.cell_exe(cell.compiler, cell.strategy)] + common + [
        "--samples", str(samples_in_round(cfg.samples, cfg.rounds, rnd)), "--min-ms", repr(cfg.min_ms)]
    if rnd:  # round 1's count, and its reference checksum: the cell need not compute it again
        cmd += ["--reps", str(m.result["reps"])]
        if m.result.get("partner_reps"):
            cmd += ["--partner-reps", str(m.result["partner_reps"])]
        if isinstance(m.result.get("expect"), int):
            cmd += ["--expect", str(m.result["expect"])]
    out, why = launcher.run(cmd, cell.threaded and cell.threads > 1, "later visits" if rnd else "first visits")
    if not why:
        why = check_answer(out)
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
            sout, swhy = launcher.run([exe] + common + ["--stats-only"], kind="-stats runs")
            if swhy:
                note = "stats run: " + swhy
            else:
                counted = sout.get("stats", {})
    out["sample_rounds"] = [0] * len(out.get("samples_ns", []))
    m.result, m.stats, m.reason = out, counted, note
    m.summary = aggregate.summarize(m, cfg.settings)
    m.status = "ok"


def add_round(m, out, why, rnd, settings=aggregate.Settings()):
    """A later round's samples join round 1's; a round that fails fails the cell:
    a crash or a wrong checksum in any process is the cell's result."""
    if not why and (out.get("status") != "ok" or out.get("reps") != m.result["reps"]):
        why = f"unexpected answer: status {out.get('status')}, reps {out.get('reps')}"
    if not why and (out.get("partner"), out.get("partner_reps")) != (m.result.get("partner"),
                                                                    m.result.get("partner_reps")):
        why = f"timed beside another partner than round 1 ({out.get('partner')}, {out.get('partner_reps')} reps)"
    if not why and out.get("inputs") != m.result.get("inputs"):
        why = f"ran other inputs than round 1 (digest {out.get('inputs')}, not {m.result.get('inputs')})"
    if why:
        m.status, m.reason, m.summary = "failed", f"round {rnd + 1}: {why}", None
        return
    r = m.result
    r["samples_ns"] = r["samples_ns"] + out["samples_ns"]
    if "partner_samples_ns" in r:
        r["partner_samples_ns"] = r["partner_samples_ns"] + out["partner_samples_ns"]
    r["sample_rounds"] = r["sample_rounds"] + [rnd] * len(out["samples_ns"])
    for kind in ("minor_faults", "major_faults"):
        r[kind] = (r.get(kind) or []) + (out.get(kind) or [None] * len(out["samples_ns"]))
    if out.get("peak_rss"):
        r["peak_rss"] = max(r.get("peak_rss") or 0, out["peak_rss"])
    m.summary = aggregate.summarize(m, settings)
