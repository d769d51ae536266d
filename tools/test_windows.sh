#!/bin/sh
# test_windows.sh (make test-windows): cross-builds allocmark with MinGW-w64
# and runs every C test binary and one quick cell under wine. Installs the
# compiler and wine where it may (tools/need.sh); where it cannot, says so and
# skips (exit 0). This checks the Win32 code paths, not MSVC (see docs/windows.md).
set -u
cd "$(dirname "$0")/.."
MINGW_CC=${MINGW_CC:-x86_64-w64-mingw32-gcc}
MAKE=${MAKE:-make}
PYTHON=${PYTHON:-python3}
BUILD=build/$MINGW_CC

if ! tools/need.sh "$MINGW_CC" gcc-mingw-w64-x86-64; then
    echo "test-windows: skipped (no MinGW-w64 compiler)"
    exit 0
fi
$MAKE --no-print-directory -j"$(nproc 2>/dev/null || echo 2)" CC="$MINGW_CC" all || exit 1

if ! tools/need.sh wine wine wine64; then
    echo "test-windows: built $BUILD; running skipped (no wine)"
    exit 0
fi
# quiet wine, and a prefix of our own so the user's ~/.wine is left alone
export WINEDEBUG=-all
export WINEPREFIX="$PWD/$BUILD/wineprefix"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "test-windows: creating the wine prefix $WINEPREFIX (once)"
    wineboot --init >/dev/null 2>&1 || wine cmd /c exit >/dev/null 2>&1
fi

# one wineserver for the whole run: without it every binary pays its start-up
# (seconds each). It serves only this private prefix; stopped on exit.
# Wine's helper processes (services.exe ...) start with the first program and
# would inherit its output pipes, so a test harness waiting for end-of-output
# would wait for them: start them here, with no pipes attached.
wineserver -p >/dev/null 2>&1 && trap 'wineserver -k >/dev/null 2>&1' EXIT
wine cmd /c exit </dev/null >/dev/null 2>&1

# --no-sanitizers: the ASan stage builds natively (build/gcc-asan), nothing Windows about it
$PYTHON tests/run_all.py --make "$MAKE CC=$MINGW_CC" --build "$BUILD" --runner wine --no-python --no-sanitizers
tests=$?

# one quick cell per strategy: the checksum check inside the cell runs each
# strategy's allocations for real; the JSON must say ok
cells=0
for cell in "$BUILD"/bin/am-cell-*.exe; do
    case "$cell" in *-stats.exe) continue ;; esac
    out=$(wine "$cell" --workload thrash_pool --size 1810 --samples 3 --min-ms 2 2>/dev/null)
    echo "$out"
    echo "$out" | $PYTHON -c '
import json, sys
try:
    cell = json.loads(sys.stdin.read())
except ValueError:
    cell = {}
ok = cell.get("status") == "ok" and len(cell.get("samples_ns", [])) == 3
print("test-windows: cell", cell.get("strategy"), cell.get("workload"), cell.get("size"),
      "status", cell.get("status"), "->", "ok" if ok else "FAILED")
sys.exit(0 if ok else 1)' || cells=$((cells + 1))
done
[ $tests -eq 0 ] && [ $cells -eq 0 ]
