#!/bin/sh
# need.sh: make sure a command exists, installing its Debian packages when we
# may (root with apt-get); otherwise say how to get it. Does not install
# anything when the command is already there.
#   tools/need.sh <command> <debian-package>...
# exit 0: the command is available; exit 1: it is missing (message printed).
cmd=$1
[ -n "$cmd" ] || { echo "usage: tools/need.sh <command> <debian-package>..." >&2; exit 2; }
shift
command -v "$cmd" >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ $# -gt 0 ]; then
    echo "allocmark: installing $* for $cmd" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >&2 &&
        command -v "$cmd" >/dev/null 2>&1 && exit 0
fi
echo "allocmark: $cmd is missing; install it with: sudo apt-get install $*" >&2
exit 1
