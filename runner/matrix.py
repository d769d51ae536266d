"""matrix.py: the cells of a run and the order they are visited in. A cell is
a point (compiler, strategy, workload, size, threads, param); a block is the
cells one line of a table compares (every strategy and compiler at one
workload, size, thread count and param); a visit is one process of one cell in one
round. It chooses and orders; it runs nothing."""
import os
import random

from runfolder.schema import Cell, block_of  # noqa: F401 (the matrix's cells and blocks)

# the threads of a sweep that --quick keeps (its params: the workload's quick_params)
QUICK_THREADS = (1, 2)


def choose_sizes(w, sizes, quick):
    """The sizes of workload w: a list given, 'log', 'linear' or 'default'
    (the first, middle and last of the linear sweep; --quick: the last)."""
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
        return [float(p) for p in w.get("quick_params") or []] or params[:1]  # as the workload says
    return params


def cells(compilers, order, rows_of, workloads, listing, sizes, threads, default_threads, param, quick):
    """Every cell, compilers and strategies in the order given; a strategy
    only where it is built for that compiler (rows_of)."""
    out = []
    for c in compilers:
        for s in order:
            if s not in rows_of[c]:
                continue
            for n in workloads:
                w = listing[n]
                for size in choose_sizes(w, sizes, quick):
                    for t in choose_threads(w, threads, default_threads, quick):
                        for prm in choose_params(w, param, quick):
                            out.append(Cell(c, s, n, size, t, prm, bool(w["threaded"])))
    return out


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


def round_order(cells, rnd, seed):
    """The cells of round rnd (0-based) in the order visited: round 0 in the
    plan's order (a blocked shuffle), every later round, and every revisit
    of unstable blocks, in a new blocked shuffle of its own from the run's seed."""
    return list(cells) if rnd == 0 else blocked_shuffle(cells, random.Random(f"{seed} round {rnd}"))


def blocks(order):
    """The cells of an order cut into its blocks: [[cell, ...], ...], each
    block's cells one after the other as they come."""
    out = []
    for c in order:
        if out and block_of(out[-1][0]) == block_of(c):
            out[-1].append(c)
        else:
            out.append([c])
    return out


def visits(cells, rounds, seed):
    """(round, cell) of the planned rounds, in the order measured."""
    for rnd in range(rounds):
        for c in round_order(cells, rnd, seed):
            yield rnd, c
