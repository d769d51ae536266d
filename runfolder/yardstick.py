"""yardstick.py: where the partner moved. A one-thread cell is timed beside
its partner and its ratios go through it; where the partner's own time beside
two cells moved (aggregate.partner_moved: by more than PARTNER_TOLERANCE,
beyond its noise), their ratio is taken from their times instead (aggregate.judge), and the tables name the
block. Reads ratio entries (ratios.csv's columns, schema.py) only."""

MOVED = "partner moved"
FROM_TIMES = "t"  # after a ratio: from the times of the two, the partner having moved


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
