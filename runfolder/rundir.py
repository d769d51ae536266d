"""rundir.py: the one reader of a run folder (results/<run>/: summary.csv,
samples.csv, ratios.csv, metrics.csv, groups.csv, meta.json), for everything that works
on results after the fact: regeneration, cross-compiler tables, compare,
the report and its plots. Values come back in their types (schema.py). A
missing or damaged file becomes a Problem naming it and the rest still loads;
load_strict turns the problems of the files a tool needs into a RunError.
It computes no statistics."""
import csv
import io
import json
import os
import sys

from runfolder import runlock, schema
from runfolder.errors import RunError, UsageError


class Problem:
    """warning: the files are whole but say less than they seem to (a run that
    died): tools say it and go on."""

    def __init__(self, file, message, missing=False, warning=False):
        self.file, self.message, self.missing, self.warning = file, message, missing, warning

    def __str__(self):
        return f"{self.file}: {self.message}"


class RunFiles:
    """Everything read from one run folder; .problems lists what was missing or bad."""

    def __init__(self, folder):
        self.folder = folder
        self.problems = []
        self.files = []
        self.meta = {}
        self.summary, self.samples, self.ratios, self.metrics = [], [], [], []
        self.by_key = {}      # cell key -> summary entry
        self.samples_of = {}  # cell key -> [sample entries], in the file's order
        self.summary_text = {}  # cell key -> {column: the field as summary.csv has it}

    path = property(lambda self: self.folder)

    @property
    def run_id(self):
        return self.meta.get("run_id") or os.path.basename(os.path.realpath(self.folder).rstrip("/"))

    @property
    def host(self):
        return self.meta.get("host") or "?"

    def file(self, name):
        return os.path.join(self.folder, name)

    def problem(self, file, message, missing=False, warning=False):
        self.problems.append(Problem(file, message, missing, warning))

    def figure_text(self, key, column):
        """A summary figure as summary.csv wrote it, to copy it into another
        file without formatting it again ("" when absent)."""
        return self.summary_text.get(key, {}).get(column, "")

    def ns_per_op(self, key):
        """The samples of a cell as samples.csv wrote them (ns per op)."""
        return [s["ns_per_op"] for s in self.samples_of.get(key, ()) if s["ns_per_op"] is not None]

    def compiler_names(self):
        """Compilers in the order the run named them (meta.json), then any others."""
        named = [c.get("name") for c in self.meta.get("compilers") or [] if isinstance(c, dict) and c.get("name")]
        seen = sorted({k[0] for k in self.by_key} - set(named))
        return [c for c in named if any(k[0] == c for k in self.by_key)] + seen

    def compiler_info(self, name):
        for c in self.meta.get("compilers") or []:
            if isinstance(c, dict) and c.get("name") == name:
                return c
        return {"name": name}


def median_of(entry):
    """A summary entry's median when the cell is ok, else None."""
    return entry[schema.MEDIAN] if entry and entry["status"] == "ok" else None


def _read_meta(run):
    name = "meta.json"
    try:
        with open(run.file(name), encoding="utf-8") as f:
            meta = json.load(f)
    except FileNotFoundError:
        run.problem(name, "missing: environment and method details unknown", missing=True)
        return
    except (OSError, ValueError) as e:
        run.problem(name, f"unreadable JSON ({e})")
        return
    if not isinstance(meta, dict):
        run.problem(name, "not a JSON object")
        return
    run.meta = meta


def _check_alive(run):
    """A meta.json that says "running" whose runner is gone (killed, its machine
    down): the state becomes "died", and a problem says so."""
    if run.meta.get("state") != "running":
        return
    runner = run.meta.get("runner") if isinstance(run.meta.get("runner"), dict) else None
    if not runlock.died(run.folder, runner):
        return
    run.meta["state"] = "died"
    who = f" ({runlock.describe(runner)})" if runner else ""
    run.problem("meta.json", f"the run died: it says it is running, but its runner{who} is gone; the files "
                             f"hold the cells done when they were last written", warning=True)


def _typed(raw, columns, lineno, bad, positive=()):
    """A CSV line's fields in their types; None when its key cannot be read,
    or when a column of `positive` holds a number not above zero."""
    entry = {}
    for c in columns:
        text = raw.get(c)
        try:
            if c in schema.KEY:
                entry[c] = schema.key_value(c, text)
            elif c in schema.TEXT:
                entry[c] = text or ""
            elif text is None and c in schema.DEFAULTS:
                entry[c] = schema.DEFAULTS[c]
            else:
                entry[c] = schema.number(text)
        except ValueError:
            bad.append(f"line {lineno}: {c} is not a number ('{(text or '')[:20]}')")
            if c in schema.KEY:
                return None
            entry[c] = None
        if c in positive and entry[c] is not None and not 0 < entry[c] < float("inf"):
            bad.append(f"line {lineno}: {c} is not above zero ('{(text or '')[:20]}')")
            return None
    return entry


