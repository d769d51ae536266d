#!/bin/sh
# need.sh COMMAND DEBIAN-PACKAGE: exit 0 when COMMAND is on PATH, installing the
# package with apt-get first when we are root; otherwise say what to install, exit 1.
# It does not try other package managers or download anything by itself.
cmd=$1
pkg=${2:-$1}
if [ -z "$cmd" ]; then
    echo "usage: tools/need.sh COMMAND DEBIAN-PACKAGE" >&2
    exit 2
fi
command -v "$cmd" >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "need.sh: installing $pkg for $cmd" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends "$pkg" >&2 ||
        { apt-get update -q -o DPkg::Lock::Timeout=300 >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends "$pkg" >&2; }
    command -v "$cmd" >/dev/null 2>&1 && exit 0
fi
echo "need.sh: '$cmd' not found; install it with: apt-get install $pkg" >&2
exit 1
