"""gate.py: the regression gate of compare.py: which cells of a run moved
against a base run beyond the noise, and which cannot be judged. A cell timed
beside a partner is judged on its time over the partner's, sample by sample
inside each process, so a machine that is faster or slower as a whole (another
hour, another CI runner, a slow vCPU) moves nothing, and neither does another
cell of its block; a cell timed alone (several threads) on its ratio to the
baseline row, paired by round inside each run. The change between the runs is
the Hodges-Lehmann shift of the two runs' per-round log ratios, with its
Mann-Whitney interval; its z score is that shift over the standard error
its interval implies. Two runs can differ by more than their intervals say
(the machine's state over minutes): how much more, the factor k, is read
from the A/A control row alone, which cannot have moved (the robust SD of its
cells' z scores, at least 1), never from the changes under judgement, so a
regression of many cells is as visible as one of a single cell. A cell moved
when its z score is beyond CELL_SDS x k and its change beyond the margin; a
strategy moved as a whole when the median z score of its cells, as the z of
a median, is beyond WHOLE_SDS x k and its median change beyond the margin,
and then each of its cells that changed the same way beyond TOUCHED_SDS x k
and the margin, its interval clear of no change, moved too: a slower fast
path is seen in every cell it touches, though each alone is within a run's
noise. So are the cells of a strategy one of whose cells moved on its own:
once a row has changed beyond doubt in one cell, its cells that changed alike
moved too. A change to the partner's own row shows as every other paired
cell moving the other way.
It computes and says; compare.py decides the exit status."""
import math

from runfolder import aggregate, schema, stats

# z scores (a change over its standard error, then over k) a cell must pass:
# alone, among hundreds of cells of two runs of the same code (for normal
# noise, five are passed by chance once in 1.7 million cells)
CELL_SDS = 5.0
# a strategy over its cells (at least WHOLE_CELLS of a kind), and then each of its cells
WHOLE_SDS = 4.0
WHOLE_CELLS = 3
TOUCHED_SDS = 2.0
# control cells of a kind it takes to read k from them (fewer: from every
# control cell, and with fewer than that k = 1: the intervals are taken at
# their word)
FEW = 10
Z_OF_95 = 1.96
MEDIAN_SE = 1.2533  # the standard error of the median of n normal values, times sqrt(n), in SDs


def partner_logs(run, key):
    """(partner, {round: the median over the visit's samples of the log of the
    cell's time over its partner's beside it}) of a cell of a run, or (None, {})
    when the cell was not timed beside a partner."""
    samples = [s for s in run.samples_of.get(key, ())]
    if not samples or not samples[0].get("partner") or \
            any(s.get("partner_ns") is None or not s["ns"] or not s["partner_ns"] for s in samples):
        return None, {}
    if len({s["reps"] for s in samples}) != 1 or len({s["partner_reps"] for s in samples}) != 1:
        return None, {}
    return samples[0]["partner"], aggregate.partner_log_medians(
        [s["ns"] for s in samples], [s["partner_ns"] for s in samples], samples[0]["reps"],
        samples[0]["partner_reps"], [s["round"] for s in samples])


def log_ratios(run, key, baseline, partner=None):
    """The per-round log ratios a cell is judged on in a run: to its partner
    when it was timed beside `partner`, else to the baseline's cell of its block."""
    if partner:
        name, logs = partner_logs(run, key)
        return [logs[r] for r in sorted(logs)] if name == partner else []
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
    __slots__ = ("key", "against", "base_ratio", "ratio", "interval", "moved", "z")

    def __init__(self, key, against, base_ratio, ratio, interval):
        """against: the row the cell's ratios are to (its partner, or the baseline)."""
        self.key, self.against, self.base_ratio, self.ratio, self.interval = key, against, base_ratio, ratio, interval
        self.moved, self.z = False, 0.0  # judge() sets both

    def reach(self):
        """How far from none the change's interval reaches, as a log ratio."""
        return max(abs(math.log(self.interval.low)), abs(math.log(self.interval.high)))


def common_partner(base, run, key):
    """The partner a cell was timed beside in both runs, or None."""
    name, _ = partner_logs(base, key)
    return name if name and partner_logs(run, key)[0] == name else None


def asked(base, key, baseline):
    """Whether the gate judges a cell of the base: every cell but those that do
    not apply (skipped), the partner's own and, in a block timed without a
    partner, the baseline's (the others' ratios are to it)."""
    if base.by_key[key].get("status") == "skipped":
        return False
    partner = partner_logs(base, key)[0]
    return not (partner == key[1] or (not partner and key[1] == baseline))


