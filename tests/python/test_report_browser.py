"""Opens the report of a real quick run in a real browser (headless Chromium): the summary
table is in the DOM, each measured workload has its section, and the screenshot is not blank.
The run is `allocmark.py --quick` on a slice of the matrix (three strategies, three workloads,
one of them threaded), measured here, so the page shows what `make bench QUICK=1` gives, in a
few seconds instead of a minute. The screenshot is kept next to the report
(build/test-report-browser/quick/report-screenshot.png). Skipped, with the reason, when
Chromium is missing and cannot be installed.
AM_REPORT_RUN=results/<id> checks that run's report instead (e.g. a whole QUICK=1 run)."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import test_runner  # noqa: E402  (the build folder and the cells it builds)

QUICK_SLICE = ["--allocators", "system,minimal,pool", "--baseline", "system",
               "--workloads", "thrash_pool_map_list_unaligned,list_iterate,contention"]

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def find_chromium():
    """Path of chromium, installing it through tools/need.sh when allowed; None otherwise."""
    need = os.path.join(ROOT, "tools", "need.sh")
    if os.path.exists(need):
        subprocess.run(["sh", need, "chromium", "chromium"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=900)
    return shutil.which("chromium") or shutil.which("chromium-browser")


def png_pixels(path):
    """(width, height, rows of pixel tuples) of an 8-bit RGB/RGBA/grey PNG, unfiltered."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = ihdr
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or bpp is None or interlace:
        raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour type {colour})")
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        ftype, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ftype == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ftype == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        elif ftype != 0:
            raise ValueError(f"{path}: bad filter {ftype} on row {y}")
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def colour_counts(path, row_step=1):
    """Pixels of each colour, counting every row_step-th row (all rows are decoded)."""
    width, height, bpp, rows = png_pixels(path)
    counts = {}
    for row in rows[::row_step]:
        for i in range(0, len(row), bpp):
            px = row[i:i + bpp]
            counts[px] = counts.get(px, 0) + 1
    return width, height, counts


def browse(folder, chromium, tmp):
    """Screenshot (kept in the folder) and DOM of folder/report.html as Chromium renders them."""
    url = "file://" + os.path.abspath(os.path.join(folder, "report.html"))
    shot = os.path.join(folder, "report-screenshot.png")
    common = [chromium] + FLAGS + [f"--user-data-dir={os.path.join(tmp, 'profile')}"]
    if os.path.exists(shot):
        os.remove(shot)
    # one start of the browser for both: starting Chromium is most of this test's time
    p = subprocess.run(common + [f"--screenshot={shot}", "--dump-dom", "--window-size=1280,2000", url],
                       capture_output=True, text=True, timeout=300)
    return shot, p.stdout


def quick_run(folder):
    """A real --quick run of QUICK_SLICE into folder (its rows built first)."""
    rows = QUICK_SLICE[1]
    subprocess.run(["make", "--no-print-directory", "-j2", "cells", "ALLOCATORS=" + rows],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    p = test_runner.run(["--quick", "--seed", "3", "--out", folder] + QUICK_SLICE, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"the quick run failed ({p.returncode}): {p.stderr[-2000:]}")


class ReportInBrowser(unittest.TestCase):
    def test_report_renders_in_chromium(self):
        chromium = find_chromium()
        if not chromium:
            self.skipTest("chromium not installed (apt-get install chromium): report not checked in a browser")
        tmp = tempfile.mkdtemp(prefix="am-browser-")
        try:
            folder = os.environ.get("AM_REPORT_RUN")
            if not folder:
                # kept under build/ so the screenshot can be looked at after the test
                folder = os.path.join(ROOT, "build", "test-report-browser", "quick")
                shutil.rmtree(folder, ignore_errors=True)
                quick_run(folder)
            p = subprocess.run([sys.executable, "-m", "report.report", folder],
                               cwd=ROOT, capture_output=True, text=True, timeout=600)
            self.assertTrue(os.path.exists(os.path.join(folder, "report.html")), p.stderr)
            with open(os.path.join(folder, "summary.csv")) as f:
                workloads = {line.split(",")[2] for line in f.readlines()[1:] if line.count(",") > 2}
            shot, dom = browse(folder, chromium, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self.assertIn('id="summary-table"', dom)
        self.assertIn('class="row best"', dom)
        for w in workloads:  # every measured workload has its section
            self.assertIn(f'id="w-{w}', dom)
        self.assertTrue(os.path.exists(shot), "chromium wrote no screenshot")
        width, height, counts = colour_counts(shot, row_step=4)
        self.assertEqual((width, height), (1280, 2000))
        self.assertGreater(len(counts), 8, "screenshot has almost no colours: blank page?")
        self.assertLess(max(counts.values()), 0.97 * sum(counts.values()), "one colour fills the screenshot")


class PngReader(unittest.TestCase):
    """The decoder the browser test relies on, on PNGs built here with each filter type."""

    def write_png(self, path, width, rows_by_filter):
        raw = b"".join(bytes([f]) + row for f, row in rows_by_filter)
        chunk = lambda kind, body: (struct.pack(">I", len(body)) + kind + body  # noqa: E731
                                    + struct.pack(">I", zlib.crc32(kind + body)))
        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, len(rows_by_filter),
                                                                       8, 2, 0, 0, 0))
                    + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))

    def test_uniform_image_has_one_colour_whatever_the_filter(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "u.png")
            grey = bytes([200, 200, 200] * 3)
            sub = bytes([200, 200, 200] + [0] * 6)  # Sub: differences from the left pixel
            zero = bytes(9)  # Up and Paeth of a row equal to the previous one
            self.write_png(path, 3, [(0, grey), (1, sub), (2, zero), (4, zero)])
            _, _, counts = colour_counts(path)
            self.assertEqual(counts, {bytes([200, 200, 200]): 12})

    def test_two_colours_are_told_apart(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.png")
            self.write_png(path, 2, [(0, bytes([0, 0, 0, 255, 255, 255])), (3, bytes([0, 0, 0, 128, 128, 128]))])
            _, _, counts = colour_counts(path)
            self.assertEqual(counts, {bytes([0, 0, 0]): 2, bytes([255, 255, 255]): 2})


if __name__ == "__main__":
    unittest.main()
