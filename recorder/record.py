#!/usr/bin/env python3
"""make record TRACE=FILE CMD='program and its arguments': runs the program
under the recording library (recorder/record_*.c, LD_PRELOAD) and says which
traces it left (docs/trace.md). CMD is split into words as a POSIX shell would
split them (quotes kept together) and run without a shell: `sh -c '...'` is
the way to record a pipeline.

Exit status: the program's own (128 + N when killed by signal N), which the
report names; 2 for bad input: no TRACE or CMD, TRACE a folder or in a folder
that does not exist, a CMD that does not split, a program that cannot start,
or no trace written (a program that ignores LD_PRELOAD: static, setuid)."""
import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys

MAGIC = b"AMTRACE\0"


def bad(message):
    print(f"allocmark: make record: {message}", file=sys.stderr)
    return 2


def is_trace(path):
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def split_name(path):
    """FILE's folder, stem and extension, as the recorder splits it"""
    folder, base = os.path.split(path)
    stem, ext = os.path.splitext(base)
    return folder or ".", stem, ext


def process_traces(path):
    """the traces of the other processes of a recording into path: <stem>.<program>.<pid>[.<n>]<ext>"""
    folder, stem, ext = split_name(path)
    pattern = re.compile(re.escape(stem) + r"\.[A-Za-z0-9_+.-]+\.[0-9]+(?:\.[0-9]+)?" + re.escape(ext) + "$")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if pattern.match(n) and os.path.join(folder, n) != path]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="the recording library (libamrecord.so)")
    ap.add_argument("--trace", default="", help="the trace file of the command's first process")
    ap.add_argument("--cmd", default="", help="the program and its arguments, one string")
    args = ap.parse_args()
    if not args.trace:
        return bad("give the trace file: make record TRACE=FILE CMD='program and its arguments'")
    if not args.cmd.strip():
        return bad("give the command: make record TRACE=FILE CMD='program and its arguments'")
    path = os.path.abspath(args.trace)
    if os.path.isdir(path):
        return bad(f"TRACE={args.trace} is a folder; give a file name")
    if not os.path.isdir(os.path.dirname(path)):
        return bad(f"TRACE={args.trace}: no folder {os.path.dirname(path)}")
    try:
        argv = shlex.split(args.cmd)
    except ValueError as e:
        return bad(f"CMD does not split into words: {e}")
    program = argv[0]
    found = program if "/" in program else shutil.which(program)
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        return bad(f"cannot start {program!r}: no such program" + ("" if "/" in program else " in PATH"))
    lib = os.path.abspath(args.lib)
    if not os.path.isfile(lib):
        return bad(f"no recording library {lib} (make builds it)")
    # a previous recording's traces would be mistaken for this one's: only
    # files that are traces are removed
    for old in [path] + process_traces(path):
        if os.path.exists(old) and is_trace(old):
            os.remove(old)
    if os.path.exists(path):
        return bad(f"TRACE={args.trace} exists and is not a trace: not overwritten")
    env = dict(os.environ)
    env["LD_PRELOAD"] = lib + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["AM_TRACE"] = path
    print(f"allocmark: recording {shlex.join(argv)} into {args.trace}", flush=True)
    try:
        status = subprocess.run(argv, env=env).returncode
    except OSError as e:
        return bad(f"cannot start {program!r}: {e.strerror}")
    others = process_traces(path)
    if status < 0:
        name = signal.Signals(-status).name if -status in signal.Signals._value2member_map_ else str(-status)
        print(f"allocmark: the program was killed by signal {-status} ({name}); its trace keeps what was written")
        status = 128 - status
    elif status != 0:
        print(f"allocmark: the program failed: exit status {status}; its trace is kept")
    else:
        print("allocmark: the program ended: exit status 0")
    if not os.path.exists(path):
        print(f"allocmark: make record: no trace written to {args.trace}: does the program ignore LD_PRELOAD "
              "(statically linked, setuid)?", file=sys.stderr)
        return 2
    print(f"  {args.trace}: {os.path.getsize(path)} bytes, the first process")
    if others:
        print(f"  and {len(others)} more, one a process it started (<stem>.<program>.<pid><ext>):")
        for o in others[:20]:
            print(f"  {os.path.join(os.path.dirname(args.trace), os.path.basename(o))}: {os.path.getsize(o)} bytes")
        if len(others) > 20:
            print(f"  ... {len(others) - 20} more")
    print(f"allocmark: its profile: make trace-info TRACE={shlex.quote(args.trace)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
