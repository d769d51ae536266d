"""layout.py: where a cell's memory and code land, process by process.

The kernel places a process's heap, its mappings, its libraries and its
executable at random addresses (address-space layout randomization), and a
cell's speed depends on where they land: the same cell's paired ratio spread
8.8% across 32 processes with it and 2.2% without (docs/measurements.md,
"One layout a process"). --layout random (the default) keeps the kernel's
draw, a new one each process, so that no executable keeps one lucky or
unlucky layout and the intervals, taken over processes, see the spread.
--layout fixed turns the draw off for the cells (Linux's ADDR_NO_RANDOMIZE,
which a process passes on to the programs it starts): every process of one
executable gets the same layout, the spread between processes shrinks, and
whatever that layout costs or gains is in every visit alike.
--layout shifted turns the draw off too, and visit N of each cell moves its
heap and mappings as placement N of one fixed sequence (the cell's --place,
cell/visit_place.h): a cell's visits sample several layouts, and every run
the same ones.
"""
import ctypes
import ctypes.util
import os

from runfolder.errors import UsageError

CHOICES = ("random", "fixed", "shifted")
DEFAULT = "random"

ADDR_NO_RANDOMIZE = 0x0040000
QUERY = 0xFFFFFFFF  # personality(0xffffffff) reads the persona without changing it


def _personality():
    """libc's personality(2), or None where there is none."""
    if not hasattr(os, "uname") or os.uname().sysname != "Linux":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        call = libc.personality
    except (OSError, AttributeError):
        return None
    call.argtypes, call.restype = [ctypes.c_ulong], ctypes.c_int
    return call


def check(mode):
    """UsageError when this system cannot give the cells the layout of mode:
    a run that says fixed and is not would mislead whoever reads it."""
    call = _personality() if mode != "random" else None
    if mode != "random" and (call is None or call(QUERY) == -1):
        raise UsageError(f"--layout {mode}: this system cannot turn address-space randomization off "
                         "for the cells (it needs Linux's personality(ADDR_NO_RANDOMIZE)); "
                         "use --layout random")


def apply(mode):
    """Sets this process's persona so that the cells it starts from now on
    get the layout of mode."""
    call = _personality()
    current = call(QUERY) if call else -1
    if current == -1:
        check(mode)  # random: nothing to set where there is no persona
        return
    wanted = current & ~ADDR_NO_RANDOMIZE if mode == "random" else current | ADDR_NO_RANDOMIZE
    # random clears it too: a runner started under `setarch -R` would pass it on
    if wanted != current and call(wanted) == -1:
        raise UsageError(f"--layout {mode}: personality({wanted:#x}) failed: "
                         f"{os.strerror(ctypes.get_errno())}")


def place_of(mode, visit):
    """The placement a cell's visit (0 the first) moves its memory by under
    --layout shifted: the visit's own number, so that every run takes a cell
    through the same placements (cell/visit_place.h); None otherwise."""
    return visit if mode == "shifted" else None


def note(mode):
    """What meta.json says of the cells' layout."""
    if mode == "shifted":
        return {"mode": "shifted", "how": "address-space randomization off for the cells, and visit N of "
                                          "each cell moves its heap (up to 256 MiB) and its mappings (up to "
                                          "1 GiB) as placement N of one fixed sequence: the same placements "
                                          "in every run"}
    if mode == "fixed":
        return {"mode": "fixed", "how": "address-space randomization off for the cells (ADDR_NO_RANDOMIZE): "
                                        "every process of one executable at the same addresses"}
    return {"mode": "random", "how": "the system's placement, drawn again for each process where "
                                     "address-space randomization is on (environment: aslr)"}
