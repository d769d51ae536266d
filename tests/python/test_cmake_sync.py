"""test_cmake_sync.py: CMakeLists.txt (the MSVC build, which cannot run here)
must compile what the Makefile compiles. Reads both files as text and compares
the source lists, test folders, include folders and the test_<source>.c rule.
It runs neither make nor cmake, so it cannot tell whether CMake builds."""
import glob
import os
import re
import shutil
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# tests/strategy/test_<source>.c is built only for the rows of that source.
# Both builds spell the rule out; when one changes, change the other and these.
MAKE_TESTS_OF = ("tests_of = $(filter-out $(addprefix test_,$(filter-out $(call row_field,$(1),2),"
                 "$(SOURCES))),$(STRATEGY_TESTS))")
MAKE_SOURCES = "SOURCES := $(sort $(foreach r,$(ALL_ROWS),$(call row_field,$(r),2)))"
CMAKE_TESTS_OF = ('if(t MATCHES "^test_(.+)$" AND CMAKE_MATCH_1 IN_LIST AM_SOURCES '
                  'AND NOT CMAKE_MATCH_1 STREQUAL src)')

SOURCE_TOKEN = re.compile(r"[A-Za-z0-9_./*-]+\.c\b")


# ---------------------------------------------------------------- Makefile

def make_vars(text):
    """name -> [right-hand sides] of every :=, =, ?= and += assignment."""
    text = text.replace("\\\n", " ")
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(:=|\+=|\?=|=)\s*(.*)$", line)
        if m:
            out.setdefault(m.group(1), []).append(m.group(3))
    return out


def make_sources(vars_, name, seen=()):
    """The .c files and globs variable `name` can hold: every branch of an $(if),
    variables followed; %-patterns dropped."""
    found = []
    for rhs in vars_.get(name, []):
        for ref in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", rhs):
            if ref in vars_ and ref not in seen:
                found += make_sources(vars_, ref, seen + (name,))
        found += [t for t in SOURCE_TOKEN.findall(rhs) if "%" not in t and "$" not in t]
    return found


def make_includes(vars_):
    return sorted({d for rhs in vars_.get("CFLAGS_ALL", []) for d in re.findall(r"-I(\S+)", rhs)})


# ---------------------------------------------------------------- CMakeLists.txt

def cmake_strip_comments(text):
    out = []
    for line in text.splitlines():
        in_str = False
        for i, ch in enumerate(line):
            if ch == '"' and (i == 0 or line[i - 1] != "\\"):
                in_str = not in_str
            elif ch == "#" and not in_str:
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


