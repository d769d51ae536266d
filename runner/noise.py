"""noise.py: where a run's spread is, and what visits and samples buy: from
a run's samples.csv (visits of several samples each) and meta.json ("time"),
the spread inside a process, between the processes of a cell, and between
the paired visits of a cell and the baseline's (for cells timed beside a
partner also of each sample over the partner's, as their ratios are
computed); then, for each count of
samples per visit, the spread of a pair and the time a visit costs, and so
the width a ratio's interval would have for the same time. It measures
nothing; docs/bench.md (visits and samples) tells how its figures chose the
defaults.

  python3 -m runner.noise RUN"""
import math
import sys

from runfolder import rundir, stats
from runfolder.errors import RunError


def sd(xs):
    """A robust standard deviation: 1.4826 x the median absolute deviation (the
    standard deviation of normal data, untouched by a few preempted samples)."""
    if len(xs) < 2:
        return None
    mid = stats.median(xs)
    return 1.4826 * stats.median([abs(x - mid) for x in xs])


def visits_of(run, key, over_partner=False):
    """{round: [log ns per op of its samples, in the order taken]}; with
    over_partner, the log of each over the partner's sample beside it ({}
    for a cell timed alone)."""
    out = {}
    for s in run.samples_of.get(key, ()):
        if not s["ns_per_op"]:
            continue
        if not over_partner:
            out.setdefault(s["round"], []).append(math.log(s["ns_per_op"]))
        elif s["partner_ns"] and s["partner_reps"]:
            partner = s["partner_ns"] / s["partner_reps"]
            out.setdefault(s["round"], []).append(math.log(s["ns"] / s["reps"] / partner))
    return out


def first(vs, k):
    """Each visit's value from its first k samples (their median)."""
    return {r: stats.median(xs[:k]) for r, xs in vs.items() if len(xs) >= k}


def kind(key):
    return "one thread" if key[4] == 1 else "several threads"


def spreads(run, baseline, over_partner=False):
    """{kind: {figure: [one value a cell]}}: the log standard deviations inside a
    process, between processes (their medians), and of the pairs with the
    baseline, the last for each count of samples a visit (pair_1, pair_2 ...).
    over_partner: of each sample over its partner's beside it (the cells
    timed beside a partner only), as their ratios are computed."""
    out = {}
    for key, entry in run.by_key.items():
        if entry["status"] != "ok":
            continue
        vs = visits_of(run, key, over_partner)
        if not vs:
            continue
        figures = out.setdefault(kind(key) + (", over the partner" if over_partner else ""), {})
        within = [abs(x - stats.median(xs)) for xs in vs.values() if len(xs) > 2 for x in xs]
        if within:
            # the median distance to the visit's own median: a third of them are 0 with 3 samples
            figures.setdefault("inside a process", []).append(1.4826 * stats.median(within))
        between = sd([stats.median(xs) for xs in vs.values()])
        if between is not None:
            figures.setdefault("between processes", []).append(between)
        if key[1] == baseline:
            continue
        base = visits_of(run, (key[0], baseline) + tuple(key[2:]), over_partner)
        most = min([len(xs) for xs in vs.values()] + [len(xs) for xs in base.values()] or [0])
        for k in range(1, most + 1):
            a, b = first(vs, k), first(base, k)
            d = sd([a[r] - b[r] for r in set(a) & set(b)])
            if d is not None:
                figures.setdefault(f"pair_{k}", []).append(d)
    return out


def costs(meta, samples):
    """(ms of a later visit's fixed part, ms of one sample) from meta.json's
    "time" and the samples, or None. A later visit's samples are counted, not
    taken from the plan: the baseline takes more, a threaded cell one, a slow
    cell fewer."""
    t = meta.get("time") or {}
    later, sampled = t.get("later visits"), (t.get("in samples") or {}).get("seconds")
    if not later or not later.get("processes") or sampled is None or not samples:
        return None
    sample_ms = 1000 * sampled / len(samples)
    per_later_visit = sum(1 for s in samples if s["round"] > 1) / later["processes"]
    return later["ms_each"] - per_later_visit * sample_ms, sample_ms


def report(run):
    meta = run.meta
    baseline = meta.get("baseline")
    per_visit = max(1, (meta.get("samples") or 1) // max(1, meta.get("rounds") or 1))
    lines = [f"Run {run.run_id}: {meta.get('rounds')} rounds of {per_visit} sample(s) of >= {meta.get('min_ms')} ms; "
             f"robust standard deviations of the logs (1.4826 MAD), the median over cells (and the upper quartile)"]
    figures = spreads(run, baseline)
    figures.update(spreads(run, baseline, over_partner=True))
    cost = costs(meta, run.samples)
    for k, fig in sorted(figures.items()):
        lines.append(f"{k}:")
        for name in ("inside a process", "between processes"):
            if fig.get(name):
                v = sorted(fig[name])
                lines.append(f"  {name:20s} {100 * stats.median(v):5.2f}% ({100 * stats.percentile(v, 0.75):.2f}%)")
        for s in range(1, per_visit + 1):
            v = sorted(fig.get(f"pair_{s}") or [])
            if not v:
                continue
            text = f"  pair with {baseline}, {s} sample(s) a visit: {100 * stats.median(v):5.2f}% " \
                   f"({100 * stats.percentile(v, 0.75):.2f}%)"
            if cost:
                fixed, sample_ms = cost
                visit_ms = fixed + s * sample_ms
                # the same time in visits of s samples: the interval's width goes with sd * sqrt(visit cost)
                text += f"; a visit {visit_ms:.1f} ms; relative width for equal time " \
                        f"{stats.median(v) * math.sqrt(visit_ms):.3f}"
            lines.append(text)
    if cost:
        lines.append(f"time: a later visit's fixed part (process, warm-up run) {cost[0]:.1f} ms, a sample "
                     f"{cost[1]:.1f} ms (meta.json time)")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        run = rundir.load_strict(argv[0], need=("summary.csv", "samples.csv", "meta.json"))
    except RunError as e:
        print(f"noise: {e}", file=sys.stderr)
        return 2
    print(report(run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
