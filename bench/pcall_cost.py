"""What pcall costs in a script (issue 12: pcall and xpcall run in a child coroutine so that
a busy loop inside them can step aside, server/lua_protected_calls.cc).

usage: /usr/bin/python3 bench/pcall_cost.py BASE_LAPSE_SERVER NEW_LAPSE_SERVER

Each server runs alone with --threads 1; each script is EVALed 15 times and the fastest
kept (the machine is shared), in 3 alternating rounds.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from lapse_harness import RawClient
N = 200000
SCRIPTS = {
    "plain f()": f"local f = function() end for i = 1, {N} do f() end return 1",
    "pcall(f)": f"local f = function() end for i = 1, {N} do pcall(f) end return 1",
    "pcall(redis.call,'incr')": f"for i = 1, {N//10} do pcall(redis.call, 'incr', 'k') end return 1",
    "redis.call('incr')": f"for i = 1, {N//10} do redis.call('incr', 'k') end return 1",
}


def measure(binary, port):
    p = subprocess.Popen([binary, "--port", str(port), "--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    res = {}
    with RawClient(port, timeout=60) as c:
        for name, s in SCRIPTS.items():
            best = 1e9
            for _ in range(15):
                t = time.perf_counter(); r = c.call("EVAL", s, "0"); best = min(best, time.perf_counter() - t)
                assert r == 1, r
            res[name] = best
    p.terminate(); p.wait()
    return res

for rnd in range(3):
    for label, b, port in [("base", sys.argv[1], 7411), ("new", sys.argv[2], 7412)]:
        r = measure(b, port)
        print(rnd, label, "  ".join(f"{k}: {v*1e3:.1f} ms" for k, v in r.items()), flush=True)
