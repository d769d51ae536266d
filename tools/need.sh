#!/bin/sh
# need.sh: makes sure a tool is installed before a stage uses it.
#   tools/need.sh <command> <debian-package>...     (the command is looked up in PATH)
#   tools/need.sh --file <path> <debian-package>... (for libraries and runtimes)
# Exits 0 when present, or after installing it with apt-get when run as root;
# otherwise says what to install and exits 1, and the caller skips its stage.
if [ "$1" = "--file" ]; then kind=file; shift; else kind=cmd; fi
what=$1
shift
have() {
    if [ "$kind" = file ]; then [ -e "$what" ]; else command -v "$what" >/dev/null 2>&1; fi
}
have && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ $# -gt 0 ]; then
    echo "need.sh: installing $* for $what" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1; }
    have && exit 0
fi
echo "need.sh: $what is missing; install it with: apt-get install $*" >&2
exit 1
