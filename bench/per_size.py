"""One-core benchmarks of ours against a reference at several sizes (envs, grids), measured in alternating order:
the shared part of `planpath_sps` and `trading_sps`."""

import os, time

from runner import bootstrap_ratio, injected_sleep, interval, make_table


def alternate(sizes: list, rounds: int, ours, reference) -> dict:
    """{size: {"ours": rates, "reference": rates}}: `rounds` measurements of each at each size, in alternating order (ours
    first in even rounds, the reference first in odd ones), so that a drift of the machine falls on both."""
    raw = {}
    for n in sizes:
        got = {"ours": [], "reference": []}
        for r in range(rounds):
            for who in ("ours", "reference") if r % 2 == 0 else ("reference", "ours"):
                got[who].append((ours if who == "ours" else reference)(n))
        raw[str(n)] = got
    return raw


PER_SIZE_FIGURES = {
    f"{who}_{n}": "higher" for n in (1, 64, 1024, 4096) for who in ("ours", "ratio")
}  # (`per_size_run`)


def per_size_run(quick: bool, ours, reference, versions: dict) -> dict:
    """A one-core benchmark of ours against a reference at several sizes: `ours(n, seconds)` and `reference(n, seconds)`
    give rates; 1, 64, 1,024 and 4,096 in 3 alternating rounds of 3 s (the reference's at most 2 s), or with `quick`
    64 and 1,024 in 2 rounds of 0.3 s; the process pinned to one core meanwhile."""
    sizes, seconds, rounds = ([64, 1024], 0.3, 2) if quick else ([1, 64, 1024, 4096], 3.0, 3)
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    try:
        raw = alternate(sizes, rounds, lambda n: ours(n, seconds), lambda n: reference(n, min(seconds, 2.0)))
    finally:
        os.sched_setaffinity(0, cores)
    figures, ci = per_size(raw)
    settings = {"sizes": sizes, "seconds": seconds, "rounds": rounds, "cores": 1}
    return {"settings": settings, "figures": figures, "ci95": ci, "raw": raw, "versions": versions}


def per_size(raw: dict) -> tuple:
    "(figures, intervals) of `alternate`'s rates: each side's median, their ratio, and its bootstrap 95% interval."
    med = lambda xs: sorted(xs)[len(xs) // 2]
    figures, ci = {}, {}
    for n, r in raw.items():
        figures[f"ours_{n}"], figures[f"reference_{n}"] = round(med(r["ours"])), round(med(r["reference"]))
        figures[f"ratio_{n}"] = round(figures[f"ours_{n}"] / figures[f"reference_{n}"], 2)
        ci[f"ratio_{n}"] = bootstrap_ratio(r["ours"], r["reference"])
    return figures, ci


def per_size_table(records: list, size: str, ours: str, reference: str) -> str:
    "RESULTS' table of a per-size benchmark (`alternate`): a row a size of each full run, its machine named."

    def cells(r):
        f = r["figures"]
        ratio = lambda n: f"{f[f'ratio_{n}']:.1f}x{interval(r, f'ratio_{n}', 1)}"
        return [[f"{n:,}", f"{f[f'ours_{n}']:,}", f"{f[f'reference_{n}']:,}", ratio(n)] for n in r["settings"]["sizes"]]

    return make_table([size, ours, reference, "ours / reference [95% CI]"], records, cells)


def step_rate(env, actions, seconds: float) -> float:
    """Steps/s of a PufferLib-style vector env (`async_reset`, `send`, `recv`) stepping the rows of `actions` in turn
    for `seconds` (16 steps between looks at the clock), then closed; slowed by `BENCH_INJECT_SLEEP` in a test."""
    env.async_reset(0)
    env.recv()
    steps, t0, pause = 0, time.perf_counter(), injected_sleep()
    while time.perf_counter() - t0 < seconds:
        for k in range(16):
            env.send(actions[(steps + k) % len(actions)])
            env.recv()
        steps += 16
        if pause:
            time.sleep(pause)
    rate = steps / (time.perf_counter() - t0)
    env.close()
    return rate
