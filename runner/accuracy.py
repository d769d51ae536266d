"""accuracy.py: whether a finished run's one-thread tables agree with
themselves. Where precision asks whether two runs repeat, accuracy asks
whether a ratio says what its line's times say:
  - the partner as a yardstick: in each one-thread block, the median of the
    partner's time per repetition over the processes of each row, and how far
    apart those medians are across the rows;
  - each line's ratio against its time ratio (its median time over the
    baseline's): how many are more than 5% apart, and how many lie on
    opposite sides of 1 beyond the run's margin; in all, and by how the
    ratio was judged: through the partner, from the times where the
    partner moved, or from the times of rows timed alone; and the lines
    through the partner with the partner's own time ratio taken out (where
    the host moved the two rows' processes apart, the partner moved too);
  - what noise alone would make of the partner's medians: the same
    figure with each round's visits dealt to that round's rows at random;
  - the A/A control (a second build of its twin): its ratio to the twin per
    one-thread cell, and how many of its cells are marked.
It measures nothing; docs/measurements.md gives its figures for default runs.

  python3 -m runner.accuracy RUN [RUN ...]"""
import math
import random
import sys

from runfolder import aggregate, cells, rundir, stats
from runfolder.errors import RunError
from runfolder.schema import MEDIAN

APART = 0.05  # the goal's tolerance, for the partner's medians and a line's two ratios
NOISE_TRIALS = 100


def block(key):
    return key[:1] + key[2:]


def partner_medians(run):
    """{one-thread block: {row: the partner's median time per repetition over
    the row's processes}} of the cells timed beside a partner."""
    out = {}
    for key, samples in run.samples_of.items():
        per_rep = [s["partner_ns"] / s["partner_reps"] for s in samples if s.get("partner_ns") and s.get("partner_reps")]
        if per_rep:
            out.setdefault(block(key), {})[key[1]] = stats.median(per_rep)
    return out


def partner_visits(run):
    """{one-thread block: {round: {row: [the partner's time per repetition in
    each sample of that row's visit]}}}."""
    out = {}
    for key, samples in run.samples_of.items():
        for s in samples:
            if s.get("partner_ns") and s.get("partner_reps") and s.get("round") is not None:
                visit = out.setdefault(block(key), {}).setdefault(s["round"], {}).setdefault(key[1], [])
                visit.append(s["partner_ns"] / s["partner_reps"])
    return out


def partner_noise(run, trials=NOISE_TRIALS):
    """The blocks whose partner medians would be more than APART apart by
    noise alone: the mean count over trials where each round's visits are
    dealt to that round's rows at random (a partner no row bends, with the
    host's own noise, its drift from round to round kept). Seeded: the same
    folder gives the same figure."""
    rng = random.Random(1)
    blocks = [b for b in partner_visits(run).values() if len({row for rows in b.values() for row in rows}) > 1]
    total = 0
    for _ in range(trials):
        for rounds in blocks:
            per_row = {}
            for rows in rounds.values():
                names, visits = list(rows), list(rows.values())
                rng.shuffle(visits)
                for name, visit in zip(names, visits):
                    per_row.setdefault(name, []).extend(visit)
            total += spread([stats.median(v) for v in per_row.values()]) > APART
    return total / trials


def spread(values):
    return max(values) / min(values) - 1


def partner_figures(run):
    """(blocks, apart beyond APART, apart beyond 20%, apart beyond 50%, the
    blocks apart beyond APART whose ratios the tables judged without the partner)."""
    medians = partner_medians(run)
    judged_by_time = {block(rundir_key(r)) for r in run.ratios if r.get("through_partner") == 0}
    apart = [b for b, rows in medians.items() if len(rows) > 1 and spread(list(rows.values())) > APART]
    return (len(medians), len(apart), sum(spread(list(medians[b].values())) > 0.2 for b in apart),
            sum(spread(list(medians[b].values())) > 0.5 for b in apart), sum(b in judged_by_time for b in apart))


def rundir_key(r):
    return (r["compiler"], r["strategy"], r["workload"], r["size"], r["threads"], r["param"])


# how a line's ratio was judged (ratios.csv): through the partner timed beside
# both rows; from the times, the partner having moved between them; or from
# the times of rows timed alone (a threaded workload, even at one thread)
LINE_KINDS = ("through the partner", "from the times, the partner moved", "timed alone")


def line_kind(r):
    if r.get("through_partner"):
        return LINE_KINDS[0]
    return LINE_KINDS[1] if r.get("partner_shift") is not None else LINE_KINDS[2]


# the lines through the partner again, their time ratio divided by the
# partner's own (its median beside the row over its median beside the
# baseline): what the host did to the two rows' processes, which the partner
# timed too and the paired ratio leaves out
HOST_OUT = "through the partner, the partner's own time ratio taken out"


