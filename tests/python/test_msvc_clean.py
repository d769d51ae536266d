"""test_msvc_clean.py: the C sources as MSVC would see them. Each file is read
with MSVC's predefined macros (_MSC_VER, _WIN32; no __GNUC__, __clang__,
__linux__), skipping the #if branches MSVC drops, and the lines left must hold no
GNU extension (__attribute__, typeof, __builtin_*, inline asm, statement
expressions) and include no POSIX header. A grep, not a compiler: macros the
project defines elsewhere count as unknown (both branches are read), and VLAs
are left to -Wvla in the gcc and clang builds."""
import glob
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# fuzz/ is clang and libFuzzer only
FOLDERS = ("allocators", "containers", "workloads", "cell", "platform", "tests")

MSVC_DEFINED = {"_MSC_VER": 1940, "_MSC_FULL_VER": 194033811, "_WIN32": 1, "_WIN64": 1,
                "_M_X64": 1, "_M_AMD64": 1, "__STDC__": 1, "__STDC_VERSION__": 201112}
MSVC_UNDEFINED = {"__GNUC__", "__clang__", "__linux__", "__unix__", "__unix", "__APPLE__",
                  "__MINGW32__", "__MINGW64__", "__INTEL_COMPILER", "__CYGWIN__", "__FreeBSD__",
                  "_POSIX_VERSION", "__has_feature", "__has_attribute", "__has_builtin",
                  "__GLIBC__", "__x86_64__", "__i386__", "__aarch64__"}

FORBIDDEN = [
    (re.compile(r"\b__attribute__\b"), "__attribute__ (use platform.h's macros)"),
    (re.compile(r"\b(__typeof__|__typeof|typeof)\b"), "typeof"),
    (re.compile(r"\b__builtin_\w+"), "a __builtin_ function"),
    (re.compile(r"\b(__asm__|__asm|asm)\b"), "inline asm (MSVC x64 has none)"),
    (re.compile(r"\(\s*\{"), "a statement expression ({ ... })"),
    (re.compile(r"\b(__thread|__extension__|__label__)\b"), "a GNU keyword"),
]
POSIX_HEADERS = re.compile(
    r"#\s*include\s*<(unistd\.h|pthread\.h|sys/[\w/]+\.h|dlfcn\.h|fcntl\.h|dirent\.h|sched\.h|strings\.h|"
    r"semaphore\.h|libgen\.h|alloca\.h|poll\.h|termios\.h|execinfo\.h|spawn\.h|stdatomic_gnu\.h)>")


# ---------------------------------------------------------------- reading

