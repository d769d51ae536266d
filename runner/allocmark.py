"""allocmark.py: runs the benchmark matrix (compiler x strategy x workload x
size), one fresh am-cell process per cell and round, in a shuffled order of
blocks (a block: the cells one line of a table compares), and writes the CSV
files, meta.json and tables to results/<run-id>/. It measures nothing
itself: timing, calibration and checksums happen in cell/cell_main.c.
Python 3 standard library only. Started from the top folder as
`python3 -m runner.allocmark` (or `python3 -m runner`), as make bench does.

The work is done by the modules of runner/, one job each:
  cli.py         the command line and its converters
  config.py      plan: checks the input, returns a frozen RunConfig; creates nothing
  matrix.py      the cells, blocks and the order of visits
  rounds.py      one visit to a cell; cell_process.py starts the process, cell_protocol.py
                 builds its command line and reads its answer
  environment.py what of the machine can blur a timing, for meta.json and one warning
  meta.py        meta.json; progress.py what is printed during the run
  counts.py      the count run (--count): each cell under cachegrind, counts.csv
  run.py         the run itself, its rounds and revisits; regenerate.py the derived files again
                 from samples.csv
The run folder is read and written through another package, runfolder/, which imports
nothing of runner/: schema.py (the CSV columns, the key of a cell, number formatting),
catalog.py (the rows, allocators/strategies.txt), answer.py (a cell's answer, typed),
aggregate.py (a cell's summary over its visits and the paired ratios; stats.py the
intervals), outputs.py (the folder's files, written atomically), tables.py (the tables),
runlock.py (the folder's lock), rundir.py (reading a folder back).
Tools on finished runs, in runner/: compare.py (its regression gate: runfolder/gate.py),
crosscc.py, noise.py (where a run's spread is, and what visits and samples buy)."""
import sys

from runner import cli, config, counts, listing, regenerate, run
from runfolder.errors import EXIT_INTERRUPTED, EXIT_USAGE, UsageError


def main(argv=None):
    args = cli.parse(argv)
    try:
        if args.list:
            return listing.print_list(args.build_root, args.compilers or [config.default_compiler()])
        if args.regenerate:
            return regenerate.rewrite(args.regenerate, args.margin)
        if args.merge:
            if not args.out:
                raise UsageError("--merge needs --out: the folder to write the merged counts into")
            return counts.merge(args.out, args.merge)
        if args.shard and not args.count:
            raise UsageError("--shard cuts a count run: give it with --count")
        try:
            cfg = config.plan(args)
        except KeyboardInterrupt:  # while the cells list their workloads: nothing made yet
            print("allocmark: interrupted before the first cell: nothing measured", file=sys.stderr)
            return EXIT_INTERRUPTED
        if args.count:
            return counts.run(cfg, args.seed, args.shard, named=args.workloads)
        return run.run(cfg)
    except UsageError as e:
        print(f"allocmark: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
