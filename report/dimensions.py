"""dimensions.py: what a run says along the dimensions of allocation (the
study behind the C++ papers N4468 and P0089 measured density, variation,
locality, utilization, contention and fragmentability; it also measured
nested containers, dropping an arena instead of destroying its containers,
and a virtual allocator interface). For each dimension the workloads that
measure it, and for each of their points the fastest strategy and how it and
`monotonic` compare with `system`, the malloc of global new/delete. Used by
the report's section and by the README's table; it reads summary entries
(runfolder/rundir.py) and computes nothing but ratios of their medians. Which
dimension a workload measures it says itself (am_workload.dimension, kept in
meta.json "workload_facts")."""
from runfolder.schema import MEDIAN

VIRTUAL = "@virtual"  # a row reached through a table of function pointers
NOT_CANDIDATES = {"minimal", "control"}  # a bound and the A/A control are no one's choice
AGAINST = "system"

# what the study found along each dimension, in the order of the report
STUDY = {
    "locality": "per-subsystem pools after churn at 24 (16 after 256 rounds) of new/delete; no gain without churn",
    "utilization": "with far more bytes allocated than live, monotonic 4.4x slower at 1 KiB, up to 128x at 32 KiB",
    "variation": "sizes from a distribution: pools per size class against malloc",
    "nested containers": "a monotonic arena under nested containers at 22-35 of new/delete",
    "contention": "per-thread pools at 8-36 with 1-8 threads",
    "wink-out": "dropping the arena instead of destroying the containers: monotonic 22-31 against 24-35",
}


def dimensions(facts):
    """[(dimension, its workloads, what the study found)] in the report's
    order, from each workload's dimension. facts: meta.json "workload_facts"."""
    named = {}
    for w, f in (facts or {}).items():
        if f.get("dimension"):
            named.setdefault(f["dimension"], []).append(w)
    order = [d for d in STUDY if d in named] + [d for d in named if d not in STUDY]
    return [(d, tuple(named[d]), STUDY.get(d, "not measured by the study")) for d in order]


def point_of(e):
    return e["compiler"], e["workload"], e["size"], e["threads"], e["param"]


def _ok(e):
    return e["status"] == "ok" and e[MEDIAN]


def by_point(summary, workloads):
    """{point: {strategy: median}} of the ok cells of these workloads."""
    out = {}
    for e in summary:
        if e["workload"] in workloads and _ok(e):
            out.setdefault(point_of(e), {})[e["strategy"]] = e[MEDIAN]
    return out


def candidate(strategy):
    """Whether a user could pick the strategy: not a bound, the A/A control or a @virtual row."""
    return strategy not in NOT_CANDIDATES and not strategy.endswith(VIRTUAL)


def tied(winner, group):
    """The others of a point's fastest group a user could pick, beside its
    fastest (the run cannot tell them apart from it: a winner by median alone
    would be a lucky pick among them); [] when the winner is not in it."""
    return [s for s in group if candidate(s) and s != winner] if winner in group else []


def winner(medians):
    """(strategy, median) of the fastest strategy a user could pick, or None."""
    cands = [(m, s) for s, m in medians.items() if candidate(s)]
    if not cands:
        return None
    m, s = min(cands)
    return s, m


def ratio(medians, a, b=AGAINST):
    return medians[a] / medians[b] if a in medians and b in medians and medians[b] else None


def findings(summary, facts):
    """One line per (dimension, point): dimension, point, winner, its median,
    winner/system, monotonic/system. A drop variant (wink-out) is set against
    system destroying the same containers (list_create_drop against
    list_create's system cell), as the study set both against new/delete."""
    lines = []
    for dim, workloads, _ in dimensions(facts):
        points = by_point(summary, workloads)
        twins = by_point(summary, tuple(w[:-len("_drop")] for w in workloads if w.endswith("_drop")))
        for p in sorted(points, key=lambda p: (p[0], workloads.index(p[1]), p[2], p[3], p[4])):
            w = winner(points[p])
            if not w:
                continue
            medians = dict(points[p])
            if p[1].endswith("_drop"):
                medians[AGAINST] = twins.get((p[0], p[1][:-len("_drop")]) + p[2:], {}).get(AGAINST)
            lines.append({"dimension": dim, "point": p, "winner": w[0], "median": w[1],
                          "winner_vs_system": ratio(medians, w[0]),
                          "monotonic_vs_system": ratio(medians, "monotonic")})
    return lines


def drop_against_destroy(summary):
    """{(compiler, drop workload, size): {strategy: drop median / destroy median}}."""
    med = {(e["compiler"], e["strategy"], e["workload"], e["size"]): e[MEDIAN]
           for e in summary if _ok(e)}
    out = {}
    for (cc, s, w, size), m in med.items():
        if w.endswith("_drop") and s not in NOT_CANDIDATES:
            twin = med.get((cc, s, w[:-len("_drop")], size))
            if twin:
                out.setdefault((cc, w, size), {})[s] = m / twin
    return out


def virtual_against_inline(summary):
    """{(compiler, workload, size, threads, param): {strategy: @virtual median / its own}}."""
    med = {(e["strategy"],) + point_of(e): e[MEDIAN] for e in summary if _ok(e)}
    out = {}
    for (s, *p), m in med.items():
        if s.endswith(VIRTUAL) and s[:-len(VIRTUAL)] not in NOT_CANDIDATES:
            plain = med.get((s[:-len(VIRTUAL)],) + tuple(p))
            if plain:
                out.setdefault(tuple(p), {})[s[:-len(VIRTUAL)]] = m / plain
    return out


def point_text(p, fmt=str):
    _, w, size, threads, param = p
    text = f"{w} {fmt(size)}"
    if threads != 1:
        text += f" T={threads}"
    if param:
        text += f" p={fmt(param)}"
    return text
