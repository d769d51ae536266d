"""gate.py: the regression gate of compare.py: which cells of a run moved
against a base run beyond the noise, and which cannot be judged. A cell is
judged on its ratio to the baseline row, paired by round inside each run, so
a machine that is faster or slower as a whole (another hour, another CI
runner) moves nothing; the change of a ratio between the runs is the
Hodges-Lehmann shift of the two runs' per-round log ratios, with its
Mann-Whitney interval. A cell moved when that whole interval lies beyond the
noise threshold (the margin, or the noise between the two runs where that is
larger; judge() says how). The noise is read from the A/A control row alone, which cannot have
moved: with at least FEW control cells of a kind (one thread, several
threads), NOISE_SDS robust standard deviations of its changes around none;
with fewer, how far its changes' intervals reach (the median over its cells
of each interval's far end). The changes under judgement never raise their own bar,
so a regression of many cells is as visible as one of a single cell. It
computes and says; compare.py decides the exit status."""
import math

from runner import aggregate, stats

# a change this many robust standard deviations of the control's changes
# from none is beyond the noise between the two runs (for normal noise, four
# are passed by chance once in 16,000 cells)
NOISE_SDS = 4.0
FEW = 10


def log_ratios(run, key, baseline):
    """The per-round log ratios of a cell to the baseline's cell of its block, in a run."""
    if key[1] == baseline:
        return []
    mine = aggregate.visits_in(run, key)
    base = aggregate.visits_in(run, (key[0], baseline) + tuple(key[2:]))
    return [math.log(mine[r] / base[r]) for r in sorted(set(mine) & set(base)) if mine[r] > 0 and base[r] > 0]


def kind(key):
    return "one thread" if key[4] == 1 else "several threads"


def robust_sd_about_none(values):
    """1.4826 x the median absolute value: the standard deviation of normal
    noise centred on no change, untouched by a few outliers."""
    return 1.4826 * stats.median([abs(v) for v in values]) if values else 0.0


class Change:
    __slots__ = ("key", "base_ratio", "ratio", "interval", "moved")

    def __init__(self, key, base_ratio, ratio, interval):
        self.key, self.base_ratio, self.ratio, self.interval = key, base_ratio, ratio, interval
        self.moved = False

    def reach(self):
        """How far from none the change's interval reaches, as a log ratio."""
        return max(abs(math.log(self.interval.low)), abs(math.log(self.interval.high)))


def changes(base, run, baseline):
    """[Change] of every cell both runs have a ratio for."""
    out = []
    for key in base.by_key:
        if key not in run.by_key or key[1] == baseline:
            continue
        a, x = log_ratios(base, key, baseline), log_ratios(run, key, baseline)
        if not a or not x:
            continue
        iv = stats.shift_interval(x, a)
        out.append(Change(key, math.exp(stats.median(a)), math.exp(stats.median(x)),
                          stats.Interval(math.exp(iv.estimate), math.exp(iv.low), math.exp(iv.high), iv.n,
                                         iv.reached)))
    return out


def unjudged(base, run, baseline):
    """[(key, why)] of the cells the base has a ratio for and the run has not:
    missing from it, failed in it, or its baseline cell failed or missing."""
    out = []
    for key in base.by_key:
        if key[1] == baseline or not log_ratios(base, key, baseline) or log_ratios(run, key, baseline):
            continue
        entry = run.by_key.get(key)
        if entry is None:
            why = "missing"
        elif entry["status"] != "ok":
            why = f"{entry['status']}" + (f" ({entry['reason']})" if entry.get("reason") else "")
        else:
            why = f"no ratio (its {baseline} cell failed or is missing)"
        out.append((key, why))
    return out


def broken(run):
    """Why a run as a whole cannot be judged ([] when it can): interrupted, or no cells."""
    out = []
    if run.meta.get("state") == "interrupted":
        cells = run.meta.get("cells") or {}
        out.append(f"the run was interrupted ({cells.get('not_run', '?')} of {cells.get('planned', '?')} "
                   f"cells not run)")
    if not run.by_key:
        out.append("the run has no cells")
    return out


