"""test_cmake_sync.py: CMakeLists.txt (the MSVC build) must build what the
Makefile builds. Two checks:

- by text, without make or cmake: the source lists, include folders and the
  test_<source>.c rule of both files, and that both compile a cell from
  cell/row_unit.c and cell/cell_main.c;
- with cmake (skipped, saying so, where it is not installed): CMake configures
  the tree, and its executables, their sources and the defines of each row are
  those of the Makefile (read from `make -n -B`); then one row is built with
  CMake, its cell runs, and the measured code calls no am_escape (inlined as in
  the Makefile's build). MSVC itself cannot run here."""
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
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
# a cell: the row's unit and the timing loop
MAKE_CELL_RULES = (r"^\$\(BUILD\)/%/row_unit\.o: cell/row_unit\.c ", r"^\$\(BUILD\)/%/cell_main\.o: cell/cell_main\.c ")
CMAKE_CELL_LISTS = {"AM_ROW_UNIT": ["cell/row_unit.c"], "AM_CELL_MAIN": ["cell/cell_main.c"]}
PLATFORM = {"platform/platform_posix.c", "platform/platform_win32.c"}

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


# ---------------------------------------------------------------- comparison by text

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

    for rule in MAKE_CELL_RULES:
        if not re.search(rule, make_text, re.M):
            out.append(f"the Makefile has no rule {rule!r}: a cell is no longer cell/row_unit.c + cell_main.c")
    for name, want in CMAKE_CELL_LISTS.items():
        if cmake_list(cv, name) != want:
            out.append(f"CMakeLists.txt: {name} is {cmake_list(cv, name)}, not {want}")
    if not re.search(r"add_library\(\$\{objs\} OBJECT \$\{AM_ROW_UNIT\}\)", cmake_text):
        out.append("CMakeLists.txt: a row's objects are not built from ${AM_ROW_UNIT} alone")
    if not re.search(r"add_executable\(am-cell-\S+\s+\$\{AM_CELL_MAIN\}\)", cmake_text):
        out.append("CMakeLists.txt: no am-cell-<row> executable built from ${AM_CELL_MAIN}")
    unit = make_sources(mv, "UNIT_OBJS")
    compare("platform layer (PLATFORM_SRC / AM_PLATFORM_SRC)", [s for s in unit if s in PLATFORM],
            cmake_list(cv, "AM_PLATFORM_SRC"))
    compare("unit test objects (UNIT_OBJS / AM_UNIT_SRCS)", [s for s in unit if s not in PLATFORM],
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
        unit = files(ROOT, make_sources(mv, "UNIT_OBJS"))
        self.assertIn("allocators/fast_pool.c", unit)
        self.assertTrue(PLATFORM <= unit)
        self.assertIn("tests/strategy/test_allocator.c", files(ROOT, make_sources(mv, "STRATEGY_TESTS")))


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

    def test_cell_from_other_sources(self):
        self.edit("CMakeLists.txt", "add_library(${objs} OBJECT ${AM_ROW_UNIT})",
                  "add_library(${objs} OBJECT ${AM_ROW_UNIT} ${AM_ROOT}/allocators/${src}.c)")
        self.assertEqual(problems(self.dir),
                         ["CMakeLists.txt: a row's objects are not built from ${AM_ROW_UNIT} alone"])

    def test_the_makefile_stops_using_the_unit(self):
        self.edit("Makefile", "$(BUILD)/%/row_unit.o: cell/row_unit.c", "$(BUILD)/%/row_unit.o: $(BUILD)/row_unit.c")
        self.assertEqual(len(problems(self.dir)), 1)
        self.assertIn("row_unit", problems(self.dir)[0])

    def test_unit_objects_and_platform(self):
        self.edit("CMakeLists.txt", " ${AM_ROOT}/allocators/fast_pool.c)", ")")
        self.edit("CMakeLists.txt", "platform/platform_win32.c", "platform/platform_posix.c")
        found = problems(self.dir)
        self.assertIn("unit test objects (UNIT_OBJS / AM_UNIT_SRCS): the Makefile compiles "
                      "allocators/fast_pool.c, CMakeLists.txt does not", found)
        self.assertIn("platform layer (PLATFORM_SRC / AM_PLATFORM_SRC): the Makefile compiles "
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


# ---------------------------------------------------------------- comparison by building

def make_dry_run_build():
    """What `make all` builds, read from a dry run that remakes everything
    (-n -B): {relative path under build/<cc>/: (sources, defines, include dirs)}
    for the executables and the row units. The probe is run for real first, so
    that the dry run's rows are this machine's (rows.txt)."""
    build = "build/" + ("gcc" if shutil.which("gcc") else "cc")
    subprocess.run(["make", "--no-print-directory", f"{build}/rows.txt"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    out = subprocess.run(["make", "-n", "-B", "--no-print-directory", "all"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    built = {}
    for line in out.replace("\\\n", " ").splitlines():
        words = shlex.split(line)
        if "-o" not in words or not words or "$" in line:
            continue
        target = words[words.index("-o") + 1]
        if not target.startswith(build + "/"):
            continue
        rel = target[len(build) + 1:]
        sources = sorted(w for w in words if w.endswith(".c"))
        defines = sorted(w[2:] for w in words if w.startswith("-D"))
        includes = sorted(w[2:] for w in words if w.startswith("-I"))
        built[rel] = (sources, defines, includes)
    return build, built


def cmake_codemodel(build_dir):
    """{target name: target json} from CMake's file API reply."""
    reply = os.path.join(build_dir, ".cmake", "api", "v1", "reply")
    index = json.loads(read(glob.glob(os.path.join(reply, "index-*.json"))[0]))
    model = next(o for o in index["objects"] if o["kind"] == "codemodel")
    config = json.loads(read(os.path.join(reply, model["jsonFile"])))["configurations"][0]
    return {t["name"]: json.loads(read(os.path.join(reply, t["jsonFile"]))) for t in config["targets"]}


def cmake_defines(target):
    """the target's defines, with those a row passes as compile options (-DAM_CP_LOCKED=1)"""
    out = []
    for g in target.get("compileGroups", []):
        out += [d["define"] for d in g.get("defines", [])]
        out += [w[2:] for f in g.get("compileCommandFragments", []) for w in shlex.split(f["fragment"])
                if w.startswith("-D") and w != "-DNDEBUG"]
    return sorted(out)


def cmake_sources(target):
    return sorted(s["path"] for s in target["sources"] if s["path"].endswith(".c"))


@unittest.skipUnless(shutil.which("cmake"), "cmake is not installed (apt-get install cmake): "
                     "CMakeLists.txt checked by text only")
class CMakeBuilds(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="am-cmake-")
        query = os.path.join(cls.dir, ".cmake", "api", "v1", "query")
        os.makedirs(query)
        open(os.path.join(query, "codemodel-v2"), "w").close()
        cc = shutil.which("gcc") or "cc"
        p = subprocess.run(["cmake", "-S", ROOT, "-B", cls.dir, "-DAM_WERROR=ON", f"-DCMAKE_C_COMPILER={cc}"],
                           capture_output=True, text=True)
        cls.configure = p
        cls.targets = cmake_codemodel(cls.dir) if p.returncode == 0 else {}
        cls.build, cls.make_built = make_dry_run_build()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_configures(self):
        self.assertEqual(self.configure.returncode, 0, self.configure.stdout + self.configure.stderr)

    def test_same_executables(self):
        cmake = {a["path"] for t in self.targets.values() if t["type"] == "EXECUTABLE" for a in t["artifacts"]}
        make = {p for p in self.make_built if p.split("/")[0] in ("bin", "tests", "unit")}
        self.assertGreater(len(make), 100)
        self.assertEqual(sorted(make - cmake), [], "built by the Makefile only")
        self.assertEqual(sorted(cmake - make), [], "built by CMake only")

    def test_cells_from_the_same_unit_with_the_same_defines(self):
        checked = 0
        for name, t in self.targets.items():
            m = re.fullmatch(r"am_row_(.+)", name)
            if not m:
                continue
            variant = m.group(1)
            with self.subTest(variant=variant):
                self.assertEqual(cmake_sources(t), ["cell/row_unit.c"])
                sources, defines, _ = self.make_built[f"{variant}/row_unit.o"]
                self.assertEqual(sources, ["cell/row_unit.c"])
                self.assertEqual(cmake_defines(t), defines)
                cell = self.targets["am-cell-" + variant]
                self.assertEqual(cmake_sources(cell), ["cell/cell_main.c"])
                self.assertEqual(self.make_built[f"bin/am-cell-{variant}"][0], [])
                checked += 1
        self.assertGreaterEqual(checked, 2 * 12)

    def test_one_row_builds_runs_and_inlines_am_escape(self):
        self.assertEqual(self.configure.returncode, 0)
        p = subprocess.run(["cmake", "--build", self.dir, "-j2", "--target", "am-cell-pool",
                            "am_test_pool_test_vector"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        cell = os.path.join(self.dir, "bin", "am-cell-pool")
        out = subprocess.run([cell, "--workload", "thrash_pool", "--size", "100", "--samples", "3",
                              "--min-ms", "1"], capture_output=True, text=True, cwd=ROOT)
        self.assertEqual(json.loads(out.stdout)["status"], "ok", out.stdout + out.stderr)
        test = subprocess.run([os.path.join(self.dir, "tests", "pool", "test_vector")], cwd=ROOT,
                              capture_output=True, text=True)
        self.assertEqual(test.returncode, 0, test.stdout[-2000:])
        self.assertIn(" passed, 0 failed", test.stdout)
        if shutil.which("objdump"):
            code = subprocess.run(["objdump", "-d", cell], capture_output=True, text=True).stdout
            self.assertIn("thrash_pool_run", code)
            self.assertEqual([line for line in code.splitlines() if "call" in line and "am_escape" in line], [])


if __name__ == "__main__":
    unittest.main()
