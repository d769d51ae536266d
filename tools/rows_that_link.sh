#!/bin/sh
# rows_that_link.sh: the library probe of the Makefile. Writes to OUT the rows
# whose libraries link with the compiler, one a line; the others are said on
# stderr when the list changes. OUT is rewritten only when its text changes, so
# that what depends on it rebuilds only then. It reads no list of its own: the
# Makefile passes each row as row:libs (libs as in strategies.txt, "-" none,
# "~" a space).
#   tools/rows_that_link.sh OUT CC EXE row:libs...
out=$1 cc=$2 exe=$3
shift 3
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
printf 'int main(void){return 0;}\n' > "$t/probe.c"
for e in "$@"; do
    row=${e%%:*}
    libs=$(printf '%s' "${e#*:}" | tr '~' ' ')
    # to a file, not /dev/null: the MinGW linker cannot write to /dev/null
    if [ "$libs" = - ] || $cc "$t/probe.c" -o "$t/probe$exe" $libs >/dev/null 2>&1; then
        echo "$row"
    else
        echo "allocmark: row $row left out: $libs does not link with $cc" >> "$t/why"
    fi
done > "$t/rows"
if ! cmp -s "$t/rows" "$out"; then
    [ -f "$t/why" ] && cat "$t/why" >&2
    mkdir -p "$(dirname "$out")" && mv -f "$t/rows" "$out"
fi
