"""cli.py: the runner's command line: its options and the converters that
read their values (a value that does not read is bad input, exit status 2,
with the value echoed). What the values mean together is config.py's job."""
import argparse
import os
import re

from runner import config, layout, memlimit
from runfolder import aggregate, catalog
from runfolder.catalog import ROOT


def whole_number(minimum, maximum=None, most_text=None):
    """most_text: how the message names maximum (e.g. '2^64 - 1')."""
    def parse(s):
        try:
            v = int(s, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: '{s}'")
        if v < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}: '{s}'")
        if maximum is not None and v > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {most_text or maximum}: '{s}'")
        return v
    return parse


def _float(s):
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{s}'")


def positive_number(s):
    v = _float(s)
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number: '{s}'")
    return v


def non_negative_number(s):
    v = _float(s)
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a non-negative number: '{s}'")
    return v


def margin_arg(s):
    """A relative margin: 0.02, or 2% with a percent sign; 0 to 1."""
    text = s.strip()
    try:
        v = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a margin: '{s}' (give 0.02 or 2%)")
    if not 0 <= v < 1 or v != v:
        raise argparse.ArgumentTypeError(f"a margin is from 0 to 1 (0% to 100%): '{s}'")
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
        if v > config.MAX_SIZE:
            raise argparse.ArgumentTypeError(
                f"size '{part}' cannot fit in memory (at most 2^40 = {config.MAX_SIZE}: elements, bytes or MiB)")
        if v in out:
            # each of its cells would be visited twice a round, the two pooled as one visit
            raise argparse.ArgumentTypeError(f"size '{part}' is given twice: give each size once")
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


