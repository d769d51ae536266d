"""cells.py: a finished run folder's cells back into Measurements (as a run
holds them, aggregate.py): each cell's status and counts from summary.csv,
its samples from samples.csv (typed as answer.Answer), its metrics from
metrics.csv; and the fastest groups a reader of a finished run shows."""
from runfolder import aggregate, answer, schema
from runfolder.errors import RunError

COUNTED = ("bytes_requested", "bytes_peak", "reserved_peak", "allocs", "frees")


def _whole(v):
    return int(v) if v is not None and v == int(v) else v


def measurement(entry, samples, metrics):
    """A summary entry back into a Measurement, its samples from samples.csv."""
    m = aggregate.Measurement(schema.Cell(*schema.key_of(entry), threaded=None))
    m.status, m.reason = entry["status"], entry["reason"]
    if m.status != "ok":
        return m
    if not samples:
        raise RunError(f"summary.csv has cell {' '.join(m.fields())} ok, but samples.csv has no sample of it")
    try:
        m.result = answer.Answer.from_csv(entry, samples, metrics)
    except ValueError as e:
        raise RunError(f"samples.csv: cell {' '.join(m.fields())} has {e}")
    m.stats = {k: _whole(entry[k]) for k in COUNTED if entry[k] is not None}
    return m


def measurements_of(run):
    metrics = {}
    for e in run.metrics:
        metrics.setdefault(schema.key_of(e), {})[e["metric"]] = _whole(e["value"])
    return [measurement(e, run.samples_of.get(schema.key_of(e)), metrics.get(schema.key_of(e), {}))
            for e in run.summary]


def fastest_groups_of(run):
    """{point: aggregate.Group} of a run folder read by rundir, from its samples:
    what the tables mark, for readers of a finished run (the report, the README's tables)."""
    settings = aggregate.Settings.from_meta(run.meta)
    done = measurements_of(run)
    aggregate.finalize(done, settings)
    return aggregate.fastest_groups(done, settings)
