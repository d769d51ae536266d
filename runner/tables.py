"""tables.py: turns a run's summary and ratio rows into the tables people read:
one table per compiler and workload, a row per size, the median time per op of
each strategy, then each strategy's ratio to the baseline with its 95% interval.
Plain text (for the terminal and tables.txt) and Markdown (tables.md). It does
no statistics of its own: everything comes from summary.csv / ratios.csv rows."""

NOT_SIGNIFICANT = "~"
LEGEND = ("median time per operation; ratio = strategy / {baseline} (above 1: slower than "
          "{baseline}) with its 95% bootstrap interval; " + NOT_SIGNIFICANT +
          " = not significant (the interval contains 1)")

_UNITS = [(1.0, "ns"), (1e3, "\u00b5s"), (1e6, "ms"), (1e9, "s")]


def _three_digits(v):
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def format_time(ns):
    """Nanoseconds with a unit that keeps 1 to 3 digits before the point."""
    if ns is None or ns == "":
        return "-"
    ns = float(ns)
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


def format_ratio(ratio, low, high, significant):
    mark = "" if significant else NOT_SIGNIFICANT
    return f"{mark}{_three_digits(ratio)} [{_bound(low)}, {_bound(high)}]"


def _num(v):
    return None if v in (None, "") else float(v)


def _truthy(v):
    return v in (True, 1, "1", "true", "True", "yes")


def build(summary, ratios, baseline, strategies=None):
    """Tables as dicts {title, header, rows}; rows of strings. summary and
    ratios are lists of dicts with the CSV columns. strategies orders the
    columns (default: order of first appearance)."""
    order = list(strategies or [])
    for r in summary:
        if r["strategy"] not in order:
            order.append(r["strategy"])
    groups = {}
    for r in summary:
        key = (r["compiler"], r["workload"], str(r["threads"]), str(r["param"]))
        groups.setdefault(key, []).append(r)
    ratio_at = {(r["compiler"], r["workload"], str(r["size"]), str(r["threads"]), str(r["param"]),
                 r["strategy"]): r for r in ratios}
    tables = []
    for key in groups:  # insertion order: the caller's order of cells
        compiler, workload, threads, param = key
        rows = groups[key]
        present = [s for s in order if any(r["strategy"] == s for r in rows)]
        compared = [s for s in present if s != baseline] if baseline in present else []
        header = ["size"] + present + [f"{s}/{baseline}" for s in compared]
        by_size = {}
        for r in rows:
            by_size.setdefault(int(r["size"]), {})[r["strategy"]] = r
        out_rows = []
        for size in sorted(by_size):
            cells = by_size[size]
            line = [str(size)]
            for s in present:
                r = cells.get(s)
                if r is None:
                    line.append("-")
                elif r["status"] != "ok":
                    line.append("failed")
                else:
                    line.append(format_time(_num(r["median_ns_per_op"])))
            for s in compared:
                q = ratio_at.get((compiler, workload, str(size), threads, param, s))
                if q is None or q.get("ratio") in (None, ""):
                    line.append("-")
                else:
                    line.append(format_ratio(float(q["ratio"]), float(q["ci_low"]),
                                             float(q["ci_high"]), _truthy(q["significant"])))
            out_rows.append(line)
        extra = []
        if threads not in ("", "1"):
            extra.append(f"threads {threads}")
        if param not in ("", "0", "0.0"):
            extra.append(f"param {param}")
        title = f"{compiler}: {workload}" + (f" ({', '.join(extra)})" if extra else "")
        tables.append({"title": title, "header": header, "rows": out_rows,
                       "legend": LEGEND.format(baseline=baseline) if compared else
                       "median time per operation"})
    return tables


def _chunks(header, rows, width):
    """Splits columns so each block fits in width; every block keeps column 0."""
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i])
              for i in range(len(header))]
    blocks, cur, used = [], [0], widths[0]
    for i in range(1, len(header)):
        if len(cur) > 1 and used + 2 + widths[i] > width:
            blocks.append(cur)
            cur, used = [0], widths[0]
        cur.append(i)
        used += 2 + widths[i]
    blocks.append(cur)
    return blocks, widths


def render_text(tables, width=160):
    out = []
    for t in tables:
        out.append(f"== {t['title']} ==")
        blocks, widths = _chunks(t["header"], t["rows"], width)
        for b in blocks:
            out.append("  ".join(t["header"][i].rjust(widths[i]) for i in b).rstrip())
            for r in t["rows"]:
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
        for r in t["rows"]:
            # a lone ~ can start strikethrough in some Markdown renderers
            out.append("| " + " | ".join(c.replace("~", "\\~") for c in r) + " |")
        out.append("")
        out.append(t["legend"] + ".")
        out.append("")
    return "\n".join(out)