def cmake_commands(text):
    """[(command name, [arguments])] in file order (nested parentheses kept)."""
    text = cmake_strip_comments(text)
    cmds = []
    for m in re.finditer(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        cmds.append((m.group(1).lower(), text[m.end():i - 1].split()))
    return cmds


def cmake_vars(text):
    """name -> values of every set() and file(GLOB) (the union over if/else branches)."""
    out = {}
    for name, args in cmake_commands(text):
        if name == "set" and args:
            out.setdefault(args[0], []).extend(args[1:])
        elif name == "file" and len(args) >= 2 and args[0] in ("GLOB", "GLOB_RECURSE"):
            out.setdefault(args[1], []).extend(a for a in args[2:] if a != "CONFIGURE_DEPENDS")
    return out


def cmake_expand(vars_, values, seen=()):
    """Values with ${AM_ROOT}/ removed and list variables replaced by their values."""
    out = []
    for v in values:
        m = re.fullmatch(r"\$\{([A-Za-z0-9_]+)\}", v)
        if m and m.group(1) in vars_ and m.group(1) not in seen:
            out += cmake_expand(vars_, vars_[m.group(1)], seen + (m.group(1),))
        else:
            out.append(v.replace("${AM_ROOT}/", ""))
    return out


def cmake_list(vars_, name):
    return [v for v in cmake_expand(vars_, vars_.get(name, [])) if v.endswith(".c")]


def cmake_includes(text):
    for name, args in cmake_commands(text):
        if name == "target_include_directories" and args[:2] == ["am_settings", "INTERFACE"]:
            return sorted(a.replace("${AM_ROOT}/", "") for a in args[2:])
    return []


# ---------------------------------------------------------------- comparison

def files(root, entries):
    """Entries (paths and globs, relative to root) -> the set of files they name."""
    out = set()
    for e in entries:
        hits = glob.glob(os.path.join(root, e))
        out |= {os.path.relpath(h, root).replace(os.sep, "/") for h in hits} if hits else {e}
    return out


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def normal(s):
    return re.sub(r"\s+", " ", s).strip()


def problems(root=ROOT):
    """What the CMake build lacks (or has extra) compared with the Makefile, one line each."""
    make_text = read(os.path.join(root, "Makefile"))
    cmake_text = read(os.path.join(root, "CMakeLists.txt"))
    mv, cv = make_vars(make_text), cmake_vars(cmake_text)
    out = []

    def compare(what, make_entries, cmake_entries):
        m, c = files(root, make_entries), files(root, cmake_entries)
        for f in sorted(m - c):
            out.append(f"{what}: the Makefile compiles {f}, CMakeLists.txt does not")
        for f in sorted(c - m):
            out.append(f"{what}: CMakeLists.txt compiles {f}, the Makefile does not")
        if not m:
            out.append(f"{what}: found nothing in the Makefile (did its variables change?)")

    platform = make_sources(mv, "PLATFORM_SRCS")
    compare("platform layer (PLATFORM_SRCS / AM_PLATFORM_SRC)", platform, cmake_list(cv, "AM_PLATFORM_SRC"))
    # the Makefile's row list also holds the cell's main and the platform file,
    # which CMake adds per target
    row = [s for s in make_sources(mv, "ROW_SRCS") if s not in platform and s != "runner/cell_main.c"]
    compare("row sources (ROW_SRCS / AM_ROW_SRCS)", row, cmake_list(cv, "AM_ROW_SRCS"))
    if "runner/cell_main.c" not in make_sources(mv, "ROW_SRCS"):
        out.append("the Makefile's ROW_SRCS no longer has runner/cell_main.c: update this test")
    if not re.search(r"add_executable\(am-cell-\S+\s+\$\{AM_ROOT\}/runner/cell_main\.c\)", cmake_text):
        out.append("CMakeLists.txt: no am-cell-<row> executable built from runner/cell_main.c")
    if not re.search(r"add_library\(\$\{objs\} OBJECT \$\{AM_ROW_SRCS\} \$\{AM_PLATFORM_SRC\}", cmake_text):
        out.append("CMakeLists.txt: a row's objects are not ${AM_ROW_SRCS} ${AM_PLATFORM_SRC} ...")
    compare("unit test objects (UNIT_OBJS / AM_UNIT_SRCS)", make_sources(mv, "UNIT_OBJS"),
            cmake_list(cv, "AM_UNIT_SRCS"))
    compare("strategy tests (STRATEGY_TESTS / AM_STRATEGY_TESTS)", make_sources(mv, "STRATEGY_TESTS"),
            cmake_list(cv, "AM_STRATEGY_TESTS"))
    compare("unit tests (UNIT_TESTS / AM_UNIT_TESTS)", make_sources(mv, "UNIT_TESTS"),
            cmake_list(cv, "AM_UNIT_TESTS"))
    if make_includes(mv) != cmake_includes(cmake_text):
        out.append(f"include folders: Makefile -I {make_includes(mv)}, CMake {cmake_includes(cmake_text)}")
    if normal(MAKE_TESTS_OF) not in normal(make_text) or normal(MAKE_SOURCES) not in normal(make_text):
        out.append("the Makefile's test_<source>.c rule (tests_of, SOURCES) changed: "
                   "change CMakeLists.txt's rule to match, then this test")
    if normal(CMAKE_TESTS_OF) not in normal(cmake_text):
        out.append("CMakeLists.txt's test_<source>.c rule differs from the Makefile's tests_of")
    if not re.search(r"list\(APPEND AM_SOURCES \$\{CMAKE_MATCH_2\}\)", cmake_text):
        out.append("CMakeLists.txt: AM_SOURCES is not every row's source (the Makefile's SOURCES)")
    return out


class CMakeInStep(unittest.TestCase):
    def test_cmake_builds_what_the_makefile_builds(self):
        self.assertEqual(problems(), [])

    def test_lists_are_not_empty(self):
        # a parser that finds nothing would compare two empty lists as equal
        mv = make_vars(read(os.path.join(ROOT, "Makefile")))
        row = files(ROOT, make_sources(mv, "ROW_SRCS"))
        self.assertIn("allocators/boost_pool.c", row)
        self.assertIn("workloads/thrash_pool.c", row)
        self.assertIn("containers/heap.c", row)
        self.assertEqual(files(ROOT, make_sources(mv, "PLATFORM_SRCS")),
                         {"platform/platform_posix.c", "platform/platform_win32.c"})
        self.assertIn("allocators/fast_pool.c", files(ROOT, make_sources(mv, "UNIT_OBJS")))


class BrokenCopies(unittest.TestCase):
    """The check fails on copies of the tree with CMakeLists.txt or the Makefile broken."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="am-cmake-sync-")
        for name in ("Makefile", "CMakeLists.txt"):
            shutil.copy(os.path.join(ROOT, name), self.dir)
        for d in ("allocators", "containers", "workloads", "platform", "runner", "tests/strategy", "tests/unit"):
            os.makedirs(os.path.join(self.dir, d))
            for f in glob.glob(os.path.join(ROOT, d, "*.c")):
                open(os.path.join(self.dir, d, os.path.basename(f)), "w").close()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def edit(self, name, old, new):
        path = os.path.join(self.dir, name)
        text = read(path)
        self.assertIn(old, text)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))

    def test_the_copy_itself_passes(self):
        self.assertEqual(problems(self.dir), [])

    def test_source_missing_from_cmake(self):
        self.edit("CMakeLists.txt", "${AM_ROOT}/allocators/boost_pool.c\n  ${AM_ROOT}/allocators/counting.c",
                  "${AM_ROOT}/allocators/counting.c")
        self.assertEqual(problems(self.dir),
                         ["row sources (ROW_SRCS / AM_ROW_SRCS): the Makefile compiles allocators/boost_pool.c, "
                          "CMakeLists.txt does not"])

    def test_new_source_added_to_the_makefile_only(self):
        open(os.path.join(self.dir, "allocators", "extra.c"), "w").close()
        self.edit("Makefile", "ROW_SRCS += allocators/counting.c",
                  "ROW_SRCS += allocators/counting.c\nROW_SRCS += allocators/extra.c")
        self.assertIn("row sources (ROW_SRCS / AM_ROW_SRCS): the Makefile compiles allocators/extra.c, "
                      "CMakeLists.txt does not", problems(self.dir))

    def test_folder_missing_from_cmake(self):
        self.edit("CMakeLists.txt", " ${AM_WORKLOAD_SRCS})", ")")
        found = problems(self.dir)
        self.assertIn("row sources (ROW_SRCS / AM_ROW_SRCS): the Makefile compiles workloads/thrash_pool.c, "
                      "CMakeLists.txt does not", found)

    def test_unit_objects_and_platform(self):
        self.edit("CMakeLists.txt", " ${AM_ROOT}/allocators/fast_pool.c)", ")")
        self.edit("CMakeLists.txt", "platform/platform_win32.c", "platform/platform_posix.c")
        found = problems(self.dir)
        self.assertIn("unit test objects (UNIT_OBJS / AM_UNIT_SRCS): the Makefile compiles "
                      "allocators/fast_pool.c, CMakeLists.txt does not", found)
        self.assertIn("platform layer (PLATFORM_SRCS / AM_PLATFORM_SRC): the Makefile compiles "
                      "platform/platform_win32.c, CMakeLists.txt does not", found)

    def test_test_source_rule(self):
        self.edit("CMakeLists.txt", "AND NOT CMAKE_MATCH_1 STREQUAL src", "AND FALSE")
        self.assertEqual(problems(self.dir),
                         ["CMakeLists.txt's test_<source>.c rule differs from the Makefile's tests_of"])
        self.edit("CMakeLists.txt", "AND FALSE", "AND NOT CMAKE_MATCH_1 STREQUAL src")
        self.edit("Makefile", "$(filter-out $(call row_field,$(1),2),$(SOURCES))", "$(SOURCES)")
        self.assertEqual(len(problems(self.dir)), 1)
        self.assertIn("tests_of", problems(self.dir)[0])

    def test_include_folder(self):
        self.edit("Makefile", "-Iworkloads", "-Iworkloads -Irunner")
        self.assertEqual(len(problems(self.dir)), 1)
        self.assertIn("include folders", problems(self.dir)[0])


if __name__ == "__main__":
    unittest.main()
