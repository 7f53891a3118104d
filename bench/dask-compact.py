"""The measuring half of bench/dask-compact.sh (run it, not this): times the CLI and
agui_lens.distributed.compact_tree over one tree. A file, with a main guard, because the
cluster's worker processes are spawned and import the main module."""

import os
import subprocess
import time

from agui_lens.distributed import compact_tree, summarize


def main():
    tree, out, workers = os.environ["TREE"], os.environ["OUT"], int(os.environ["WORKERS"])
    files = [
        os.path.join(d, f) for d, _, names in os.walk(tree) for f in names if f.endswith(".jsonl")
    ]
    stored = sum(os.path.getsize(f) for f in files)
    rows = []

    def rate(name, seconds, note=""):
        rows.append((name, seconds, len(files) / seconds, stored / 1e6 / seconds, note))

    started = time.perf_counter()
    ran = subprocess.run(
        [os.environ["AGUI_LENS_BIN"], "compact", tree, "-o", os.path.join(out, "cli") + "/"],
        capture_output=True,
    )
    cli_seconds = time.perf_counter() - started
    assert ran.returncode == 0, ran.stderr.decode()[-2000:]
    rate("agui-lens compact TREE -o DIR/ (CLI, its threads on every core)", cli_seconds)

    from distributed import Client, LocalCluster

    started = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                           host="127.0.0.1", dashboard_address=":0")
    client = Client(cluster)
    startup = time.perf_counter() - started
    started = time.perf_counter()
    table = compact_tree(tree, os.path.join(out, "dask"), client=client)
    dask_seconds = time.perf_counter() - started
    client.close()
    cluster.close()
    totals = summarize(table)
    assert totals["by_status"]["compacted"] == len(files), totals
    rate(f"compact_tree on LocalCluster({workers} worker processes x 1 thread)", dask_seconds,
         f"cluster start {startup:.1f} s, not counted")

    started = time.perf_counter()
    compact_tree(tree, os.path.join(out, "here"))
    rate("compact_tree, no client (this process, one file at a time)",
         time.perf_counter() - started)

    print(f"## agui_lens.distributed.compact_tree against the CLI ({os.environ['COMMIT']})\n")
    print(f"{len(files)} files, {stored / 1e6:.1f} MB stored (mixed profile), "
          f"{totals['events_before']} -> {totals['events_after']} events, "
          f"{totals['bytes_before'] / 1e6:.1f} -> {totals['bytes_after'] / 1e6:.1f} MB; "
          f"{os.cpu_count()} cores, shared with other work while it ran (one run each).\n")
    print("| run | seconds | files/s | MB/s | |")
    print("|---|---:|---:|---:|---|")
    for name, seconds, fps, mbs, note in rows:
        print(f"| {name} | {seconds:.2f} | {fps:.1f} | {mbs:.1f} | {note} |")
    print(f"\ncompact_tree on the cluster / CLI: {cli_seconds / dask_seconds:.2f}x the CLI's rate")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
