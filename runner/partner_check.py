"""partner_check.py: does the partner change what it stands beside, and does
its own time depend on the executable it is in? For each row named, ROUNDS
rounds; a round runs every row's cell twice, once beside its partner and once
alone (--alone), in a shuffled order, all at the repetition counts a first
process calibrated, so that every process does the same work. It prints, per
row, its time paired over its time alone, and the partner's time in that
row's executable over its time in the first row's: each the median of the
rounds' log ratios with the sign test's interval, the process the unit.
It measures; run it alone on the machine (docs/measurements.md has its figures).

  python3 -m runner.partner_check --rows system,monotonic,pool --workload list_dupe --size 1810"""
import argparse
import math
import os
import random
import sys

from runner import cell_protocol, pinning
from runfolder import catalog, stats
from runner.cli import positive_number, whole_number
from runfolder.errors import UsageError


def per_op(ns, reps, ops_per_rep):
    return ns / (reps * ops_per_rep)


def first_answer(exe, args):
    """A calibrating process: the counts every later process of the row runs."""
    out, why = cell_protocol.run(cell_protocol.command(exe, args.workload, args.size, seed=args.seed, samples=1,
                                                       min_ms=args.min_ms), 120)
    if why or cell_protocol.check_answer(out) or out.get("status") != "ok":
        raise UsageError(f"{os.path.basename(exe)}: {why or (out or {}).get('reason') or 'no answer'}")
    if "partner_reps" not in out:
        raise UsageError(f"{os.path.basename(exe)}: {args.workload} is not timed beside a partner "
                         f"({out.get('alone') or 'threaded'})")
    return out


def one_process(exe, args, counts, alone):
    """(the row's median ns per op, the partner's or None) of one process."""
    reps, partner_reps, ops = counts
    cmd = cell_protocol.command(exe, args.workload, args.size, seed=args.seed, samples=args.samples,
                                reps=reps, partner_reps=None if alone else partner_reps, alone=alone)
    out, why = cell_protocol.run(cmd, 120)
    why = why or cell_protocol.check_answer(out)
    if why or out.get("status") != "ok":
        raise UsageError(f"{os.path.basename(exe)}: {why or out.get('reason')}")
    row = stats.median([per_op(ns, reps, ops) for ns in out["samples_ns"]])
    partner = None if alone else stats.median([per_op(ns, partner_reps, ops) for ns in out["partner_samples_ns"]])
    return row, partner


def interval_text(logs):
    iv = stats.median_interval(logs)
    return f"{math.exp(iv.estimate):.4f} [{math.exp(iv.low):.4f}, {math.exp(iv.high):.4f}]"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join("build", "gcc"), help="build folder (build/gcc)")
    ap.add_argument("--rows", required=True, help="rows, comma-separated (the first: the one the others are compared with)")
    ap.add_argument("--workload", default="list_dupe")
    ap.add_argument("--size", type=whole_number(1), default=1810)
    ap.add_argument("--rounds", type=whole_number(6), default=30)
    ap.add_argument("--samples", type=whole_number(1), default=8, help="samples a process (8)")
    ap.add_argument("--min-ms", type=positive_number, default=0.5, help="shortest sample, ms (0.5)")
    ap.add_argument("--seed", type=whole_number(0), default=1)
    ap.add_argument("--cpu", type=whole_number(0), help="the CPU every process runs on (default: the fastest)")
    try:
        args = ap.parse_args(argv)
        rows = [r for r in args.rows.split(",") if r]
        bindir = os.path.join(args.build, "bin")
        exes = {r: catalog.cell_exe(bindir, r) for r in rows}
        missing = [r for r, e in exes.items() if not os.path.exists(e)]
        if missing:
            raise UsageError(f"not built in {bindir}: {', '.join(missing)} (make cells ALLOCATORS=...)")
        pinner = pinning.Pinner(exes[rows[0]], "auto" if args.cpu is None else str(args.cpu))
        pinning.place(pinner.cpu)
        counts = {}
        for r in rows:
            out = first_answer(exes[r], args)
            counts[r] = (out["reps"], out["partner_reps"], out.get("ops_per_rep") or 1)
        rng = random.Random(args.seed)
        paired_over_alone = {r: [] for r in rows}
        partner_ns = {r: [] for r in rows}
        for _ in range(args.rounds):
            runs = [(r, alone) for r in rows for alone in (False, True)]
            rng.shuffle(runs)
            got = {}
            for r, alone in runs:
                got[(r, alone)] = one_process(exes[r], args, counts[r], alone)
            for r in rows:
                paired_over_alone[r].append(math.log(got[(r, False)][0] / got[(r, True)][0]))
                partner_ns[r].append(math.log(got[(r, False)][1]))
    except UsageError as e:
        print(f"partner_check: {e}", file=sys.stderr)
        return 2
    ref = rows[0]
    print(f"{args.workload} {args.size}, {args.rounds} rounds of {args.samples} samples a process, "
          f"CPU {pinner.cpu}; ratios: median [95% interval] over the rounds")
    print(f"{'row':<24} {'paired / alone':<28} partner in this row's cell / in {ref}'s")
    for r in rows:
        beside = [a - b for a, b in zip(partner_ns[r], partner_ns[ref])]
        print(f"{r:<24} {interval_text(paired_over_alone[r]):<28} "
              f"{interval_text(beside) if r != ref else '1 (the first row)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
