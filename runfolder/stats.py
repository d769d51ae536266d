"""stats.py: the statistics allocmark reports, on the visits of a cell (a
visit: one process; its value: the median of its samples). A cell's median
and its order-statistic (sign test) interval; a ratio of two cells from the
visits they made in the same rounds, as the median of the paired log ratios
with the same interval; the shift between two unpaired sets of visits (two
runs: Hodges-Lehmann with the Mann-Whitney interval). Every interval is
distribution-free and exact or near it, and needs no random numbers.
Standard library only; it knows nothing of files or cells."""
import collections
import functools
import math

LEVEL = 0.95
# the fewest visits (or pairs) whose distribution-free two-sided interval can
# reach 95%: with 5, even the widest holds the truth only 1 - 2/2^5 = 94% of the time
MIN_VISITS = 6
# exact null distributions up to this many observations; a normal approximation beyond
EXACT_UP_TO = 60

Interval = collections.namedtuple("Interval", "estimate low high n reached")
Interval.__doc__ = """estimate and [low, high]; n observations; reached: the interval's
confidence is at least the level asked (False with fewer than MIN_VISITS)."""


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


def _normal_quantile(p):
    """The standard normal quantile (Acklam's rational approximation, error < 1.2e-9)."""
    a = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
         1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
    b = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
         6.680131188771972e+01, -1.328068155288572e+01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
         -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    if p > 1 - 0.02425:
        return -_normal_quantile(1 - p)
    q = p - 0.5
    r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / \
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)


def _cumulative(counts):
    total, out = sum(counts), []
    run = 0
    for c in counts:
        run += c
        out.append(run / total)
    return out


@functools.lru_cache(maxsize=None)
def _rank_sum_cdf(m, n):
    """P(U <= u) for u = 0 .. mn, U the Mann-Whitney statistic (pairs with x > y)
    of samples of m and n. The largest value is an x, above all n y's (U grows
    by n), or a y (U unchanged): ways(i, j) = ways(i-1, j) shifted by j + ways(i, j-1)."""
    ways = [[[1]] * (n + 1)]  # ways[i][j]: counts of U for i x's and j y's
    for i in range(1, m + 1):
        row = [[1]]
        for j in range(1, n + 1):
            from_x, from_y = ways[i - 1][j], row[j - 1]
            counts = [0] * (i * j + 1)
            for u, c in enumerate(from_x):
                counts[u + j] += c
            for u, c in enumerate(from_y):
                counts[u] += c
            row.append(counts)
        ways.append(row)
    return tuple(_cumulative(ways[m][n]))