def _read_csv(run, name, missing_message=None, texts=None):
    """The file's lines as typed dicts; bad lines are skipped and named. None when
    absent. texts: a list to which each kept line's fields are added as text."""
    try:
        with open(run.file(name), encoding="utf-8", errors="replace", newline="") as f:
            text = f.read()
    except FileNotFoundError:
        if missing_message:
            run.problem(name, missing_message, missing=True)
        return None
    except OSError as e:
        run.problem(name, f"unreadable ({e})")
        return None
    lines = list(csv.reader(io.StringIO(text)))
    if not lines:
        run.problem(name, "empty file (no header)")
        return []
    header = [h.strip() for h in lines[0]]
    expected = schema.COLUMNS[name]
    lacking = [c for c in expected if c not in header and c not in schema.DEFAULTS]
    if lacking:
        run.problem(name, "header lacks column(s) " + ", ".join(lacking))
    columns = expected + [c for c in header if c not in expected]
    bad, out = [], []
    for lineno, fields in enumerate(lines[1:], start=2):
        if not fields or fields == [""]:
            continue
        if len(fields) != len(header):
            cut = " (truncated?)" if lineno == len(lines) and not text.endswith("\n") else ""
            bad.append(f"line {lineno} has {len(fields)} fields, expected {len(header)}{cut}")
            continue
        raw = dict(zip(header, (x.strip() for x in fields)))
        entry = _typed(raw, columns, lineno, bad, schema.POSITIVE.get(name, ()))
        if entry is not None:
            out.append(entry)
            if texts is not None:
                texts.append(raw)
    for msg in bad[:5]:
        run.problem(name, msg)
    if len(bad) > 5:
        run.problem(name, f"{len(bad) - 5} more bad lines")
    return out


def load(folder):
    """Reads a run folder; never raises for a bad file (see .problems)."""
    run = RunFiles(folder)
    if not os.path.isdir(folder):
        run.problem(folder, "not a folder (give run folders such as results/<run-id>)", missing=True)
        return run
    run.files = sorted(os.listdir(folder))
    _read_meta(run)
    _check_alive(run)
    texts = []
    run.summary = _read_csv(run, "summary.csv", "missing: no timing results to show", texts) or []
    run.samples = _read_csv(run, "samples.csv") or []
    ratios = _read_csv(run, "ratios.csv")
    if ratios is None and run.summary:
        run.problem("ratios.csv", "missing: ratios are medians divided, without intervals", missing=True)
    run.ratios = ratios or []
    run.metrics = _read_csv(run, "metrics.csv") or []
    run.group_entries = _read_csv(run, "groups.csv") or []  # each block's fastest group, where written
    run.by_key = {schema.key_of(e): e for e in run.summary}
    run.summary_text = {schema.key_of(e): t for e, t in zip(run.summary, texts)}
    for s in run.samples:
        run.samples_of.setdefault(schema.key_of(s), []).append(s)
    return run


def load_strict(folder, need=("summary.csv", "samples.csv")):
    """Reads a run folder for a tool that needs the files `need`; raises
    RunError naming the first of them that is missing or bad. Warnings go to
    stderr."""
    run = load(folder)
    for p in run.problems:
        if p.warning:
            print(f"{run.file(p.file)}: {p.message}", file=sys.stderr)
    for p in (p for p in run.problems if not p.warning):
        if p.file == folder:
            raise RunError(f"{folder} is {p.message}")
    for name in need:
        if name not in run.files:
            raise RunError(f"no {name} in {folder} (looked for {run.file(name)}; is it a run folder "
                           f"written by make bench?)")
        for p in run.problems:
            if p.file == name and not p.warning:
                raise RunError(f"{run.file(name)}: {p.message}")
    for p in run.problems:
        if p.file == "meta.json" and not p.missing and not p.warning:
            raise RunError(f"{run.file(p.file)}: {p.message}")
    return run


def read_counts(folder):
    """(counts.json, counts.csv's entries) of a folder; UsageError when missing or bad."""
    run = RunFiles(folder)
    run.files = os.listdir(folder) if os.path.isdir(folder) else []
    if "counts.csv" not in run.files or "counts.json" not in run.files:
        raise UsageError(f"no counts in '{folder}' (counts.csv and counts.json: is it a folder of make count?)")
    try:
        with open(os.path.join(folder, "counts.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{os.path.join(folder, 'counts.json')}: unreadable ({e})")
    entries = _read_csv(run, "counts.csv")
    bad = [p for p in run.problems if not p.warning]
    if bad or entries is None:
        raise UsageError(f"{os.path.join(folder, 'counts.csv')}: {bad[0].message if bad else 'unreadable'}")
    return meta, entries
