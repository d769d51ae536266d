"""aggregate.py: from a cell's samples to its figures: what is known of a cell
(Measurement), its summary (median over its visits, interval, spread, the
counts of its -stats run, unstable or not) and the ratios of each strategy
to the row it is compared against, paired by round. Pure computation on numbers already
measured: the runner calls it during a run, regenerate.py on the samples.csv
of a finished one. The statistics themselves are stats.py's."""
import collections
import dataclasses
import math

from runfolder import schema, stats

@dataclasses.dataclass(frozen=True)
class Settings:
    """How the figures are judged; meta.json records them ("statistics").
    margin: a ratio is marked as a difference only when it is at least this
    far from 1 (and its interval excludes 1); it is unstable when its
    interval is too wide to say either that or that it is within the margin
    (stats.is_undecided). unstable_width: a cell whose 95% interval is wider
    than this (high / low - 1) is unstable: its visits disagree too much for
    it to repeat. A cell's interval holds a shift of the whole machine, a ratio's
    does not: a block is visited again for its ratios (to_revisit)."""
    margin: float = 0.02
    unstable_width: float = 0.10

    def as_meta(self):
        return {"level": stats.LEVEL, "margin": self.margin, "unstable_width": self.unstable_width,
                "cell_interval": "order statistics of the visits' medians (sign test, interpolated)",
                "ratio_interval": "order statistics (sign test, interpolated) of the log ratios of the visits "
                                  "paired by round; estimate: their median. Cells timed beside one partner: "
                                  "each visit's log ratio is the difference of the two cells' medians of "
                                  "sample-by-sample log ratios to the partner",
                "process_spread": "robust SD (1.4826 MAD) of the logs of a cell's visit medians, in percent"}

    @classmethod
    def from_meta(cls, meta):
        s = (meta or {}).get("statistics") or {}
        base = cls()
        return cls(margin=s.get("margin", base.margin), unstable_width=s.get("unstable_width", base.unstable_width))


class Measurement:
    """What is known of one cell: status pending, ok, failed or skipped; the
    cell's answer (result: a answer.Answer), the -stats run's counts,
    and the summary."""

    def __init__(self, cell):
        self.cell = cell
        self.status = "pending"
        self.reason = ""
        self.result = None
        self.stats = None
        self.summary = None

    def fields(self):
        """The cell's key as the CSV writes it."""
        return self.cell.fields()

    def ops(self):
        return self.result.ops()

    def per_op(self):
        ops = self.ops()
        return [ns / ops for ns in self.result.samples_ns]

    def visits(self):
        """{round: the median time per op of that visit's samples}."""
        return visit_medians(self.per_op(), self.result.sample_rounds)

    def partner(self):
        """The row this cell was timed beside in its processes, or None."""
        return self.result.partner if self.result.is_paired() else None

    def partner_visits(self):
        """{round: the median of the partner's time per repetition in that
        visit's samples}: the yardstick this cell's ratios go through."""
        r = self.result
        return visit_medians([ns / r.partner_reps for ns in r.partner_samples_ns], r.sample_rounds)

    def partner_logs(self):
        """{round: the median, over that visit's pairs of samples, of the log
        of the row's time per op over its partner's}: what each process says
        of the row against the partner timed beside it, sample by sample."""
        r = self.result
        return partner_log_medians(r.samples_ns, r.partner_samples_ns, r.reps, r.partner_reps, r.sample_rounds)


def partner_log_medians(samples_ns, partner_ns, reps, partner_reps, rounds):
    """{round: the median of the log of each sample's time per repetition over
    its partner's beside it} (the operations of a repetition are the same on
    both sides)."""
    logs = [math.log((ns / reps) / (pn / partner_reps)) for ns, pn in zip(samples_ns, partner_ns)]
    return visit_medians(logs, rounds)


def visit_medians(per_op, rounds):
    """{round: the median of that round's values}: a process is one
    observation of the cell, however many samples it took."""
    by_round = {}
    for rnd, x in zip(rounds, per_op):
        by_round.setdefault(rnd, []).append(x)
    return {rnd: stats.median(xs) for rnd, xs in by_round.items()}


def visits_in(run, key):
    """{round: median ns per op} of a cell of a run folder read by rundir."""
    samples = [s for s in run.samples_of.get(key, ()) if s["ns_per_op"] is not None]
    return visit_medians([s["ns_per_op"] for s in samples], [s["round"] for s in samples])


