"""preload.py: a program itself run under each malloc library (make preload),
as the files preload-<name>.json and .md of a run folder, and that program's
verdict held against its replay (the cells of the workload trace:<name> in the
same folder).

The program ran in rounds: each round runs it once under every library, in an
order shuffled per round, so the machine's drift over minutes falls on every
library alike and a round pairs them, as a cell's samples pair a row with its
partner. A library's ratio to the system malloc is the median of the rounds'
ratios with the sign test's interval (stats.paired_ratio); the program's
fastest group holds the libraries whose ratio to the fastest is not marked as
a difference at the run's margin."""
import dataclasses
import json
import math
import os
import shlex

from runfolder import outputs, stats
from runfolder.schema import MEDIAN
from runfolder.errors import RunError

PREFIX = "preload-"
SYSTEM = "system"
MARGIN = 0.02


@dataclasses.dataclass
class Library:
    """one malloc library's runs of the program: row (its strategies.txt row),
    preload (the shared object given as LD_PRELOAD, "" for the system's),
    seconds (one wall time a round), status
    ("ok", or "failed" with the reason)"""
    row: str
    preload: str
    seconds: list
    status: str = "ok"
    reason: str = ""


@dataclasses.dataclass
class Preload:
    name: str
    command: list
    trace: str
    rounds: int
    timer: str
    libraries: list

    def ok(self):
        return [lib for lib in self.libraries if lib.status == "ok" and lib.seconds]


def file_name(name):
    return f"{PREFIX}{name}.json"


def to_json(p):
    return json.dumps(dataclasses.asdict(p), indent=2) + "\n"


def from_json(text, where):
    try:
        d = json.loads(text)
        libs = [Library(**lib) for lib in d.pop("libraries")]
        return Preload(libraries=libs, **d)
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise RunError(f"{where}: not a preload result ({e})")


def read_all(folder):
    """[Preload] of a run folder's preload-*.json, by name"""
    out = []
    for f in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if f.startswith(PREFIX) and f.endswith(".json"):
            path = os.path.join(folder, f)
            with open(path, encoding="utf-8") as fh:
                out.append(from_json(fh.read(), path))
    return out


@dataclasses.dataclass
class Line:
    """a library in the comparison: the program's median seconds, its ratio to
    the system malloc (an Interval, None for the system itself), in the
    program's fastest group, and the replay's ratio to system (None: no cell)"""
    row: str
    seconds: float
    ratio: object
    in_group: bool
    replay: float


def _ratio(lib, base):
    if lib is base:
        return None
    rounds = {i: s for i, s in enumerate(lib.seconds)}
    return stats.paired_ratio(rounds, {i: s for i, s in enumerate(base.seconds)})


def program_group(libs, margin=MARGIN):
    """rows whose ratio to the fastest (by median) is not a difference"""
    fastest = min(libs, key=lambda lib: stats.median(lib.seconds))
    out = {fastest.row}
    for lib in libs:
        if lib is not fastest:
            iv = stats.paired_ratio(dict(enumerate(lib.seconds)), dict(enumerate(fastest.seconds)))
            if not stats.is_difference(iv, margin):
                out.add(lib.row)
    return out


def replay_ratios(ratio_entries, workload, compiler, summary=()):
    """{row: replay ratio to the system row} of the trace's cells: each row's
    ratio to the run's baseline (ratios.csv) over system's; where the run has
    no ratios for them (a trace of several threads: its cells are timed alone,
    without the partner), their medians over system's (summary.csv)"""
    mine = [e for e in ratio_entries if e["workload"] == workload and e["compiler"] == compiler and e["ratio"]]
    to_base = {e["strategy"]: e["ratio"] for e in mine}
    if any(e.get("baseline") == SYSTEM for e in mine):
        to_base[SYSTEM] = 1.0  # the baseline has no line of its own
    if not to_base.get(SYSTEM):
        to_base = {e["strategy"]: e[MEDIAN] for e in summary if e["workload"] == workload
                   and e["compiler"] == compiler and e["status"] == "ok" and e[MEDIAN]}
    base = to_base.get(SYSTEM)
    if not base:
        return {}
    return {row: r / base for row, r in to_base.items()}


def kendall_tau(a, b):
    """Kendall's rank correlation of two {name: value} over their common
    names (1: the same order, -1: reversed), None for fewer than 2"""
    names = sorted(set(a) & set(b))
    pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]
    if not pairs:
        return None
    s = sum(math.copysign(1, (a[x] - a[y]) * (b[x] - b[y])) if (a[x] - a[y]) * (b[x] - b[y]) else 0
            for x, y in pairs)
    return s / len(pairs)