def strip_comments(text):
    """Comments and the contents of string and character literals blanked, lines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n and text[j] == c else ""))
            i = j + 1 if j < n and text[j] == c else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


# ---------------------------------------------------------------- #if under MSVC
# An expression is 1, 0 or None (unknown: a macro defined elsewhere).

TOKEN = re.compile(r"\s*(defined\b|[A-Za-z_]\w*|0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|&&|\|\||==|!=|<=|>=|<<|>>|"
                   r"[-+*/%<>!~()&|^?:,])")
BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="), ("<<", ">>"),
          ("+", "-"), ("*", "/", "%")]


class Expr:
    def __init__(self, text, macros):
        self.toks, pos = [], 0
        text = text.strip()
        while pos < len(text):
            m = TOKEN.match(text, pos)
            if not m:
                raise ValueError(text)
            self.toks.append(m.group(1))
            pos = m.end()
        self.i, self.macros = 0, macros

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want=None):
        t = self.peek()
        if t is None or (want and t != want):
            raise ValueError(want)
        self.i += 1
        return t

    def value(self):
        v = self.ternary()
        if self.peek() is not None:
            raise ValueError(self.peek())
        return v

    def ternary(self):
        c = self.binary(0)
        if self.peek() != "?":
            return c
        self.take("?")
        a = self.ternary()
        self.take(":")
        b = self.ternary()
        return None if c is None else (a if c else b)

    def binary(self, level):
        if level == len(BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in BINARY[level]:
            op = self.take()
            right = self.binary(level + 1)
            left = combine(op, left, right)
        return left

    def unary(self):
        t = self.take()
        if t == "(":
            v = self.ternary()
            self.take(")")
            return v
        if t in ("!", "~", "-", "+"):
            v = self.unary()
            if v is None:
                return None
            return {"!": int(not v), "~": ~v, "-": -v, "+": v}[t]
        if t == "defined":
            paren = self.peek() == "("
            if paren:
                self.take("(")
            name = self.take()
            if paren:
                self.take(")")
            kind = self.macros.get(name, ("", None))[0]
            if name in MSVC_DEFINED or kind == "defined":
                return 1
            if name in MSVC_UNDEFINED or kind == "undef":
                return 0
            return None
        if re.match(r"\d", t):
            return int(re.sub(r"[uUlL]+$", "", t), 0)
        if self.peek() == "(":  # a function-like macro: skip its arguments
            depth = 0
            while True:
                x = self.take()
                depth += {"(": 1, ")": -1}.get(x, 0)
                if depth == 0:
                    break
            return 0 if t in MSVC_UNDEFINED else None
        if t in MSVC_DEFINED:
            return MSVC_DEFINED[t]
        kind, v = self.macros.get(t, ("", None))
        if t in MSVC_UNDEFINED or kind == "undef":
            return 0
        return v if kind == "defined" else None


def combine(op, a, b):
    if op == "&&":
        return 0 if a == 0 or b == 0 else (1 if a is not None and b is not None else None)
    if op == "||":
        return 1 if (a not in (0, None)) or (b not in (0, None)) else (0 if a == 0 and b == 0 else None)
    if a is None or b is None:
        return None
    try:
        return int({"|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b, "==": lambda: a == b,
                    "!=": lambda: a != b, "<": lambda: a < b, ">": lambda: a > b, "<=": lambda: a <= b,
                    ">=": lambda: a >= b, "<<": lambda: a << b, ">>": lambda: a >> b, "+": lambda: a + b,
                    "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b, "%": lambda: a % b}[op]())
    except (ZeroDivisionError, ValueError):
        return None


def evaluate(text, macros):
    try:
        return Expr(text, macros).value()
    except (ValueError, IndexError):
        return None


def msvc_lines(text):
    """(line number, line) of the lines MSVC may compile: #if branches that are
    certainly false under MSVC are dropped. Macros #defined to a number where
    MSVC certainly reads them are followed; anything unsure is kept."""
    logical, first, parts = [], None, []
    for num, line in enumerate(strip_comments(text).split("\n"), 1):
        first = first or num
        if line.endswith("\\"):
            parts.append(line[:-1])
            continue
        logical.append((first, " ".join(parts + [line])))
        first, parts = None, []
    # name -> ("defined", number or None) | ("undef", None) | ("maybe", None)
    macros = {}
    # stack of [this branch may be read (True/None/False), some earlier branch was certainly taken,
    #           the enclosing state]
    stack = []
    state = True  # True: certainly read, None: maybe, False: dropped
    out = []
    for num, line in logical:
        m = re.match(r"\s*#\s*(\w+)\s*(.*)$", line)
        d, rest = (m.group(1), m.group(2)) if m else (None, "")
        if d in ("if", "ifdef", "ifndef"):
            if d == "if":
                cond = evaluate(rest, macros)
            else:
                cond = evaluate(f"defined({rest.split()[0] if rest.split() else ''})", macros)
                cond = cond if d == "ifdef" or cond is None else int(not cond)
            outer = state
            taken = branch(outer, cond)
            stack.append([outer, cond == 1 or (cond is not None and cond != 0), cond is None])
            state = taken
            continue
        if d in ("elif", "else") and stack:
            outer, certain, unsure = stack[-1]
            cond = 1 if d == "else" else evaluate(rest, macros)
            if certain:
                state = False
            else:
                state = branch(outer, cond)
                if unsure and state is True:
                    state = None
            stack[-1] = [outer, certain or cond not in (0, None), unsure or cond is None]
            continue
        if d == "endif" and stack:
            state = stack.pop()[0]
            continue
        if state is False:
            continue
        if d == "define":
            dm = re.match(r"([A-Za-z_]\w*)(\(?)\s*(.*)$", rest)
            if dm and not dm.group(2):
                v = evaluate(dm.group(3), macros) if dm.group(3).strip() else 1
                macros[dm.group(1)] = ("defined", v) if state is True else ("maybe", None)
        elif d == "undef" and rest.split():
            macros[rest.split()[0]] = ("undef", None) if state is True else ("maybe", None)
        out.append((num, line))
    return out


def branch(outer, cond):
    if outer is False or cond == 0:
        return False
    if outer is True and cond not in (None,):
        return True
    return None


def problems_in(text, name="<text>"):
    out = []
    for num, line in msvc_lines(text):
        for pattern, what in FORBIDDEN:
            if pattern.search(line):
                out.append(f"{name}:{num}: {what}: {line.strip()}")
        m = POSIX_HEADERS.search(line)
        if m:
            out.append(f"{name}:{num}: POSIX header <{m.group(1)}> where MSVC compiles it")
    return out


def sources():
    out = []
    for folder in FOLDERS:
        for ext in ("c", "h"):
            out += glob.glob(os.path.join(ROOT, folder, "**", "*." + ext), recursive=True)
    return sorted(out)


class MsvcClean(unittest.TestCase):
    def test_sources_are_msvc_clean(self):
        files = sources()
        self.assertGreater(len(files), 50)
        found = []
        for path in files:
            with open(path, encoding="utf-8") as f:
                found += problems_in(f.read(), os.path.relpath(path, ROOT))
        self.assertEqual(found, [], "\n".join(found))

    def test_platform_h_msvc_branch_is_read(self):
        # the MSVC side of platform.h is what MSVC compiles: __forceinline, not always_inline
        with open(os.path.join(ROOT, "platform", "platform.h"), encoding="utf-8") as f:
            kept = "\n".join(line for _, line in msvc_lines(f.read()))
        self.assertIn("__forceinline", kept)
        self.assertIn("__declspec(thread)", kept)
        self.assertNotIn("always_inline", kept)
        self.assertNotIn("_Thread_local", kept)


class Detects(unittest.TestCase):
    def test_unguarded_extensions(self):
        text = ("static int f(int n) __attribute__((unused));\n"
                "#define MAX(a, b) ({ int _a = (a); _a > (b) ? _a : (b); })\n"
                "typeof(1) x;\n"
                "int c = __builtin_clz(3);\n")
        self.assertEqual([p.split(": ")[1] for p in problems_in(text)],
                         ["__attribute__ (use platform.h's macros)", "a statement expression ({ ... })",
                          "typeof", "a __builtin_ function"])

    def test_guards_msvc_drops(self):
        for guard in ("#if defined(__GNUC__)", "#ifdef __clang__", "#ifndef _WIN32",
                      "#if !defined(_MSC_VER) || defined(__clang__)", "#if defined(__linux__) && X",
                      "#if 0", "#if _MSC_VER < 1900", "#if AM_STATS\n#elif 1\n#else"):
            text = f"{guard}\n#include <unistd.h>\nint x __attribute__((aligned(8)));\n#endif\n"
            self.assertEqual(problems_in(text), [], guard)

    def test_branches_msvc_reads(self):
        for guard in ("#ifndef _MSC_VER\n#else", "#if defined(_WIN32)", "#ifdef __GNUC__\n#else",
                      "#if AM_STATS", "#if defined(__linux__)\n#elif defined(_WIN32)", "#ifndef __clang__",
                      "#if AM_STATS\n#elif X\n#else", "#if _MSC_VER >= 1900"):
            text = f"{guard}\n#include <pthread.h>\n#endif\n"
            self.assertEqual(len(problems_in(text)), 1, guard)

    def test_else_after_a_certain_branch_is_dropped(self):
        text = "#if defined(_WIN32)\nint a;\n#else\n#include <sys/mman.h>\n#endif\n"
        self.assertEqual(problems_in(text), [])

    def test_macros_defined_in_the_file(self):
        text = ("#if !defined(_WIN32)\n#define HAVE_FORK 1\n#else\n#define HAVE_FORK 0\n#endif\n"
                "#if HAVE_FORK\n#include <sys/wait.h>\n#endif\n"
                "#if !HAVE_FORK\n#include <sys/wait.h>\n#endif\n")
        self.assertEqual([p.split(":")[1] for p in problems_in(text)], ["10"])

    def test_comments_and_strings_do_not_count(self):
        text = ('/* no __attribute__ here,\n   nor typeof */\n'
                'const char *s = "__builtin_expect ({";  // asm\n')
        self.assertEqual(problems_in(text), [])

    def test_line_numbers_survive_continuations(self):
        text = "#define A(x) \\\n  ((x) + 1)\nint y __attribute__((unused));\n"
        self.assertEqual(problems_in(text)[0].split(":")[1], "3")


if __name__ == "__main__":
    unittest.main()
