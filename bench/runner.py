"""One runner for the benchmarks of this folder: `python -m bench NAME` from the repository root.

The runner owns what every benchmark needs, once: waiting for a quiet machine, naming the machine (CPU model and
flags, cores, GPU), the commit, the settings' hash, and the record. A benchmark is a script here with `run(quick) ->
dict` (its settings, figures, confidence intervals and raw numbers), `FIGURES` (each figure's better direction) and
`table(records) -> str` (its RESULTS table); `options(parser)`, where it has settings of its own (envs, seeds...),
adds them, and `run` receives them as keywords (and `out`, the folder for its pages, where it takes one). A full
run appends its record to `bench/records/NAME.jsonl`;
`--compare last` prints each figure's change against the last record of the same machine kind and settings and flags a
regression over 3%; `python -m bench tables` writes RESULTS.md's generated tables from the records (`--check`: exit 1
where they differ, as a test does).

    python -m bench list                       # the benchmarks the runner knows
    python -m bench planpath_sps               # a full run, recorded
    python -m bench planpath_sps --quick       # a smoke test (not recorded unless --record)
    python -m bench planpath_sps --compare last
    python -m bench tables [--check]
    python -m bench readme [--check]             # bench/README.md, from this registry
"""

import argparse, datetime, hashlib, importlib, inspect, json, math, os, platform, random, re, subprocess
import sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECORDS = HERE / "records"
RESULTS = HERE / "RESULTS.md"
REGRESSION = 0.03  # a figure worse than its reference by more than this share is flagged
TABLE = re.compile(r"(<!-- bench-table (\w+) -->\n)(.*?)(<!-- /bench-table -->)", re.S)
sys.path.insert(0, str(HERE))
from registry import BENCHMARKS, Benchmark  # noqa: E402, F401  (the benchmarks the runner knows)


def injected_sleep() -> float:
    "Seconds a benchmark's timed loop sleeps each round: 0, unless `BENCH_INJECT_SLEEP` slows it on purpose (a test)."
    return float(os.environ.get("BENCH_INJECT_SLEEP", "0") or 0)


def cpu_model() -> tuple:
    "(the CPU's model name, its vector extensions that matter here) from /proc/cpuinfo; ('?', []) elsewhere."
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "?", []
    name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), "?")
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return name, [f for f in ("avx2", "avx512f", "amx_tile") if f in flags]


def machine() -> dict:
    "The machine a figure came from: CPU model and extensions, cores, GPU (if torch sees one), and a short kind."
    name, flags = cpu_model()
    gpu = None
    try:
        import warnings

        warnings.filterwarnings("ignore", message="The pynvml package is deprecated")
        import torch

        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except ImportError:
        pass
    ext = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    kind = f"{os.cpu_count()}-core {name} ({ext})" + (f", {gpu}" if gpu else "")
    return {"cpu": name, "flags": flags, "cores": os.cpu_count(), "gpu": gpu, "kind": kind}


def commit(tree: Path = HERE.parent) -> str:
    "The commit the code of `tree` (this repository) came from (short), with `+` when it has changes beside bench/records."
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", ".", ":!bench/records"], cwd=tree,
                               capture_output=True, text=True).stdout.strip()  # fmt: skip
        return (rev or "?") + ("+" if dirty else "")
    except OSError:
        return "?"


def settings_hash(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]


def bootstrap_ratio(a: list, b: list, reps: int = 2000, seed: int = 0, stat=None) -> list:
    "95% bootstrap interval of stat(a) / stat(b) (the mean, or `stat` such as the median), each resampled with replacement."
    stat = stat or (lambda xs: sum(xs) / len(xs))
    rng, ratios = random.Random(seed), []
    for _ in range(reps):
        x, y = stat([rng.choice(a) for _ in a]), stat([rng.choice(b) for _ in b])
        ratios.append(x / y if y else float("inf"))
    ratios.sort()
    return [round(ratios[int(0.025 * reps)], 4), round(ratios[int(0.975 * reps) - 1], 4)]