def judge(found, margin, control=None):
    """Marks the changes that moved; returns {kind: noise threshold as a
    relative change}, read from the control row's changes (0 without any).
    With FEW control cells of a kind their changes show the whole noise of a
    change between the runs: a cell moved when its change is NOISE_SDS robust
    SDs of them from none and its interval lies beyond the margin. With fewer,
    no spread can be read from them, only how far their intervals reach: a cell
    moved when its whole interval lies beyond the median reach."""
    mine = {}
    for c in found:
        if c.key[1] == control:
            mine.setdefault(kind(c.key), []).append(c)
    every = [c for cs in mine.values() for c in cs]
    noise, by_spread = {}, {}
    for k in {kind(c.key) for c in found}:
        ctrl = mine.get(k) or every
        by_spread[k] = len(ctrl) >= FEW
        if by_spread[k]:
            noise[k] = math.expm1(NOISE_SDS * robust_sd_about_none([math.log(c.interval.estimate) for c in ctrl]))
        else:
            noise[k] = math.expm1(stats.median([c.reach() for c in ctrl])) if ctrl else 0.0
    for c in found:
        k = kind(c.key)
        limit = math.log1p(max(margin, noise[k]))
        low, high, est = (math.log(x) for x in (c.interval.low, c.interval.high, c.interval.estimate))
        if by_spread[k]:
            beyond = (est > limit and low > math.log1p(margin)) or (est < -limit and high < -math.log1p(margin))
        else:
            beyond = low > limit or high < -limit
        c.moved = c.interval.reached and beyond
    return noise


def signed(share):
    return f"{100 * share:+.1f}%"


def cell_text(k):
    extra = "" if (k[4], k[5]) == (1, 0.0) else f" threads {k[4]} param {k[5]:g}"
    return f"{k[0]} {k[1]} {k[2]} {k[3]}{extra}"


def report(found, noise, margin, baseline, control=None, lost=(), whole=()):
    """(text lines, number of cells that moved). lost: unjudged()'s cells;
    whole: broken()'s reasons."""
    moved = [c for c in found if c.moved]
    kinds = "; ".join(f"{k} {100 * v:.1f}%" for k, v in sorted(noise.items()))
    source = (f"read from the A/A control {control}, which cannot have moved: {NOISE_SDS:g} robust SDs of its "
              f"changes where it has {FEW} cells of a kind, and a cell moved when its change is beyond that and its "
              f"95% interval beyond the margin; with fewer, the median reach of its changes' intervals, and a cell "
              f"moved when its whole interval is beyond that") if control and \
        any(c.key[1] == control for c in found) else "no A/A control cells: the margin alone"
    lines = [f"Judged on each ratio to {baseline} against the margin ({100 * margin:g}%) and the noise between the "
             f"runs ({kinds or 'no cells'}), {source}."]
    if control:
        mine = [c for c in found if c.key[1] == control]
        lines.append(f"A/A control {control}: moved in {sum(c.moved for c in mine)} of {len(mine)} cells.")
    for c in moved:
        iv = c.interval
        lines.append(f"moved: {cell_text(c.key)}: {c.base_ratio:.3g} -> {c.ratio:.3g} "
                     f"({signed(iv.estimate - 1)} [{signed(iv.low - 1)}, {signed(iv.high - 1)}])")
    lines.append(f"{len(moved)} of {len(found)} cells moved beyond the noise.")
    for why in whole:
        lines.append(f"cannot be judged: {why}")
    for key, why in lost:
        lines.append(f"not judged: {cell_text(key)}: {why}")
    if lost:
        lines.append(f"{len(lost)} cell(s) of the base could not be judged in this run.")
    return lines, len(moved)


# ---- counts (counts.csv of make count): exact, so no noise to clear
# a cell moved when one of these figures changed by this share or more
COUNT_THRESHOLD = 0.01
COUNT_FIGURES = ("instructions_per_op", "est_cycles_per_op")


def _cell_words(e):
    return " ".join(str(e[k]) for k in ("compiler", "strategy", "workload", "size")) + \
        (f" param {e['param']:g}" if e.get("param") else "")


def count_changes(base, run, threshold=COUNT_THRESHOLD):
    """Counts of a run against a base's (typed counts.csv entries): ([lines of
    cells whose instructions or estimated cycles per operation moved by
    threshold or more], [lines of cells counted in the base but not in the run])."""
    now = {(e["compiler"], e["strategy"], e["workload"], e["size"], e["threads"], e["param"]): e for e in run}
    moved, lost = [], []
    for b in base:
        if b["status"] != "ok":
            continue
        e = now.get((b["compiler"], b["strategy"], b["workload"], b["size"], b["threads"], b["param"]))
        if not e or e["status"] != "ok":
            lost.append(f"{_cell_words(b)}: " + (f"{e['status']} ({e['reason']})" if e else "not in the run"))
            continue
        changes = [(c, e[c] / b[c] - 1) for c in COUNT_FIGURES if b[c] and e[c] is not None]
        far = [(c, x) for c, x in changes if abs(x) >= threshold - 1e-12]
        if far:
            moved.append(f"{_cell_words(b)}: " + ", ".join(f"{c} {b[c]:.6g} -> {e[c]:.6g} ({100 * x:+.2f}%)"
                                                           for c, x in far))
    return moved, lost
