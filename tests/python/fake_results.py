"""fake_results.py: writes a small results folder with known numbers, for the report tests.
Not a benchmark: the numbers follow simple formulas so a test can predict every cell.
`python3 tests/python/fake_results.py DIR [--big]` writes one by hand (--big: many strategies, 2 compilers)."""
import csv
import json
import os
import sys

SMALL = dict(strategies=["system", "pool", "monotonic"], workloads=["list_create", "thrash_pool"],
             sizes=[16, 256, 4096], compilers=["gcc"])
BIG = dict(strategies=["system", "system-jemalloc", "system-tcmalloc", "system-mimalloc", "minimal",
                       "pool", "fast_pool", "fast_pool-mutex", "monotonic", "monotonic-local",
                       "tls_size_class", "mmap_arena", "mmap_file"],
           workloads=["thrash_pool", "thrash_pool_sort", "list_create", "map_erase"],
           sizes=[10, 100, 1000, 10000, 100000], compilers=["gcc", "clang"])
# the one failed cell of the small folder
FAILED = ("gcc", "monotonic", "thrash_pool", "4096")
# and its one skipped cell: the workload does not apply (not a failure)
SKIPPED = ("gcc", "monotonic", "thrash_pool", "16")


def median(strategy_index, workload_index, size, compiler_index=0):
    """ns per op of a cell: grows with log size, differs per strategy, exact in binary."""
    steps = {16: 1, 256: 2, 4096: 3}.get(size, len(str(size)))
    return (8.0 + 4.0 * strategy_index + 2.0 * workload_index) * steps * (1.0 + 0.25 * compiler_index)


def ratio_row(strategy, s_i, base_m, m):
    """Known significance: pool is faster, monotonic slower at 16 and 4096, not significant at 256."""
    r = m / base_m
    lo, hi = r * 0.96, r * 1.04
    sig = 1 if (hi < 1 or lo > 1) else 0
    return r, lo, hi, sig


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header.split(","))
        w.writerows(rows)


def make(folder, strategies, workloads, sizes, compilers, extras=False):
    os.makedirs(folder, exist_ok=True)
    summary, ratios, samples, metrics = [], [], [], []
    for c_i, c in enumerate(compilers):
        for w_i, w in enumerate(workloads):
            for size in sizes:
                base_m = median(0, w_i, size, c_i)
                for s_i, s in enumerate(strategies):
                    m = median(s_i, w_i, size, c_i)
                    if s == "pool":
                        m = base_m * 0.5
                    if s == "monotonic" and size == 256:
                        m = base_m * 1.01
                    failed = (c, s, w, str(size)) == FAILED
                    reps, ops = 100, size
                    req = size * 24
                    if (c, s, w, str(size)) == SKIPPED:
                        summary.append([c, s, w, size, 1, "", "skipped", "does not apply to this row",
                                        "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", ""])
                        continue
                    if failed:
                        summary.append([c, s, w, size, 1, "", "failed", "out of memory at limit",
                                        "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", ""])
                        continue
                    summary.append([c, s, w, size, 1, "", "ok", "", 9, reps, ops, m, m * 0.9,
                                    m * 0.98, m * 1.02, 0.01, 4194304 + size * 64, req * 1000, req,
                                    req * (1 + s_i), 100.0 * s_i, 1000 * size, 1000 * size - s_i,
                                    "", ""])
                    for k in range(3):
                        ns = m * reps * ops * (1 + 0.01 * (k - 1))
                        samples.append([c, s, w, size, 1, "", k, reps, ns, ns / reps / ops])
                    if s != strategies[0]:
                        r, lo, hi, sig = ratio_row(s, s_i, base_m, m)
                        ratios.append([c, w, size, 1, "", s, strategies[0], r, lo, hi, sig])
                    if extras and w == workloads[-1]:
                        metrics.append([c, s, w, size, 1, "", "p50_ns", m * 10])
                        metrics.append([c, s, w, size, 1, "", "p99_ns", m * 40])
    write_csv(os.path.join(folder, "summary.csv"), ",".join(
        "compiler,strategy,workload,size,threads,param,status,reason,samples,reps,ops_per_rep,"
        "median_ns_per_op,min_ns_per_op,ci_low_ns,ci_high_ns,cv,peak_rss_bytes,bytes_requested,"
        "bytes_peak,reserved_peak,overhead_pct,allocs,frees,instructions_per_op,cycles_per_op".split(",")),
        summary)
    write_csv(os.path.join(folder, "ratios.csv"),
              "compiler,workload,size,threads,param,strategy,baseline,ratio,ci_low,ci_high,significant",
              ratios)
    write_csv(os.path.join(folder, "samples.csv"),
              "compiler,strategy,workload,size,threads,param,sample,reps,ns,ns_per_op", samples)
    if metrics:
        write_csv(os.path.join(folder, "metrics.csv"),
                  "compiler,strategy,workload,size,threads,param,metric,value", metrics)
    meta = {
        "run_id": os.path.basename(os.path.abspath(folder)), "date": "2024-05-01T12:00:00Z",
        "host": "testhost", "cpu": "Test CPU 9000 @ 3.0GHz", "kernel": "Linux 6.1.0",
        "compilers": [{"name": c, "command": c, "version": f"{c} version 12.2.0",
                       "flags": "-O2"} for c in compilers],
        "malloc": {"glibc": "2.36", "jemalloc": "5.3.0"}, "git": "abc1234", "seed": 42,
        "command_line": "python3 -m runner.allocmark --quick", "samples": 9, "baseline_samples": 27, "rounds": 3,
        "min_ms": 10, "baseline": strategies[0], "quick": True, "timer_resolution_ns": 1,
        "hardware_counters": "not available (perf_event_paranoid=3)",
    }
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    with open(os.path.join(folder, "tables.txt"), "w") as f:
        f.write("thrash_pool\n  size system pool\n")
    with open(os.path.join(folder, "tables.md"), "w") as f:
        f.write("| size | system | pool |\n|---|---|---|\n| 16 | 8 | 4 |\n")
    if extras:
        hf = {"results": [
            {"command": f"am-cell-{s} --workload {workloads[0]}", "mean": 0.1 + 0.01 * i,
             "stddev": 0.002, "median": 0.1 + 0.01 * i, "user": 0.09, "system": 0.01,
             "min": 0.095, "max": 0.13, "times": [0.1, 0.11]} for i, s in enumerate(strategies[:4])]}
        with open(os.path.join(folder, "hyperfine-startup.json"), "w") as f:
            json.dump(hf, f)
        with open(os.path.join(folder, "stats-thrash_pool.txt"), "w") as f:
            f.write("strategy   | bytes requested | peak | reserved\nsystem     |  1,024 | 512 | 4,096\n")
        if len(compilers) > 1:
            write_csv(os.path.join(folder, "compilers.csv"), "workload,strategy,size," + ",".join(compilers),
                      [[w, s, sizes[-1]] + [median(i, j, sizes[-1], k) for k in range(len(compilers))]
                       for j, w in enumerate(workloads) for i, s in enumerate(strategies)])
    return folder


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    big = "--big" in sys.argv
    make(args[0], **(BIG if big else SMALL), extras=big)
    print(args[0])
