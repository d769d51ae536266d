"""answer.py: what a measured cell answered, typed (Answer): made from the
cell's JSON line (from_json, once runner/cell_protocol.py has checked it) or
from a run folder's CSV files (from_csv), so that a live run, --regenerate,
the gate and the cross-compiler tables hold the same thing."""
import dataclasses


@dataclasses.dataclass
class Answer:
    """What a measured cell answered, over all its visits: the repetitions of
    a sample and its samples (ns), the round of each, page faults per
    sample, the partner's samples beside them (cell/partner.h; empty when
    timed alone), the digest of its inputs and the rest it reported."""
    reps: int
    samples_ns: list
    sample_rounds: list
    ops_per_rep: float = 1
    minor_faults: list = None
    major_faults: list = None
    partner: str = ""
    partner_reps: int = None
    partner_samples_ns: list = None
    expect: int = None
    inputs: str = ""
    malloc: str = ""
    peak_rss: int = None
    metrics: dict = dataclasses.field(default_factory=dict)
    instructions_per_op: float = None
    cycles_per_op: float = None
    hw_counters: str = ""
    timer_resolution_ns: float = None

    @classmethod
    def from_json(cls, out, rnd=0):
        """A first visit's answer (checked by check_answer, status ok)."""
        n = len(out["samples_ns"])
        return cls(reps=out["reps"], samples_ns=list(out["samples_ns"]), sample_rounds=[rnd] * n,
                   ops_per_rep=out.get("ops_per_rep") or 1,
                   minor_faults=list(out.get("minor_faults") or [None] * n),
                   major_faults=list(out.get("major_faults") or [None] * n),
                   partner=out.get("partner") or "", partner_reps=out.get("partner_reps"),
                   partner_samples_ns=list(out["partner_samples_ns"]) if "partner_samples_ns" in out else None,
                   expect=out.get("expect"), inputs=out.get("inputs") or "", malloc=out.get("malloc") or "",
                   peak_rss=out.get("peak_rss"), metrics=dict(out.get("metrics") or {}),
                   instructions_per_op=out.get("instructions_per_op"), cycles_per_op=out.get("cycles_per_op"),
                   hw_counters=out.get("hw_counters") or "", timer_resolution_ns=out.get("timer_resolution_ns"))

    @classmethod
    def from_csv(cls, entry, samples, metrics):
        """A cell's line of summary.csv with its lines of samples.csv (in the
        file's order) and metrics.csv ({metric: value}), as rundir reads them.
        ValueError when the samples do not share one repetition count."""
        reps = {s["reps"] for s in samples}
        if len(reps) != 1:
            raise ValueError(f"samples of {len(reps)} repetition counts")
        paired = bool(samples) and samples[0]["partner"] and all(s["partner_ns"] is not None for s in samples)
        return cls(reps=_whole(reps.pop()), samples_ns=[_whole(s["ns"]) for s in samples],
                   sample_rounds=[int(s["round"]) - 1 for s in samples],
                   ops_per_rep=_whole(entry["ops_per_rep"]) if entry["ops_per_rep"] is not None else 1,
                   minor_faults=[_whole(s["minor_faults"]) for s in samples],
                   major_faults=[_whole(s["major_faults"]) for s in samples],
                   partner=samples[0]["partner"] if paired else "",
                   partner_reps=_whole(samples[0]["partner_reps"]) if paired else None,
                   partner_samples_ns=[_whole(s["partner_ns"]) for s in samples] if paired else None,
                   inputs=entry["inputs"], malloc=entry["malloc"], peak_rss=_whole(entry["peak_rss_bytes"]),
                   metrics=dict(metrics), instructions_per_op=entry["instructions_per_op"],
                   cycles_per_op=entry["cycles_per_op"])

    def ops(self):
        """Operations in one sample."""
        return self.reps * (self.ops_per_rep or 1)

    def is_paired(self):
        return bool(self.partner) and self.partner_samples_ns is not None and \
            len(self.partner_samples_ns) == len(self.samples_ns)

    def mismatch(self, out):
        """Why a later visit's answer (checked, status ok) cannot join this one, or None."""
        if out.get("reps") != self.reps:
            return f"unexpected answer: reps {out.get('reps')}, not {self.reps}"
        if (out.get("partner") or "", out.get("partner_reps")) != (self.partner, self.partner_reps):
            return f"timed beside another partner than round 1 ({out.get('partner')}, {out.get('partner_reps')} reps)"
        if (out.get("inputs") or "") != self.inputs:
            return f"ran other inputs than round 1 (digest {out.get('inputs')}, not {self.inputs})"
        return None

    def join(self, out, rnd):
        """A later visit's samples (round rnd) after these."""
        n = len(out["samples_ns"])
        self.samples_ns += out["samples_ns"]
        self.sample_rounds += [rnd] * n
        if self.partner_samples_ns is not None:
            self.partner_samples_ns += out["partner_samples_ns"]
        self.minor_faults += out.get("minor_faults") or [None] * n
        self.major_faults += out.get("major_faults") or [None] * n
        if out.get("peak_rss"):
            self.peak_rss = max(self.peak_rss or 0, out["peak_rss"])


def _whole(v):
    return int(v) if v is not None and v == int(v) else v
