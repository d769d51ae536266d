"""tables.py: turns a run's summary and ratio entries into the tables people read:
one table per compiler and workload, a line per size, the median time per op
of each strategy, then each strategy's ratio to the baseline with its 95%
interval and its marks. Plain text (for the terminal and tables.txt) and
Markdown (tables.md). It does no statistics of its own, and takes numbers:
entries are dicts with the columns of summary.csv / ratios.csv (schema.py) in
their types (size and threads ints, param and figures floats, None where empty)."""
import collections

from runner.schema import fmt

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
            f"{percent(marks.margin)} from 1 or within it); {UNSTABLE} after a time = its interval is wider "
            f"than {percent(marks.unstable_width)}")
    return text + (f"; {marks.control}" if marks.control else "")


def ratio_legend(baseline, marks):
    return ("median time per operation over the cell's visits (one process each); ratio = strategy / "
            f"{baseline} (above 1: slower than {baseline}) from the visits of the two in the same rounds, "
            "with its 95% interval; " + marks_legend(marks))


def time_legend(marks):
    return (f"median time per operation over the cell's visits (one process each); {UNSTABLE} = unstable "
            f"(its median's interval is wider than {percent(marks.unstable_width)})")

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


def format_time(ns):
    """Nanoseconds with a unit that keeps 1 to 3 digits before the point."""
    if ns is None:
        return "-"
    for i, (scale, unit) in enumerate(_UNITS):
        v = ns / scale
        last = i == len(_UNITS) - 1
        # move up a unit where rounding to three digits would reach 1000
        if last or float(_three_digits(v)) < 1000:
            return f"{_three_digits(v)} {unit}"
    raise AssertionError("unreachable")


def _bound(v):
    # a bound just off 1 keeps a third decimal, or [0.65, 1.00] would read as containing 1
    text = _three_digits(v)
    return f"{v:.3f}" if text == "1.00" and v != 1 else text


def format_ratio(ratio, low, high, significant, unstable=False):
    mark = "" if significant else NOT_SIGNIFICANT
    return f"{mark}{_three_digits(ratio)} [{_bound(low)}, {_bound(high)}]" + (UNSTABLE if unstable else "")


OVERSUBSCRIBED = "*"


def _swept(summary):
    """(compiler, workload) pairs whose cells vary in threads or param: their
    tables have a line per (threads, param) at each size instead of a line per size."""
    seen = {}
    for r in summary:
        seen.setdefault((r["compiler"], r["workload"]), set()).add(_tp_key(r))
    return {k for k, v in seen.items() if len(v) > 1}


def _tp_key(r):
    return (r["threads"], r["param"])


def _at(r, strategy=None):
    """An entry's place: (compiler, workload, size, threads, param, strategy)."""
    return (r["compiler"], r["workload"], r["size"], r["threads"], r["param"], strategy or r["strategy"])


def _tp_label(threads, param, cpus):
    mark = OVERSUBSCRIBED if cpus and threads > cpus else ""
    p = f"{param:g}"
    return f"{threads}{mark} / {p}"


def _cell_text(r):
    if r is None:
        return "-"
    if r["status"] == "skipped":
        return "n/a"
    if r["status"] != "ok":
        return "failed"
    return format_time(r["median_ns_per_op"]) + (UNSTABLE if r.get("unstable") else "")


def _over_note(cpus, rows):
    if cpus and any(OVERSUBSCRIBED in row[0] for row in rows):
        return f"; {OVERSUBSCRIBED} = more threads than the {cpus} CPUs (oversubscribed)"
    return ""


def build(summary, ratios, baseline, strategies=None, cpus=None, marks=Marks()):
    """Tables as dicts {title, header, lines, legend}; lines of strings. summary
    and ratios are lists of typed entries (see the top). strategies orders the
    columns (default: order of first appearance). A workload swept over
    threads or param gets one table per size, a line per (threads, param);
    cpus marks the oversubscribed lines; marks: what the legend says of the marks."""
    order = list(strategies or [])
    for r in summary:
        if r["strategy"] not in order:
            order.append(r["strategy"])
    swept = _swept(summary)
    groups = {}
    for r in summary:
        if (r["compiler"], r["workload"]) in swept:
            key = (r["compiler"], r["workload"], "size", r["size"])
        else:
            key = (r["compiler"], r["workload"], r["threads"], r["param"])
        groups.setdefault(key, []).append(r)
    ratio_at = {_at(r): r for r in ratios}
    tables = []
    for key in groups:  # insertion order: the caller's order of cells
        rows = groups[key]
        present = [s for s in order if any(r["strategy"] == s for r in rows)]
        compared = [s for s in present if s != baseline] if baseline in present else []
        if key[2] == "size":
            tables.append(_swept_table(key, rows, present, compared, baseline, ratio_at, cpus, marks))
            continue
        compiler, workload, threads, param = key
        header = ["size"] + present + [f"{s}/{baseline}" for s in compared]
        by_size = {}
        for r in rows:
            by_size.setdefault(r["size"], {})[r["strategy"]] = r
        out_rows = []
        for size in sorted(by_size):
            cells = by_size[size]
            line = [str(size)]
            for s in present:
                line.append(_cell_text(cells.get(s)))
            for s in compared:
                line.append(_ratio_text(ratio_at.get((compiler, workload, size, threads, param, s))))
            out_rows.append(line)
        title = f"{compiler}: {workload}" + variant_suffix(threads, param)
        tables.append({"title": title, "header": header, "lines": out_rows,
                       "legend": ratio_legend(baseline, marks) if compared else time_legend(marks)})
    return tables


