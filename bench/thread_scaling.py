#!/usr/bin/python3
# bench/thread_scaling.py — how lapse scales with event-loop threads, next to Redis, on a
# machine with many cores (issues 11 and 12).
#
# bench/compare runs server and load generator on the same cores of a small machine, which
# is fair for CPU per op but says nothing about scaling. This script pins them apart with
# taskset: the server gets cores [0, T) for T event-loop threads (Redis gets core 0), the
# load generator gets the upper half of the machine, so neither steals the other's cores.
# For each thread count it measures
#   * SET:GET 1:10, 100-byte values, 100,000 random keys, pipeline 1 (issue 11's load);
#   * the BullMQ-style EVALSHA of bench/compare's scenario 8, with its key declared in KEYS
#     (lapse holds only that key's shard) and undeclared (lapse holds every shard), so the
#     parallel gain of declared keys shows (issue 12);
# and reports ops/s and server CPU per op, each as the median of --rounds runs, Redis in
# the same run. Servers, the load generator and the figures come from bench/compare (the
# same Server, Bench and CPU accounting), so the numbers mean the same thing there and here.
#
#   bench/thread_scaling.py --build build --threads 1,2,4,8 --test-time 5
import argparse
import importlib.machinery
import importlib.util
import os
import statistics
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def load_compare():
    loader = importlib.machinery.SourceFileLoader("bench_compare", os.path.join(HERE, "compare"))
    spec = importlib.util.spec_from_loader("bench_compare", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


compare = load_compare()


def start(kind, binary, workdir, cores, threads):
    # compare.Server builds argv itself; wrapping the binary in a tiny launcher keeps its
    # accounting (the pid it reads /proc of is the server's, since taskset execs it).
    launcher = os.path.join(workdir, f"pin-{kind}-{cores}.sh")
    with open(launcher, "w") as f:
        f.write(f"#!/bin/sh\nexec taskset -c {cores} {os.path.abspath(binary)} \"$@\"\n")
    os.chmod(launcher, 0o755)
    extra = ["--threads", str(threads)] if kind == "lapse" else []
    return compare.Server(kind, launcher, workdir, extra)


def measure(ctx, server, load, rounds):
    runs = [compare.measured_run(ctx, server, load) for _ in range(rounds)]
    return tuple(statistics.median(run[field] for run in runs)
                 for field in ("ops_per_sec", "server_cpu_us_per_op", "p99_ms", "errors"))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--redis-server", default="/usr/bin/redis-server")
    parser.add_argument("--threads", default="1,2,4,8", help="lapse event-loop thread counts")
    parser.add_argument("--test-time", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--clients", type=int, default=25, help="connections per load-generator thread")
    args = parser.parse_args()

    cores = os.cpu_count() or 2
    bench_cores = f"{cores // 2}-{cores - 1}"
    bench_threads = max(1, cores // 2)
    workdir = tempfile.mkdtemp(prefix="lapse-scaling-")
    bench_launcher = os.path.join(workdir, "bench.sh")
    with open(bench_launcher, "w") as f:
        f.write(f"#!/bin/sh\nexec taskset -c {bench_cores} {os.path.abspath(os.path.join(args.build, 'lapse-bench'))} \"$@\"\n")
    os.chmod(bench_launcher, 0o755)
    bench = compare.Bench(bench_launcher, workdir)
    ctx = types.SimpleNamespace(bench=bench)
    base = ["--threads", bench_threads, "--clients", args.clients, "--pipeline", 1, "--test-time", args.test_time,
            "--key-minimum", 1, "--key-maximum", 100_000]
    loads = {
        "SET:GET 1:10": lambda sha: base + ["--ratio", "1:10", "--data-size", 100],
        "EVALSHA, key declared": lambda sha: base + ["--key-prefix", "job:", "--data-size", 100,
                                                     "--command", f"EVALSHA {sha['declared']} 1 __key__ __data__"],
        "EVALSHA, key undeclared": lambda sha: base + ["--key-prefix", "job:", "--data-size", 100,
                                                       "--command", f"EVALSHA {sha['undeclared']} 0 __key__ __data__"],
    }
    print(f"{cores} cores; load generator: lapse-bench --threads {bench_threads} --clients {args.clients} "
          f"on cores {bench_cores}; server on cores [0, T); {args.rounds} rounds x {args.test_time} s, medians")
    print(f"{'server':<16} {'load':<26} {'ops/s':>12} {'CPU us/op':>10} {'p99 ms':>8}", flush=True)
    servers = [("redis", args.redis_server, "0", 1)]
    servers += [("lapse", os.path.join(args.build, "lapse-server"), f"0-{t - 1}", t)
                for t in (int(x) for x in args.threads.split(","))]
    for kind, binary, server_cores, threads in servers:
        server = start(kind, binary, workdir, server_cores, threads)
        try:
            bench.load(server, "job:", 1, 100_000, 100)
            sha = {"declared": server.call("SCRIPT", "LOAD", compare.DECLARED_SCRIPT),
                   "undeclared": server.call("SCRIPT", "LOAD", compare.UNDECLARED_SCRIPT)}
            for name, load in loads.items():
                ops, cpu, p99, errors = measure(ctx, server, load(sha), args.rounds)
                label = "redis" if kind == "redis" else f"lapse T={threads}"
                print(f"{label:<16} {name:<26} {ops:>12,.0f} {cpu:>10.2f} {p99:>8.3f}" + (f"  errors {errors}" if errors else ""),
                      flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
