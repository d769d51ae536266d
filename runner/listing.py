"""listing.py: `allocmark.py --list` (make list): the rows of
allocators/strategies.txt with what is built of them, and the workloads with
their sizes, as the cells describe them. It only prints."""
from runner import cell_protocol, config, matrix
from runfolder import catalog


def print_list(build_root, compilers):
    rows = catalog.rows_or_usage_error()
    listed = [r.name for r in rows]
    built = {c: catalog.built_rows(catalog.bin_dir(build_root, c), listed) for c in compilers}
    print("strategies (allocators/strategies.txt):")
    width = max(len(r.name) for r in rows if not r.virtual)
    for r in (r for r in rows if not r.virtual):
        missing = [c for c in compilers if r.name not in built[c]]
        tag = f"  [not built{' for ' + ', '.join(missing) if len(compilers) > 1 else ''}" \
              f"{': needs ' + r.libs if r.libs else ''}]" if missing else ""
        base = "  (default baseline)" if r.name == config.DEFAULT_BASELINE else ""
        print(f"  {r.name.ljust(width)}  {r.description}{base}{tag}")
    twins = [r.name for r in rows if r.virtual and all(r.name in built[c] for c in compilers)]
    print(f"  <row>{catalog.VIRTUAL_SUFFIX}: each row through a table of function pointers (run-time "
          f"binding; make VIRTUAL=1, measured with --virtual); built: {', '.join(twins) or 'none'}")
    c = next((c for c in compilers if built[c]), None)
    if c is None:
        print("workloads: build the cells first (make)")
        return 0
    info = cell_protocol.list_workloads(catalog.cell_exe(catalog.bin_dir(build_root, c), built[c][0]))
    print("workloads (sizes: default sweep; linear: whole sweep; log):")
    for w in info["workloads"]:
        print(f"  {w['name']}{'  [threaded]' if w['threaded'] else ''}: {w['summary']}")
        print(f"      default {','.join(map(str, matrix.choose_sizes(w, 'default', False)))}")
        print(f"      linear  {','.join(map(str, w['sizes']))}")
        print(f"      log     {','.join(map(str, w.get('log_sizes') or []))}")
    return 0