def ok_in(run, key):
    return (run.by_key.get(key) or {}).get("status") == "ok"


def changes(base, run, baseline):
    """[Change] of every cell both runs finished (status ok) and have a ratio for."""
    out = []
    for key in base.by_key:
        if not (ok_in(base, key) and ok_in(run, key)):
            continue
        partner = common_partner(base, run, key)
        if partner == key[1] or (not partner and key[1] == baseline):
            continue
        a, x = log_ratios(base, key, baseline, partner), log_ratios(run, key, baseline, partner)
        if not a or not x:
            continue
        iv = stats.shift_interval(x, a)
        out.append(Change(key, partner or baseline, math.exp(stats.median(a)), math.exp(stats.median(x)),
                          stats.Interval(math.exp(iv.estimate), math.exp(iv.low), math.exp(iv.high), iv.n,
                                         iv.reached)))
    return out


def why(entry):
    return entry["status"] + (f" ({entry['reason']})" if entry.get("reason") else "")


def unjudged(base, run, baseline, found):
    """[(key, why)] of the cells of the base the gate judges (asked) that no
    change of found is of: failed in the base, missing from the run, failed
    in it, or without a ratio in one of them (its baseline cell failed or
    missing)."""
    judged = {c.key for c in found}
    out = []
    for key, entry in base.by_key.items():
        if key in judged or not asked(base, key, baseline):
            continue
        mine = run.by_key.get(key)
        if entry["status"] != "ok":
            reason = "failed in the base" + (f" ({entry['reason']})" if entry.get("reason") else "")
        elif mine is None:
            reason = "missing"
        elif mine["status"] != "ok":
            reason = why(mine)
        elif not log_ratios(base, key, baseline, partner_logs(base, key)[0]):
            reason = f"no ratio in the base (its {baseline} cell failed or is missing)"
        else:
            reason = f"no ratio (its {baseline} cell failed or is missing)"
        out.append((key, reason))
    return out


def other_inputs(base, run, found):
    """How many of the changes are of cells whose work differed between the
    runs (summary.csv's inputs: another seed, size or workload version)."""
    def inputs(r, key):
        return (r.by_key.get(key) or {}).get("inputs")
    return sum(1 for c in found if inputs(base, c.key) != inputs(run, c.key))


def common_seed(base, run):
    """The seed both runs were given (meta.json), or None when they differ or
    one does not say."""
    seed = base.meta.get("seed")
    return seed if seed is not None and seed == run.meta.get("seed") else None


def layout_note(base, run):
    """A line for two runs that placed their cells differently, else none: one
    layout an executable against one a process moves cells by itself."""
    a, b = schema.layout_mode(base.meta), schema.layout_mode(run.meta)
    if a == b:
        return []
    return [f"The runs placed their cells differently (layout {a} in the base, {b} in this run; docs/bench.md, "
            f"Layout): a cell may have moved with where its processes landed, not with the code."]


def broken(run, who="the run"):
    """Why a run as a whole cannot be judged ([] when it can): it did not
    finish (interrupted, died, still being written, or its state unknown), or
    it has no cells. who: how to name it ("the run", "the base")."""
    out = []
    state = run.meta.get("state")
    cells = run.meta.get("cells") if isinstance(run.meta.get("cells"), dict) else {}
    left = f"{cells.get('not_run', '?')} of {cells.get('planned', '?')} cells not run"
    if state == "interrupted":
        out.append(f"{who} was interrupted ({left})")
    elif state == "died":
        out.append(f"{who} died: meta.json says it is running, but its runner is gone (killed?); "
                   f"its files hold the cells done when they were last written")
    elif state == "running":
        runner = run.meta.get("runner") if isinstance(run.meta.get("runner"), dict) else {}
        out.append(f"{who} is still being written (its runner, pid {runner.get('pid', '?')} on "
                   f"{runner.get('host', '?')}, is at work): judge it when it has finished")
    elif state != "finished":
        out.append(f"{who} did not finish: meta.json says its state is {state!r}, not 'finished'"
                   if state is not None else f"{who}'s state is unknown: meta.json does not say it finished")
    if not run.by_key:
        out.append(f"{who} has no cells")
    return out


