#!/usr/bin/env python3
"""allocmark.py: runs the benchmark matrix (compiler x strategy x workload x size),
one fresh am-cell process per cell and round, in a shuffled order of blocks
(the cells of one table row), and writes the run's
CSV files, meta.json and tables to results/<run-id>/. It measures nothing
itself: timing, calibration and checksums happen in runner/cell_main.c.
Python 3 standard library only."""
import argparse
import csv
import datetime
import io
import json
import os
import platform
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import crosscc  # noqa: E402
import memlimit  # noqa: E402
import rundir  # noqa: E402
import stats  # noqa: E402
import pinning  # noqa: E402
import tables  # noqa: E402

DEFAULT_BASELINE = "monotonic"
FALLBACK_BASELINE = "system"

# Budget of the default matrix (make bench: <= 10 min on 2 cores, both gcc and
# clang). A cell's first round (calibration, 3 samples of >= 10 ms, the -stats
# run) took about 0.15 s, each later round (a warm-up run, 3 samples) about
# 0.06 s: 0.27 s a cell. 1,860 cells (15 rows x 17 workloads x 3 sizes x 2
# compilers, less the skipped, plus the swept scenarios) took 8 min 23 s.
# --quick: the largest size only, T=1 and 2, 6 samples of 5 ms, one compiler:
# 330 cells in 47 s.
DEFAULT_SAMPLES = 9
DEFAULT_MIN_MS = 10.0
QUICK_SAMPLES = 6
QUICK_MIN_MS = 5.0
# A cell's samples are taken in ROUNDS processes, each round visiting every cell
# in a new order. On the shared VMs this suite runs on, one process's samples
# agree within 1-2% while two processes of the same cell a minute apart differ
# by 5-30% (the host's load, the process's address layout): samples from one
# process measure that process, samples from three spread over the run measure
# the cell. Round 1 calibrates the repetitions; later rounds reuse its count.
DEFAULT_ROUNDS = 3
# bootstrap resamples of a cell whose rounds are not all done: its interval is
# written to the files every few seconds and computed again with the full
# count (stats.RESAMPLES) once its last round is in, or when the run ends
RUNNING_RESAMPLES = 200
WRITE_EVERY_S = 5.0
# the cell's own cap (runner/cell_main.c): a size is a count of elements, bytes
# or MiB, and past 2^40 the workloads' arithmetic would overflow
MAX_SIZE = 1 << 40
# a run whose files could not be written where asked (the results are saved elsewhere or printed)
EXIT_NOT_WRITTEN = 4

SAMPLE_COLS = ["compiler", "strategy", "workload", "size", "threads", "param", "sample", "reps",
               "ns", "ns_per_op", "round"]
SUMMARY_COLS = ["compiler", "strategy", "workload", "size", "threads", "param", "status", "reason",
                "samples", "reps", "ops_per_rep", "median_ns_per_op", "min_ns_per_op", "ci_low_ns",
                "ci_high_ns", "cv", "peak_rss_bytes", "bytes_requested", "bytes_peak",
                "reserved_peak", "overhead_pct", "allocs", "frees", "instructions_per_op",
                "cycles_per_op"]
RATIO_COLS = ["compiler", "workload", "size", "threads", "param", "strategy", "baseline", "ratio",
              "ci_low", "ci_high", "significant"]
METRIC_COLS = ["compiler", "strategy", "workload", "size", "threads", "param", "metric", "value"]

# Workloads that sweep threads and param (am_sweep in the cell's --list).
# QUICK keeps a corner of the sweep. Budget of the default contention matrix:
# 6 W x 3 T (1, 2 and 4 oversubscribed on 2 CPUs) x ~12 rows ~ 216 cells of
# ~0.25 s (a repetition is ~5 ms of work per thread, see contention.c) ~ 1 min.
QUICK_THREADS = (1, 2)
QUICK_PARAMS = (0.0, 30.0, 500.0)  # contention's W 0 and 500; mmap_pressure's 0 and 30 %
# Derived tables: each strategy against one reference row, per (threads, param):
# for contention, shared heaps against independent per-thread pools (seed 002).
# query_heap against system malloc, as seed 000's pool against the default allocator.
VERSUS = {"contention": "pool", "query_heap": "system"}
# OSRM's benchmark lines (seed 000) for these workloads, against the named row
BENCH_LINES = {"query_heap": "system"}
# slowdown against param 0 (seed 003: time at each evicted fraction over none evicted)
SLOWDOWN = ("mmap_pressure",)


class UsageError(Exception):
    """Bad input: reported on stderr, exit status 2, nothing measured."""


# ---------------------------------------------------------------- arguments

def whole_number(minimum):
    def parse(s):
        try:
            v = int(s, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: '{s}'")
        if v < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}: '{s}'")
        return v
    return parse


