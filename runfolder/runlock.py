"""runlock.py: whose a run folder is. A run takes the folder's lock file
before it writes anything and drops it when it ends; the lock and meta.json
name the runner (pid and host), so that a reader can tell a run that is
still being written from one whose runner died (meta.json says "running"
forever after a SIGKILL)."""
import json
import os
import socket

LOCK = ".allocmark-lock"
# any of these makes a folder a run folder, which a new run must not overwrite
RUN_FILES = ("meta.json", "summary.csv", "samples.csv", LOCK)


def this_runner():
    return {"pid": os.getpid(), "host": socket.gethostname()}


def run_file_in(folder, besides=()):
    """The first run file the folder holds, besides those named, or None."""
    try:
        names = set(os.listdir(folder)) - set(besides)
    except OSError:
        return None
    return next((n for n in RUN_FILES if n in names), None)


def holder(folder):
    """The runner named by the folder's lock ({} when unreadable), or None without a lock."""
    try:
        with open(os.path.join(folder, LOCK), encoding="utf-8") as f:
            who = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return who if isinstance(who, dict) else {}


def describe(who):
    return f"pid {who.get('pid', '?')} on {who.get('host', '?')}"


def take(folder):
    """Creates the lock, naming this process; it is also the folder's write
    test. Raises FileExistsError when another run holds it, OSError when it
    cannot be written (nothing is left behind then)."""
    path = os.path.join(folder, LOCK)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(this_runner()) + "\n")
    except BaseException:
        os.remove(path)
        raise


def take_folder(folder):
    """Creates the folder when new and takes its lock; whether it was made
    here. On an OSError (FileExistsError: another runner holds it) a folder
    made here is removed again before the error goes on."""
    made = not os.path.exists(folder)
    try:
        os.makedirs(folder, exist_ok=True)
        take(folder)
    except OSError:
        if made:
            remove_empty(folder)
        raise
    return made


def remove_empty(folder):
    try:
        os.rmdir(folder)
    except OSError:
        pass


def release(folder):
    try:
        os.remove(os.path.join(folder, LOCK))
    except OSError:
        pass


def _alive(pid):
    """True or False on POSIX; None where it cannot be told (Windows: signal 0 is Ctrl-C there)."""
    if os.name == "nt" or not isinstance(pid, int) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, under another user
        return True
    return True


def died(folder, runner):
    """Whether the run that wrote meta.json with state "running" is gone:
    its lock is no longer there, or its runner's process is (same host only).
    runner: meta.json's "runner" ({pid, host}) or None."""
    who = holder(folder)
    if who is None:
        return True
    runner = runner or who
    if runner.get("host") != socket.gethostname():
        return False  # another machine's process: cannot tell
    return _alive(runner.get("pid")) is False