def line_figures(run, margin, partners=None):
    """{kind, HOST_OUT or "all": [one-thread lines with a ratio, more than
    APART from their time ratio, on opposite sides of 1 beyond the margin]}:
    a partner that bends shows in the lines through it; the lines timed alone
    disagree with their times only as the host's drift from round to round
    makes the paired ratio and the ratio of medians differ. partners:
    partner_medians(run), for HOST_OUT."""
    figures = {kind: [0, 0, 0] for kind in ("all",) + LINE_KINDS + (HOST_OUT,)}
    edge = math.log1p(margin)
    partners = partners or {}
    for r in run.ratios:
        if r["threads"] != 1 or r["ratio"] is None:
            continue
        key = rundir_key(r)
        mine, base = run.by_key.get(key), run.by_key.get(key[:1] + (r["baseline"],) + key[2:])
        if not mine or not base or not mine.get(MEDIAN) or not base.get(MEDIAN):
            continue
        by_time = math.log(mine[MEDIAN] / base[MEDIAN])
        ratio = math.log(r["ratio"])
        count(figures, ("all", line_kind(r)), ratio, by_time, edge)
        beside = partners.get(block(key), {})
        if line_kind(r) == LINE_KINDS[0] and key[1] in beside and r["baseline"] in beside:
            count(figures, (HOST_OUT,), ratio, by_time - math.log(beside[key[1]] / beside[r["baseline"]]), edge)
    return figures


def count(figures, kinds, ratio, by_time, edge):
    """one line more in each of kinds: (lines, off, opposite), ratio and by_time as logs"""
    line = (1, abs(ratio - by_time) > math.log1p(APART),
            (ratio > edge and by_time < -edge) or (ratio < -edge and by_time > edge))
    for kind in kinds:
        figures[kind] = [a + int(b) for a, b in zip(figures[kind], line)]


def lines_text(lines, off):
    return f"{lines - off} of {lines} ({(lines - off) / lines if lines else 0:.1%})"


def control_figures(run, settings):
    """(one-thread cells of the A/A control, beyond APART from 1, beyond 2%,
    cells marked, the largest ratio's distance from 1) or None without a control."""
    control = (run.meta.get("control") or {})
    row, twin = control.get("row"), control.get("twin")
    if not row or not twin:
        return None
    ms = {(m.cell.compiler, m.cell.strategy, m.cell.workload, m.cell.size, m.cell.threads, m.cell.param): m
          for m in cells.measurements_of(run) if m.status == "ok"}
    n = beyond = beyond2 = marked = 0
    worst = 0.0
    for key, m in ms.items():
        if key[1] != row or key[4] != 1:
            continue
        t = ms.get(key[:1] + (twin,) + key[2:])
        iv = aggregate.ratio_of(m, t) if t else None
        if iv is None:
            continue
        n += 1
        d = abs(math.log(iv.estimate))
        worst = max(worst, math.exp(d) - 1)
        beyond += d > math.log1p(APART)
        beyond2 += d > math.log1p(0.02)
        marked += stats.is_difference(iv, settings.margin)
    return n, beyond, beyond2, marked, worst


def describe(folder):
    run = rundir.load_strict(folder, need=("summary.csv", "samples.csv", "ratios.csv"))
    settings = aggregate.Settings.from_meta(run.meta)
    blocks, apart, apart20, apart50, judged = partner_figures(run)
    figures = line_figures(run, settings.margin, partner_medians(run))
    lines, off, opposite = figures["all"]
    out = [f"{run.run_id}:",
           f"  partner: its medians beside the rows more than {APART:.0%} apart in {apart} of {blocks} one-thread "
           f"blocks ({blocks - apart} within: {(blocks - apart) / blocks:.1%}); beyond 20% in {apart20}, beyond 50% in "
           f"{apart50}; of those {apart}, {judged} judged without it (a ratio from the times)" if blocks else
           "  partner: no cell timed beside one",
           f"  partner by noise alone (each round's visits dealt to its rows at random, {NOISE_TRIALS} times): "
           f"{partner_noise(run):.1f} blocks more than {APART:.0%} apart" if blocks else "",
           f"  lines: ratio within {APART:.0%} of its time ratio in {lines - off} of {lines} one-thread lines "
           f"({(lines - off) / lines if lines else 0:.1%}); on opposite sides of 1 beyond the margin: {opposite}",
           "  lines by how their ratio was judged: " + "; ".join(
               f"{kind} {lines_text(*figures[kind][:2])}, {figures[kind][2]} opposite"
               for kind in LINE_KINDS if figures[kind][0]),
           f"  lines {HOST_OUT}: {lines_text(*figures[HOST_OUT][:2])}, {figures[HOST_OUT][2]} opposite"
           if figures[HOST_OUT][0] else ""]
    c = control_figures(run, settings)
    if c:
        n, beyond, beyond2, marked, worst = c
        out.append(f"  A/A control: within {APART:.0%} of 1 in {n - beyond} of {n} one-thread cells, beyond 2% in "
                   f"{beyond2}; marked in {marked} ({marked / n if n else 0:.1%}); farthest {worst:.1%} from 1")
    return "\n".join(line for line in out if line)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    try:
        for folder in argv:
            print(describe(folder))
    except RunError as e:
        print(f"accuracy: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