def summarize(m, settings=Settings()):
    """The summary of an ok cell: {summary.csv column: number or None}. Its
    median is the median of its visits' medians, every process counting once;
    the interval is that median's, from the order statistics of the visits."""
    r = m.result
    per_op = m.per_op()
    iv = stats.median_interval(list(m.visits().values()))
    s = m.stats or {}
    peak, reserved = s.get("bytes_peak"), s.get("reserved_peak")
    overhead = (reserved / peak - 1) * 100 if peak and reserved else None
    return {
        "samples": len(per_op), "visits": iv.n, "reps": r.reps, "ops_per_rep": r.ops_per_rep,
        schema.MEDIAN: iv.estimate, "min_ns_per_op": min(per_op),
        "ci_low_ns": iv.low, "ci_high_ns": iv.high, "cv": stats.cv(per_op),
        "unstable": stats.relative_width(iv) > settings.unstable_width,
        "peak_rss_bytes": r.peak_rss, "bytes_requested": s.get("bytes_requested"),
        "bytes_peak": peak, "reserved_peak": reserved, "overhead_pct": overhead,
        "allocs": s.get("allocs"), "frees": s.get("frees"),
        "instructions_per_op": r.instructions_per_op, "cycles_per_op": r.cycles_per_op,
        "minor_faults_per_op": faults_per_op(m, "minor_faults"), "major_faults_per_op": faults_per_op(m, "major_faults"),
        "inputs": r.inputs or "", "malloc": r.malloc or "",
        "process_spread": process_spread(list(m.visits().values())),
    }


def process_spread(visit_values):
    """The cell's own spread from process to process, in percent: a robust
    SD (1.4826 MAD) of the logs of its visits' medians; None under 3 visits.
    A property of the row on this machine (glibc's heap differs from process
    to process), not a fault of the run."""
    logs = [math.log(v) for v in visit_values if v > 0]
    if len(logs) < 3:
        return None
    mid = stats.median(logs)
    return (math.exp(1.4826 * stats.median([abs(x - mid) for x in logs])) - 1) * 100


def faults_per_op(m, kind):
    """Page faults of one kind per operation over all the cell's samples (a
    getrusage delta around each, outside the timed region); None when the
    cell did not count them (an older cell)."""
    faults = getattr(m.result, kind)
    if not faults or len(faults) != len(m.result.samples_ns) or any(f is None for f in faults):
        return None
    return sum(faults) / (m.ops() * len(faults))


def finalize(measurements, settings=Settings()):
    """The summary of every ok cell again, from all its visits (at the end of a
    run, also an interrupted one, or of a regeneration)."""
    for m in measurements:
        if m.status == "ok":
            m.summary = summarize(m, settings)


class Ratio:
    """A strategy's cell over the cell of the row it is compared against at the same point: the
    paired estimate and interval, how many rounds paired, whether it is
    marked as a difference and whether it is unstable (undecided: its
    interval too wide to say what the margin asks, stats.is_undecided);
    partner_shift: the partner's time beside the cell over its time beside
    the other (None: not both timed beside one partner), and through_partner:
    whether the ratio went through the partner (it did not where the partner
    moved, partner_moved)."""
    __slots__ = ("cell", "baseline", "ratio", "ci_low", "ci_high", "pairs", "significant", "unstable",
                 "partner_shift", "through_partner")

    def __init__(self, cell, baseline, judged, settings):
        iv = judged.interval
        self.cell, self.baseline = cell, baseline
        self.ratio, self.ci_low, self.ci_high, self.pairs = iv.estimate, iv.low, iv.high, iv.n
        self.significant = stats.is_difference(iv, settings.margin)
        self.unstable = stats.is_undecided(iv, settings.margin)
        self.partner_shift, self.through_partner = judged.partner_shift, judged.through_partner


def point(cell):
    """A cell's place in a table: everything in its key but the strategy."""
    return (cell.compiler, cell.workload, cell.size, cell.threads, cell.param)


def is_unstable(m):
    return bool(m.summary and m.summary.get("unstable"))


class Ratios:
    """Each strategy's cell over the baseline's at the same point, from the
    rounds both visited; each pair computed once per count of visits."""

    def __init__(self, baseline, settings=Settings()):
        self.baseline, self.settings, self.done = baseline, settings, {}
        self.versus = {}  # workload -> Ratios against its versus row

    def of(self, measurements, only=None):
        """[Ratio] of the ok cells whose baseline cell is ok, in the order given;
        only: the strategies to take (default every one but the baseline)."""
        base = {point(m.cell): m for m in measurements if m.cell.strategy == self.baseline and m.status == "ok"}
        out = []
        for m in measurements:
            b = base.get(point(m.cell))
            if m.cell.strategy == self.baseline or m.status != "ok" or b is None:
                continue
            if only is not None and m.cell.strategy not in only:
                continue
            memo = (m.cell.key(), len(m.result.samples_ns), len(b.result.samples_ns))
            if memo not in self.done:
                self.done[memo] = judge(m, b)
            judged = self.done[memo]
            if judged.interval is not None:
                out.append(Ratio(m.cell, self.baseline, judged, self.settings))
        return out

    def versus_rows(self, measurements, facts):
        """Each strategy against the row its workload names as versus (its
        --list entry; facts: cell_protocol.workload_facts), per (threads, param)."""
        out = []
        for workload, fact in facts.items():
            ref = fact.get("versus")
            if not ref:
                continue
            mine = [m for m in measurements if m.cell.workload == workload]
            if mine:
                out += self.versus.setdefault(workload, Ratios(ref, self.settings)).of(mine)
        return out


