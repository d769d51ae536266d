"""htmlcheck.py: parses a report page into a small element tree and lists unbalanced tags,
for the report tests. Not a validator: it checks nesting, not which element may hold which."""
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag = tag
        self.attrs = dict(attrs)
        self.parent = parent
        self.children = []
        self.text_parts = []

    def text(self):
        return "".join(_walk_text(self))

    def classes(self):
        return set((self.attrs.get("class") or "").split())

    def iter(self):
        yield self
        for c in self.children:
            yield from c.iter()

    def find_all(self, tag=None, **attrs):
        out = []
        for n in self.iter():
            if tag and n.tag != tag:
                continue
            # data_x=... matches the attribute data-x
            if all(n.attrs.get(k.rstrip("_").replace("_", "-")) == v for k, v in attrs.items()):
                out.append(n)
        return out

    def by_id(self, ident):
        for n in self.iter():
            if n.attrs.get("id") == ident:
                return n
        return None


def _walk_text(node):
    # text and children in document order
    for item in node.order:
        if isinstance(item, str):
            yield item
        else:
            yield from _walk_text(item)


class TreeParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.root.order = []
        self.cur = self.root
        self.errors = []
        self.doctype = None

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        n.order = []
        self.cur.children.append(n)
        self.cur.order.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        n.order = []
        self.cur.children.append(n)
        self.cur.order.append(n)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if self.cur.tag == tag:
            self.cur = self.cur.parent
            return
        pos = self.getpos()
        self.errors.append(f"line {pos[0]}: </{tag}> closes <{self.cur.tag}>")
        # recover: close up to the matching element if there is one
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text_parts.append(data)
        self.cur.order.append(data)


def parse(text):
    """(root, errors): errors lists tags that do not balance."""
    p = TreeParser()
    p.feed(text)
    p.close()
    errors = list(p.errors)
    n = p.cur
    while n is not None and n is not p.root:
        errors.append(f"<{n.tag}> never closed")
        n = n.parent
    return p.root, errors, p.doctype
