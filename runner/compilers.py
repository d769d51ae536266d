"""compilers.py: decides which C compilers `make bench` and `make hyperfine` use,
and checks each one before anything is built or measured. It only finds and
probes compilers (installing a missing gcc-N / clang-N through tools/need.sh
when root); it builds nothing itself.

  python3 -m runner.compilers [NAME...]   print the usable compiler commands, one a line
Without names: every one of gcc and clang found on PATH. Exit 2 naming the
compiler that is missing or cannot compile C11."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULTS = ("gcc", "clang")
# names that are also the Debian package that provides them (clang-16, gcc-11, tcc);
# other commands (a cross compiler, a path) are never installed on a guess
PACKAGE_NAME = re.compile(r"^(gcc|clang|tcc)(-[0-9]+(\.[0-9]+)?)?$")
PROBE = "#include <stdio.h>\nstatic int twice(int x) { return 2 * x; }\n" \
        "int main(void) { printf(\"%d\\n\", twice(21)); return 0; }\n"


class CompilerError(Exception):
    """A named compiler cannot be used: exit status 2, nothing built."""


def folder_name(command):
    """The build folder a compiler command builds into: build/<this>/ (as the Makefile's CCNAME)."""
    return os.path.basename(command.split()[0]) if command.split() else command


def default_commands(which=shutil.which):
    found = [c for c in DEFAULTS if which(c)]
    return found or ["cc"]


def try_install(name, need=os.path.join(ROOT, "tools", "need.sh")):
    """As root, apt-get the package named like the compiler; True when it is then on PATH."""
    if os.environ.get("AM_NO_INSTALL") or not PACKAGE_NAME.match(name):
        return False
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return False
    p = subprocess.run(["sh", need, "--for", f"the compiler {name}", name, name],
                       stdout=sys.stderr, stderr=sys.stderr)
    return p.returncode == 0 and shutil.which(name) is not None


def probe(command):
    """None when the command compiles and links a small C11 program, else why not."""
    with tempfile.TemporaryDirectory(prefix="allocmark-cc-") as tmp:
        src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        with open(src, "w") as f:
            f.write(PROBE)
        try:
            p = subprocess.run(command.split() + ["-std=c11", src, "-o", exe],
                               capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as e:
            return str(e)
        if p.returncode != 0:
            lines = (p.stderr or p.stdout).strip().splitlines()
            return lines[0] if lines else f"exit status {p.returncode}"
    return None


def resolve(names, which=shutil.which, install=try_install, check=probe):
    """The compiler commands to use, in the order given, duplicates dropped.
    Raises CompilerError naming every missing or broken one."""
    commands = []
    for n in names or default_commands(which):
        if n not in commands:
            commands.append(n)
    missing = []
    for c in commands:
        exe = c.split()[0]
        if not which(exe) and not install(exe):
            missing.append(c)
    if missing:
        how = "; install " + ", ".join(m for m in missing if PACKAGE_NAME.match(m)) \
            if any(PACKAGE_NAME.match(m) for m in missing) else ""
        raise CompilerError(f"compiler{'s' if len(missing) > 1 else ''} not found: "
                            f"{', '.join(missing)} (not on PATH{how}); nothing was built or run")
    folders = {}
    for c in commands:
        other = folders.setdefault(folder_name(c), c)
        if other != c:
            raise CompilerError(f"compilers '{other}' and '{c}' would share build/{folder_name(c)}/; "
                                f"name each compiler once")
    for c in commands:
        why = check(c)
        if why:
            raise CompilerError(f"compiler '{c}' cannot build a C11 program: {why}; nothing was built or run")
    return commands


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    names = [w for a in argv for w in a.replace(",", " ").split()]
    try:
        commands = resolve(names)
    except CompilerError as e:
        print(f"allocmark: {e}", file=sys.stderr)
        return 2
    print("\n".join(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main())