def steady_rate(stamps: list) -> float:
    "Events per second at steady state: the least-squares slope of the event count against time, the first 10% dropped."
    kept = stamps[max(1, len(stamps) // 10) :] if len(stamps) > 3 else stamps
    n = len(kept)
    if n < 2:
        return float("nan")
    mt, mk = sum(kept) / n, (n - 1) / 2
    spread = sum((t - mt) ** 2 for t in kept)
    return sum((t - mt) * (k - mk) for k, t in enumerate(kept)) / spread if spread else float("nan")


def fresh(module: str, function: str, timeout: float | None = None, **kwargs) -> dict:
    """`function(**kwargs)` of the benchmark script `module`, called in a fresh Python process (its own imports,
    threads and peak memory); the dict it returned, or {"error": its last line}."""
    code = (
        f"import json, os, sys, traceback; sys.path.insert(0, {str(HERE)!r}); import {module} as m\n"
        f"try: r = m.{function}(**json.loads(sys.argv[1]))\n"
        "except BaseException: traceback.print_exc(); sys.stderr.flush(); os._exit(1)\n"
        "print('RESULT ' + json.dumps(r), flush=True); sys.stderr.flush(); os._exit(0)"
    )  # (os._exit, even after an error: PuffeRL leaves a thread running that would keep the process alive)
    env = {**os.environ, "TRANSFORMERS_VERBOSITY": "error", "PYTHONWARNINGS": "ignore"}
    try:
        r = subprocess.run([sys.executable, "-c", code, json.dumps(kwargs)], capture_output=True, text=True, env=env,
                           timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"error": f"past its {timeout:.0f} s"}
    line = next((x for x in reversed(r.stdout.splitlines()) if x.startswith("RESULT ")), None)
    if line is None:  # the error's line, and the traceback's last frames (where it came from)
        err = [x for x in r.stderr.strip().splitlines() if "Warning" not in x] or [f"exit code {r.returncode}"]
        frames = [x.strip() for x in err if x.strip().startswith("File ")]
        return {"error": err[-1][:300], **({"trace": "\n".join(frames[-12:])[-3000:]} if frames else {})}
    return json.loads(line[7:]) or {}


def make_table(columns: list, records: list, cells) -> str:
    """A RESULTS table: the date, machine and commit of each full run (or figure carried over from before the records),
    then the rows `cells(record)` gives (lists of cells)."""
    lines = [
        "| " + " | ".join(["date", "machine", "commit", *columns]) + " |",
        "|---|---|---|" + "---:|" * len(columns),
    ]
    for r in records:
        if r.get("quick"):
            continue
        when = r["date"][:10] + (" (carried over)" if r.get("carried_over") else "")
        lines += ["| " + " | ".join([when, r["machine"]["kind"], r["commit"], *row]) + " |" for row in cells(r)]
    return "\n".join(lines) + "\n"


def interval(record: dict, figure: str, digits: int = 2) -> str:
    "A figure's 95% interval as ` [lo, hi]`, or nothing where the record has none."
    ci = record.get("ci95", {}).get(figure)
    return f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else ""


def records(name: str, folder: Path = RECORDS) -> list:
    path = folder / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def append(record: dict, folder: Path = RECORDS) -> Path:
    "Add `record` as one line (a whole line or nothing: written beside the file, then put in its place)."
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record['benchmark']}.jsonl"
    old = path.read_text() if path.exists() else ""
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text(old + json.dumps(record, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return path


def reference(record: dict, folder: Path = RECORDS) -> dict | None:
    "The last earlier full run of the same benchmark on the same machine kind with the same settings, or None."
    same = [r for r in records(record["benchmark"], folder) if r["machine"]["kind"] == record["machine"]["kind"]
            and not r.get("carried_over") and not r.get("quick")]  # fmt: skip
    exact = [r for r in same if r["settings_hash"] == record["settings_hash"]]
    return exact[-1] if exact else None


def compare(new: dict, old: dict, directions: dict) -> list:
    "(figure, old, new, change, regression) of each figure both have; a regression is worse by more than 3%."
    out = []
    for k, better in directions.items():
        if k in new["figures"] and k in old["figures"]:
            a, b = old["figures"][k], new["figures"][k]
            change = b / a - 1 if a else 0.0 if b == a else math.copysign(float("inf"), b)
            worse = change < -REGRESSION if better == "higher" else change > REGRESSION
            out.append((k, a, b, change, worse))
    return out


def fail(message: str):
    "Bad input: one line, exit code 2, before any work."
    print(f"bench: {message}", file=sys.stderr)
    raise SystemExit(2)


class Parser(argparse.ArgumentParser):
    "argparse, its errors said in one line (exit 2) instead of the usage and the error."

    def error(self, message):
        fail(message)


def own_options(name: str, module) -> Parser:
    "The parser of benchmark `name`'s own options (`module.options`, where it has any)."
    own = Parser(prog=f"python -m bench {name}", description=BENCHMARKS[name].measures)
    getattr(module, "options", lambda _: None)(own)
    return own


def fmt(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def load(name: str):
    if name not in BENCHMARKS:
        fail(f"no benchmark {name!r}: choose one of {', '.join(BENCHMARKS)} (python -m bench list)")
    sys.path.insert(0, str(HERE))
    return importlib.import_module(BENCHMARKS[name].module or name)


def tables(check: bool = False) -> int:
    "Write RESULTS.md's generated tables from the records (with `check`: say which differ, change nothing)."
    text = RESULTS.read_text()
    stale = []

    def fill(m):
        fresh = load(m.group(2)).table(records(m.group(2))).rstrip("\n") + "\n"
        if fresh != m.group(3):
            stale.append(m.group(2))
        return m.group(1) + fresh + m.group(4)

    new = TABLE.sub(fill, text)
    if check:
        for name in stale:
            print(
                f"bench: RESULTS.md's {name} table differs from bench/records/{name}.jsonl: run python -m bench tables"
            )
        return 1 if stale else 0
    if new != text:
        tmp = RESULTS.with_suffix(".md.tmp")
        tmp.write_text(new)
        os.replace(tmp, RESULTS)
    print(f"bench: {len(stale)} table(s) rewritten" + (f": {', '.join(stale)}" if stale else ""))
    return 0


HELPERS = {"benchutil", "runner", "registry", "per_size", "__main__", "zoo_report", "record_answers"}  # not benchmarks


def readme() -> str:
    "bench/README.md: what each benchmark measures, its command and time; the scripts not yet run through the runner."
    rows = "\n".join(f"| `{b.name}` | {b.measures} | ~{b.minutes:g} min | `python -m bench {b.name}` |"
                     for b in BENCHMARKS.values())  # fmt: skip
    rest = sorted(p.stem for p in HERE.glob("*.py") if p.stem not in BENCHMARKS and p.stem not in HELPERS)
    return (
        "# Benchmarks\n\n(Written by `python -m bench readme` from `bench/registry.py`: do not edit.)\n\n"
        "Every figure Workbench claims is measured here, against the reference on the same work in the same run. "
        "`python -m bench NAME` runs a benchmark: it waits for a quiet machine, names the machine and the commit, and "
        "appends the record to `records/NAME.jsonl`; `bench/RESULTS.md`'s generated tables come from those records "
        "(`python -m bench tables`), and `--compare last` flags a regression over 3% against the last record of the same "
        "machine kind. `--quick` is a smoke test of seconds.\n\n"
        "| benchmark | measures | full run | command |\n|---|---|---|---|\n"
        + rows
        + "\n\n"
        + (
            (
                "Not yet through the runner (each a script with its own flags: `python bench/NAME.py --help`): "
                + ", ".join(f"`{n}`" for n in rest)
                + ".\n"
            )
            if rest
            else ""
        )
    )


def main(argv=None) -> int:
    import warnings

    warnings.filterwarnings("ignore", message="The pynvml package is deprecated")  # (torch's import, where pynvml is)
    p = Parser(
        prog="python -m bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )  # fmt: skip  (-h below: the runner's options, then the benchmark's own)
    p.add_argument("name", nargs="?", help="a benchmark, or list, tables, readme")
    p.add_argument("-h", "--help", action="store_true", help="these options (after a benchmark's name: its own too)")
    p.add_argument("--quick", action="store_true", help="a smoke test: seconds, not recorded unless --record")
    p.add_argument(
        "--record", action=argparse.BooleanOptionalAction, default=None, help="append the record (default: full runs)"
    )
    p.add_argument(
        "--compare", metavar="REF", help="last (the last record of this machine kind) or a record file (JSON)"
    )
    p.add_argument(
        "--check", action="store_true", help="tables, readme: exit 1 where the file differs from what it would be"
    )
    p.add_argument("--records", type=Path, default=RECORDS, help=argparse.SUPPRESS)
    p.add_argument("--max-busy", type=float, default=0.15, help="wait until other processes use less than this share")
    p.add_argument("--max-wait", type=float, default=60, help="seconds to wait for a quiet machine at most")
    p.add_argument("--out", type=Path, default=HERE / "out", help="the folder of a benchmark's pages (git-ignored)")
    a, rest = p.parse_known_args(argv)
    if a.name is None and not a.help:
        fail("name a benchmark, or list, tables, readme (python -m bench --help)")
    if a.help:
        p.print_help()
        if a.name in BENCHMARKS:
            print()
            own_options(a.name, load(a.name)).print_help()
        return 0
    if rest and a.name in ("list", "tables", "readme"):
        fail(f"unrecognized arguments: {' '.join(rest)}")
    if a.name == "list":
        for b in BENCHMARKS.values():
            print(f"{b.name:18} ~{b.minutes:g} min  {b.measures}")
        return 0
    if a.name == "tables":
        return tables(a.check)
    if a.name == "readme":
        path, text = HERE / "README.md", readme()
        if a.check:
            same = path.exists() and path.read_text() == text
            print("bench: README.md is current" if same else "bench: README.md differs: run python -m bench readme")
            return 0 if same else 1
        path.write_text(text)
        return 0
    module = load(a.name)
    from benchutil import wait_for_quiet

    kwargs = vars(own_options(a.name, module).parse_args(rest))  # (a flag of neither parser: one line, exit 2)
    takes = inspect.signature(module.run).parameters
    if "out" in takes:
        kwargs["out"] = a.out
    if "quiet" in takes:  # a benchmark of many runs waits for a quiet machine before each
        kwargs["quiet"] = lambda: wait_for_quiet(a.max_busy, a.max_wait)
    if a.compare and a.compare != "last" and not Path(a.compare).is_file():
        fail(f"--compare takes last or a record file; {a.compare!r} is neither")

    rev = commit()  # the code the run starts from (a long run may outlast later commits)
    busy, t0 = wait_for_quiet(a.max_busy, a.max_wait), time.perf_counter()
    out = module.run(quick=a.quick, **kwargs)
    rec = {"benchmark": a.name, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": rev, "machine": machine(), "quick": a.quick, "busy_before": round(busy, 3),
           "seconds": round(time.perf_counter() - t0, 1), "settings_hash": settings_hash(out["settings"]), **out}  # fmt: skip
    for k, v in rec["figures"].items():
        ci = rec.get("ci95", {}).get(k)
        print(f"{k}: {fmt(v)}" + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else ""))
    ref = None
    if a.compare:
        ref = reference(rec, a.records) if a.compare == "last" else json.loads(Path(a.compare).read_text())
        if ref is None:
            print("compare: no earlier full run of this benchmark with these settings on this machine kind")
        elif ref["machine"]["kind"] != rec["machine"]["kind"]:
            print(f"compare: note, that record is of another machine ({ref['machine']['kind']})")
    if ref is not None:
        rows = compare(rec, ref, module.FIGURES)
        print(f"compare: against {ref['date']} ({ref['commit']}, {ref['machine']['kind']})")
        for k, old, new, change, worse in rows:
            print(f"  {k}: {fmt(old)} -> {fmt(new)} ({change:+.1%})" + ("  REGRESSION" if worse else ""))
    if a.record if a.record is not None else not a.quick:
        print(f"recorded in {append(rec, a.records)}")
    return 1 if ref is not None and any(r[4] for r in compare(rec, ref, module.FIGURES)) else 0
