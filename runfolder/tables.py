"""tables.py: turns a run's summary and ratio entries into the tables people read:
one table per block (compiler, workload, size, threads, param), a line per
strategy ranked by time: its median time per op with its 95% interval, its
ratio to the baseline with its interval and marks, its process spread, and
whether it is in the block's fastest group. Plain text (tables.txt) and
Markdown (tables.md), each legend given once; the wide form (a line per
block, a column per strategy) as CSV for spreadsheets (matrix.csv). It does no statistics of its own, and takes numbers:
entries are dicts with the columns of summary.csv / ratios.csv (schema.py) in
their types (size and threads ints, param and figures floats, None where empty)."""
import collections
import textwrap

from runfolder import aggregate, schema, yardstick
from runfolder.schema import fmt

NOT_SIGNIFICANT = "~"
UNSTABLE = "?"
# what the marks of a table mean: the run's margin and unstable width, and
# the line on the A/A control (or None)
Marks = collections.namedtuple("Marks", "margin unstable_width control", defaults=(0.02, 0.10, None))


def percent(share):
    return f"{100 * share:g}%"


def marks_legend(marks):
    """What ~ and ? mean, and how often the A/A control was marked."""
    text = (f"{NOT_SIGNIFICANT} = not marked as a difference (the interval holds 1, the ratio is within "
            f"{percent(marks.margin)} of 1, or fewer than 6 rounds paired); {UNSTABLE} after a ratio = "
            f"undecided (even after revisits its 95% interval is too wide to say whether it is at least "
            f"{percent(marks.margin)} from 1 or within it)")
    return text + (f"; {marks.control}" if marks.control else "")


def ratio_legend(baseline, marks):
    return ("median time per operation over the cell's visits (one process each); ratio = strategy / "
            f"{baseline} (above 1: slower than {baseline}) from the visits of the two in the same rounds, "
            "with its 95% interval; " + marks_legend(marks))


def time_legend(marks):
    return ("median time per operation over the cell's visits (one process each), with its 95% interval; "
            "spread: the cell's own from process to process (a robust SD of its visits), a finding about "
            "its row on this machine")

_UNITS = [(1.0, "ns"), (1e3, "\u00b5s"), (1e6, "ms"), (1e9, "s")]


def _three_digits(v):
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def variant_suffix(threads, param):
    """" (threads 4, param 100)" for a table title: what differs from one thread
    and param 0, or "" where nothing does."""
    extra = []
    if threads != 1:
        extra.append(f"threads {threads}")
    if param:
        extra.append(f"param {fmt(param)}")
    return f" ({', '.join(extra)})" if extra else ""


def _unit(ns):
    """(scale, unit) that keeps 1 to 3 digits of ns before the point."""
    for i, (scale, unit) in enumerate(_UNITS):
        # move up a unit where rounding to three digits would reach 1000
        if i == len(_UNITS) - 1 or float(_three_digits(ns / scale)) < 1000:
            return scale, unit
    raise AssertionError("unreachable")


def format_time(ns):
    """Nanoseconds with a unit that keeps 1 to 3 digits before the point."""
    if ns is None:
        return "-"
    scale, unit = _unit(ns)
    return f"{_three_digits(ns / scale)} {unit}"


def _bound(v):
    # a bound just off 1 keeps a third decimal, or [0.65, 1.00] would read as containing 1
    text = _three_digits(v)
    return f"{v:.3f}" if text == "1.00" and v != 1 else text


def format_ratio(ratio, low, high, significant, unstable=False):
    mark = "" if significant else NOT_SIGNIFICANT
    return f"{mark}{_three_digits(ratio)} [{_bound(low)}, {_bound(high)}]" + (UNSTABLE if unstable else "")


OVERSUBSCRIBED = "*"
IN_GROUP = "="
WIDTH = 100  # a run's tables fit a terminal this wide


def _tp_key(r):
    return (r["threads"], r["param"])