# The partner is a yardstick only while the row beside it cannot bend it: its
# time beside two cells may differ by this much before their ratio is taken
# from their times instead (docs/bench.md, "When the partner moves").
PARTNER_TOLERANCE = 0.05

Judged = collections.namedtuple("Judged", "interval partner_shift through_partner")


def partner_shift(m, b):
    """The partner's time per repetition beside m over beside b, paired by
    round, as an Interval (the median over the rounds both visited), or None
    where the two were not timed beside one partner."""
    partner = m.partner()
    if not partner or partner != b.partner():
        return None
    return stats.paired_ratio(m.partner_visits(), b.partner_visits())


def partner_moved(shift):
    """Whether the partner moved beyond its noise (its interval, from enough
    rounds to reach its confidence, clear of 1) and by more than
    PARTNER_TOLERANCE: a few rounds on a noisy host leave it where it was."""
    if shift is None:
        return False
    beyond_noise = shift.reached and (shift.low > 1 or shift.high < 1)
    return beyond_noise and abs(math.log(shift.estimate)) > math.log1p(PARTNER_TOLERANCE)


def judge(m, b):
    """m's cell over b's, a Judged. Cells timed beside one partner: through
    it, each round's log ratio to the partner (measured sample by sample
    within the process) less the other cell's of the same round, so that
    what moves a whole process moves both sides and cancels; else, and where
    the partner's own time beside the two moved (partner_moved: the row
    beside it bent the yardstick, and the ratio through it would be off by
    as much), the visits' medians, paired by round. The interval: the sign
    test's over the rounds.
    Even when b is the partner's own row, the ratio goes through b's visits:
    the same code in another place of another executable does not take the
    same time (docs/bench.md, "The baseline")."""
    shift = partner_shift(m, b)
    estimate = shift.estimate if shift else None
    if shift is not None and not partner_moved(shift):
        return Judged(stats.paired_log_ratio(m.partner_logs(), b.partner_logs()), estimate, True)
    return Judged(stats.paired_ratio(m.visits(), b.visits()), estimate, False)


def ratio_of(m, b):
    """m's cell over b's: judge's interval (None when no round paired)."""
    return judge(m, b).interval


def control_count(ratio_entries, control):
    """(marked, compared) for the A/A control's ratios: how many of the control
    row's ratios were marked as differences, out of how many."""
    mine = [r for r in ratio_entries if r["strategy"] == control and r["ratio"] is not None]
    return sum(bool(r["significant"]) for r in mine), len(mine)


def to_revisit(ratios, moved, revisited):
    """What to visit again, the most needed block first: [(block, cells)].
    A block with undecided ratios (their interval too wide to say what the
    margin asks; the widest first) wants the cells of those ratios and their
    baseline's cells, which pair with them by round: a visit of a cell whose
    ratio is decided would buy little. A block during a visit of which a CPU
    it ran on changed state (moved: block -> such visits) more often than it
    was revisited (revisited: block -> count) wants every cell (cells None)."""
    need, cells = {}, {}
    for r in ratios:
        if r.unstable:
            b = schema.block_of(r.cell)
            need[b] = max(need.get(b, 0.0), r.ci_high / r.ci_low if r.ci_low > 0 else float("inf"))
            cells.setdefault(b, set()).update((r.cell, r.cell._replace(strategy=r.baseline)))
    for b, n in moved.items():
        if n > revisited.get(b, 0):
            need.setdefault(b, 0.0)
            cells[b] = None
    return [(b, cells[b]) for b in sorted(need, key=lambda b: (-need[b], str(b)))]


class Group:
    """The strategies of one point the run cannot tell apart from the fastest:
    the fastest by median, and each other whose ratio to it (ratio_of, paired
    by round) is not marked as a difference. ranked: every ok strategy by
    median; to_fastest: strategy -> that ratio's Interval (None when no round paired)."""
    __slots__ = ("fastest", "members", "ranked", "to_fastest")

    def __init__(self, members, ranked, to_fastest):
        self.fastest, self.members, self.ranked, self.to_fastest = ranked[0], members, ranked, to_fastest


GROUP_RULE = ("the fastest group: the fastest strategy by median and every strategy whose ratio to it "
              "(paired by round, as the ratios to the baseline) is not marked as a difference")


def fastest_groups(measurements, settings=Settings()):
    """{point: Group} over the ok cells with a summary, members ranked by median."""
    by_point = {}
    for m in measurements:
        if m.status == "ok" and m.summary and m.summary.get(schema.MEDIAN) is not None:
            by_point.setdefault(point(m.cell), []).append(m)
    out = {}
    for p, ms in by_point.items():
        ms.sort(key=lambda m: (m.summary[schema.MEDIAN], m.cell.strategy))
        best = ms[0]
        members, to = [best.cell.strategy], {}
        for m in ms[1:]:
            iv = ratio_of(m, best)
            to[m.cell.strategy] = iv
            if not stats.is_difference(iv, settings.margin):
                members.append(m.cell.strategy)
        out[p] = Group(members, [m.cell.strategy for m in ms], to)
    return out
