"""hyperfine.py: whole-process timings with hyperfine, next to the runner's
per-operation figures: (a) every strategy's cell on one workload and size,
(b) every compiler's build of one strategy. Each process does the same fixed
work (--reps R, one sample). Writes hyperfine-strategies.json|md and
hyperfine-compilers.json|md into the run folder. Peak memory is not
hyperfine's: it is the cell's own VmHWM, read from one extra run of each command.
Driven by `make hyperfine`, which builds the cells first."""
import argparse
import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

from runner import cell_protocol, meta
from runfolder import catalog, outputs
from runner.cell_protocol import parse_json_line
from runner.cli import names_arg, whole_number
from runfolder.errors import UsageError

DEFAULT_SIZE = 1810
MIN_RUNS = 10
WARMUP = 3
# calibration: one sample of this many ms with the --strategy row of the first compiler; each
# timed process then warms up (one repetition of each seed) and takes that one sample
CALIBRATE_MS = 50.0


def make_parser():
    ap = argparse.ArgumentParser(prog="python3 -m runner.hyperfine", description=__doc__.split("\n\n")[0])
    ap.add_argument("--compilers", type=names_arg, required=True, metavar="C,D",
                    help="build folders build/<name>/bin; the first one's strategies are compared")
    ap.add_argument("--run", default="results/latest", help="run folder to write into (results/latest)")
    ap.add_argument("--workload", help="workload (default: the one the cell ranks first for hyperfine in "
                                       "--list, thrash_pool_map_list_unaligned)")
    ap.add_argument("--size", type=whole_number(1), default=DEFAULT_SIZE, help=f"size ({DEFAULT_SIZE})")
    ap.add_argument("--reps", type=whole_number(1),
                    help=f"repetitions every process does (default: what makes one sample of the "
                         f"--strategy row of the first compiler last {CALIBRATE_MS:g} ms)")
    ap.add_argument("--runs", type=whole_number(MIN_RUNS), default=MIN_RUNS,
                    help=f"least runs per command (hyperfine --min-runs, at least {MIN_RUNS})")
    ap.add_argument("--strategy", default="system",
                    help="strategy whose builds are compared across compilers (system)")
    ap.add_argument("--allocators", type=names_arg, metavar="A,B",
                    help="strategies for (a) (every built one)")
    ap.add_argument("--hyperfine", default="hyperfine", help=argparse.SUPPRESS)
    ap.add_argument("--build-root", default=os.path.join(catalog.ROOT, "build"), help=argparse.SUPPRESS)
    return ap