def _at(r, strategy=None):
    """An entry's place: (compiler, workload, size, threads, param, strategy)."""
    return (r["compiler"], r["workload"], r["size"], r["threads"], r["param"], strategy or r["strategy"])


def block_of(r):
    """An entry's block: (compiler, workload, size, threads, param)."""
    return (r["compiler"], r["workload"], r["size"], r["threads"], r["param"])


def _tp_label(threads, param, cpus):
    mark = OVERSUBSCRIBED if cpus and threads > cpus else ""
    p = f"{param:g}"
    return f"{threads}{mark} / {p}"


def cell_text(r):
    if r is None:
        return "-"
    if r["status"] == "skipped":
        return "n/a"
    if r["status"] != "ok":
        return "failed"
    return format_time(r[schema.MEDIAN])


def _over_note(cpus, lines):
    if cpus and any(OVERSUBSCRIBED in line[0] for line in lines):
        return f"; {OVERSUBSCRIBED} = more threads than the {cpus} CPUs (oversubscribed)"
    return ""


def time_interval(r):
    """"12.3 ns [12.1, 12.6]": the median and its interval in the median's unit."""
    med, lo, hi = r[schema.MEDIAN], r.get("ci_low_ns"), r.get("ci_high_ns")
    if lo is None or hi is None or not med:
        return format_time(med)
    scale, _ = _unit(med)
    return f"{format_time(med)} [{_three_digits(lo / scale)}, {_three_digits(hi / scale)}]"


def block_legend(baseline, marks, compared):
    text = (f"{IN_GROUP} in the first column: in {aggregate.GROUP_RULE}; time = median time per operation "
            "over the cell's visits "
            "(one process each) with its 95% interval; spread = the row's own process-to-process spread "
            "(robust SD of its visits' medians: a finding about the row on this machine, not a fault of the run)")
    if compared:
        text += (f"; ratio = strategy / {baseline} (above 1: slower than {baseline}) from the visits of the two "
                 "in the same rounds, each through the partner row timed beside it, with its 95% interval")
    return text + "; " + marks_legend(marks)


def _status_rank(r):
    return 0 if r["status"] == "ok" and r[schema.MEDIAN] is not None else 1 if r["status"] != "skipped" else 2


COUNTS_LEGEND = ("instr/op = instructions per operation under valgrind, cyc/base = its estimated cycles "
                 "over the baseline's (make count: counts.txt says how; exact, so no interval); - = not counted")


def _count_cells(entry, counts, baseline):
    """The instr/op and cyc/base of a cell from counts ({cell key: counts.csv entry})."""
    key = schema.key_of(entry)
    e = counts.get(key)
    if not e or e.get("status") != "ok" or e.get("instructions_per_op") is None:
        return ["-", "-"]
    base = counts.get((key[0], baseline) + key[2:])
    ratio = e["est_cycles_per_op"] / base["est_cycles_per_op"] \
        if base and base.get("status") == "ok" and base.get("est_cycles_per_op") else None
    return [f"{e['instructions_per_op']:.4g}", "-" if ratio is None else f"{ratio:.3f}"]


# a replayed trace's block answers both halves of its user's question: the
# time, and the memory each row took for the program's allocations
TRACE_PREFIX = "trace:"
MEMORY_LEGEND = ("reserved/live = bytes the strategy held at its peak over the trace's own peak live bytes "
                 "(the -stats build's reserved_peak over bytes_peak; - where the strategy cannot say, as "
                 "malloc); peak RSS = the measuring process's, the decoded trace included")


def _memory_cells(r):
    reserved, live = r.get("reserved_peak"), r.get("bytes_peak")
    return [f"{reserved / live:.2f}" if reserved and live else "-", bytes_text(r.get("peak_rss_bytes"))]


