"""trace_files.py: the trace files a run replays, as its run folder records
them (meta.json "traces", counts.json "traces"): each file's name, size and
SHA-256, so that a later command on the folder (make hyperfine RUN=..., make
count OUT=... beside the timed run) replays the very files the run did, and
refuses a file that changed or is gone. It reads files; it runs no cell."""
import hashlib
import os

from runfolder.errors import UsageError

CHUNK = 1 << 20


def sha256(path):
    """The SHA-256 of the file's bytes, in hex; OSError when it cannot be read."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def described(traces, with_path=False):
    """{workload trace:NAME: {"file", "bytes", "sha256"[, "path"]}} of {workload: path}.
    Without the path, two folders that replayed the same bytes from different
    places describe them alike (shards of a count run merge)."""
    out = {}
    for workload, path in traces.items():
        entry = {"file": os.path.basename(path), "bytes": os.path.getsize(path), "sha256": sha256(path)}
        if with_path:
            entry["path"] = path
        out[workload] = entry
    return out


def of_run(recorded, folder):
    """{workload: path} of a run folder's meta.json "traces" (described(...,
    with_path=True)), each file checked against what the run replayed:
    UsageError, naming the file, when it is gone or its bytes changed."""
    out = {}
    for workload, entry in (recorded or {}).items():
        path = entry.get("path") if isinstance(entry, dict) else None
        if not path:
            raise UsageError(f"the run folder '{folder}' names the trace of {workload} without its file "
                             f"(meta.json \"traces\"): it cannot be replayed again")
        try:
            now = sha256(path)
        except OSError as e:
            raise UsageError(f"the run in '{folder}' replayed {workload} from {path}, which cannot be read now "
                             f"({e.strerror or e}): put the file back, or start a new run")
        if now != entry.get("sha256"):
            raise UsageError(f"the run in '{folder}' replayed {workload} from {path}, which has changed since "
                             f"(its SHA-256 is not the run's): the run's figures are of the other bytes; put the "
                             f"file back as it was, or start a new run")
        out[workload] = path
    return out