def positive_number(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{s}'")
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number: '{s}'")
    return v


def non_negative_number(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{s}'")
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a non-negative number: '{s}'")
    return v


def sizes_arg(s):
    if s in ("linear", "log", "default"):
        return s
    out = []
    for part in s.split(","):
        part = part.strip()
        try:
            v = int(part, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not a size: '{part}' (give whole numbers separated by commas, 'linear' or 'log')")
        if v < 1:
            raise argparse.ArgumentTypeError(f"a size must be at least 1: '{part}'")
        if v > MAX_SIZE:
            raise argparse.ArgumentTypeError(
                f"size '{part}' cannot fit in memory (at most 2^40 = {MAX_SIZE}: elements, bytes or MiB)")
        out.append(v)
    return out


def cpu_arg(s):
    if s in ("auto", "none"):
        return s
    try:
        v = int(s, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a CPU: '{s}' (give a CPU number, 'auto' or 'none')")
    if v < 0:
        raise argparse.ArgumentTypeError(f"a CPU number is at least 0: '{s}'")
    return v


def mem_limit_arg(s):
    try:
        return memlimit.parse(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def names_arg(s):
    return [n.strip() for n in s.split(",") if n.strip()]


def make_parser():
    ap = argparse.ArgumentParser(
        prog="allocmark.py",
        description="Run the allocmark benchmark matrix: every (compiler, strategy, workload, size) "
                    "cell in fresh processes (one a round), in a shuffled order of blocks (the cells of one "
                    "table row run one after the other); write CSV files, meta.json and "
                    "tables to the run folder.",
        epilog="Exit status: 0 done (some cells may have failed: see summary.csv), 2 bad input, "
               "3 every cell failed, 130 interrupted (finished cells are kept).")
    ap.add_argument("--list", action="store_true", help="list strategies, workloads and sizes, then exit")
    ap.add_argument("--allocators", type=names_arg, metavar="A,B",
                    help="strategies (rows) to run (default: every row built in build/<compiler>/bin)")
    ap.add_argument("--workloads", type=names_arg, metavar="W,V", help="workloads (default: all)")
    ap.add_argument("--sizes", type=sizes_arg, metavar="N,M|linear|log",
                    help="sizes: numbers, 'linear' (each workload's whole linear sweep) or 'log' "
                         "(its log sweep); default: every other size of the linear sweep plus the last")
    ap.add_argument("--samples", type=whole_number(3), metavar="K",
                    help=f"samples per cell (default {DEFAULT_SAMPLES}, at least 3)")
    ap.add_argument("--rounds", type=whole_number(1), metavar="R",
                    help=f"processes per cell: the samples are split between R rounds over the "
                         f"whole matrix, each in a new order (default {DEFAULT_ROUNDS}; at most --samples)")
    ap.add_argument("--min-ms", type=positive_number, metavar="X",
                    help=f"shortest sample in ms (default {DEFAULT_MIN_MS:g})")
    ap.add_argument("--baseline", metavar="S",
                    help=f"strategy the ratios divide by (default {DEFAULT_BASELINE}; "
                         f"{FALLBACK_BASELINE} where that is not built)")
    ap.add_argument("--seed", type=whole_number(0), metavar="S",
                    help="seed of the cell order, the workloads and the bootstrap (default: random, recorded)")
    ap.add_argument("--threads", type=whole_number(1), metavar="T",
                    help="threads for threaded workloads (default: the number of CPUs)")
    ap.add_argument("--param", type=non_negative_number, metavar="P",
                    help="the workloads' knob (default: each workload's own)")
    ap.add_argument("--out", metavar="DIR", help="run folder (default results/<YYYYmmdd-HHMMSS>)")
    ap.add_argument("--compilers", type=names_arg, metavar="C,D",
                    help="compiler build folders build/<name>/bin to use (default: the name of $CC, "
                         "as the Makefile uses)")
    ap.add_argument("--quick", action="store_true",
                    help=f"small matrix: the largest size, {QUICK_SAMPLES} samples, "
                         f"min-ms {QUICK_MIN_MS:g}")
    ap.add_argument("--cpu", type=cpu_arg, default="auto", metavar="N|auto|none",
                    help="CPU for the single-threaded cells (default auto: the fastest in a short "
                         "probe; none: wherever the OS puts them)")
    ap.add_argument("--timeout", type=positive_number, default=60.0, metavar="S",
                    help="seconds a cell may take before it is stopped and recorded failed (default 60)")
    ap.add_argument("--mem-limit", type=mem_limit_arg, default="auto", metavar="BYTES|auto|none",
                    help="address-space limit (RLIMIT_AS) of each cell: bytes or 512M, 4G ...; a cell "
                         "that needs more fails with 'out of memory' and the run goes on (default "
                         "auto: half of physical memory; none: no limit; never applied to "
                         "sanitizer builds nor on Windows)")
    ap.add_argument("--no-stats-tables", action="store_true",
                    help="do not write the counting tables (stats-<strategy>-<workload>-<size>.txt: "
                         "the baseline's -stats cell with --stats, each workload at its largest size)")
    ap.add_argument("--build-root", default=os.path.join(ROOT, "build"), help=argparse.SUPPRESS)
    return ap


# ---------------------------------------------------------------- discovery

def read_strategies():
    """Rows of allocators/strategies.txt: [(row, libs, description)] in file order."""
    rows = []
    with open(os.path.join(ROOT, "allocators", "strategies.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.split()
            if len(parts) < 4:
                continue
            libs = "" if parts[3] == "-" else parts[3].replace("~", " ")
            rows.append((parts[0], libs, " ".join(parts[4:])))
    return rows


def default_compiler():
    cc = os.environ.get("CC", "cc").split()
    return os.path.basename(cc[0]) if cc else "cc"


def bin_dir(args, compiler):
    return os.path.join(args.build_root, compiler, "bin")


def built_rows(bindir, known):
    """Rows with a measured binary in bindir: strategies.txt order, then any others."""
    if not os.path.isdir(bindir):
        return []
    names = set()
    for f in os.listdir(bindir):
        name = f[:-4] if f.endswith(".exe") else f
        # row names have no dots: am-cell-<row>.pdb and .ilk (MSVC) are not cells
        if name.startswith("am-cell-") and not name.endswith("-stats") and "." not in name:
            names.add(name[len("am-cell-"):])
    ordered = [r for r in known if r in names]
    return ordered + sorted(names - set(ordered))


def cell_exe(bindir, row, stats_build=False):
    base = os.path.join(bindir, "am-cell-" + row + ("-stats" if stats_build else ""))
    return base + ".exe" if not os.path.exists(base) and os.path.exists(base + ".exe") else base


def list_workloads(exe):
    p = subprocess.run([exe, "--list"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise UsageError(f"{exe} --list failed: {p.stderr.strip()}")
    return json.loads(p.stdout)


# ---------------------------------------------------------------- one cell

def parse_json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


# Windows has no signals: a crashed process exits with its exception's NTSTATUS
WINDOWS_CRASHES = {0xC0000005: "access violation", 0xC00000FD: "stack overflow",
                   0xC0000409: "fail-fast or stack buffer overrun", 0xC0000374: "heap corruption",
                   0xC000001D: "illegal instruction", 0xC0000094: "integer division by zero",
                   0x80000003: "breakpoint"}
WINDOWS_CTRL_C = 0xC000013A


def crash_reason(returncode, windows=(os.name == "nt")):
    """'crashed (...)' for a process that died of a signal or a Windows exception, else None."""
    if windows:
        code = returncode & 0xFFFFFFFF
        if code >= 0x80000000:
            return f"crashed ({WINDOWS_CRASHES.get(code, 'exception')} 0x{code:08X})"
        return None
    return f"crashed ({signal_name(-returncode)})" if returncode < 0 else None


def interrupted(returncode, windows=(os.name == "nt")):
    """The child died of Ctrl-C (SIGINT, or Windows' STATUS_CONTROL_C_EXIT)."""
    return returncode == -signal.SIGINT or (windows and returncode & 0xFFFFFFFF == WINDOWS_CTRL_C)


def cell_env(tmpdir):
    """The environment of a cell: AM_TMPDIR names the run's temporary folder,
    where file-backed strategies (mmap_file) put their files."""
    env = dict(os.environ)
    if tmpdir:
        env["AM_TMPDIR"] = tmpdir
    return env


def run_process(cmd, timeout, cwd, env=None):
    """Runs one cell process: (json or None, failure reason or None)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:g} s"
    except OSError as e:  # could not start, e.g. the executable was removed during the run
        return None, f"could not start: {e.strerror or e}"
    if interrupted(p.returncode):
        raise KeyboardInterrupt
    crash = crash_reason(p.returncode)
    if crash:
        return None, crash
    out = parse_json_line(p.stdout)
    err = p.stderr.strip().splitlines()
    sanitizer = [line for line in err if line.startswith("SUMMARY: ")]
    if out is not None and out.get("status") == "failed":
        return out, out.get("reason", "failed") + (f" (exit status {p.returncode})" if p.returncode else "")
    if p.returncode != 0 or out is None:
        if sanitizer:
            return None, f"crashed ({sanitizer[-1][len('SUMMARY: '):][:200]})"
        last = err[-1][:200] if err else "no output"
        return None, f"exit status {p.returncode}: {last}"
    return out, None


class Cell:
    def __init__(self, compiler, strategy, workload, size, threads, param, threaded):
        self.compiler, self.strategy, self.workload = compiler, strategy, workload
        self.size, self.threads, self.param, self.threaded = size, threads, param, threaded
        self.status = "pending"
        self.reason = ""
        self.result = None
        self.stats = None
        self.summary = None
        self.final = False  # every round done: the interval and ratios are the full bootstrap

    def key(self):
        return (self.compiler, self.workload, self.size, self.threads, self.param)

    def cols(self):
        return [self.compiler, self.strategy, self.workload, self.size, self.threads,
                fmt(self.param)]


def samples_in_round(samples, rounds, rnd):
    """The share of a cell's samples taken in round rnd (0-based): the first
    rounds take one more when samples do not divide evenly."""
    return samples // rounds + (rnd < samples % rounds)


def measure(cell, args, cfg, scratch, rnd=0):
    """One round of a cell: round 0 calibrates, checks and counts (the -stats
    run); later rounds add samples taken with round 0's repetitions."""
    bindir = bin_dir(args, cell.compiler)
    common = ["--workload", cell.workload, "--size", str(cell.size), "--seed", str(cfg["seed"])]
    if cell.threaded:
        common += ["--threads", str(cell.threads)]
    if cell.param:
        common += ["--param", repr(float(cell.param))]
    limit = cfg.get("mem_limits", {}).get(cell.compiler)
    if limit:  # the cell caps itself: a preexec_fn here would cost a fork of this process
        common += ["--mem-limit", str(limit)]
    rounds = cfg.get("rounds", 1)
    last = rnd == rounds - 1
    cmd = [cell_exe(bindir, cell.strategy)] + common + [
        "--samples", str(samples_in_round(cfg["samples"], rounds, rnd)), "--min-ms", repr(cfg["min_ms"])]
    if rnd:  # round 1's count, and its reference checksum: the cell need not compute it again
        cmd += ["--reps", str(cell.result["reps"])]
        if isinstance(cell.result.get("expect"), int):
            cmd += ["--expect", str(cell.result["expect"])]
    env = cell_env(cfg.get("tmpdir"))
    pinner = cfg.get("pinner")
    pinning.place(pinner and pinner.cpu, cell.threaded and cell.threads > 1)
    out, why = run_process(cmd, args.timeout, scratch, env)
    if rnd:
        add_round(cell, out, why, rnd, cfg["seed"], last)
        return
    if why:
        if limit and ("out of memory" in why or why.startswith("crashed")):
            why += f", under the memory limit of {memlimit.human(limit)}"
        cell.status, cell.reason = "failed", why
        return
    if out.get("status") == "skipped":  # the workload does not apply to this strategy
        cell.status, cell.reason = "skipped", out.get("reason", "not applicable")
        return
    # the cell counts as done only once everything about it is known, so an
    # interrupt during the -stats run leaves it pending, not half-filled
    note, counted = "", None
    if not cell.threaded:
        exe = cell_exe(bindir, cell.strategy, stats_build=True)
        if not os.path.exists(exe):
            note = "no -stats binary"
        else:
            sout, swhy = run_process([exe] + common + ["--stats-only"], args.timeout, scratch, env)
            if swhy:
                note = "stats run: " + swhy
            else:
                counted = sout.get("stats", {})
    out["sample_rounds"] = [0] * len(out.get("samples_ns", []))
    cell.result, cell.stats, cell.reason = out, counted, note
    cell.final = last
    cell.summary = summarize(cell, cfg["seed"])
    cell.status = "ok"


def add_round(cell, out, why, rnd, seed, last=True):
    """A later round's samples join round 0's; a round that fails fails the cell:
    a crash or a wrong checksum in any process is the cell's result."""
    if not why and (out.get("status") != "ok" or out.get("reps") != cell.result["reps"]):
        why = f"unexpected answer: status {out.get('status')}, reps {out.get('reps')}"
    if why:
        cell.status, cell.reason, cell.summary = "failed", f"round {rnd + 1}: {why}", None
        return
    r = cell.result
    r["samples_ns"] = r["samples_ns"] + out["samples_ns"]
    r["sample_rounds"] = r["sample_rounds"] + [rnd] * len(out["samples_ns"])
    if out.get("peak_rss"):
        r["peak_rss"] = max(r.get("peak_rss") or 0, out["peak_rss"])
    cell.final = last
    cell.summary = summarize(cell, seed)


def finalize(cells, seed):
    """At the end of a run (also an interrupted one): the full bootstrap for
    the cells whose later rounds did not happen."""
    for c in cells:
        if c.status == "ok" and not c.final:
            c.final = True
            c.summary = summarize(c, seed)


def resamples(*cells):
    return stats.RESAMPLES if all(c.final for c in cells) else RUNNING_RESAMPLES


def summarize(cell, seed):
    r = cell.result
    per_op = per_op_samples(r)
    lo, hi = stats.median_ci(per_op, stats.seed_for(seed, *cell.cols()), resamples(cell))
    s = cell.stats or {}
    peak, reserved = s.get("bytes_peak"), s.get("reserved_peak")
    overhead = (reserved / peak - 1) * 100 if peak and reserved else None
    return {
        "samples": len(per_op), "reps": r["reps"], "ops_per_rep": r.get("ops_per_rep", 1),
        "median_ns_per_op": stats.median(per_op), "min_ns_per_op": min(per_op),
        "ci_low_ns": lo, "ci_high_ns": hi, "cv": stats.cv(per_op),
        "peak_rss_bytes": r.get("peak_rss"), "bytes_requested": s.get("bytes_requested"),
        "bytes_peak": peak, "reserved_peak": reserved, "overhead_pct": overhead,
        "allocs": s.get("allocs"), "frees": s.get("frees"),
        "instructions_per_op": r.get("instructions_per_op"), "cycles_per_op": r.get("cycles_per_op"),
    }


def per_op_samples(result):
    ops = result["reps"] * (result.get("ops_per_rep") or 1)
    return [ns / ops for ns in result["samples_ns"]]


# ---------------------------------------------------------------- outputs

def fmt(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.6g}"
    return str(v)


def csv_text(header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([fmt(v) for v in r])
    return buf.getvalue()


def write_atomic(path, text):
    """A failed write (full disk) leaves the previous file whole and no .tmp."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


class Ratios:
    """Ratio of each strategy's cell to the baseline's, computed once per pair."""

    def __init__(self, baseline, seed):
        self.baseline, self.seed, self.done = baseline, seed, {}
        self.versus = {}  # workload -> Ratios against its VERSUS row

    def rows(self, cells):
        base = {c.key(): c for c in cells if c.strategy == self.baseline and c.status == "ok"}
        out = []
        for c in cells:
            if c.strategy == self.baseline or c.status != "ok" or c.key() not in base:
                continue
            k = c.cols()
            b = base[c.key()]
            # a later round adds samples: the ratio is computed again then
            memo = (tuple(k), len(c.result["samples_ns"]), len(b.result["samples_ns"]), resamples(c, b))
            if memo not in self.done:
                self.done[memo] = stats.ratio_ci(per_op_samples(c.result), per_op_samples(b.result),
                                                 stats.seed_for(self.seed, "ratio", *k), memo[-1])
            r, lo, hi = self.done[memo]
            out.append([c.compiler, c.workload, c.size, c.threads, fmt(c.param), c.strategy,
                        self.baseline, r, lo, hi, stats.significant(lo, hi)])
        return out


def table_text(cells, ratio_rows, baseline, order, markdown, versus_rows=()):
    summary = [dict(zip(SUMMARY_COLS, row)) for row in summary_rows(cells)]
    ratios = [dict(zip(RATIO_COLS, [fmt(v) for v in row])) for row in ratio_rows]
    cpus = os.cpu_count() or 1
    t = tables.build(summary, ratios, baseline, order, cpus=cpus)
    shared = {}
    for c in cells:
        v = ((c.result or {}).get("metrics") or {}).get("shared_heap")
        if v is not None:
            shared[c.strategy] = bool(v)
    versus = [dict(zip(RATIO_COLS, [fmt(v) for v in row])) for row in versus_rows]
    t += tables.build_versus(summary, versus, order, cpus=cpus, shared=shared)
    metrics = {tuple(str(v) for v in c.cols()): (c.result or {}).get("metrics") or {} for c in cells}
    for workload, ref in BENCH_LINES.items():
        t += tables.build_bench_lines(summary, metrics, workload, ref, order)
    for workload in SLOWDOWN:
        t += tables.build_slowdown(summary, metrics, workload, order)
    return tables.render_markdown(t) if markdown else tables.render_text(t)


def versus_rows(cells, ratios):
    """Each strategy against the workload's VERSUS reference row, per cell key
    (computed once per pair, like the baseline ratios)."""
    out = []
    for workload, ref in VERSUS.items():
        mine = [c for c in cells if c.workload == workload]
        if mine:
            r = ratios.versus.setdefault(workload, Ratios(ref, ratios.seed))
            out += r.rows(mine)
    return out


def summary_rows(cells):
    rows = []
    for c in cells:
        if c.status == "pending":
            continue
        s = c.summary or {}
        rows.append(c.cols() + [c.status, c.reason] + [s.get(k) for k in SUMMARY_COLS[8:]])
    return rows


def sample_rows(cells):
    rows = []
    for c in cells:
        if c.status != "ok":
            continue
        ops = c.result["reps"] * (c.result.get("ops_per_rep") or 1)
        rounds = c.result.get("sample_rounds") or []
        for i, ns in enumerate(c.result["samples_ns"]):
            rows.append(c.cols() + [i, c.result["reps"], ns, ns / ops, rounds[i] + 1 if i < len(rounds) else 1])
    return rows


def write_outputs(out_dir, cells, ratios, meta, order):
    done = sorted((c for c in cells if c.status != "pending"),
                  key=lambda c: (c.compiler, c.workload, c.threads, c.param, c.size, order.index(c.strategy)
                                 if c.strategy in order else len(order)))
    samples, metrics = sample_rows(done), []
    for c in done:
        if c.status != "ok":
            continue
        for name, value in (c.result.get("metrics") or {}).items():
            metrics.append(c.cols() + [name, value])
    ratio_rows = ratios.rows(done)
    write_atomic(os.path.join(out_dir, "samples.csv"), csv_text(SAMPLE_COLS, samples))
    write_atomic(os.path.join(out_dir, "summary.csv"), csv_text(SUMMARY_COLS, summary_rows(done)))
    write_atomic(os.path.join(out_dir, "ratios.csv"), csv_text(RATIO_COLS, ratio_rows))
    write_atomic(os.path.join(out_dir, "metrics.csv"), csv_text(METRIC_COLS, metrics))
    write_atomic(os.path.join(out_dir, "meta.json"), json.dumps(meta, indent=2) + "\n")
    versus = versus_rows(done, ratios)
    text = table_text(done, ratio_rows, ratios.baseline, order, markdown=False, versus_rows=versus)
    write_atomic(os.path.join(out_dir, "tables.txt"), text)
    write_atomic(os.path.join(out_dir, "tables.md"),
                 f"# allocmark run {meta['run_id']}\n\n" +
                 table_text(done, ratio_rows, ratios.baseline, order, markdown=True, versus_rows=versus))
    return text


def rescue_outputs(out_dir, error, cells, ratios, meta, order):
    """The run folder could not be written (full disk, quota): the results go to
    a new folder in the temporary directory, or, failing that, to stdout as CSV.
    Returns the tables' text."""
    print(f"allocmark: cannot write the results into {out_dir}: {error.strerror or error}", file=sys.stderr)
    try:
        where = tempfile.mkdtemp(prefix=f"allocmark-{meta['run_id']}-")
        try:
            text = write_outputs(where, cells, ratios, meta, order)
            print(f"allocmark: results saved in {where} instead", file=sys.stderr)
            return text
        except OSError:
            shutil.rmtree(where, ignore_errors=True)
            raise
    except OSError as e:
        print(f"allocmark: nor in the temporary directory ({e.strerror or e}); summary.csv and "
              f"samples.csv follow on stdout", file=sys.stderr)
    done = [c for c in cells if c.status != "pending"]
    samples = sample_rows(done)
    print("== summary.csv\n" + csv_text(SUMMARY_COLS, summary_rows(done)) +
          "== samples.csv\n" + csv_text(SAMPLE_COLS, samples), end="")
    return ""


def point_latest(out_dir):
    parent, name = os.path.split(os.path.abspath(out_dir))
    link = os.path.join(parent, "latest")
    if os.path.exists(link) and not os.path.islink(link):
        return  # someone's real folder: leave it
    tmp = link + ".tmp"
    try:
        if os.path.lexists(tmp):
            os.remove(tmp)
        os.symlink(name, tmp)
        os.replace(tmp, link)
    except OSError:
        pass  # no symlinks here (some Windows setups): the run folder is still complete


# ---------------------------------------------------------------- meta.json

def command_output(cmd, cwd=ROOT):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20, cwd=cwd)
        return p.stdout.strip() if p.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def library_versions(bindir, rows, strategies):
    """Debian package and version of each -l library a row links, found from the
    binary's ldd line (one dpkg-query for all: each call reads the whole database)."""
    libs_of = {r: libs for r, libs, _ in strategies}
    wanted = {}
    for row in rows:
        libs = [w[2:] for w in libs_of.get(row, "").split() if w.startswith("-l")]
        if not libs:
            continue
        ldd = command_output(["ldd", cell_exe(bindir, row)]) or ""
        for lib in libs:
            path = None
            for line in ldd.splitlines():
                parts = line.split()
                if parts and parts[0].startswith(f"lib{lib}.so") and "=>" in parts and len(parts) > 2:
                    path = os.path.realpath(parts[2])
            wanted.setdefault(row, []).append((lib, path))
    paths = sorted({p for v in wanted.values() for _, p in v if p})
    package_of, version_of = {}, {}
    if paths:
        for line in (command_output(["dpkg-query", "-S"] + paths) or "").splitlines():
            pkg, _, path = line.partition(": ")
            package_of[path.strip()] = pkg.split(":")[0]
        pkgs = sorted(set(package_of.values()))
        if pkgs:
            for line in (command_output(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n"] + pkgs)
                         or "").splitlines():
                name, _, ver = line.partition(" ")
                version_of[name] = ver
    out = {}
    for row, found in wanted.items():
        text = []
        for lib, path in found:
            pkg = package_of.get(path)
            if pkg:
                text.append(f"{pkg} {version_of.get(pkg, '')}".strip())
            else:
                text.append(f"lib{lib} (version unknown{': ' + path if path else ''})")
        out[row] = ", ".join(text)
    return out


def compiler_info(args, compiler, list_json):
    info = {"name": compiler, "command": None, "version": list_json.get("compiler"), "flags": None}
    path = os.path.join(args.build_root, compiler, "compiler.json")
    try:
        with open(path) as f:
            info.update({k: v for k, v in json.load(f).items() if v})
    except (OSError, ValueError):
        pass
    if not info["command"] and shutil.which(compiler):
        info["command"] = compiler  # a folder named after its compiler (make CC=clang)
    if info["command"] and not info.get("version_line"):
        # a path as CMake records it may hold spaces ("C:/Program Files/...")
        cmd = [info["command"]] if os.path.exists(info["command"]) else shlex.split(info["command"])
        line = command_output(cmd + ["--version"])
        if line:
            info["version_line"] = line.splitlines()[0]
    return info


def git_revision():
    rev = command_output(["git", "rev-parse", "HEAD"])
    if not rev:
        return None
    dirty = command_output(["git", "status", "--porcelain", "--untracked-files=no"])
    return rev + ("+dirty" if dirty else "")


# ---------------------------------------------------------------- progress

def clock(s):
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """cell j/N of the matrix (and round r/R), elapsed time and an ETA from
    the visits made so far: a progress line on a terminal, a plain line a
    visit otherwise."""

    def __init__(self, cells, rounds, multi_compiler):
        self.cells, self.rounds, self.multi = cells, rounds, multi_compiler
        self.total = cells * rounds  # visits still planned, made or not
        self.tty = sys.stdout.isatty()
        self.start = time.monotonic()
        self.width = 0
        self.skipped = 0

    def _where(self, i, rnd):
        """i counts every visit of the run, skipped ones too"""
        where = f"cell {i - rnd * self.cells + 1}/{self.cells}"
        return where + (f" round {rnd + 1}/{self.rounds}" if self.rounds > 1 else "")

    def _name(self, c):
        extra = (f" T={c.threads}" if c.threaded else "") + (f" param={fmt(c.param)}" if c.param else "")
        return (f"{c.compiler} " if self.multi else "") + f"{c.strategy} {c.workload} {c.size}{extra}"

    def skip(self):
        """A visit not made (a later round of a failed or skipped cell): the ETA
        counts only the visits left to make."""
        self.total -= 1
        self.skipped += 1

    def before(self, i, c, rnd=0):
        if not self.tty:
            return
        made = i - self.skipped
        elapsed = time.monotonic() - self.start
        eta = "?" if made == 0 else clock(elapsed / made * (self.total - made))
        line = f"{self._where(i, rnd)}  {self._name(c)}  {clock(elapsed)} elapsed  ETA {eta}"
        sys.stdout.write("\r" + line.ljust(self.width))
        sys.stdout.flush()
        self.width = len(line)

    def after(self, i, c, seconds, rnd=0):
        if c.status == "ok":
            what = f"{tables.format_time(c.summary['median_ns_per_op'])}/op"
        elif c.status == "skipped":
            what = f"skipped: {c.reason}"
        else:
            what = f"FAILED: {c.reason}"
        if self.tty:
            if c.status == "failed":
                sys.stdout.write("\r" + " " * self.width + "\r")
                print(f"{self._where(i, rnd)}  {self._name(c)}  {what}")
                self.width = 0
        else:
            print(f"{self._where(i, rnd)}  {self._name(c)}  {what}  ({seconds:.2f} s)", flush=True)

    def finish(self):
        if self.tty and self.width:
            sys.stdout.write("\r" + " " * self.width + "\r")
            sys.stdout.flush()


# ---------------------------------------------------------------- main

def choose_sizes(w, sizes, quick):
    linear = w["sizes"]
    if isinstance(sizes, list):
        return sizes
    if sizes == "log":
        return w.get("log_sizes") or linear
    if sizes == "linear":
        return linear
    if quick:
        return [linear[-1]]
    return sorted({linear[0], linear[len(linear) // 2], linear[-1]})


def thread_sweep(cpus):
    """1, 2, 4, ... up to the CPUs (and the CPU count itself), then one step past."""
    out, t = [], 1
    while t <= cpus:
        out.append(t)
        t *= 2
    if out[-1] != cpus:
        out.append(cpus)
    return out + [t]


def choose_threads(w, given, default, quick):
    if not w["threaded"]:
        return [1]
    if given:
        return [given]
    if not w.get("thread_sweep"):
        return [default]
    if quick:
        return list(QUICK_THREADS)
    return thread_sweep(os.cpu_count() or 1)


def choose_params(w, given, quick):
    if given is not None:
        return [float(given)]
    params = [float(p) for p in w.get("params") or []]
    if not params:
        return [0.0]
    if quick:
        return [p for p in params if p in QUICK_PARAMS] or params[:1]
    return params


def plan(args):
    """Checks every input and returns the run's configuration; raises UsageError."""
    strategies = read_strategies()
    known = [r for r, _, _ in strategies]
    compilers = args.compilers or [default_compiler()]
    rows_of = {}
    for c in compilers:
        rows = built_rows(bin_dir(args, c), known)
        if not rows:
            have = sorted(d for d in os.listdir(args.build_root)
                          if built_rows(bin_dir(args, d), known)) if os.path.isdir(args.build_root) else []
            raise UsageError(f"no cells built for compiler '{c}' (nothing in {bin_dir(args, c)}); "
                             f"built: {', '.join(have) or 'none'} (run make, or make CC={c})")
        rows_of[c] = rows
    every_built = [r for r in known if any(r in rows_of[c] for c in compilers)]
    every_built += sorted({r for c in compilers for r in rows_of[c]} - set(every_built))
    libs_of = {r: libs for r, libs, _ in strategies}

    def check_row(name, what):
        if name not in known and name not in every_built:
            raise UsageError(f"unknown {what} '{name}'; valid: {', '.join(known)}")
        for c in compilers:
            if name not in rows_of[c]:
                need = f" (it links {libs_of[name]}: is the library installed?)" if libs_of.get(name) else ""
                raise UsageError(f"{what} '{name}' is not built in {bin_dir(args, c)}{need}; "
                                 f"built: {', '.join(rows_of[c])}")

    allocators = args.allocators or every_built
    for a in allocators:
        check_row(a, "strategy")
    notes = []
    if args.baseline:
        baseline = args.baseline
        check_row(baseline, "baseline")
    else:
        baseline = DEFAULT_BASELINE
        if not all(baseline in rows_of[c] for c in compilers):
            notes.append(f"baseline {DEFAULT_BASELINE} is not built; ratios are to {FALLBACK_BASELINE}")
            baseline = FALLBACK_BASELINE
            check_row(baseline, "baseline")
    if baseline not in allocators:
        notes.append(f"added the baseline {baseline} to the strategies")
        allocators = allocators + [baseline]
    order = [r for r in every_built if r in allocators]

    lists = {c: list_workloads(cell_exe(bin_dir(args, c), rows_of[c][0])) for c in compilers}
    wl = {w["name"]: w for w in lists[compilers[0]]["workloads"]}
    names = args.workloads or list(wl)
    for n in names:
        if n not in wl:
            raise UsageError(f"unknown workload '{n}'; valid: {', '.join(wl)}")

    quick = args.quick
    samples = args.samples or (QUICK_SAMPLES if quick else DEFAULT_SAMPLES)
    min_ms = args.min_ms or (QUICK_MIN_MS if quick else DEFAULT_MIN_MS)
    rounds = args.rounds or min(DEFAULT_ROUNDS, samples)
    if rounds > samples:
        raise UsageError(f"--rounds {rounds} is more than --samples {samples}: each round takes "
                         f"at least one sample")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2 ** 31)
    threads = args.threads or max(2, os.cpu_count() or 1)

    cells = []
    for c in compilers:
        for s in order:
            if s not in rows_of[c]:
                continue
            for n in names:
                w = wl[n]
                for size in choose_sizes(w, args.sizes or "default", quick):
                    for t in choose_threads(w, args.threads, threads, quick):
                        for prm in choose_params(w, args.param, quick):
                            cells.append(Cell(c, s, n, size, t, prm, bool(w["threaded"])))
    cells = blocked_shuffle(cells, random.Random(seed))

    run_id = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = args.out or os.path.join(ROOT, "results", run_id)
    try:
        os.makedirs(out_dir, exist_ok=True)
        probe = os.path.join(out_dir, ".allocmark-write-test")
        with open(probe, "w") as f:
            f.write("x")
        os.remove(probe)
    except OSError as e:
        raise UsageError(f"cannot write the run folder '{out_dir}': {e.strerror or e}")
    return {"strategies": strategies, "compilers": compilers, "rows_of": rows_of, "order": order,
            "baseline": baseline, "notes": notes, "lists": lists, "workloads": names,
            "samples": samples, "rounds": rounds, "min_ms": min_ms, "seed": seed, "threads": threads,
            "cells": cells, "run_id": args.out and os.path.basename(os.path.abspath(args.out)) or run_id,
            "out_dir": out_dir, "quick": quick}


def plan_mem_limit(args, cfg):
    """The RLIMIT_AS of each compiler's cells (None: none) and meta.json's
    note on it; prints a note where it is not applied."""
    limit, why = memlimit.choose(args.mem_limit)
    limits, sanitized = {}, []
    for c in cfg["compilers"]:
        if limit and memlimit.sanitized(os.path.join(args.build_root, c)):
            sanitized.append(c)
            limits[c] = None
        else:
            limits[c] = limit
    note = {"bytes": limit, "human": memlimit.human(limit) if limit else None, "why": why}
    if sanitized:
        note["not_applied_to"] = sanitized
        note["not_applied_why"] = "sanitizer builds (-fsanitize) reserve terabytes of address space"
        print(f"note: no memory limit for {', '.join(sanitized)}: sanitizer builds", flush=True)
    if not limit and why.startswith("not applied"):
        print(f"note: memory limit {why}", flush=True)
    cfg["mem_limits"], cfg["mem_limit_note"] = limits, note


def static_meta(args, cfg):
    """The parts of meta.json that do not change during a run (some take a
    second to find out: dpkg-query), gathered once before the first cell."""
    first = cfg["compilers"][0]
    return {
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "kernel": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "compilers": [compiler_info(args, c, cfg["lists"][c]) for c in cfg["compilers"]],
        "libraries": library_versions(bin_dir(args, first), cfg["rows_of"][first], cfg["strategies"]),
        "c_library": " ".join(platform.libc_ver()).strip() or None,
        "git_revision": git_revision(),
    }


def make_meta(args, cfg, cells, started, state):
    ok = [c for c in cells if c.status == "ok"]
    hw = None
    for c in ok:
        v = c.result.get("hw_counters")
        if v and v != "ok":
            hw = v
            break
        if v == "ok":
            hw = "available"
    res = [c.result.get("timer_resolution_ns") for c in ok if c.result.get("timer_resolution_ns")]
    meta = {
        "run_id": cfg["run_id"],
        "date": started.isoformat(timespec="seconds"),
        "state": state,
    }
    meta.update(cfg["static_meta"])
    meta.update({
        "seed": cfg["seed"],
        "command_line": " ".join(shlex.quote(a) for a in sys.argv),
        "strategies": cfg["order"],
        "workloads": cfg["workloads"],
        "samples": cfg["samples"],
        "rounds": cfg["rounds"],
        "min_ms": cfg["min_ms"],
        "threads_for_threaded_workloads": cfg["threads"],
        "param": args.param,
        "baseline": cfg["baseline"],
        "notes": cfg["notes"],
        "quick": cfg["quick"],
        "sizes": args.sizes or "default",
        "timeout_s": args.timeout,
        "mem_limit": cfg.get("mem_limit_note"),
        "cpu_pinning": cfg["pinner"].note if cfg.get("pinner") else None,
        "timer_resolution_ns": min(res) if res else None,
        "hardware_counters": hw or "unknown: no cell finished",
        "cells": {"planned": len(cells), "ok": len(ok),
                  "failed": sum(c.status == "failed" for c in cells),
                  "not_run": sum(c.status == "pending" for c in cells)},
        "elapsed_s": round((datetime.datetime.now() - started).total_seconds(), 1),
    })
    skipped = sum(c.status == "skipped" for c in cells)
    if skipped:  # workloads that do not apply to a strategy (cell status "skipped")
        meta["cells"]["skipped"] = skipped
    return meta


def print_list(args):
    strategies = read_strategies()
    known = [r for r, _, _ in strategies]
    compilers = args.compilers or [default_compiler()]
    built = {c: built_rows(bin_dir(args, c), known) for c in compilers}
    print("strategies (allocators/strategies.txt):")
    width = max(len(r) for r in known)
    for r, libs, desc in strategies:
        missing = [c for c in compilers if r not in built[c]]
        tag = f"  [not built{' for ' + ', '.join(missing) if len(compilers) > 1 else ''}" \
              f"{': needs ' + libs if libs else ''}]" if missing else ""
        base = "  (default baseline)" if r == DEFAULT_BASELINE else ""
        print(f"  {r.ljust(width)}  {desc}{base}{tag}")
    rows = next((built[c] for c in compilers if built[c]), None)
    if not rows:
        print("workloads: build the cells first (make)")
        return 0
    c = next(c for c in compilers if built[c])
    info = list_workloads(cell_exe(bin_dir(args, c), rows[0]))
    print("workloads (sizes: default sweep; linear: whole sweep; log):")
    for w in info["workloads"]:
        print(f"  {w['name']}{'  [threaded]' if w['threaded'] else ''}: {w['summary']}")
        print(f"      default {','.join(map(str, choose_sizes(w, 'default', False)))}")
        print(f"      linear  {','.join(map(str, w['sizes']))}")
        print(f"      log     {','.join(map(str, w.get('log_sizes') or []))}")
    return 0


def write_stats_tables(args, cfg):
    """The counting wrapper's table (cell option --stats on the -stats build) of
    the baseline strategy, for each workload at its largest size in this run:
    stats-<strategy>-<workload>-<size>.txt in the run folder."""
    compiler, strategy = cfg["compilers"][0], cfg["baseline"]
    exe = cell_exe(bin_dir(args, compiler), strategy, stats_build=True)
    if not os.path.exists(exe):
        print(f"note: no counting tables ({exe} is not built)")
        return
    cpus = os.cpu_count() or 1
    for name in cfg["workloads"]:
        mine = [c for c in cfg["cells"] if c.workload == name and c.compiler == compiler]
        if not mine:
            continue
        size = max(c.size for c in mine)
        threads = max([c.threads for c in mine if c.threads <= cpus] or [1])
        param = min(c.param for c in mine)
        cmd = [exe, "--workload", name, "--size", str(size), "--seed", str(cfg["seed"]), "--stats"]
        limit = cfg.get("mem_limits", {}).get(compiler)
        if limit:
            cmd += ["--mem-limit", str(limit)]
        if threads > 1:
            cmd += ["--threads", str(threads)]
        if param:
            cmd += ["--param", repr(float(param))]
        with tempfile.TemporaryDirectory(prefix="allocmark-") as scratch:
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, cwd=scratch)
            except subprocess.TimeoutExpired:
                print(f"note: counting table of {strategy} {name} {size}: timed out")
                continue
        out = parse_json_line(p.stdout)
        if p.returncode != 0 or not out or out.get("status") != "ok":
            why = (out or {}).get("reason") or (p.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"note: counting table of {strategy} {name} {size}: {why}")
            continue
        body = "\n".join(line for line in p.stdout.splitlines() if not line.startswith("{"))
        try:
            write_atomic(os.path.join(cfg["out_dir"], f"stats-{strategy}-{name}-{size}.txt"), body.rstrip() + "\n")
        except OSError as e:  # full disk: the results proper are written (or rescued) next
            print(f"note: counting table of {strategy} {name} {size} not written: {e.strerror or e}")


def block_of(cell):
    """The cells one table row compares: every strategy and compiler at one
    workload, size, thread count and param."""
    return (cell.workload, cell.size, cell.threads, cell.param)


def blocked_shuffle(cells, rng):
    """The cells in a random order of blocks, each block in a random order of
    its own. A block's cells run one after the other, within seconds, so they
    share the machine's state of the moment (a vCPU's slow spells last tens of
    seconds), and the ratios between them do not depend on which cell met
    which state. The random order inside a block keeps drift from favouring
    a strategy."""
    blocks = {}
    for c in cells:
        blocks.setdefault(block_of(c), []).append(c)
    order = list(blocks.values())
    rng.shuffle(order)
    for b in order:
        rng.shuffle(b)
    return [c for b in order for c in b]


def visits(cells, rounds, seed):
    """(round, cell) in the order measured: round 0 in the plan's order (a
    blocked shuffle), each later round in a new blocked shuffle of its own,
    from the run's seed."""
    for rnd in range(rounds):
        order = cells if rnd == 0 else blocked_shuffle(cells, random.Random(f"{seed} round {rnd}"))
        for c in order:
            yield rnd, c


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


def run(args):
    cfg = plan(args)
    cells, out_dir = cfg["cells"], cfg["out_dir"]
    for n in cfg["notes"]:
        print(f"note: {n}")
    print(f"allocmark: {len(cells)} cells ({', '.join(cfg['compilers'])}; {len(cfg['order'])} strategies; "
          f"{len(cfg['workloads'])} workloads), {cfg['samples']} samples of >= {cfg['min_ms']:g} ms "
          f"in {cfg['rounds']} round{'s' if cfg['rounds'] > 1 else ''}, "
          f"seed {cfg['seed']}, baseline {cfg['baseline']}; writing {out_dir}", flush=True)
    cfg["static_meta"] = static_meta(args, cfg)
    plan_mem_limit(args, cfg)
    first = cfg["compilers"][0]
    probe_row = cfg["baseline"] if cfg["baseline"] in cfg["rows_of"][first] else cfg["rows_of"][first][0]
    try:
        cfg["pinner"] = pinning.Pinner(cell_exe(bin_dir(args, first), probe_row), args.cpu)
    except ValueError as e:
        raise UsageError(str(e))
    if cfg["pinner"].cpu is not None:
        print(f"single-threaded cells run on CPU {cfg['pinner'].cpu} ({cfg['pinner'].note['why']})", flush=True)
    started = datetime.datetime.now()
    ratios = Ratios(cfg["baseline"], cfg["seed"])
    progress = Progress(len(cells), cfg["rounds"], len(cfg["compilers"]) > 1)
    state = "finished"
    write_error = None
    last_write = time.monotonic()
    prev = signal.signal(signal.SIGTERM, on_sigterm)
    # the run folder's temporary space (mmap_file's files, which the strategy
    # unlinks as soon as they are mapped): gone at the end, also on Ctrl-C
    cfg["tmpdir"] = os.path.join(out_dir, "tmp")
    try:
        os.makedirs(cfg["tmpdir"], exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="allocmark-") as scratch:
            block = None
            for i, (rnd, c) in enumerate(visits(cells, cfg["rounds"], cfg["seed"])):
                if rnd and c.status != "ok":
                    progress.skip()
                    continue
                if block_of(c) != block:  # the probe moves cells to another CPU between blocks only
                    block = block_of(c)
                    cfg["pinner"].refresh()
                progress.before(i, c, rnd)
                t0 = time.monotonic()
                measure(c, args, cfg, scratch, rnd)
                progress.after(i, c, time.monotonic() - t0, rnd)
                if time.monotonic() - last_write >= WRITE_EVERY_S:
                    try:
                        write_outputs(out_dir, cells, ratios, make_meta(args, cfg, cells, started, "running"),
                                      cfg["order"])
                    except OSError as e:  # full disk: keep measuring, the last write tries again
                        if not write_error:
                            print(f"allocmark: cannot write {out_dir} ({e.strerror or e}); still measuring",
                                  file=sys.stderr, flush=True)
                        write_error = e
                    last_write = time.monotonic()
    except KeyboardInterrupt:
        state = "interrupted"
    finally:
        signal.signal(signal.SIGTERM, prev)
        pinning.place(None)  # the counting tables and the report: every CPU again
        shutil.rmtree(cfg["tmpdir"], ignore_errors=True)
        progress.finish()
    finalize(cells, cfg["seed"])
    if state == "finished" and not args.no_stats_tables:
        try:
            write_stats_tables(args, cfg)
        except KeyboardInterrupt:
            state = "interrupted"
    meta = make_meta(args, cfg, cells, started, state)
    try:
        text = write_outputs(out_dir, cells, ratios, meta, cfg["order"])
        write_error = None
        point_latest(out_dir)
    except OSError as e:
        write_error = e
        text = rescue_outputs(out_dir, e, cells, ratios, meta, cfg["order"])
    print(text)
    if len(cfg["compilers"]) > 1:
        try:
            cross = crosscc.write(out_dir, cfg["compilers"])
            if cross:
                print(cross)
        except (rundir.RunError, OSError) as e:
            print(f"allocmark: no cross-compiler tables: {e}", file=sys.stderr)
    failed = [c for c in cells if c.status == "failed"]
    done = [c for c in cells if c.status != "pending"]
    for c in failed:
        print(f"failed: {c.compiler} {c.strategy} {c.workload} {c.size}: {c.reason}")
    elapsed = (datetime.datetime.now() - started).total_seconds()
    if write_error:
        print(f"{len(done)} of {len(cells)} cells done; {out_dir} could not be written: "
              f"{write_error.strerror or write_error}")
        return EXIT_NOT_WRITTEN
    if state == "interrupted":
        print(f"interrupted: {len(done)} of {len(cells)} cells done; results in {out_dir}")
        return 130
    print(f"{len(cells)} cells ({len(failed)} failed) in {clock(elapsed)}; results in {out_dir}")
    return 3 if cells and len(failed) == len(cells) else 0


def main(argv=None):
    args = make_parser().parse_args(argv)
    try:
        if args.list:
            return print_list(args)
        return run(args)
    except UsageError as e:
        print(f"allocmark: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