def build(summary, ratios, baseline, strategies=None, cpus=None, marks=Marks(), groups=None, counts=None):
    """Tables as dicts {title, header, lines, legend}; lines of strings: one
    table per block (compiler, workload, size, threads, param), a line per
    strategy ranked by median time: its time with interval, its ratio to the
    baseline with interval and marks, its process spread. summary and ratios
    are lists of typed entries (see the top); strategies orders equal times
    and the blocks' strategies; groups: block -> the strategies of its
    fastest group (aggregate.fastest_groups), marked with IN_GROUP; cpus
    marks oversubscribed blocks; marks: what the legend says of the marks;
    counts: {cell key: counts.csv entry} of make count, whose figures a block
    with any counted cell shows beside the times."""
    counts = counts or {}
    order = list(strategies or [])
    for r in summary:
        if r["strategy"] not in order:
            order.append(r["strategy"])
    blocks = {}
    for r in summary:
        blocks.setdefault(block_of(r), []).append(r)
    ratio_at = {_at(r): r for r in ratios}
    groups = groups or {}
    tables = []
    for key, cells in blocks.items():  # insertion order: the caller's order of cells
        compiler, workload, size, threads, param = key
        compared = any(r["strategy"] == baseline for r in cells)
        cells = sorted(cells, key=lambda r: (_status_rank(r), r[schema.MEDIAN] or 0, order.index(r["strategy"])))
        members = set(groups.get(key, ()))
        base = next((r for r in cells if r["strategy"] == baseline and _status_rank(r) == 0), None)
        lines, apart = [], []
        for r in cells:
            ok = _status_rank(r) == 0
            time = time_interval(r) if ok else cell_text(r)
            q = ratio_at.get(_at(r)) if compared and ok and base and r is not base else None
            off = yardstick.time_apart(q, r[schema.MEDIAN], base[schema.MEDIAN]) if q else None
            if off:
                time += yardstick.APART
                apart.append((r["strategy"], off, q.get("partner_shift")))
            line = [IN_GROUP if r["strategy"] in members else "", r["strategy"], time]
            if compared:
                line.append("baseline" if r["strategy"] == baseline else _ratio_text(ratio_at.get(_at(r))))
            spread = r.get("process_spread")
            line.append(f"{spread:.1f}%" if ok and spread is not None else "-")
            lines.append(line)
        counted = any(schema.key_of(r) in counts for r in cells)
        if counted:
            for line, r in zip(lines, cells):
                line += _count_cells(r, counts, baseline)
        replayed = workload.startswith(TRACE_PREFIX)
        if replayed:
            for line, r in zip(lines, cells):
                line += _memory_cells(r)
        header = ["", "strategy", "time/op [95%]"] + ([f"/{baseline} [95%]"] if compared else []) + ["spread"] + \
            (["instr/op", "cyc/base"] if counted else []) + (["reserved/live", "peak RSS"] if replayed else [])
        over = f" {OVERSUBSCRIBED}" if cpus and threads > cpus else ""
        note = yardstick.partner_note([ratio_at[_at(r)] for r in cells if _at(r) in ratio_at]) if compared else ""
        moved = f" ({yardstick.MOVED})" if note else ""
        note = "; ".join(n for n in (note, yardstick.apart_note(apart, baseline)) if n)
        tables.append({"title": f"{compiler}: {workload} size {size}" + variant_suffix(threads, param) + over + moved,
                       "header": header, "lines": lines, "align": "ll" + "r" * (len(header) - 2),
                       "legend": block_legend(baseline, marks, compared) + ("; " + COUNTS_LEGEND if counted else "") +
                       ("; " + MEMORY_LEGEND if replayed else "") +
                       (f"; {OVERSUBSCRIBED} = more threads than the {cpus} CPUs (oversubscribed)" if over else ""),
                       "note": note})
    return tables


