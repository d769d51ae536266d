"""aggregate.py: from a cell's samples to its figures: what is known of a cell
(Measurement), its summary (median, interval, spread, the counts of its
-stats run) and the ratios of each strategy to a reference row. Pure
computation on numbers already measured: the runner calls it during a run,
regenerate.py on the samples.csv of a finished one."""
from runner import stats

# bootstrap resamples of a cell whose rounds are not all done: its interval is
# written to the files every few seconds and computed again with the full
# count (stats.RESAMPLES) once its last round is in, or when the run ends
RUNNING_RESAMPLES = 200

# Derived tables: each strategy against one reference row, per (threads, param):
# for contention, shared heaps against independent per-thread pools (as in
# BlazingMQ's pools); query_heap against system malloc, as OSRM's query heap
# is measured against the default allocator.
VERSUS = {"contention": "pool", "query_heap": "system"}


class Measurement:
    """What is known of one cell: status pending, ok, failed or skipped; the
    cell's answer (result: reps, ops_per_rep, samples_ns and the round of each,
    peak_rss, metrics ...), the -stats run's counts, and the summary."""

    def __init__(self, cell):
        self.cell = cell
        self.status = "pending"
        self.reason = ""
        self.result = None
        self.stats = None
        self.summary = None
        self.final = False  # every round done: the interval and ratios are the full bootstrap

    def fields(self):
        """The cell's key as the CSV writes it."""
        return self.cell.fields()

    def ops(self):
        return self.result["reps"] * (self.result.get("ops_per_rep") or 1)

    def per_op(self):
        ops = self.ops()
        return [ns / ops for ns in self.result["samples_ns"]]


def resamples(*measurements):
    return stats.RESAMPLES if all(m.final for m in measurements) else RUNNING_RESAMPLES


def summarize(m, seed):
    """The summary of an ok cell: {summary.csv column: number or None}."""
    r = m.result
    per_op = m.per_op()
    lo, hi = stats.median_ci(per_op, stats.seed_for(seed, *m.fields()), resamples(m))
    s = m.stats or {}
    peak, reserved = s.get("bytes_peak"), s.get("reserved_peak")
    overhead = (reserved / peak - 1) * 100 if peak and reserved else None
    return {
        "samples": len(per_op), "reps": r["reps"], "ops_per_rep": r.get("ops_per_rep", 1),
        "median_ns_per_op": stats.median(per_op), "min_ns_per_op": min(per_op),
        "ci_low_ns": lo, "ci_high_ns": hi, "cv": stats.cv(per_op),
        "peak_rss_bytes": r.get("peak_rss"), "bytes_requested": s.get("bytes_requested"),
        "bytes_peak": peak, "reserved_peak": reserved, "overhead_pct": overhead,
        "allocs": s.get("allocs"), "frees": s.get("frees"),
        "instructions_per_op": r.get("instructions_per_op"), "cycles_per_op": r.get("cycles_per_op"),
    }


def finalize(measurements, seed):
    """At the end of a run (also an interrupted one): the full bootstrap for
    the cells whose later rounds did not happen."""
    for m in measurements:
        if m.status == "ok" and not m.final:
            m.final = True
            m.summary = summarize(m, seed)


class Ratio:
    """A strategy's cell over a reference row's cell at the same point."""
    __slots__ = ("cell", "baseline", "ratio", "ci_low", "ci_high", "significant")

    def __init__(self, cell, baseline, ratio, ci_low, ci_high):
        self.cell, self.baseline = cell, baseline
        self.ratio, self.ci_low, self.ci_high = ratio, ci_low, ci_high
        self.significant = stats.significant(ci_low, ci_high)


def point(cell):
    """A cell's place in a table: everything in its key but the strategy."""
    return (cell.compiler, cell.workload, cell.size, cell.threads, cell.param)


class Ratios:
    """Each strategy's cell over the baseline's at the same point, each pair
    computed once per sample count (a later round adds samples)."""

    def __init__(self, baseline, seed):
        self.baseline, self.seed, self.done = baseline, seed, {}
        self.versus = {}  # workload -> Ratios against its VERSUS row

    def of(self, measurements):
        """[Ratio] of the ok cells whose baseline cell is ok, in the order given."""
        base = {point(m.cell): m for m in measurements if m.cell.strategy == self.baseline and m.status == "ok"}
        out = []
        for m in measurements:
            b = base.get(point(m.cell))
            if m.cell.strategy == self.baseline or m.status != "ok" or b is None:
                continue
            k = m.fields()
            memo = (tuple(k), len(m.result["samples_ns"]), len(b.result["samples_ns"]), resamples(m, b))
            if memo not in self.done:
                self.done[memo] = stats.ratio_ci(m.per_op(), b.per_op(),
                                                 stats.seed_for(self.seed, "ratio", *k), memo[-1])
            out.append(Ratio(m.cell, self.baseline, *self.done[memo]))
        return out

    def versus_rows(self, measurements):
        """Each strategy against its workload's VERSUS reference row."""
        out = []
        for workload, ref in VERSUS.items():
            mine = [m for m in measurements if m.cell.workload == workload]
            if mine:
                out += self.versus.setdefault(workload, Ratios(ref, self.seed)).of(mine)
        return out
