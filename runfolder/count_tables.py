"""count_tables.py: the tables of a count run (counts.txt, the report's
counts section): per block, each strategy's figures per operation and their
ratio to the baseline (exact: no interval), and where a block's time ratio
and count ratio point in opposite directions. It reads typed entries of
counts.csv (and ratios.csv); it writes nothing."""
from runfolder import catalog, schema

FIGURES = (("instructions_per_op", "instr/op"), ("d1_misses_per_op", "D1 miss/op"),
           ("lld_misses_per_op", "LLd miss/op"), ("i1_misses_per_op", "I1 miss/op"),
           ("lli_misses_per_op", "LLi miss/op"), ("est_cycles_per_op", "est cycles/op"))
# counts are exact: a change this large is a change (the gate's threshold too)
COUNT_MARGIN = 0.01
# model against library: the figures set side by side, and how far a model's
# instructions may be from its library's before the table says so
FIDELITY = (("instructions_per_op", "instr/op"), ("d1_misses_per_op", "D1 miss/op"),
            ("est_cycles_per_op", "est cycles/op"))
FIDELITY_MARGIN = 0.10


def legend(meta):
    caches = ", ".join(f"{k} {v}" for k, v in sorted((meta.get("caches") or {}).items()))
    return (f"Counted under {meta.get('tool', 'valgrind')} callgrind (inside run_sample), caches "
            f"(size,ways,line) {caches}, address-space randomization off, "
            + (f"the clock-driven return of memory of jemalloc and mimalloc off ("
               + " ".join(f"{k}={v}" for k, v in sorted(meta["environment"].items())) + "), "
               if meta.get("environment") else "")
            + f"{meta.get('reps')} repetition(s) "
            f"a sample, seed {meta.get('seed')}: "
            f"one warmed-up sample, per operation. {meta.get('formula', '')}. x base = est cycles over the "
            f"baseline {meta.get('baseline')}'s in the same block (exact: no interval).")


def ratio(entries, key, baseline, column="est_cycles_per_op"):
    """A cell's figure over the baseline's in its block, or None."""
    base = entries.get((key[0], baseline) + key[2:])
    mine = entries.get(key)
    if not base or not mine or not base.get(column) or mine.get(column) is None:
        return None
    return mine[column] / base[column]


def _num(v):
    return "-" if v is None else f"{v:.4g}" if abs(v) < 1000 else f"{v:.0f}"


def rows(entries, baseline):
    """Lines of the table: (block text, strategy, figures..., x base or the reason not counted)."""
    by_key = {schema.key_of(e): e for e in entries}
    out = []
    for e in entries:
        k = schema.key_of(e)
        block = f"{e['compiler']} {e['workload']} {e['size']}" + (f" p{e['param']:g}" if e["param"] else "")
        if e["status"] != "ok":
            out.append([block, e["strategy"]] + [""] * len(FIGURES) + [f"{e['status']}: {e['reason']}"])
            continue
        r = ratio(by_key, k, baseline)
        out.append([block, e["strategy"]] + [_num(e.get(c)) for c, _ in FIGURES] + ["-" if r is None else f"{r:.3f}"])
    return out


def _block_order(e):
    return (e["compiler"], e["workload"], e["size"], e["threads"], e["param"], e["strategy"])


def fidelity_head():
    return (["block", "model", "library"]
            + [f"{h} {who}" for _, h in FIDELITY for who in ("model", "library", "model/library")] + ["instr off"])


def fidelity_rows(entries):
    """Lines of the table "model against library": for each block where a C
    model (catalog.MODELS) and its library were both counted, (block, model,
    library, then per figure of FIDELITY the model's, the library's and their
    ratio, then "off" where the instructions differ by more than
    FIDELITY_MARGIN, else "")."""
    by_key = {schema.key_of(e): e for e in entries if e["status"] == "ok"}
    out = []
    for e in sorted(entries, key=_block_order):
        for model, library in catalog.MODELS:
            if e["strategy"] != model or e["status"] != "ok":
                continue
            k = schema.key_of(e)
            lib = by_key.get((k[0], library) + k[2:])
            if lib is None:
                continue
            block = f"{e['compiler']} {e['workload']} {e['size']}" + (f" p{e['param']:g}" if e["param"] else "")
            line, off = [block, model, library], ""
            for column, _ in FIDELITY:
                m, b = e.get(column), lib.get(column)
                r = m / b if m is not None and b else None
                line += [_num(m), _num(b), "-" if r is None else f"{r:.3f}"]
                if column == "instructions_per_op" and r is not None and abs(r - 1) > FIDELITY_MARGIN:
                    off = "off"
            out.append(line + [off])
    return out


def _columns(lines):
    widths = [max(len(str(r[i])) for r in lines) for i in range(len(lines[0]))]
    return "\n".join("  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip() for r in lines)


def fidelity_text(entries):
    """The table "model against library" as text, or "" when no pair was counted."""
    found = fidelity_rows(entries)
    if not found:
        return ""
    return ("Model against library: each C model's figures per operation beside the library it imitates, in the "
            f"same block; \"off\" where the model's instructions are more than {100 * FIDELITY_MARGIN:g}% from "
            "the library's.\n\n" + _columns([fidelity_head()] + found) + "\n")


def text(entries, baseline, meta):
    head = ["block", "strategy"] + [h for _, h in FIGURES] + ["x base"]
    by_block = sorted(entries, key=_block_order)
    lines = [head] + rows(by_block, baseline)
    widths = [max(len(str(r[i])) for r in lines if i < len(r) - 1 or r is lines[0]) for i in range(len(head) - 1)]
    body = "\n".join("  ".join(str(v).ljust(w) for v, w in zip(r, widths)) + "  " + str(r[-1]) for r in lines)
    pairs = fidelity_text(entries)
    return legend(meta) + "\n\n" + body + "\n" + ("\n" + pairs if pairs else "")


def disagreements(counts, ratios, margin):
    """Cells whose time ratio (ratios.csv, marked significant) and count ratio
    (est cycles, beyond COUNT_MARGIN) to the same baseline point in opposite
    directions: where the machine differs from the model (TLB, prefetchers,
    page faults, branch predictors). [(cell text, time ratio, count ratio)]."""
    by_key = {schema.key_of(e): e for e in counts}
    out = []
    for r in ratios:
        if not r.get("significant") or r.get("ratio") is None:
            continue
        key = (r["compiler"], r["strategy"], r["workload"], r["size"], r["threads"], r["param"])
        c = ratio(by_key, key, r["baseline"])
        if c is None or abs(c - 1) < COUNT_MARGIN or abs(r["ratio"] - 1) < margin:
            continue
        if (r["ratio"] > 1) != (c > 1):
            out.append((f"{r['compiler']} {r['strategy']} {r['workload']} {r['size']}", r["ratio"], c))
    return out
