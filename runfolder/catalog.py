"""catalog.py: what can be measured. The one Python reader of
allocators/strategies.txt (the rows), which rows are built for a compiler
(build/<compiler>/bin), and the workloads a cell lists (am-cell --list).
It runs no measurement and writes nothing."""
import collections
import os
import sys

from runfolder.errors import UsageError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STRATEGIES_TXT = os.path.join(ROOT, "allocators", "strategies.txt")
CELL_PREFIX = "am-cell-"

# The A/A control: a second, separately linked build of another row (its
# twin: the row of the same source without extra flags), run in every block.
# Its ratios to its twin should be 1, and the share of them marked as
# differences is the suite's own false-alarm rate.
CONTROL = "control"

# One line of strategies.txt: "row source cflags libs description...".
# cflags and libs: "-" means none, "~" stands for a space. virtual: a
# <row>@virtual twin (below).
Row = collections.namedtuple("Row", "name source cflags libs description virtual", defaults=(False,))

# Every row has a twin <row>@virtual: the same strategy reached through a table
# of function pointers (the build's -DAM_VIRTUAL=1), as std::pmr containers
# reach a memory_resource. The Makefile builds them with VIRTUAL=1 (or named in
# ALLOCATORS); a run measures them only when asked (--virtual, or by name),
# since they double the matrix.
VIRTUAL_SUFFIX = "@virtual"

# Each C model beside the library it imitates, (model, library): the rows whose
# counts should agree where the model is faithful ("model against library" in
# the count tables and the report).
MODELS = (("pool", "boost-pool"), ("fast_pool", "boost-fast_pool"),
          ("fast_pool-mutex", "boost-fast_pool-mutex"), ("monotonic", "pmr-monotonic"))

# make bench EXTERNAL=name:/path/to/libfoo.so[,...] passes its value in this
# variable: a row system-<name> each, the system source linked by path against
# that library (the Makefile checks the value first; here bad text is bad input too).
EXTERNAL_ENV = "AM_EXTERNAL"


def _field(text):
    return "" if text == "-" else text.replace("~", " ")


def read_rows(path=STRATEGIES_TXT):
    """The rows in file order. Blank lines and lines whose first non-blank
    character is # are skipped; any other line needs the four fields, else
    ValueError naming the line."""
    rows, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            if len(words) < 4:
                raise ValueError(f"{path}:{n}: a row needs four fields (row source cflags libs), "
                                 f"got '{line.strip()}'")
            if words[0] in seen:
                raise ValueError(f"{path}:{n}: row '{words[0]}' is listed twice")
            seen.add(words[0])
            rows.append(Row(words[0], words[1], _field(words[2]), _field(words[3]), " ".join(words[4:])))
    return rows


def external_rows(text):
    """The rows of an EXTERNAL value; ValueError naming what is wrong."""
    rows = []
    for item in (i for i in text.split(",") if i.strip()):
        name, sep, path = item.strip().partition(":")
        if not sep or not name or not path or ":" in path:
            raise ValueError(f"{EXTERNAL_ENV}={text}: '{item}' is not name:/path/to/libfoo.so")
        if not all(c.isascii() and (c.isalnum() or c in "_-") for c in name):
            raise ValueError(f"{EXTERNAL_ENV}={text}: the name '{name}' has characters other than "
                             f"letters, digits, _ and -")
        path = os.path.abspath(path)
        if not os.path.isfile(path):
            raise ValueError(f"{EXTERNAL_ENV}={text}: no file {path}")
        rows.append(Row("system-" + name, "system", "", f"{path} -Wl,-rpath,{os.path.dirname(path)}/",
                        f"the same code linked against {path} (EXTERNAL)"))
    return rows


def with_virtual(rows):
    """Each row followed by its <row>@virtual twin (the A/A control has none:
    it is a second build of a row, not a strategy)."""
    out = []
    for r in rows:
        out.append(r)
        if r.name == CONTROL:
            continue
        out.append(r._replace(name=r.name + VIRTUAL_SUFFIX, cflags=(r.cflags + " -DAM_VIRTUAL=1").strip(),
                              description=f"{r.name} reached through a table of function pointers "
                                          f"(run-time binding, as std::pmr::memory_resource)", virtual=True))
    return out


