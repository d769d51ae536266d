"""The documents (README.md and every .md file under docs/, the generated
tables and the reference runs' notes included) against the tree:

- No absolute path of a machine. The rule: no text that starts, at the start
  of a line or after a space, quote, backtick, bracket, `=`, `:` or `,`, with
  a folder of users or scratch space (/work/, /tmp/, /root/, /home/, /Users/,
  /mnt/, /media/, /srv/) or a Windows drive (C:\\ or C:/). System paths
  (/usr/..., /proc/..., /dev/..., /etc/...) are no machine's own and are
  allowed, as in install notes; a run folder is written results/<run>.
- Every path the documents name exists: each code span that is one relative
  path (with a slash, no placeholder such as <run> or *) whose first
  component is committed at the top of the tree (but build/ and results/,
  which builds and runs fill), or that starts with ./ or ../ (from the
  document's folder); every ../path anywhere, which must also stay inside
  the tree; and every relative link target.
- Every link to a heading (file.md#anchor) finds that heading.
- docs/check.md gives no count of the rows that a new line in
  allocators/strategies.txt would make wrong."""
import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MACHINE_ROOTS = ("work", "tmp", "root", "home", "Users", "mnt", "media", "srv")
ABSOLUTE = re.compile(r"(?:^|(?<=[\s\"'`(\[=:,]))(?:/(?:%s)/|[A-Za-z]:[\\/])" % "|".join(MACHINE_ROOTS), re.M)
CODE_SPAN = re.compile(r"(?<!`)`([^`\s]+)`(?!`)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
RELATIVE_PATH = re.compile(r"^\.{0,2}/?[\w.@+-]+(?:/[\w.@+-]+)+/?$")
UP_PATH = re.compile(r"(?<![\w.])\.\./[\w./-]+")
MADE_BY_RUNS = ("build", "results")


def documents():
    out = [os.path.join(ROOT, "README.md")]
    for top, _, files in os.walk(os.path.join(ROOT, "docs")):
        out += [os.path.join(top, f) for f in sorted(files) if f.endswith(".md")]
    return out


def text_of(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def committed_tops():
    p = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:  # not a git checkout: what is there
        return set(os.listdir(ROOT))
    return {line.split("/")[0] for line in p.stdout.splitlines()}


def heading_anchors(text):
    """GitHub's anchors of a Markdown file's headings: lower case, spaces to
    -, punctuation but - and _ dropped; a repeated one gets -1, -2, ..."""
    seen, out = {}, set()
    for title in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", title.replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def absolute_paths(text):
    """(line number, line) of each line that names a machine's absolute path"""
    return [(text.count("\n", 0, m.start()) + 1, text.splitlines()[text.count("\n", 0, m.start())].strip())
            for m in ABSOLUTE.finditer(text)]


class Docs(unittest.TestCase):
    def test_no_document_names_an_absolute_path_of_a_machine(self):
        found = [f"{os.path.relpath(doc, ROOT)}:{n}: {line[:160]}"
                 for doc in documents() for n, line in absolute_paths(text_of(doc))]
        self.assertEqual(found, [], "write results/<run> or a path relative to the tree")

    def test_the_rule_tells_a_machine_path_from_a_system_path(self):
        for text in ("OUT=/work/runs/a", "`/tmp/x`", "--out /root/r", "(/home/u/a)", "C:\\Users\\a", "x D:/runs"):
            self.assertTrue(absolute_paths(text), text)
        for text in ("-L/usr/lib/llvm-14/lib", "/proc/self/status", "tests/tmp/x", "results/<run>", "a/work/b"):
            self.assertEqual(absolute_paths(text), [], text)

    def test_every_path_the_documents_name_exists(self):
        tops, missing = committed_tops(), []
        for doc in documents():
            text, here = text_of(doc), os.path.dirname(doc)
            for span in CODE_SPAN.findall(text):
                if not RELATIVE_PATH.match(span) or span.split("/")[0] in MADE_BY_RUNS:
                    continue
                outside = span.startswith(("./", "../"))
                if span.split("/")[0] in tops or outside:
                    base = here if outside else ROOT
                    if not os.path.exists(os.path.normpath(os.path.join(base, span))):
                        missing.append(f"{os.path.relpath(doc, ROOT)}: `{span}`")
            for up in UP_PATH.findall(text):  # in code blocks too: a tool beside the tree is not in it
                dest = os.path.normpath(os.path.join(here, up))
                if not dest.startswith(ROOT + os.sep) or not os.path.exists(dest):
                    missing.append(f"{os.path.relpath(doc, ROOT)}: {up}")
            for target in LINK.findall(text):
                path = target.split("#")[0]
                if path and not re.match(r"^[a-z]+:", path) and not os.path.exists(os.path.join(here, path)):
                    missing.append(f"{os.path.relpath(doc, ROOT)}: ({target})")
        self.assertEqual(sorted(set(missing)), [])

    def test_every_link_to_a_heading_finds_it(self):
        broken = []
        for doc in documents():
            for target in LINK.findall(text_of(doc)):
                if "#" not in target or re.match(r"^[a-z]+:", target):
                    continue
                path, anchor = target.split("#", 1)
                dest = os.path.join(os.path.dirname(doc), path) if path else doc
                if os.path.exists(dest) and anchor not in heading_anchors(text_of(dest)):
                    broken.append(f"{os.path.relpath(doc, ROOT)}: ({target})")
        self.assertEqual(broken, [])

    def test_check_md_counts_no_rows(self):
        text = text_of(os.path.join(ROOT, "docs", "check.md"))
        counts = re.findall(r"\b(?:all \d+ rows|\d+ rows|(?:twelve|fifteen|twenty\S*) rows)\b", text)
        self.assertEqual(counts, [], "say which rows (every row, the plain rows), not how many")


if __name__ == "__main__":
    unittest.main()
