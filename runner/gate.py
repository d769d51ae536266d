"""gate.py: the regression gate of compare.py: which cells of a run moved
against a base run beyond the noise. A cell is judged on its ratio to the
baseline row, paired by round inside each run, so a machine that is faster
or slower as a whole (another hour, another CI runner) moves nothing; the
change of a ratio between the runs is the Hodges-Lehmann shift of the two
runs' per-round log ratios, with its Mann-Whitney interval. A cell moved when
that whole interval lies beyond the noise threshold: the margin, or the
noise between the two runs where that is larger, NOISE_SDS robust standard
deviations of every such change of the same kind (one thread, several
threads; all the changes where a kind has fewer than FEW). The spread is
taken around the changes' median, so a change every ratio shares (the
baseline itself moved) still stands out. It computes and says; compare.py
decides the exit status."""
import math

from runner import aggregate, stats

# a change this many robust standard deviations of all the cells' changes
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


def robust_sd(values):
    """1.4826 x the median absolute deviation: the standard deviation of normal
    noise, untouched by a few cells that really moved."""
    if not values:
        return 0.0
    mid = stats.median(values)
    return 1.4826 * stats.median([abs(v - mid) for v in values])


class Change:
    __slots__ = ("key", "base_ratio", "ratio", "interval", "moved")

    def __init__(self, key, base_ratio, ratio, interval):
        self.key, self.base_ratio, self.ratio, self.interval = key, base_ratio, ratio, interval
        self.moved = False


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


def judge(found, margin):
    """Marks the changes that moved; returns {kind: noise threshold as a relative change}."""
    spread = {}
    for c in found:
        spread.setdefault(kind(c.key), []).append(math.log(c.interval.estimate))
    every = [v for vs in spread.values() for v in vs]
    noise = {k: math.expm1(NOISE_SDS * robust_sd(v if len(v) >= FEW else every)) for k, v in spread.items()}
    for c in found:
        limit = math.log1p(max(margin, noise[kind(c.key)]))
        iv = c.interval
        c.moved = iv.reached and (math.log(iv.low) > limit or math.log(iv.high) < -limit)
    return noise


def signed(share):
    return f"{100 * share:+.1f}%"


def report(found, noise, margin, baseline, control=None):
    """(text lines, number of cells that moved)."""
    moved = [c for c in found if c.moved]
    kinds = "; ".join(f"{k} {100 * v:.1f}%" for k, v in sorted(noise.items()))
    lines = [f"Judged on each ratio to {baseline}; a cell moved when the whole 95% interval of its change lies "
             f"beyond both the margin ({100 * margin:g}%) and the noise between the runs ({NOISE_SDS:g} robust SDs "
             f"of the cells' changes: {kinds or 'no cells'})."]
    if control:
        mine = [c for c in found if c.key[1] == control]
        lines.append(f"A/A control {control}: moved in {sum(c.moved for c in mine)} of {len(mine)} cells.")
    for c in moved:
        k = c.key
        extra = "" if (k[4], k[5]) == (1, 0.0) else f" threads {k[4]} param {k[5]:g}"
        iv = c.interval
        lines.append(f"moved: {k[0]} {k[1]} {k[2]} {k[3]}{extra}: {c.base_ratio:.3g} -> {c.ratio:.3g} "
                     f"({signed(iv.estimate - 1)} [{signed(iv.low - 1)}, {signed(iv.high - 1)}])")
    lines.append(f"{len(moved)} of {len(found)} cells moved beyond the noise.")
    return lines, len(moved)
