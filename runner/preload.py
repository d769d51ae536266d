"""preload.py: a program itself run under each malloc library the suite has a
row for (system-jemalloc, system-tcmalloc, ...: LD_PRELOAD of the shared
object the row's cell links), in rounds timed by hyperfine, written into a run
folder beside the replay of its trace (runfolder/preload.py). Driven by
`make preload CMD='...' [TRACE=...]`, which builds the malloc rows' cells
first: their links say which file each library is."""
import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile

from runfolder import catalog, preload, rundir
from runfolder.errors import RunError, UsageError
from runner.cli import names_arg, whole_number
from runner.hyperfine import run_folder

DEFAULT_ROUNDS = 10
MIN_ROUNDS = 6  # the sign test's least for a 95% interval (stats.MIN_VISITS)
TIMEOUT_S = 600


def make_parser():
    ap = argparse.ArgumentParser(prog="python3 -m runner.preload", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cmd", required=True, help="the program and its arguments, one string (split as a shell "
                                                 "would, never run by one)")
    ap.add_argument("--trace", help="the program's trace (a file, or its NAME): the replay of trace:NAME in "
                                    "the run folder is held against the program")
    ap.add_argument("--name", help="the name of the result files (default: the trace's, else the program's)")
    ap.add_argument("--run", default="results/latest", help="run folder to write into (results/latest)")
    ap.add_argument("--rounds", type=whole_number(MIN_ROUNDS), default=DEFAULT_ROUNDS,
                    help=f"rounds, each running the program once under every library ({DEFAULT_ROUNDS})")
    ap.add_argument("--allocators", type=names_arg, metavar="A,B",
                    help="malloc rows (default: system and every system-<library> row built)")
    ap.add_argument("--compiler", default="gcc", help="the build folder whose cells name the libraries (gcc)")
    ap.add_argument("--seed", type=whole_number(0), help="the rounds' orders (default: random)")
    ap.add_argument("--check", action="store_true",
                    help="check the command and the rows, then exit (make preload does, before building)")
    ap.add_argument("--hyperfine", default="hyperfine", help=argparse.SUPPRESS)
    ap.add_argument("--build-root", default=os.path.join(catalog.ROOT, "build"), help=argparse.SUPPRESS)
    return ap


def malloc_rows(rows):
    """the rows that are the same code over another malloc: source system, no
    flags of their own (not the sized-free variants)"""
    return [r for r in rows if r.source == "system" and not r.cflags and not r.virtual]


def linked_file(exe, names):
    """the file ldd resolves for the first of lib<name>.so* the executable links"""
    p = subprocess.run(["ldd", exe], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        soname, _, rest = line.strip().partition(" => ")
        if any(soname.startswith(f"lib{n}.so") for n in names) and rest.startswith("/"):
            return rest.split()[0]
    return None


def libraries(args):
    """[(row, preload file or "")]: system first, then each row built"""
    rows = malloc_rows(catalog.rows_or_usage_error())
    bindir = catalog.bin_dir(args.build_root, args.compiler)
    built = set(catalog.built_rows(bindir, [r.name for r in rows]))
    wanted = args.allocators or [r.name for r in rows]
    known = {r.name: r for r in rows}
    out, notes = [], []
    for name in wanted:
        row = known.get(name)
        if row is None:
            raise UsageError(f"'{name}' is not a malloc row; those are: {', '.join(known)}")
        if not row.libs:
            out.append((name, ""))
        elif name not in built:
            notes.append(f"{name}: its cell is not built in {bindir} (its library is missing), left out")
        else:
            path = linked_file(catalog.cell_exe(bindir, name), catalog.library_names(row.libs))
            if path:
                out.append((name, path))
            else:
                notes.append(f"{name}: ldd names no {row.libs} in its cell, left out")
    if preload.SYSTEM not in [n for n, _ in out]:
        out.insert(0, (preload.SYSTEM, ""))
    return out, notes


def command_of(cmd, path):
    """the program under one library: env, so that every library's command
    starts the same way, the system's with no preload"""
    return ["env", f"LD_PRELOAD={path}" if path else "-u", *([] if path else ["LD_PRELOAD"]), *cmd]


def once(argv):
    """(exit status, the end of stderr) of one run"""
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    tail = p.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
    return p.returncode, tail[0]


def round_times(args, commands, order):
    """one round: hyperfine runs each command once, in the order given;
    {row: seconds}"""
    with tempfile.TemporaryDirectory(prefix="allocmark-preload-") as tmp:
        js = os.path.join(tmp, "round.json")
        hf = [args.hyperfine, "-N", "--runs", "1", "--style", "none", "--export-json", js]
        for row in order:
            hf += ["--command-name", row, shlex.join(commands[row])]
        p = subprocess.run(hf, capture_output=True, text=True, timeout=TIMEOUT_S * len(order))
        if p.returncode != 0:
            raise UsageError(f"hyperfine failed (exit status {p.returncode}): {p.stderr.strip()[-500:]}")
        with open(js, encoding="utf-8") as f:
            results = json.load(f)["results"]
    return {r["command"]: r["times"][0] for r in results}


def trace_name(trace):
    if not trace:
        return None
    base = os.path.basename(trace)
    return base[len("trace:"):] if base.startswith("trace:") else os.path.splitext(base)[0]


def measure(args, cmd):
    libs, notes = libraries(args)
    commands = {row: command_of(cmd, path) for row, path in libs}
    results = []
    for row, path in libs:
        status, tail = once(commands[row])
        if row == preload.SYSTEM and status != 0:
            raise UsageError(f"the command failed (exit status {status}) without a preload: {tail or 'no message'}")
        results.append(preload.Library(row, path, [], "ok" if status == 0 else "failed",
                                       "" if status == 0 else f"exit status {status}: {tail}"))
    ok = [lib.row for lib in results if lib.status == "ok"]
    rng = random.Random(args.seed)
    by_row = {lib.row: lib for lib in results}
    for i in range(args.rounds):
        order = ok[:]
        rng.shuffle(order)
        print(f"round {i + 1}/{args.rounds}: {', '.join(order)}", flush=True)
        for row, secs in round_times(args, commands, order).items():
            by_row[row].seconds.append(secs)
    return results, notes


def main(argv=None):
    args = make_parser().parse_args(argv)
    try:
        cmd = shlex.split(args.cmd)
        if not cmd:
            raise UsageError("CMD is empty: give the program and its arguments, CMD='./prog args'")
        if not shutil.which(cmd[0]):
            raise UsageError(f"cannot start '{cmd[0]}': no such program (CMD='{args.cmd}')")
        if not sys.platform.startswith("linux"):
            raise UsageError("make preload needs Linux (LD_PRELOAD)")
        known = [r.name for r in malloc_rows(catalog.rows_or_usage_error())]
        for name in args.allocators or []:
            if name not in known:
                raise UsageError(f"'{name}' is not a malloc row; those are: {', '.join(known)}")
        if args.check:
            return 0
        if not shutil.which(args.hyperfine):
            print("allocmark: hyperfine is missing; install it with: sudo apt-get install hyperfine; "
                  "skipping make preload")
            return 0
        name = args.name or trace_name(args.trace) or os.path.basename(cmd[0])
        if not all(c.isalnum() or c in "_.+-" for c in name):
            raise UsageError(f"the name '{name}' has characters other than letters, digits and _.+- (give --name)")
        libs, notes = measure(args, cmd)
        folder = run_folder(args.run)  # made only now: bad input leaves no folder
        run = rundir.load(folder)
        compiler = preload.first_compiler(run.meta, args.compiler)
        for n in notes:
            print(f"note: {n}")
        trace = "trace:" + trace_name(args.trace) if args.trace else ""
        result = preload.Preload(name, cmd, trace, args.rounds, "hyperfine -N, one run a round", libs)
        md, verdict = preload.write(folder, result, run.ratios, compiler, run.summary)
        with open(md, encoding="utf-8") as f:
            print(f.read())
        print(f"wrote {md} (and .json)")
        return 0
    except (UsageError, RunError) as e:
        print(f"allocmark: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