def matrix_csv(summary, ratios, baseline, strategies=None):
    """The wide form for spreadsheets: (header, lines), a line per block, each
    strategy's median ns per op, then each one's ratio to the baseline with its
    interval and whether it is marked as a difference."""
    order = list(strategies or [])
    for r in summary:
        if r["strategy"] not in order:
            order.append(r["strategy"])
    compared = [s for s in order if s != baseline]
    ratio_at = {_at(r): r for r in ratios}
    blocks = {}
    for r in summary:
        blocks.setdefault(block_of(r), {})[r["strategy"]] = r
    header = ["compiler", "workload", "size", "threads", "param"] + [f"{s} ns/op" for s in order]
    for s in compared:
        header += [f"{s}/{baseline}", f"{s}/{baseline} low", f"{s}/{baseline} high", f"{s}/{baseline} marked"]
    lines = []
    for key, cells in blocks.items():
        line = list(key)
        for s in order:
            r = cells.get(s)
            line.append(r[schema.MEDIAN] if r and r["status"] == "ok" else (r["status"] if r else None))
        for s in compared:
            q = ratio_at.get(key + (s,))
            line += [q[k] for k in ("ratio", "ci_low", "ci_high", "significant")] if q else [None] * 4
        lines.append(line)
    return header, lines


def _ratio_text(q):
    if q is None or q.get("ratio") is None:
        return "-"
    text = format_ratio(q["ratio"], q["ci_low"], q["ci_high"], bool(q["significant"]), bool(q.get("unstable")))
    return text + (yardstick.FROM_TIMES if yardstick.partner_moved(q) else "")


def build_versus(summary, versus, strategies=None, cpus=None, shared=None, marks=Marks()):
    """Derived tables: each strategy's time over the row it is compared against (ratios
    with baseline = that row), a line per (threads, param) at each size.
    shared: strategy -> True when its cells used one heap from every thread."""
    order = list(strategies or [])
    for r in versus:
        if r["strategy"] not in order:
            order.append(r["strategy"])
    status = {_at(r): r["status"] for r in summary}
    groups = {}
    for r in versus:
        groups.setdefault((r["compiler"], r["workload"], r["size"], r["baseline"]), []).append(r)
    tables = []
    for (compiler, workload, size, ref), cells in groups.items():
        present = [s for s in order if any(r["strategy"] == s for r in cells)]
        # skipped cells of the same run show as n/a
        for (c, w, sz, _, _, s), st in status.items():
            if (c, w, sz) == (compiler, workload, size) and st == "skipped" and s not in present and s != ref:
                present.append(s)
        by_tp = {}
        for r in cells:
            by_tp.setdefault(_tp_key(r), {})[r["strategy"]] = r
        for (c, w, sz, t, p, s), st in status.items():
            if (c, w, sz) == (compiler, workload, size) and s != ref:
                by_tp.setdefault((t, p), {})
        def label(s):
            if shared is None or s not in shared:
                return f"{s}/{ref}"
            return f"{s}/{ref} ({'shared' if shared[s] else 'own heaps'})"
        header = ["threads / param"] + [label(s) for s in present]
        out_lines = []
        for tp in sorted(by_tp):
            line = [_tp_label(tp[0], tp[1], cpus)]
            for s in present:
                q = by_tp[tp].get(s)
                if q is None:
                    st = [v for (c, w, sz, t, p, s2), v in status.items()
                          if (c, w, sz, s2) == (compiler, workload, size, s) and (t, p) == tp]
                    line.append("n/a" if st and st[0] == "skipped" else "-")
                else:
                    line.append(_ratio_text(q))
            out_lines.append(line)
        legend = (f"slowdown against {ref} (time per op / {ref}'s, above 1: slower) from the visits of the two "
                  f"in the same rounds, with its 95% interval; {marks_legend(marks._replace(control=None))}; "
                  f"shared = one heap for every thread, own heaps = a heap per thread; n/a = does not apply" +
                  _over_note(cpus, out_lines))
        tables.append({"title": f"{compiler}: {workload} against {ref} (size {size})", "header": header,
                       "lines": out_lines, "legend": legend})
    return tables


