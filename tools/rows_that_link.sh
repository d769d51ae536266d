#!/bin/sh
# rows_that_link.sh: the library probe of the Makefile. Writes to OUT the rows
# whose libraries link with the compiler, one a line; the others are said on
# stderr when the list changes. OUT is rewritten only when its text changes, so
# that what depends on it rebuilds only then. It reads no list of its own: the
# Makefile passes each row as row:libs (libs as in strategies.txt, "-" none,
# "~" a space), and a C++ row as row:libs:source.cc:cflags, which is in when
# its source compiles with CXX (the C++ compiler and its flags) and links.
#   tools/rows_that_link.sh OUT CC EXE CXX row:libs[:source.cc:cflags]...
out=$1 cc=$2 exe=$3 cxx=$4
shift 4
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
printf 'int main(void){return 0;}\n' > "$t/probe.c"
for e in "$@"; do
    row=${e%%:*}
    rest=${e#*:}
    libs=$(printf '%s' "${rest%%:*}" | tr '~' ' ')
    cxx_src= cxx_flags=
    case $rest in
        *:*) cxx_src=${rest#*:}; cxx_flags=$(printf '%s' "${cxx_src#*:}" | tr '~' ' '); cxx_src=${cxx_src%%:*} ;;
    esac
    [ "$cxx_flags" = - ] && cxx_flags=
    [ "$libs" = - ] && libs=
    if [ -n "$cxx_src" ]; then
        if ! command -v "${cxx%% *}" >/dev/null 2>&1; then
            echo "allocmark: row $row left out: the C++ compiler ${cxx%% *} is not installed; install g++" \
                "(clang++ comes with clang; for a MinGW build, g++-mingw-w64-x86-64)" >> "$t/why"
            continue
        fi
        # shellcheck disable=SC2086 # the flags are words
        if ! $cxx $cxx_flags -Iplatform -Iallocators -fsyntax-only "$cxx_src" >/dev/null 2>&1; then
            echo "allocmark: row $row left out: $cxx_src does not compile with ${cxx%% *} as C++17;" \
                "for the boost-* rows, install libboost-dev" >> "$t/why"
            continue
        fi
        libs="$libs -lstdc++"
    fi
    # to a file, not /dev/null: the MinGW linker cannot write to /dev/null
    # shellcheck disable=SC2086
    if [ -z "$libs" ] || $cc "$t/probe.c" -o "$t/probe$exe" $libs >/dev/null 2>&1; then
        echo "$row"
    else
        echo "allocmark: row $row left out: $libs does not link with $cc" >> "$t/why"
    fi
done > "$t/rows"
if ! cmp -s "$t/rows" "$out"; then
    [ -f "$t/why" ] && cat "$t/why" >&2
    mkdir -p "$(dirname "$out")" && mv -f "$t/rows" "$out"
fi
