"""yardstick.py: where the partner moved. A one-thread cell is timed beside
its partner and its ratios go through it; where the partner's own time beside
two cells moved (aggregate.partner_moved: by more than PARTNER_TOLERANCE,
beyond its noise), their ratio is taken from their times instead (aggregate.judge), and the tables name the
block. Reads ratio entries (ratios.csv's columns, schema.py) only."""

import math

MOVED = "partner moved"
FROM_TIMES = "t"  # after a ratio: from the times of the two, the partner having moved
TIME_APART = 0.05  # a line's time over the baseline's, this far from its ratio, is named
APART = "^"  # after a time: its ratio to the baseline's time is more than TIME_APART from the line's ratio


def partner_moved(q):
    """Whether a ratio entry was judged from the times of its two cells because
    the partner beside them moved; False for a ratio whose cells had no
    partner, and for a folder written before the column."""
    return q.get("partner_shift") is not None and q.get("through_partner") == 0


def partner_note(block_ratios):
    """The line that names a block whose partner moved: beside which rows, by
    how much, and that their ratios are from the times. "" when it did not."""
    moved = [q for q in block_ratios if partner_moved(q)]
    if not moved:
        return ""
    beside = ", ".join(f"{q['strategy']} {q['partner_shift']:.2f}x" for q in moved)
    return (f"{MOVED}: its time beside {beside} its time beside {moved[0]['baseline']}; those ratios "
            f"({FROM_TIMES}) are from the times of the two in the same rounds, not through the partner")


def time_apart(q, mine_ns, base_ns):
    """A line's time ratio (its median over the baseline's) over its reported
    ratio, where the two are more than TIME_APART apart; None where they agree
    or either is missing."""
    if not q or not q.get("ratio") or not mine_ns or not base_ns:
        return None
    off = mine_ns / base_ns / q["ratio"]
    return off if abs(math.log(off)) > math.log1p(TIME_APART) else None


def partner_accounts(off, shift):
    """Whether the partner's own time beside a row over beside the baseline
    (shift) accounts for the row's time apart from its ratio by off: the two
    within TIME_APART of each other."""
    return bool(shift) and abs(math.log(off / shift)) <= math.log1p(TIME_APART)


def apart_reason(off, shift, baseline):
    """Why a line's time reads off its ratio, and which to read: where the
    partner ran as much off, the host ran those processes so; where it ran
    otherwise, the partner does not explain the gap and the table says so;
    timed alone, the rounds' pairing."""
    if partner_accounts(off, shift):
        return (f"the partner beside it ran as much off its time beside {baseline}: the host ran those "
                f"processes so, and the ratio, paired, leaves it out: read the ratio")
    if shift:
        return ("the partner's own time does not account for it: the paired ratio and the medians of the "
                "times weigh the visits differently: read the ratio with its interval")
    return ("the ratio pairs the two rows' visits round by round, which leaves out the host's drift from "
            "round to round: read the ratio with its interval")


def apart_note(lines, baseline):
    """The line that names a block's times that read otherwise than their
    ratios: lines [(strategy, time ratio over ratio, the partner's own time
    beside it over beside the baseline, or None)], each with its reason
    (apart_reason), lines of one reason together. "" when there are none."""
    if not lines:
        return ""
    by_reason = {}
    for s, off, shift in lines:
        said = f"{s} {off:.2f}x" + (f" (the partner {shift:.2f}x)" if shift else "")
        by_reason.setdefault(apart_reason(off, shift, baseline), []).append(said)
    return (f"{APART} times apart from their ratios, the time ratio over the ratio: "
            + "; ".join(f"{', '.join(said)}: {why}" for why, said in by_reason.items()))