def bytes_text(b):
    return "-" if not b else f"{float(b) / (1 << 20):.1f}MB"


def _chunks(header, lines, width):
    """Splits columns into parts that fit in width; every part keeps column 0."""
    widths = [max(len(header[i]), *(len(r[i]) for r in lines)) if lines else len(header[i])
              for i in range(len(header))]
    parts, cur, used = [], [0], widths[0]
    for i in range(1, len(header)):
        if len(cur) > 1 and used + 2 + widths[i] > width:
            parts.append(cur)
            cur, used = [0], widths[0]
        cur.append(i)
        used += 2 + widths[i]
    parts.append(cur)
    return parts, widths


def _legends(tables, once):
    """Each table's legend, or None where the same one was already given."""
    seen = set()
    for t in tables:
        yield None if once and t["legend"] in seen else t["legend"]
        seen.add(t["legend"])


def _justify(text, width, align):
    return text.ljust(width) if align == "l" else text.rjust(width)


def render_text(tables, width=160, legend_once=False):
    """Plain text, columns right-aligned (or as a table's "align" says),
    split into parts that fit width; legend_once: a legend said once only."""
    out = []
    for t, legend in zip(tables, _legends(tables, legend_once)):
        out.append(f"== {t['title']} ==")
        parts, widths = _chunks(t["header"], t["lines"], width)
        align = t.get("align") or "r" * len(t["header"])
        for b in parts:
            out.append("  ".join(_justify(t["header"][i], widths[i], align[i]) for i in b).rstrip())
            for r in t["lines"]:
                out.append("  ".join(_justify(r[i], widths[i], align[i]) for i in b).rstrip())
            out.append("")
        if t.get("note"):
            out.append(textwrap.fill("Note: " + t["note"], width, break_on_hyphens=False))
            out.append("")
        if legend:
            out.append(textwrap.fill(legend, width, break_on_hyphens=False))
            out.append("")
    return "\n".join(out)


def _md_cell(text):
    # a lone ~ can start strikethrough in some Markdown renderers
    return text.replace("~", "\\~")


def render_markdown(tables, legend_once=False, width=WIDTH):
    """Markdown tables, split like render_text into parts whose lines fit
    width (each part a table of its own, keeping column 0), legends wrapped."""
    out = []
    for t, legend in zip(tables, _legends(tables, legend_once)):
        out.append(f"### {t['title']}")
        out.append("")
        align = t.get("align") or "r" * len(t["header"])
        cells = [[_md_cell(c) for c in r] for r in t["lines"]]
        parts = _chunks_by(t["header"], cells, width)[0] if width else [list(range(len(t["header"])))]
        for b in parts:
            out.append("| " + " | ".join(t["header"][i] for i in b) + " |")
            out.append("|" + "|".join(":---" if align[i] == "l" else "---:" for i in b) + "|")
            for r in cells:
                out.append("| " + " | ".join(r[i] for i in b) + " |")
            out.append("")
        if t.get("note"):
            note = f"Note: {t['note']}."
            out.append(textwrap.fill(note, width, break_on_hyphens=False) if width else note)
            out.append("")
        if legend:
            out.append(textwrap.fill(legend + ".", width, break_on_hyphens=False) if width else legend + ".")
            out.append("")
    return "\n".join(out)


def _chunks_by(header, lines, width):
    """_chunks for Markdown lines: a column's longest text w takes w + 3 ("| "
    before it, a space after), at least the 5 of its "---:|", the line 1 more."""
    widths = [max(len(header[i]), 2, *(len(r[i]) for r in lines)) + 3 for i in range(len(header))]
    parts, cur, used = [], [0], widths[0] + 1
    for i in range(1, len(header)):
        if len(cur) > 1 and used + widths[i] > width:
            parts.append(cur)
            cur, used = [0], widths[0] + 1
        cur.append(i)
        used += widths[i]
    parts.append(cur)
    return parts, widths
