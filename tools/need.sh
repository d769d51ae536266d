#!/bin/sh
# need.sh: make sure a command, C library or file that part of allocmark uses is here.
#   tools/need.sh [--for PART] WHAT DEBIAN-PACKAGE...
#   tools/need.sh [--for PART] --file PATH DEBIAN-PACKAGE...
#   tools/need.sh [--for PART] --libs "LINK-FLAGS" DEBIAN-PACKAGE...
#   tools/need.sh [--for PART] --cxx-header HEADER DEBIAN-PACKAGE...
# WHAT is a command name or a library name as given to -l (jemalloc,
# tcmalloc_minimal); --libs: present when a program links with those flags (a
# row's libs: -L<dir> -l<name> ...); --cxx-header: present when $CXX (default
# c++) compiles #include <HEADER> (boost/pool/pool.hpp). Present: exit 0. Missing and root: apt-get install the
# packages (apt-get update first when the package lists are empty or the install
# fails once), exit 0 if WHAT is then present. Otherwise say how to get it and
# exit 1; the caller goes on without PART. It never installs anything but the
# packages it is given.
part=
if [ "$1" = "--for" ]; then part=$2; shift 2; fi
kind=name
if [ "$1" = "--file" ]; then kind=file; shift; fi
if [ "$1" = "--libs" ]; then kind=libs; shift; fi
if [ "$1" = "--cxx-header" ]; then kind=header; shift; fi
if [ $# -lt 2 ]; then
    echo "usage: tools/need.sh [--for PART] [--file | --libs] WHAT DEBIAN-PACKAGE..." >&2
    exit 2
fi
what=$1
shift
[ -n "$part" ] || part="what needs $what"

present() {
    if [ "$kind" = file ]; then [ -e "$what" ]; return; fi
    if [ "$kind" = header ]; then
        printf '#include <%s>\n' "$what" | ${CXX:-c++} -x c++ -fsyntax-only - >/dev/null 2>&1
        return
    fi
    if [ "$kind" = libs ]; then
        # shellcheck disable=SC2086 # the flags are words
        printf 'int main(void){return 0;}\n' | ${CC:-cc} -x c - -o /dev/null $what >/dev/null 2>&1
        return
    fi
    command -v "$what" >/dev/null 2>&1 && return 0
    printf 'int main(void){return 0;}\n' | ${CC:-cc} -x c - -o /dev/null "-l$what" >/dev/null 2>&1
}

present && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    echo "allocmark: installing $* for $part"
    if ! ls /var/lib/apt/lists/*Packages* >/dev/null 2>&1; then
        apt-get update -q -o DPkg::Lock::Timeout=300 >/dev/null 2>&1
    fi
    if ! apt-get install -y -q -o DPkg::Lock::Timeout=300 "$@" >/dev/null 2>&1; then
        apt-get update -q -o DPkg::Lock::Timeout=300 >/dev/null 2>&1 &&
            apt-get install -y -q -o DPkg::Lock::Timeout=300 "$@" >/dev/null 2>&1
    fi
    present && exit 0
fi
missing="$what is missing"
[ "$kind" = libs ] && missing="$what does not link"
echo "allocmark: $missing; install it with: sudo apt-get install $*; skipping $part"
exit 1