def control_moved(found, verdict, control):
    """Why the runs cannot be judged when the A/A control moved ([] when it did
    not): a row that cannot have moved did, so the host was noisier than
    the gate's bar assumes, and any other cell's move may be that noise."""
    mine = [c for c in found if c.key[1] == control]
    moved = sum(c.moved for c in mine)
    whole = any(w[0] == control for w in verdict.wholes)
    if not control or not (moved or whole):
        return []
    return [f"the A/A control {control} moved in {moved} of {len(mine)} cells"
            f"{' (and as a whole)' if whole else ''}: it cannot have moved, so the host was too noisy for the "
            f"gate to tell a regression from its noise; run the base and the change again on a quieter host"]


def standard_error(c):
    """The standard error of a change's log that its 95% interval implies."""
    return (math.log(c.interval.high) - math.log(c.interval.low)) / (2 * Z_OF_95)


def z_scores(found):
    """{id(change): its log over its standard error}. The error is at least the
    median of its strategy's cells of its kind: an interval of a few visits is
    now and then far too narrow by chance, and the cells of one row spread alike."""
    errors = {}
    for c in found:
        errors.setdefault((c.key[1], kind(c.key)), []).append(standard_error(c))
    floor = {k: stats.median(v) for k, v in errors.items()}
    out = {}
    for c in found:
        se = max(standard_error(c), floor[(c.key[1], kind(c.key))])
        out[id(c)] = math.log(c.interval.estimate) / se if se > 0 else 0.0
    return out


class Verdict:
    """What judge() found: k per kind (how many times more the runs differ
    than their intervals say, from the control), its source per kind, and
    the strategies that moved as a whole: [(strategy, kind, median change as
    a ratio, its z over k, cells)]."""

    def __init__(self):
        self.k, self.k_source, self.wholes = {}, {}, []


def judge(found, margin, control=None):
    """Marks the changes that moved (module docstring); returns a Verdict."""
    v = Verdict()
    z_of = z_scores(found)
    mine = {}
    for c in found:
        if c.key[1] == control:
            mine.setdefault(kind(c.key), []).append(z_of[id(c)])
    every = [z for zs in mine.values() for z in zs]
    for k in sorted({kind(c.key) for c in found}):
        zs = mine.get(k) if len(mine.get(k) or ()) >= FEW else every if len(every) >= FEW else None
        v.k[k] = max(1.0, robust_sd_about_none(zs)) if zs else 1.0
        v.k_source[k] = (f"{len(zs)} control cells" if zs else
                         f"{len(every)} control cell(s), fewer than {FEW}: the intervals taken at their word")
    limit = math.log1p(margin)
    for c in found:
        c.z = z = z_of[id(c)] / v.k[kind(c.key)]
        c.moved = c.interval.reached and abs(z) >= CELL_SDS and abs(math.log(c.interval.estimate)) >= limit
    by_strategy = {}
    for c in found:
        by_strategy.setdefault((c.key[1], kind(c.key)), []).append(c)
    for cells in by_strategy.values():
        touched(cells, limit)
    for (strategy, k), cells in sorted(by_strategy.items()):
        if len(cells) < WHOLE_CELLS:
            continue
        zs = [c.z for c in cells]
        whole = stats.median(zs) * math.sqrt(len(zs)) / MEDIAN_SE
        change = stats.median([math.log(c.interval.estimate) for c in cells])
        if abs(whole) < WHOLE_SDS or abs(change) < limit or change * whole <= 0:
            continue
        v.wholes.append((strategy, k, math.exp(change), whole, len(cells)))
        for c in cells:
            if changed_alike(c, whole > 0, limit):
                c.moved = True
    return v


def changed_alike(c, up, limit):
    """Whether a cell of a row that moved changed the same way (up: slower)
    by TOUCHED_SDS and the margin, its 95% interval clear of no change."""
    iv = c.interval
    clear = iv.low > 1.0 if up else iv.high < 1.0
    return (iv.reached and clear and (c.z > 0) == up and abs(c.z) >= TOUCHED_SDS and
            abs(math.log(iv.estimate)) >= limit)


def touched(cells, limit):
    """The cells of one strategy of one kind, after each was judged alone: when
    those that moved on their own agree on the direction, every other cell
    that changed alike (changed_alike) moved too. A row that changed beyond doubt in one cell has changed,
    and its code runs in the others: one extra loop in a fast path reads +77%
    where the cell allocates and nothing else, and 7-10% where allocation is a
    share of the work, too little for one cell alone among hundreds
    (docs/measurements.md)."""
    signs = {c.z > 0 for c in cells if c.moved}
    if len(signs) != 1:
        return
    up = signs.pop()
    for c in cells:
        if changed_alike(c, up, limit):
            c.moved = True


def signed(share):
    return f"{100 * share:+.1f}%"