def _depth(cdf, total, level, mean, sd):
    """The largest k with P(statistic <= k - 1) <= (1 - level) / 2, from the exact
    cdf when given, else from the normal approximation (mean, sd, continuity
    corrected): the interval is then the k-th smallest to the k-th largest
    candidate. 0 when no interval reaches the level."""
    tail = (1 - level) / 2
    if cdf is not None:
        k = 0
        while k < len(cdf) and cdf[k] <= tail + 1e-12:
            k += 1
        return k
    k = math.floor(mean + _normal_quantile(tail) * sd + 0.5)
    return max(0, min(k, total // 2))


def _coverage(cdf, k):
    return 1 - 2 * cdf[k - 1] if k >= 1 else 0.0


def _order_coverage(n, k):
    """Confidence of [x(k), x(n+1-k)] as an interval of the median: 1 - 2 P(B <= k-1), B ~ Bin(n, 1/2)."""
    if k < 1:
        return 0.0
    return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n


def median_interval(xs, level=LEVEL):
    """The median of xs and its distribution-free interval from the order
    statistics (the sign test's), interpolated between neighbouring order
    statistics to come close to the level (Hettmansperger and Sheather, 1986):
    a Interval. With fewer than MIN_VISITS values, [min, max], not reached."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("interval of no values")
    est = median(s)
    k = 1
    while _order_coverage(n, k + 1) >= level:
        k += 1
    cover = _order_coverage(n, k)
    if cover < level or 2 * k > n:
        return Interval(est, s[0], s[-1], n, cover >= level)
    inner = _order_coverage(n, k + 1)
    if k + 1 > n + 1 - (k + 1) or cover == inner:
        return Interval(est, s[k - 1], s[n - k], n, True)
    share = (cover - level) / (cover - inner)
    lam = (n - k) * share / (k + (n - 2 * k) * share)
    lo = (1 - lam) * s[k - 1] + lam * s[k]
    hi = (1 - lam) * s[n - k] + lam * s[n - k - 1]
    return Interval(est, lo, hi, n, True)


def shift_interval(xs, ys, level=LEVEL):
    """Hodges-Lehmann estimate of the shift xs - ys (the median of every
    difference x - y) and its Mann-Whitney interval, for two unpaired sets: an
    Interval whose n is the smaller set's size. Exact while both sets are small."""
    m, n = len(xs), len(ys)
    if not m or not n:
        raise ValueError("shift between no values")
    diffs = sorted(x - y for x in xs for y in ys)
    total = len(diffs)
    mean = total / 2
    sd = math.sqrt(m * n * (m + n + 1) / 12)
    cdf = _rank_sum_cdf(m, n) if m + n <= EXACT_UP_TO else None
    k = _depth(cdf, total, level, mean, sd)
    if k < 1:
        return Interval(median(diffs), diffs[0], diffs[-1], min(m, n), False)
    reached = _coverage(cdf, k) >= level - 1e-12 if cdf is not None else True
    return Interval(median(diffs), diffs[k - 1], diffs[total - k], min(m, n), reached)


def _exp(iv):
    return Interval(math.exp(iv.estimate), math.exp(iv.low), math.exp(iv.high), iv.n, iv.reached)


def paired_ratio(a, b, level=LEVEL):
    """The ratio of two cells measured side by side: a and b map a round to
    that round's visit value; each round both visited gives one log ratio.
    The estimate is exp of their median, the interval the sign test's
    (median_interval): an Interval of ratios, or None when no round is shared."""
    shared = sorted(set(a) & set(b))
    d = [math.log(a[r] / b[r]) for r in shared if a[r] > 0 and b[r] > 0]
    return _exp(median_interval(d, level)) if d else None


def paired_log_ratio(la, lb, level=LEVEL):
    """paired_ratio of cells given as {round: log of the cell over a common
    partner}: each shared round's difference of logs is one log ratio."""
    shared = sorted(set(la) & set(lb))
    d = [la[r] - lb[r] for r in shared]
    return _exp(median_interval(d, level)) if d else None


def unpaired_ratio(xs, ys, level=LEVEL):
    """The ratio of two sets of visit values that share no rounds (two runs):
    exp of the Hodges-Lehmann shift of their logs with its Mann-Whitney interval."""
    lx = [math.log(x) for x in xs if x > 0]
    ly = [math.log(y) for y in ys if y > 0]
    return _exp(shift_interval(lx, ly, level)) if lx and ly else None


def is_difference(iv, margin):
    """A ratio is marked as a difference when its interval reached the level
    and excludes 1, and the ratio itself is at least `margin` away from 1 (a
    relative margin, the same on both sides: 1.02 and 1 / 1.02)."""
    if iv is None or not iv.reached:
        return False
    excludes = iv.low > 1.0 or iv.high < 1.0
    return excludes and abs(math.log(iv.estimate)) >= math.log1p(margin) - 1e-12


def is_undecided(iv, margin):
    """A ratio the run cannot decide about at the margin: not marked as a
    difference, yet its interval reaches past 1 +- margin, so that neither "a
    difference of at least the margin" nor "none worth the margin" holds. A
    ratio whose interval is wide but excludes 1 by more than the margin is
    decided, and so is one whose interval lies within the margin."""
    if iv is None:
        return True
    if is_difference(iv, margin):
        return False
    band = math.log1p(margin) + 1e-12
    return not iv.reached or math.log(iv.low) < -band or math.log(iv.high) > band if iv.low > 0 else True


def relative_width(iv):
    """high / low - 1 of an interval of positive values (inf when low is not positive)."""
    return iv.high / iv.low - 1 if iv.low > 0 else math.inf
