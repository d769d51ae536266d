"""rundir.py: reads a finished run folder (results/<run>/: summary.csv,
samples.csv, meta.json) back into memory for the tools that work on results
after the fact (cross-compiler tables, compare), and writes their files.
It computes no statistics."""
import csv
import io
import json
import os

KEY = ("compiler", "strategy", "workload", "size", "threads", "param")


class RunError(Exception):
    """A folder that is not a readable run: the message names the file."""


def _read_csv(path, need):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            r = csv.DictReader(f)
            rows = list(r)
            header = r.fieldnames or []
    except FileNotFoundError:
        raise RunError(f"no {os.path.basename(path)} in {os.path.dirname(path) or '.'} "
                       f"(looked for {path}; is it a run folder written by make bench?)")
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise RunError(f"cannot read {path}: {e}")
    lacking = [c for c in need if c not in header]
    if lacking:
        raise RunError(f"{path} lacks the column{'s' if len(lacking) > 1 else ''} {', '.join(lacking)}")
    return rows


def key_of(row):
    return tuple(row[k] for k in KEY)


class Run:
    def __init__(self, path):
        self.path = path
        self.summary = {}   # key -> summary row (dict of strings)
        self.samples = {}   # key -> [ns per op]
        self.meta = {}

    @property
    def run_id(self):
        return self.meta.get("run_id") or os.path.basename(os.path.abspath(self.path))

    @property
    def host(self):
        return self.meta.get("host") or "?"

    def compiler_names(self):
        """Compilers in the order the run named them (meta.json), then any others."""
        named = [c.get("name") for c in self.meta.get("compilers") or [] if c.get("name")]
        seen = sorted({k[0] for k in self.summary} - set(named))
        return [c for c in named if any(k[0] == c for k in self.summary)] + seen

    def compiler_info(self, name):
        for c in self.meta.get("compilers") or []:
            if c.get("name") == name:
                return c
        return {"name": name}


def load(path):
    """Reads a run folder; raises RunError naming the missing or bad file."""
    if not os.path.isdir(path):
        raise RunError(f"{path} is not a folder (give run folders such as results/<run-id>)")
    run = Run(path)
    for row in _read_csv(os.path.join(path, "summary.csv"), KEY + ("status", "median_ns_per_op")):
        run.summary[key_of(row)] = row
    for row in _read_csv(os.path.join(path, "samples.csv"), KEY + ("ns_per_op",)):
        try:
            run.samples.setdefault(key_of(row), []).append(float(row["ns_per_op"]))
        except ValueError:
            raise RunError(f"{os.path.join(path, 'samples.csv')}: not a number: '{row['ns_per_op']}'")
    meta_path = os.path.join(path, "meta.json")
    if os.path.exists(meta_path):
        try:
            with open(meta_path, encoding="utf-8") as f:
                run.meta = json.load(f)
        except (OSError, ValueError) as e:
            raise RunError(f"cannot read {meta_path}: {e}")
    return run


def median_of(row):
    v = row.get("median_ns_per_op", "")
    return float(v) if row.get("status") == "ok" and v not in ("", None) else None


def csv_text(header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