def cell_text(k):
    extra = "" if (k[4], k[5]) == (1, 0.0) else f" threads {k[4]} param {k[5]:g}"
    return f"{k[0]} {k[1]} {k[2]} {k[3]}{extra}"


def report(found, verdict, margin, baseline, control=None, lost=(), whole=(), other=0, seed=None):
    """(text lines, number of cells that moved). verdict: judge()'s; lost:
    unjudged()'s cells; whole: broken()'s reasons; other: other_inputs();
    seed: common_seed()."""
    moved = [c for c in found if c.moved]
    partners = sorted({c.against for c in found if c.against != baseline})
    what = (f"each cell's time over its partner's beside it ({', '.join(partners)}; a change to the partner's own row "
            f"shows as every other such cell moving the other way), a cell timed alone on its ratio to {baseline}"
            if partners else f"each ratio to {baseline}")
    ks = "; ".join(f"{k} {verdict.k[k]:.2f} ({verdict.k_source[k]})" for k in sorted(verdict.k))
    lines = [f"Judged on {what}: a change's z score is its shift between the runs over the standard error its 95% "
             f"interval implies, over k, how many times more two runs differ than their intervals say, read from the "
             f"A/A control {control or '(none)'}, which cannot have moved: {ks or 'no cells'}. A cell moved when its "
             f"z is beyond {CELL_SDS:g} and its change beyond the margin ({100 * margin:g}%); a strategy moved as a "
             f"whole when the median z of its cells (at least {WHOLE_CELLS}), as the z of a median, is beyond "
             f"{WHOLE_SDS:g} and its median change beyond the margin, and then each of its cells that changed the "
             f"same way with z beyond {TOUCHED_SDS:g}, beyond the margin and its interval clear of no change moved "
             f"too; so did each such cell of a strategy one of whose cells moved on its own."]
    if other and seed is None:
        lines.append(f"The work differs between the runs in {other} of {len(found)} cells (their inputs: another "
                     f"seed, size or workload version): a change there may be the work's, not the code's. Give both "
                     f"runs one SEED.")
    elif other:  # one seed: what differs is what each run calibrates, or the workload itself
        lines.append(f"The work differs between the runs in {other} of {len(found)} cells, though both ran seed "
                     f"{seed} (their inputs: work each run calibrates, such as contention's loop between "
                     f"operations, or another size or workload version): a change there may be the work's, not the "
                     f"code's.")
    if control:
        mine = [c for c in found if c.key[1] == control]
        lines.append(f"A/A control {control}: moved in {sum(c.moved for c in mine)} of {len(mine)} cells.")
    for strategy, k, change, z, n in verdict.wholes:
        lines.append(f"moved as a whole: {strategy} ({k}): median change {signed(change - 1)} over its {n} cells "
                     f"(z {z:+.1f})")
    for c in moved:
        iv = c.interval
        lines.append(f"moved: {cell_text(c.key)}: {c.base_ratio:.3g} -> {c.ratio:.3g} of {c.against} "
                     f"({signed(iv.estimate - 1)} [{signed(iv.low - 1)}, {signed(iv.high - 1)}], "
                     f"z {c.z:+.1f})")
    lines.append(f"{len(moved)} of {len(found)} cells moved beyond the noise.")
    n = len(moved) or len(verdict.wholes)  # a strategy moved as a whole fails the gate, whatever its cells
    for why in whole:
        lines.append(f"cannot be judged: {why}")
    for key, why in lost:
        lines.append(f"not judged: {cell_text(key)}: {why}")
    if lost:
        lines.append(f"{len(lost)} cell(s) of the base could not be judged in this run.")
    return lines, n


# ---- counts (counts.csv of make count): exact, so no noise to clear
# a cell moved when one of these figures changed by this share or more
COUNT_THRESHOLD = 0.01
COUNT_FIGURES = ("instructions_per_op", "est_cycles_per_op")


def _cell_words(e):
    return " ".join(str(e[k]) for k in ("compiler", "strategy", "workload", "size")) + \
        (f" param {e['param']:g}" if e.get("param") else "")


def count_broken(meta, entries, who="the run"):
    """Why a count run as a whole cannot be judged ([] when it can): it did not
    finish (counts.json's status), or, for the base, it counted no cell."""
    out = []
    status = meta.get("status")
    if status == "interrupted":
        out.append(f"{who} was interrupted (counts.json)")
    elif status != "done":
        out.append(f"{who} did not finish: counts.json says its status is {status!r}, not 'done'")
    if who == "the base" and not any(e["status"] == "ok" for e in entries):
        out.append("the base has no counted cell: nothing to judge")
    return out


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
