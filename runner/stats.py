"""stats.py: the statistics allocmark reports for a cell: median, minimum,
coefficient of variation, a bootstrap confidence interval of the median, and
the ratio of two medians with its own bootstrap interval. Standard library only;
every random choice comes from a seeded generator, so a run's figures repeat."""
import math
import random

RESAMPLES = 2000
LEVEL = 0.95


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of no samples")
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2


def cv(xs):
    """Sample standard deviation over the mean (0 for fewer than two samples)."""
    n = len(xs)
    if n < 2:
        return 0.0
    mean = sum(xs) / n
    if mean == 0:
        return 0.0
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return math.sqrt(var) / mean


def percentile(sorted_xs, q):
    """The q-th quantile (0..1) of sorted data, interpolating between ranks."""
    if not sorted_xs:
        raise ValueError("percentile of no samples")
    pos = q * (len(sorted_xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    frac = pos - lo
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * frac


def _resampled_indexes(n, rng, count):
    """count indexes drawn uniformly from range(n) (n <= 256), as bytes: random
    bytes at C speed, those past the last whole multiple of n dropped so that
    every index is equally likely."""
    whole = 256 - 256 % n
    to_index = bytes(i % n if i < whole else 0 for i in range(256))
    dropped = bytes(range(whole, 256))
    out = b""
    while len(out) < count:
        out += rng.randbytes(count - len(out) + count // 4 + 16).translate(to_index, dropped)
    return out[:count]


def _resampled_medians(xs, rng, resamples):
    """The medians of `resamples` resamples of xs. A resample's median is the
    value at its middle index in sorted order, so the indexes are drawn and
    sorted, not the values: the bootstrap of a run's every cell takes
    milliseconds, not tens of them."""
    s = sorted(xs)
    n = len(s)
    mid = n // 2
    out = []
    if n > 256:
        choices = rng.choices
        for _ in range(resamples):
            r = sorted(choices(s, k=n))
            out.append(r[mid] if n % 2 else (r[mid - 1] + r[mid]) / 2)
        return out
    idx = _resampled_indexes(n, rng, n * resamples)
    if n % 2:
        for start in range(0, n * resamples, n):
            out.append(s[sorted(idx[start:start + n])[mid]])
    else:
        for start in range(0, n * resamples, n):
            r = sorted(idx[start:start + n])
            out.append((s[r[mid - 1]] + s[r[mid]]) / 2)
    return out


def _interval(values, level):
    values.sort()
    tail = (1 - level) / 2
    return percentile(values, tail), percentile(values, 1 - tail)


def median_ci(xs, seed, resamples=RESAMPLES, level=LEVEL):
    """Percentile-bootstrap interval of the median: (low, high)."""
    rng = random.Random(seed)
    return _interval(_resampled_medians(list(xs), rng, resamples), level)


def ratio_ci(xs, base, seed, resamples=RESAMPLES, level=LEVEL):
    """median(xs) / median(base) and its percentile-bootstrap interval, the two
    groups resampled independently: (ratio, low, high)."""
    rng = random.Random(seed)
    a = _resampled_medians(list(xs), rng, resamples)
    b = _resampled_medians(list(base), rng, resamples)
    ratios = [x / y if y else math.inf for x, y in zip(a, b)]
    mb = median(base)
    r = median(xs) / mb if mb else math.inf
    lo, hi = _interval(ratios, level)
    return r, lo, hi


def significant(low, high):
    """A ratio differs from 1 when its interval does not contain 1."""
    return not (low <= 1.0 <= high)


def seed_for(run_seed, *key):
    """A stable per-cell seed (Python's str hash is salted per process)."""
    h = 1469598103934665603
    for ch in "|".join(str(k) for k in (run_seed,) + key).encode():
        h = ((h ^ ch) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h
