"""plain_copies.py: copies of a counted cell and of the shared libraries it
loads, made so that valgrind reads no debug information at its start.

valgrind reads the debug information of every object a process maps. With
glibc's detached debug files installed (Debian's valgrind depends on them)
that is some 0.1 s of a count's 0.3 s per cell, and a count runs one process
a cell. The counted code needs none of it: a count is collected by function
name from the symbol table (--toggle-collect). So the cell is copied without
its debug sections (valgrind 3.19 cannot read clang 14's either), and each
library into a folder of the run with its build-id zeroed, the key valgrind
finds the detached file by; the code, its size and its layout are unchanged.
The cell loads them through LD_LIBRARY_PATH=LIBRARIES, a path relative to the
folder it runs in, the same on every machine whether or not a library was
copied: the environment lies on the cell's stack, and its length moves the
addresses of the cell's data (runner/counts.py, CELL_ENV)."""
import os
import re
import shutil
import struct
import subprocess

LIBRARIES = "lib"  # the folder of the copies, beside the cell
BUILD_ID = ".note.gnu.build-id"
NOTE_HEADER = 16   # namesz, descsz, type, "GNU\0": the id follows


def cell(exe, scratch):
    """A copy of exe without debug information, or exe itself when objcopy is missing or fails."""
    if not shutil.which("objcopy"):
        return exe
    out = os.path.join(scratch, os.path.basename(os.path.dirname(os.path.dirname(exe))) + "-" +
                       os.path.basename(exe))
    p = subprocess.run(["objcopy", "--strip-debug", exe, out], capture_output=True)
    return out if p.returncode == 0 else exe


def libraries(exes, folder):
    """Copies into folder of the shared libraries the exes load (ldd), each with its build-id zeroed."""
    os.makedirs(folder, exist_ok=True)
    for name, path in sorted(loaded_libraries(exes).items()):
        with open(path, "rb") as f:
            image = bytearray(f.read())
        zero_build_id(image)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(image)
        os.chmod(os.path.join(folder, name), 0o755)


def loaded_libraries(exes):
    """{soname: path} of the libraries the exes load by name; {} without ldd."""
    ldd = shutil.which("ldd")
    found = {}
    for exe in exes if ldd else ():
        p = subprocess.run([ldd, exe], capture_output=True, text=True)
        for name, path in re.findall(r"^\s*(\S+) => (/\S+) \(", p.stdout, re.M):
            found.setdefault(name, path)
    return found


def zero_build_id(image):
    """Zeroes the id of the build-id note of a 64-bit little-endian ELF image; leaves any other alone."""
    if image[:4] != b"\x7fELF" or image[4] != 2 or image[5] != 1:
        return
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x3a)
    if not shoff or shentsize < 64 or shoff + shnum * shentsize > len(image) or shstrndx >= shnum:
        return

    def section(i):  # (name offset, file offset, size)
        fields = struct.unpack_from("<IIQQQQ", image, shoff + i * shentsize)
        return fields[0], fields[4], fields[5]

    names = section(shstrndx)[1]
    for i in range(shnum):
        name, offset, size = section(i)
        if image[names + name:image.find(b"\0", names + name)] == BUILD_ID.encode() and size > NOTE_HEADER:
            image[offset + NOTE_HEADER:offset + size] = bytes(size - NOTE_HEADER)
