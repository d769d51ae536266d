"""workload_tables.py: the tables a workload asks for beside its blocks
(cell_protocol's workload facts): benchmark lines against a row (queries per
second, latencies, peak RAM: the threaded query benchmarks) and the slowdown
against param 0 (the residency workloads). Like tables.py, it takes summary
entries and metrics as numbers and does no statistics of its own."""
from runfolder import schema
from runfolder.tables import bytes_text, cell_text, format_time


def _ops_text(ns):
    return "-" if not ns else f"{1e9 / ns:.2f}"


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
    out_tables = []
    for (compiler, size, threads, param), cells in groups.items():
        present = [x for x in order if x in cells] + sorted(x for x in cells if x not in order)
        base = cells[ref][schema.MEDIAN] if ref in cells else None
        out = []
        for name in present:
            r = cells[name]
            med, lo, hi = (r[k] for k in (schema.MEDIAN, "ci_low_ns", "ci_high_ns"))
            half = (1e9 / lo - 1e9 / hi) / 2 if lo and hi else None
            m = metrics.get((compiler, name, workload, size, threads, param), {})
            lat = [format_time(m.get(k)) for k in ("latency_mean_ns", "latency_p50_ns", "latency_p95_ns",
                                                     "latency_p99_ns")]
            change = f"{(base / med - 1) * 100:+.0f}%" if base and med and name != ref else "-"
            out.append([name, f"{_ops_text(med)} \u00b1 {half:.2f}" if half is not None else _ops_text(med),
                        _ops_text(r["min_ns_per_op"])] + lat +
                       [bytes_text(r["peak_rss_bytes"]), change])
        out_tables.append({"title": f"{compiler}: {workload} benchmark lines (size {size}, threads {threads})",
                       "header": ["strategy", "ops/s", "best ops/s", "avg", "p50", "p95", "p99", "Peak RAM",
                                  f"ops/s vs {ref}"],
                       "lines": out,
                       "legend": "ops/s = queries per second, median of the visits \u00b1 half its 95% "
                                 "interval; best = the fastest sample; latencies of single queries "
                                 f"in the last repetition; Peak RAM = the cell's peak RSS; vs {ref}: above 0 = "
                                 "more queries per second"})
    return out_tables


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
    out_tables = []
    for (compiler, size, threads), cells in groups.items():
        present = [x for x in order if any(r["strategy"] == x for r in cells)]
        present += sorted({r["strategy"] for r in cells} - set(present))
        at = {(r["strategy"], r["param"]): r for r in cells}
        out = []
        for param in sorted({r["param"] for r in cells}):
            line = [f"{param:g}"]
            for name in present:
                r, r0 = at.get((name, param)), at.get((name, 0.0))
                if r is None or r["status"] != "ok":
                    line.append(cell_text(r))
                    continue
                m = metrics.get((compiler, name, workload, size, threads, r["param"]), {})
                res = m.get("resident_pct")
                t = r[schema.MEDIAN]
                t0 = r0[schema.MEDIAN] if r0 and r0["status"] == "ok" else None
                text = f"{t / t0:.2f}x" if t and t0 else "-"
                line.append(text + (f" ({float(res):.0f}%)" if res is not None else ""))
            out.append(line)
        out_tables.append({"title": f"{compiler}: {workload} slowdown against 0% evicted (size {size}, threads {threads})",
                       "header": ["% evicted"] + present, "lines": out,
                       "legend": "median time per op over the same strategy's at 0% evicted; in brackets the "
                                 "share of the structure's pages resident after eviction, before the queries "
                                 "(anonymous memory without swap stays resident: no slowdown to see)"})
    return out_tables