def compare(p, replay, margin=MARGIN):
    """([Line] in the program's order, verdict dict) of a Preload against
    {row: replay ratio to system}"""
    libs = p.ok()
    base = next((lib for lib in libs if lib.row == SYSTEM), None)
    if not libs or base is None:
        return [], {}
    group = program_group(libs, margin)
    lines = sorted((Line(lib.row, stats.median(lib.seconds), _ratio(lib, base), lib.row in group,
                         replay.get(lib.row)) for lib in libs), key=lambda line: line.seconds)
    program = {line.row: line.seconds for line in lines}
    shared = {row: r for row, r in replay.items() if row in program}
    verdict = {"program_fastest": lines[0].row, "program_group": sorted(group)}
    if shared:
        best = min(shared, key=shared.get)
        verdict.update(replay_fastest=best, replay_fastest_in_program_group=best in group,
                       kendall_tau=kendall_tau(program, shared), libraries_compared=len(shared))
    return lines, verdict


def first_compiler(meta, default=""):
    """the compiler a run folder lists first (its replay is the one shown)"""
    listed = (meta or {}).get("compilers") or []
    return listed[0].get("name", default) if listed and isinstance(listed[0], dict) else default


def ratio_text(iv):
    return "1" if iv is None else f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def command_text(p):
    return shlex.join(p.command)


def verdict_text(p, verdict):
    """the answer in a sentence: is the replay's fastest library in the
    program's fastest group, and how alike are the two rankings"""
    if "replay_fastest" in verdict:
        tau = verdict["kendall_tau"]
        return (f"The replay's fastest library, {verdict['replay_fastest']}, is "
                f"{'' if verdict['replay_fastest_in_program_group'] else 'not '}in the program's fastest group "
                f"({', '.join(verdict['program_group'])}); over the {verdict['libraries_compared']} libraries "
                f"both measured, the two rankings agree with Kendall's tau "
                + (f"{tau:.2f} (1: the same order, -1: reversed)." if tau is not None else "- (too few)."))
    if p.trace:
        return (f"No cells of {p.trace} in this run folder to hold the program against: run make bench "
                f"TRACE=... with the malloc rows into it first.")
    return "No trace named (TRACE=): the program's own times alone."


def markdown(p, lines, verdict, compiler):
    """preload-<name>.md: the table and the verdict"""
    out = [f"# {p.name}: the program under each malloc library\n",
           f"`{command_text(p)}`, {p.rounds} rounds (each library once a round, in a shuffled order; "
           f"timer: {p.timer}).",
           f"Ratio: the median over the rounds of the library's time over the system malloc's in the same "
           f"round, with its 95% interval; fastest group: not marked as slower than the fastest "
           f"(margin {100 * MARGIN:g}%)."]
    if p.trace:
        out.append(f"Replay ratio: the ratio to `system` of the cells of `{p.trace}` ({compiler}) in this "
                   f"run folder (through the partner; for a trace of several threads, whose cells are timed "
                   f"alone, their medians' ratio).")
    out += ["", "| library | median (s) | ratio to system | fastest group | replay ratio |",
            "| --- | ---: | ---: | :---: | ---: |"]
    for line in lines:
        rep = f"{line.replay:.3f}" if line.replay is not None else "-"
        out.append(f"| `{line.row}` | {line.seconds:.4f} | {ratio_text(line.ratio)} | "
                   f"{'yes' if line.in_group else ''} | {rep} |")
    for lib in p.libraries:
        if lib.status != "ok":
            out.append(f"| `{lib.row}` | {lib.status}: {lib.reason} | | | |")
    return "\n".join(out + ["", verdict_text(p, verdict)]) + "\n"


def write(folder, p, ratio_entries, compiler, summary=()):
    """preload-<name>.json and .md into the folder, each written whole"""
    replay = replay_ratios(ratio_entries, p.trace, compiler, summary) if p.trace else {}
    lines, verdict = compare(p, replay)
    outputs.write_atomic(os.path.join(folder, file_name(p.name)), to_json(p))
    md = os.path.join(folder, f"{PREFIX}{p.name}.md")
    outputs.write_atomic(md, markdown(p, lines, verdict, compiler))
    return md, verdict
