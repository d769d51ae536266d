#!/usr/bin/env python3
"""make_vars.py: which of the variables given on make's command line that the
Makefile does not know look like one it knows (a letter off, or in lower
case): `make bench QUIK=1` would otherwise start the full default run without
a word. The Makefile runs it only when the command line holds a variable it
does not know; it prints one line naming each such variable and the one it
looks like, nothing when none does.

  tools/make_vars.py KNOWN... -- GIVEN..."""
import sys


def distance(a, b):
    """The edit distance of two names, a swap of neighbours counting one."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def looks_like(name, known):
    """The known variable a name looks like, or None: the same in upper case, or
    a letter off (two for names longer than five letters)."""
    upper = name.upper()
    near = [k for k in known if upper == k or distance(upper, k) <= (1 if len(k) <= 5 else 2)]
    return min(near, key=lambda k: distance(upper, k)) if near else None


def main(argv):
    if "--" not in argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    cut = argv.index("--")
    known, given = argv[:cut], argv[cut + 1:]
    found = [(name, looks_like(name, known)) for name in given if name not in known]
    said = [f"{name}= is not a variable of this Makefile: did you mean {k}=?" for name, k in found if k]
    if said:
        print(" ".join(said) + " (make help lists them)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
