#!/usr/bin/python3
# bench/evict_tune.py — scenario 16's hit ratios for chosen servers, policies and workloads
# only, for trying eviction variants in a minute or two instead of the scenario's 7.
#
# Why apart from bench/compare: the full scenario runs every workload on both servers and
# both policies and measures latency too; while tuning only lapse allkeys-lfu changes. This
# calls bench/compare's own functions (evict_streams, evict_run), so the request streams and
# the counting are the scenario's. maxmemory defaults to the one the full scenario computed
# on this machine (41,027,044 B; 9,048,625 B with --quick): pass --maxmemory after a run of
# the scenario on another machine.
import argparse
import importlib.machinery
import importlib.util
import os
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
loader = importlib.machinery.SourceFileLoader("compare", os.path.join(HERE, "compare"))
spec = importlib.util.spec_from_loader("compare", loader)
compare = importlib.util.module_from_spec(spec)
loader.exec_module(compare)

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true")
parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
parser.add_argument("--workloads", default="1,2")
parser.add_argument("--policies", default="allkeys-lfu")
parser.add_argument("--kinds", default="lapse")
parser.add_argument("--maxmemory", type=int, default=0)
args = parser.parse_args()

ctx = compare.Context(types.SimpleNamespace(
    lapse_server=os.path.join(args.build, "lapse-server"), redis_server="/usr/bin/redis-server",
    lapse_bench=os.path.join(args.build, "lapse-bench"), rounds=1, quick=args.quick, lapse_threads=None,
    test_time=None, mass_load_budget=10, reclaim_cap=60, baseline_lapse_server=None), tempfile.mkdtemp())
n = ctx.evict_keys
maxmemory = args.maxmemory or (9_048_625 if args.quick else 41_027_044)
cum = compare.zipf_cumulative(n, compare.EVICT_ZIPF_S)
streams, _ = compare.evict_streams(ctx, cum)


def optimum(keys):
    k = max(0, min(n, int(keys)))
    return cum[k - 1] / cum[-1] if k else 0.0


for workload in args.workloads.split(","):
    stream, warm = streams[workload]
    for policy in args.policies.split(","):
        for kind in args.kinds.split(","):
            t0 = time.time()
            got = compare.evict_run(ctx, kind, policy, maxmemory, stream, warm)
            best = optimum(got["keys_median"]) * (0.8 if workload == "2" else 1.0)
            print(f"workload {workload} {kind} {policy}: hit ratio {got['hit_ratio'] * 100:.2f}%, "
                  f"{got['keys_median']:,.0f} keys held, optimum {best * 100:.2f}% "
                  f"({(got['hit_ratio'] - best) * 100:+.2f} points), used_memory max {got['overshoot_pct']:+.2f}%, "
                  f"{got['evicted_keys']:,} evicted ({time.time() - t0:.0f} s)", flush=True)