def library_names(libs):
    """The libraries a row links, by name: "-ljemalloc" -> ["jemalloc"], a
    file linked by its path (EXTERNAL) by its name before .so:
    "/x/libfoo.so.2" -> ["foo"]."""
    names = [w[2:] for w in libs.split() if w.startswith("-l")]
    return names + [os.path.basename(w).split(".so")[0][3:] for w in libs.split()
                    if os.path.isabs(w) and os.path.basename(w).startswith("lib") and ".so" in w]


def served_by_its_library(row, malloc, linux=sys.platform.startswith("linux")):
    """Whether the library a cell names as serving malloc (the `malloc` field:
    its file name, then its version) is the row's own: a row linking
    -l<name> (or the file lib<name>.so*) must be served by lib<name>.*, a row
    linking nothing by the C library (libc.* on Linux; not checked
    elsewhere). Without it, a row built
    or run without its library (a failed link, a preload) would measure the
    C library's malloc under jemalloc's name."""
    library = malloc.split()[0] if malloc else ""
    names = library_names(row.libs)
    if names:
        return any(library.startswith("lib" + n + ".") for n in names)
    return library.startswith("libc.") or not linux


# The workloads of a run without --workloads: a suite's. A cell lists each
# workload's suite (older cells list none: "default"); the default suite fits
# the time budget of `make bench`, "dimensions" holds the workloads of the six
# dimensions of allocation that would not (make bench SUITE=dimensions).
DEFAULT_SUITE = "default"


def suite_of(workload):
    return workload.get("suite") or DEFAULT_SUITE


def suite_workloads(workloads, suite):
    """The names of the listed workloads in suite ("all": every one), in list
    order; UsageError naming the suites when none is in it."""
    workloads = list(workloads)
    names = [w["name"] for w in workloads if suite == "all" or suite_of(w) == suite]
    if not names:
        known = sorted({suite_of(w) for w in workloads} | {"all"})
        raise UsageError(f"unknown suite '{suite}'; valid: {', '.join(known)}")
    # a drop variant (wink-out) is read against the workload that destroys
    # its containers instead, whichever suite that one is in
    listed = [w["name"] for w in workloads]
    twins = [n[:-len("_drop")] for n in names if n.endswith("_drop")]
    return [n for n in listed if n in names or n in twins]


def row_names(path=STRATEGIES_TXT):
    """Every row a run can measure, in table order: strategies.txt's, each
    followed by its @virtual twin."""
    return [r.name for r in with_virtual(read_rows(path))]


def rows_or_usage_error(path=STRATEGIES_TXT):
    """What a run can measure: strategies.txt's rows, those of EXTERNAL, and
    each one's @virtual twin."""
    try:
        rows = read_rows(path)
        for r in external_rows(os.environ.get(EXTERNAL_ENV, "")):
            if r.name in {x.name for x in rows}:
                raise ValueError(f"{EXTERNAL_ENV}: row {r.name} exists already")
            rows.append(r)
        return with_virtual(rows)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read the rows: {e}")


def twin_of(rows, name):
    """The row `name` is a second build of: the row of the same source, libs
    and no extra flags; None when there is none (or name is that row)."""
    mine = next((r for r in rows if r.name == name), None)
    if mine is None:
        return None
    return next((r.name for r in rows if r.source == mine.source and not r.cflags and r.libs == mine.libs
                 and r.name != name), None)


def bin_dir(build_root, compiler):
    return os.path.join(build_root, compiler, "bin")


def cell_exe(bindir, row, stats_build=False):
    base = os.path.join(bindir, CELL_PREFIX + row + ("-stats" if stats_build else ""))
    return base + ".exe" if not os.path.exists(base) and os.path.exists(base + ".exe") else base


def binaries(bindir):
    """Row names of the measured executables in bindir (am-cell-<row>[.exe])."""
    if not os.path.isdir(bindir):
        return set()
    names = set()
    for f in os.listdir(bindir):
        name = f[:-4] if f.endswith(".exe") else f
        # row names have no dots: am-cell-<row>.pdb and .ilk (MSVC) are not cells
        if name.startswith(CELL_PREFIX) and not name.endswith("-stats") and "." not in name:
            names.add(name[len(CELL_PREFIX):])
    return names


def built_rows(bindir, listed):
    """The rows of `listed` (strategies.txt order) with a measured executable in
    bindir. An executable of a row strategies.txt no longer lists (removed or
    renamed) is left out: it was built from another list."""
    found = binaries(bindir)
    return [r for r in listed if r in found]


def unlisted_binaries(bindir, listed):
    return sorted(binaries(bindir) - set(listed))