def run_folder(path):
    """The folder to write into: RUN itself, or a new results/<timestamp>/
    when RUN is the `latest` link and no run exists yet."""
    if os.path.isdir(path):
        return path
    if os.path.basename(os.path.normpath(path)) == "latest":
        path = os.path.join(os.path.dirname(os.path.normpath(path)),
                            datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create the run folder '{path}': {e.strerror or e}")
    return path


def default_workload(listing):
    """The workload whose --list entry ranks first for hyperfine (1 before 2;
    0: never), or the first listed."""
    ranked = sorted((w["hyperfine"], i) for i, w in enumerate(listing["workloads"]) if w.get("hyperfine"))
    return listing["workloads"][ranked[0][1] if ranked else 0]["name"]


def cell_command(exe, workload, size, reps):
    """A whole process timed by hyperfine: the row alone, as a program would run it."""
    return cell_protocol.command(exe, workload, size, samples=1, reps=reps, alone=True)


def run_once(cmd):
    """One run of a cell: its JSON (peak_rss, reps); UsageError when it fails."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise UsageError(f"{' '.join(cmd)} did not finish in 300 s")
    out = parse_json_line(p.stdout)
    if p.returncode != 0 or not out or out.get("status") != "ok":
        why = (out or {}).get("reason") or (p.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"{' '.join(cmd)} failed (exit status {p.returncode}): {why}")
    return out


def time_commands(args, named, out_dir, stem, title, reps, workload, size, cc_note):
    """hyperfine over named [(name, argv)]; writes <stem>.json and <stem>.md."""
    rss = {name: run_once(cmd).get("peak_rss") for name, cmd in named}
    with tempfile.TemporaryDirectory(prefix="allocmark-hf-") as tmp:
        js, md = os.path.join(tmp, "out.json"), os.path.join(tmp, "out.md")
        hf = [args.hyperfine, "-N", "--warmup", str(WARMUP), "--min-runs", str(args.runs),
              "--export-json", js, "--export-markdown", md]
        for name, cmd in named:
            hf += ["--command-name", name, " ".join(shlex.quote(a) for a in cmd)]
        print(f"== {title} ==", flush=True)
        p = subprocess.run(hf)
        if p.returncode != 0:
            raise UsageError(f"hyperfine failed (exit status {p.returncode}) on {title}")
        with open(js, encoding="utf-8") as f:
            data = json.load(f)
        with open(md, encoding="utf-8") as f:
            table = f.read()
    version = meta.command_output([args.hyperfine, "--version"]) or "hyperfine"
    data["allocmark"] = {"workload": workload, "size": size, "reps": reps, "samples": 1,
                         "warmup": WARMUP, "min_runs": args.runs, "hyperfine": version,
                         "compilers": cc_note,
                         "peak_rss_source": "the cell's own VmHWM, one extra run of each command"}
    for r in data.get("results", []):
        r["peak_rss_bytes"] = rss.get(r.get("command"))
    note = (f"Each process: `--workload {workload} --size {size} --reps {reps} --samples 1` "
            f"(a warm-up of one repetition of each seed, then one sample of {reps} repetitions: the "
            f"same work in every command). {version}, {WARMUP} warm-up runs, at least {args.runs} runs, no shell "
            f"(`-N`). Compilers: {cc_note}.\n\n"
            f"hyperfine times whole processes (start, page faults, exit included) and does not "
            f"measure memory: the peak memory below is the cell's own measurement (VmHWM, as "
            f"`peak_rss_bytes` in summary.csv), from one extra run of each command.\n\n")
    peak = "| command | peak RSS |\n|:---|---:|\n" + "".join(
        f"| `{name}` | {rss[name] / 1048576:.1f} MiB |\n" if rss.get(name) else f"| `{name}` | - |\n"
        for name, _ in named)
    outputs.write_atomic(os.path.join(out_dir, stem + ".json"), json.dumps(data, indent=2) + "\n")
    outputs.write_atomic(os.path.join(out_dir, stem + ".md"),
                        f"# {title}\n\n{note}{table.rstrip()}\n\n{peak}")
    return os.path.join(out_dir, stem + ".md")


def main(argv=None):
    args = make_parser().parse_args(argv)
    try:
        if not shutil.which(args.hyperfine):
            print("allocmark: hyperfine is missing; install it with: sudo apt-get install hyperfine; "
                  "skipping make hyperfine")
            return 0
        listed = [r.name for r in catalog.rows_or_usage_error()]
        rows_of = {}
        for c in args.compilers:
            bindir = catalog.bin_dir(args.build_root, c)
            rows_of[c] = catalog.built_rows(bindir, listed)
            if not rows_of[c]:
                raise UsageError(f"no cells built for compiler '{c}' (nothing in {bindir})")
        ref = args.compilers[0]
        # the @virtual twins only by name, as in a run
        strategies = args.allocators or [r for r in rows_of[ref] if not r.endswith(catalog.VIRTUAL_SUFFIX)]
        for s in strategies:
            if s not in rows_of[ref]:
                raise UsageError(f"strategy '{s}' is not built for {ref}; built: {', '.join(rows_of[ref])}")
        exe = {c: {r: catalog.cell_exe(catalog.bin_dir(args.build_root, c), r) for r in rows_of[c]}
               for c in rows_of}
        listing = cell_protocol.list_workloads(exe[ref][rows_of[ref][0]])
        names = [w["name"] for w in listing["workloads"]]
        workload = args.workload or default_workload(listing)
        if workload not in names:
            raise UsageError(f"unknown workload '{workload}'; valid: {', '.join(names)}")
        several = len(args.compilers) > 1
        if several:
            for c in args.compilers:
                if args.strategy not in rows_of[c]:
                    raise UsageError(f"strategy '{args.strategy}' is not built for {c}; built: {', '.join(rows_of[c])}")
        reps = args.reps
        if not reps:
            base = args.strategy if args.strategy in rows_of[ref] else strategies[0]
            cal = run_once(cell_protocol.command(exe[ref][base], workload, args.size, samples=1,
                                                 min_ms=CALIBRATE_MS, alone=True))
            reps = int(cal["reps"])
        out_dir = run_folder(args.run)
        info = {c: meta.compiler_info(args.build_root, c, listing if c == ref else
                                      cell_protocol.list_workloads(exe[c][rows_of[c][0]]))
                for c in args.compilers}

        def note(cs):
            return "; ".join(f"{c} = {info[c].get('version_line') or info[c].get('version') or '?'}"
                             f"{', ' + info[c]['opt'] if info[c].get('opt') else ''}" for c in cs)

        written = [time_commands(args, [(s, cell_command(exe[ref][s], workload, args.size, reps))
                                        for s in strategies],
                                 out_dir, "hyperfine-strategies",
                                 f"hyperfine: strategies on {workload} {args.size} ({ref})",
                                 reps, workload, args.size, note([ref]))]
        if several:
            written.append(time_commands(
                args, [(c, cell_command(exe[c][args.strategy], workload, args.size, reps))
                       for c in args.compilers],
                out_dir, "hyperfine-compilers",
                f"hyperfine: {args.strategy} built by each compiler, {workload} {args.size}",
                reps, workload, args.size, note(args.compilers)))
        for w in written:
            print(f"wrote {w} (and .json)")
        return 0
    except UsageError as e:
        print(f"allocmark: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