def _ratio_text(q):
    if q is None or q.get("ratio") is None:
        return "-"
    return format_ratio(q["ratio"], q["ci_low"], q["ci_high"], bool(q["significant"]), bool(q.get("unstable")))


def _swept_table(key, rows, present, compared, baseline, ratio_at, cpus, marks):
    compiler, workload, _, size = key
    by_tp = {}
    for r in rows:
        by_tp.setdefault(_tp_key(r), {})[r["strategy"]] = r
    header = ["threads / param"] + present + [f"{s}/{baseline}" for s in compared]
    out_rows = []
    for tp in sorted(by_tp):
        cells = by_tp[tp]
        any_row = next(iter(cells.values()))
        line = [_tp_label(tp[0], tp[1], cpus)]
        line += [_cell_text(cells.get(s)) for s in present]
        for s in compared:
            line.append(_ratio_text(ratio_at.get(_at(any_row, s))))
        out_rows.append(line)
    legend = (ratio_legend(baseline, marks) if compared else time_legend(marks)) + \
        "; n/a = the workload does not apply to the strategy" + _over_note(cpus, out_rows)
    return {"title": f"{compiler}: {workload} (size {size})", "header": header, "lines": out_rows,
            "legend": legend}


def build_versus(summary, versus, strategies=None, cpus=None, shared=None, marks=Marks()):
    """Derived tables: each strategy's time over a reference row's (ratios
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
    for (compiler, workload, size, ref), rows in groups.items():
        present = [s for s in order if any(r["strategy"] == s for r in rows)]
        # skipped cells of the same run show as n/a
        for (c, w, sz, _, _, s), st in status.items():
            if (c, w, sz) == (compiler, workload, size) and st == "skipped" and s not in present and s != ref:
                present.append(s)
        by_tp = {}
        for r in rows:
            by_tp.setdefault(_tp_key(r), {})[r["strategy"]] = r
        for (c, w, sz, t, p, s), st in status.items():
            if (c, w, sz) == (compiler, workload, size) and s != ref:
                by_tp.setdefault((t, p), {})
        def label(s):
            if shared is None or s not in shared:
                return f"{s}/{ref}"
            return f"{s}/{ref} ({'shared' if shared[s] else 'own heaps'})"
        header = ["threads / param"] + [label(s) for s in present]
        out_rows = []
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
            out_rows.append(line)
        legend = (f"slowdown against {ref} (time per op / {ref}'s, above 1: slower) from the visits of the two "
                  f"in the same rounds, with its 95% interval; {marks_legend(marks._replace(control=None))}; "
                  f"shared = one heap for every thread, own heaps = a heap per thread; n/a = does not apply" +
                  _over_note(cpus, out_rows))
        tables.append({"title": f"{compiler}: {workload} against {ref} (size {size})", "header": header,
                       "lines": out_rows, "legend": legend})
    return tables


def _ops_text(ns):
    return "-" if not ns else f"{1e9 / ns:.2f}"


def _bytes_text(b):
    return "-" if not b else f"{float(b) / (1 << 20):.1f}MB"


def build_bench_lines(summary, metrics, workload, ref, strategies=None):
    """OSRM's benchmark lines (its query heap's) for one workload, a table per
    (compiler, size, threads): ops/s with half the 95% interval, best, the
    per-query latencies the cell reported (metrics: cell key -> {name: value}),
    peak RSS and the throughput change against ref (system malloc)."""
    order = list(strategies or [])
    groups = {}
    for r in summary:
        if r["workload"] != workload or r["status"] != "ok":
            continue
        groups.setdefault((r["compiler"], r["size"], r["threads"], r["param"]), {})[r["strategy"]] = r
    tables = []
    for (compiler, size, threads, param), rows in groups.items():
        present = [x for x in order if x in rows] + sorted(x for x in rows if x not in order)
        base = rows[ref]["median_ns_per_op"] if ref in rows else None
        out = []
        for name in present:
            r = rows[name]
            med, lo, hi = (r[k] for k in ("median_ns_per_op", "ci_low_ns", "ci_high_ns"))
            half = (1e9 / lo - 1e9 / hi) / 2 if lo and hi else None
            m = metrics.get((compiler, name, workload, size, threads, param), {})
            lat = [format_time(m.get(k)) for k in ("latency_mean_ns", "latency_p50_ns", "latency_p95_ns",
                                                     "latency_p99_ns")]
            change = f"{(base / med - 1) * 100:+.0f}%" if base and med and name != ref else "-"
            out.append([name, f"{_ops_text(med)} \u00b1 {half:.2f}" if half is not None else _ops_text(med),
                        _ops_text(r["min_ns_per_op"])] + lat +
                       [_bytes_text(r["peak_rss_bytes"]), change])
        tables.append({"title": f"{compiler}: {workload} benchmark lines (size {size}, threads {threads})",
                       "header": ["strategy", "ops/s", "best ops/s", "avg", "p50", "p95", "p99", "Peak RAM",
                                  f"ops/s vs {ref}"],
                       "lines": out,
                       "legend": "ops/s = queries per second, median of the visits \u00b1 half its 95% "
                                 "interval; best = the fastest sample; latencies of single queries "
                                 f"in the last repetition; Peak RAM = the cell's peak RSS; vs {ref}: above 0 = "
                                 "more queries per second"})
    return tables


def build_slowdown(summary, metrics, workload, strategies=None):
    """Time per op at each param over the same strategy's time at param 0, with
    the resident share the cell measured before its queries (metric resident_pct):
    one table per (compiler, size, threads), a line per param."""
    order = list(strategies or [])
    groups = {}
    for r in summary:
        if r["workload"] != workload:
            continue
        groups.setdefault((r["compiler"], r["size"], r["threads"]), []).append(r)
    tables = []
    for (compiler, size, threads), rows in groups.items():
        present = [x for x in order if any(r["strategy"] == x for r in rows)]
        present += sorted({r["strategy"] for r in rows} - set(present))
        at = {(r["strategy"], r["param"]): r for r in rows}
        out = []
        for param in sorted({r["param"] for r in rows}):
            line = [f"{param:g}"]
            for name in present:
                r, r0 = at.get((name, param)), at.get((name, 0.0))
                if r is None or r["status"] != "ok":
                    line.append(_cell_text(r))
                    continue
                m = metrics.get((compiler, name, workload, size, threads, r["param"]), {})
                res = m.get("resident_pct")
                t = r["median_ns_per_op"]
                t0 = r0["median_ns_per_op"] if r0 and r0["status"] == "ok" else None
                text = f"{t / t0:.2f}x" if t and t0 else "-"
                line.append(text + (f" ({float(res):.0f}%)" if res is not None else ""))
            out.append(line)
        tables.append({"title": f"{compiler}: {workload} slowdown against 0% evicted (size {size}, threads {threads})",
                       "header": ["% evicted"] + present, "lines": out,
                       "legend": "median time per op over the same strategy's at 0% evicted; in brackets the "
                                 "share of the structure's pages resident after eviction, before the queries "
                                 "(anonymous memory without swap stays resident: no slowdown to see)"})
    return tables


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


def render_text(tables, width=160):
    out = []
    for t in tables:
        out.append(f"== {t['title']} ==")
        parts, widths = _chunks(t["header"], t["lines"], width)
        for b in parts:
            out.append("  ".join(t["header"][i].rjust(widths[i]) for i in b).rstrip())
            for r in t["lines"]:
                out.append("  ".join(r[i].rjust(widths[i]) for i in b).rstrip())
            out.append("")
        out.append(t["legend"])
        out.append("")
    return "\n".join(out)


def render_markdown(tables):
    out = []
    for t in tables:
        out.append(f"### {t['title']}")
        out.append("")
        out.append("| " + " | ".join(t["header"]) + " |")
        out.append("|" + "|".join("---:" for _ in t["header"]) + "|")
        for r in t["lines"]:
            # a lone ~ can start strikethrough in some Markdown renderers
            out.append("| " + " | ".join(c.replace("~", "\\~") for c in r) + " |")
        out.append("")
        out.append(t["legend"] + ".")
        out.append("")
    return "\n".join(out)