def shard_arg(s):
    """'i/N' as (i, N), 1 <= i <= N: the shard of a count run (counts.shard_cells)."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", s or "")
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise argparse.ArgumentTypeError(f"not a shard: '{s}' (give i/N, 1 <= i <= N, e.g. 1/2)")
    return int(m.group(1)), int(m.group(2))


def names_arg(s):
    return [n.strip() for n in s.split(",") if n.strip()]


def make_parser():
    ap = argparse.ArgumentParser(
        prog="python3 -m runner.allocmark",
        description="Run the allocmark benchmark matrix: every (compiler, strategy, workload, size) "
                    "cell in fresh processes (one a round), in a shuffled order of blocks (a block: the "
                    "cells one line of a table compares, run one after the other); write CSV files, meta.json "
                    "and tables to the run folder.",
        epilog="Exit status: 0 done (some cells may have failed: see summary.csv), 2 bad input, "
               "3 every cell failed, 4 the run folder could not be written, 130 interrupted "
               "(finished cells are kept).")
    ap.add_argument("--list", action="store_true", help="list strategies, workloads and sizes, then exit")
    ap.add_argument("--regenerate", metavar="RUN",
                    help="rewrite summary.csv, ratios.csv and the tables of the run folder RUN from its "
                         "samples (and compilers.* for a run of several compilers), then exit")
    ap.add_argument("--allocators", type=names_arg, metavar="A,B",
                    help="strategies (rows of allocators/strategies.txt) to run (default: every row "
                         "built in build/<compiler>/bin)")
    ap.add_argument("--virtual", action="store_true",
                    help="also measure each row's <row>@virtual twin (its strategy through a table of "
                         "function pointers; built with make VIRTUAL=1)")
    ap.add_argument("--workloads", type=names_arg, metavar="W,V",
                    help="workloads (default: those of --suite)")
    ap.add_argument("--trace", action="append", metavar="FILE",
                    help="a recorded trace (make record, docs/trace.md) replayed through every strategy as "
                         "the workload trace:NAME, NAME the file's name without its extension; give it "
                         "again for several; with traces alone a run measures them alone (--workloads "
                         "adds others)")
    ap.add_argument("--shipped-traces", action="store_true",
                    help="without --trace and --workloads, add the traces of real programs in traces/ to the "
                         "suite's workloads (--quick: python-csv alone); make bench passes it when TRACE, "
                         "WORKLOADS and SUITE are unset")
    ap.add_argument("--suite", default="default", metavar="NAME",
                    help="without --workloads, the workloads of this suite: default (what fits make bench's "
                         "time budget), dimensions (the six dimensions of allocation), all (default: default)")
    ap.add_argument("--sizes", type=sizes_arg, metavar="N,M|linear|log",
                    help="sizes: numbers, 'linear' (each workload's whole linear sweep) or 'log' "
                         "(its log sweep); default: every other size of the linear sweep plus the last")
    ap.add_argument("--samples", type=whole_number(3), metavar="K",
                    help=f"samples per one-thread cell in the planned rounds, each beside one of its "
                         f"partner's (default {config.DEFAULT_SAMPLES}, --quick {config.QUICK_SAMPLES}; at "
                         f"least 3); a threaded cell takes one a visit")
    ap.add_argument("--rounds", type=whole_number(1), metavar="R",
                    help=f"visits (processes) per cell: the samples are split between R rounds over the "
                         f"whole matrix, each in a new order (default {config.DEFAULT_ROUNDS}, --quick "
                         f"{config.QUICK_ROUNDS}; at most --samples; fewer than 6 cannot mark a difference)")
    ap.add_argument("--revisits", type=whole_number(0), metavar="E",
                    help=f"revisit a block at most E times: the cells of its undecided ratios (their "
                         f"interval too wide for the margin) with the baseline's, or every cell when a "
                         f"CPU it ran on changed state (default {config.DEFAULT_REVISITS}; 0: never)")
    ap.add_argument("--budget", type=positive_number, metavar="S",
                    help=f"seconds the run may take: a planned round past the sixth starts only where "
                         f"the time left has room for it, and the revisits stop where the run would pass it "
                         f"(default: no limit; --quick "
                         f"{config.QUICK_BUDGET_S:g} a compiler)")
    ap.add_argument("--margin", type=margin_arg, metavar="M",
                    help=f"a ratio is marked as a difference when its 95%% interval excludes 1 and it is "
                         f"at least M away from 1: 0.02 or 2%% (default {aggregate.Settings.margin:g})")
    ap.add_argument("--no-control", action="store_true",
                    help=f"leave out the A/A control row ({catalog.CONTROL}: a second, separately linked "
                         f"build of monotonic) that every run otherwise measures in every block")
    ap.add_argument("--min-ms", type=positive_number, metavar="X",
                    help=f"shortest sample in ms of a one-thread cell (default {config.DEFAULT_MIN_MS:g}, "
                         f"--quick {config.QUICK_MIN_MS:g}); a threaded cell's at least "
                         f"{config.THREADED_MIN_MS:g} ({config.QUICK_THREADED_MIN_MS:g} with --quick), a "
                         f"one-thread trace cell's at least {config.TRACE_MIN_MS:g}")
    ap.add_argument("--baseline", metavar="S",
                    help=f"strategy the ratios divide by (default {config.DEFAULT_BASELINE}; "
                         f"{config.FALLBACK_BASELINE} where that is not built)")
    # the cells read the seed as a 64-bit unsigned number
    ap.add_argument("--seed", type=whole_number(0, 2 ** 64 - 1, "2^64 - 1"), metavar="S",
                    help="seed of the cell order and the workloads, 0 to 2^64 - 1 (default: random, recorded)")
    ap.add_argument("--threads", type=whole_number(1), metavar="T",
                    help="threads for threaded workloads (default: the number of CPUs)")
    ap.add_argument("--param", type=non_negative_number, metavar="P",
                    help="the workloads' knob (default: each workload's own)")
    ap.add_argument("--out", metavar="DIR", help="run folder (default results/<YYYYmmdd-HHMMSS>)")
    ap.add_argument("--compilers", type=names_arg, metavar="C,D",
                    help="compiler build folders build/<name>/bin to use (default: the name of $CC, "
                         "as the Makefile uses)")
    ap.add_argument("--quick", action="store_true",
                    help=f"small matrix: the largest size, {config.QUICK_SAMPLES} samples in "
                         f"{config.QUICK_ROUNDS} rounds, min-ms {config.QUICK_MIN_MS:g}")
    ap.add_argument("--cpu", type=cpu_arg, default="auto", metavar="N|auto|none",
                    help="CPU for the single-threaded cells (default auto: the fastest in a short "
                         "probe; none: wherever the OS puts them)")
    ap.add_argument("--layout", choices=layout.CHOICES, default=layout.DEFAULT,
                    help="where each cell process's memory and code land: random (default), the "
                         "system's draw anew for each process, so that no executable keeps one lucky "
                         "or unlucky layout; fixed, address-space randomization off for the cells "
                         "(Linux): narrower intervals, every process of an executable at the same "
                         "addresses; shifted, off too, and visit N of each cell moves its heap and "
                         "mappings as placement N of one fixed sequence, the same in every run "
                         "(docs/bench.md, Layout)")
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
    ap.add_argument("--keep-allocator-env", action="store_true",
                    help="pass LD_PRELOAD, GLIBC_TUNABLES, MALLOC_*, MIMALLOC_*, TCMALLOC_* and the like "
                         "on to the cells (default: removed, so a row measures its own malloc with its "
                         "defaults); meta.json records them either way")
    ap.add_argument("--count", action="store_true",
                    help="count instead of timing: every one-thread cell once under valgrind's callgrind with "
                         "cache simulation (fixed caches, no address-space randomization, fixed "
                         "repetitions), on every CPU at once; writes counts.csv, counts.json and counts.txt "
                         "into --out (beside a timed run's files when the folder holds one); threaded cells and mmap_pressure and "
                         "utilization are marked not counted (docs/bench.md, Counts)")
    ap.add_argument("--shard", type=shard_arg, metavar="I/N",
                    help="with --count: only the I-th of N parts of the matrix (merge the parts with --merge)")
    ap.add_argument("--merge", nargs="+", metavar="PART",
                    help="merge the count folders of every shard of one split into --out, as the unsplit "
                         "count run writes it, then exit")
    ap.add_argument("--build-root", default=os.path.join(ROOT, "build"), help=argparse.SUPPRESS)
    return ap


def parse(argv=None):
    return make_parser().parse_args(argv)
