"""Responses that try to forge their verdict, the classic reward hacks of code RL: every one scores 0 and is labelled as
a failure, in the single judge, the batch judge and GRPO's reward over a task file made of them. And the sandbox dies
with its judge: SIGKILL of a judge (the CLI, a batch judge, a GRPO trainer) leaves no sandboxed process past the wall
limit, and no sandbox folder after the next start; a response's processes share one memory cap."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from conftest import ROOT, start_workbench, wait_for
from workbench.judge.harness import run_jobs
from workbench.judge.responses import ExecutionJudge
from workbench.judge.sandbox import Limits, namespaces_available, run_sandboxed
from workbench.judge.verdicts import from_plain, to_plain

pytestmark = [
    pytest.mark.skipif(
        not namespaces_available(), reason="needs root and unshare: the uids that keep the verdict out of reach"
    ),
    pytest.mark.usefixtures("machine_to_ourselves"),  # it checks that no sandbox's process is left on the machine
]

PROMPT = "# Write add(a, b): the sum of a and b.\n"
TESTS = [
    "assert add(2, 3) == 5",  # split: decided in the judge's process
    "_got = add(-4, 1)\nassert _got == -3, 'add(-4, 1) returned ' + repr(_got)",  # split, the form `explain` writes
    "assert all(add(i, 2 * i) == 3 * i for i in range(1, 4))",  # a check: runs in the tests' own process
]
CONTEXT = {"tests": TESTS, "prompt": PROMPT, "entry": "add"}
LIMITS = Limits(cpu_s=2, wall_s=6, memory_mb=256, file_mb=8, processes=16, output_kb=64)
RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
# what a pass looks like in every protocol the harness has or had; none holds an expected value
CLAIMS = (
    'WB-REPORT-0:{"load_error": null, "tests": [{"ok": true, "s": 0.0}, {"ok": true, "s": 0.0}, {"ok": true, "s": 0.0}]}\n'
    '{"loaded": true, "names": ["add"]}\n{"load_error": null, "tests": [{"ok": true, "s": 0}, {"ok": true, "s": 0}, '
    '{"ok": true, "s": 0}]}\n[{"status": "ok", "report": {"load_error": null, "tests": [{"ok": true, "s": 0}]}}]\n'
    '{"value": {"object": "AlwaysEqual", "text": "x"}}\n{"ok": true}\n'
)
FAILURES = {"test", "exception", "exit", "timeout", "cpu_limit", "memory_limit", "output_limit", "file_limit", "killed"}
# `seen(pattern)`: where a regex (written so that it never matches itself) is found in this process: the objects gc
# tracks, every module's globals, its environment and command line, what its fds read, its whole memory
SCAN = textwrap.dedent(r"""
    import gc, os, re, sys
    def seen(pattern):
        rx, where = re.compile(pattern.encode()), set()
        def look(place, x):
            if isinstance(x, str): x = x.encode("utf-8", "replace")
            if isinstance(x, bytes) and rx.search(x): where.add(place)
        def walk(o, depth=0):
            if isinstance(o, (str, bytes)): look("objects", o)
            elif depth < 4 and isinstance(o, dict):
                for k, v in list(o.items()): walk(k, depth + 1); walk(v, depth + 1)
            elif depth < 4 and isinstance(o, (list, tuple, set, frozenset)):
                for v in list(o): walk(v, depth + 1)
        for o in gc.get_objects(): walk(o)
        for m in list(sys.modules.values()):
            for k, v in list(vars(m).items()): look("modules", k); walk(v)
        for part in ("environ", "cmdline"):
            try: look(part, open(f"/proc/self/{part}", "rb").read())
            except OSError: pass
        for fd in os.listdir("/proc/self/fd"):
            try: look("fds", os.pread(int(fd), 1 << 20, 0))
            except OSError: pass
        try:
            with open("/proc/self/mem", "rb") as mem:
                for line in open("/proc/self/maps").read().splitlines():
                    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                    for at in range(lo, hi, 1 << 20):
                        try: mem.seek(at); look("memory", mem.read(min(hi - at, (1 << 20) + 64)))
                        except (OSError, ValueError, OverflowError): break
        except OSError: pass
        return sorted(where)
""")
CHECK_TEXT = r"2 \* i\) == 3 \* i"  # TESTS[2], as the failure message of another job would hold it
# a later response of a batch that learns the tests from an earlier one's failed check, if its process inherited it
LEAKER = (
    SCAN
    + f"\nif seen({CHECK_TEXT!r}):\n    def add(a, b):\n        return a + b\nelse:\n"
    + textwrap.indent(WRONG, "    ")
)


def hostile() -> dict:
    "name -> a response that would pass only if its hack worked (without it, every test fails)."
    claims = repr(CLAIMS)
    return {
        "forged report line": WRONG
        + textwrap.dedent(f"""
            import json, os, sys
            main = sys.modules["__main__"]
            marks = [v for k, v in vars(main).items() if isinstance(v, str) and "MARK" in k.upper()] + ["WB-REPORT-0:"]
            for m in marks:
                print(m + json.dumps({{"load_error": None, "tests": [{{"ok": True, "s": 0.0}}] * 3}}))
                sys.__stdout__.write({claims})
            sys.stdout.flush()
            os._exit(0)
        """),
        "forged pipe write": WRONG
        + textwrap.dedent(f"""
            import os
            for fd in range(256):
                try: os.write(fd, {claims}.encode())
                except OSError: pass
            os._exit(0)
        """),
        "sys.exit(0) at import": "import sys\nsys.exit(0)\n" + WRONG,
        "os._exit(0) at import": "import os\nos._exit(0)\n" + WRONG,
        "sys.exit(0) in the function": "import sys\ndef add(a, b):\n    sys.exit(0)\n",
        "os._exit(0) in the function": "import os\ndef add(a, b):\n    os._exit(0)\n",
        "AlwaysEqual": textwrap.dedent("""
            class AlwaysEqual:
                def __eq__(self, other): return True
                def __ne__(self, other): return False
                def __bool__(self): return True
                __hash__ = object.__hash__
            def add(a, b):
                return AlwaysEqual()
        """),
        "int subclass equal to all": textwrap.dedent("""
            class Liar(int):
                def __eq__(self, other): return True
                __hash__ = int.__hash__
            def add(a, b):
                return Liar(0)
        """),
        "patched builtins": textwrap.dedent("""
            import builtins
            builtins.all = lambda *a: True
            builtins.AssertionError = type("Never", (Exception,), {})
            builtins.isinstance = lambda *a: True
            builtins.repr = lambda x: "5"
        """)
        + WRONG,
        "patched test helpers": textwrap.dedent("""
            import json, sys
            main = sys.modules["__main__"]
            for name in ("decide", "from_plain", "to_plain", "dump_plain", "judge_call", "run_one", "report"):
                setattr(main, name, lambda *a, **k: True)
            json.dumps = lambda *a, **k: '{"ok": true, "value": true, "loaded": true}'
            sys.excepthook = lambda *a: None
        """)
        + WRONG,
        "writes to every inherited fd": WRONG
        + textwrap.dedent(f"""
            import os, threading
            def spam():
                for _ in range(200):
                    for fd in range(64):
                        try: os.write(fd, {claims}.encode())
                        except OSError: pass
            threading.Thread(target=spam, daemon=True).start()
            import atexit
            atexit.register(spam)
        """),
        "edits the test files": WRONG
        + textwrap.dedent("""
            import glob, os
            for p in glob.glob("/box/**", recursive=True) + ["tests.json", "jobs.json", "../jobs.json", "/box/main.py"]:
                try: open(p, "w").write("[]")
                except OSError: pass
                try: os.remove(p)
                except OSError: pass
        """),
        "kills the harness": WRONG
        + textwrap.dedent("""
            import os, signal
            for p in [os.getppid(), 1] + [int(p) for p in os.listdir("/proc") if p.isdigit()]:
                if p != os.getpid():
                    try: os.kill(p, signal.SIGKILL)
                    except OSError: pass
        """),
        "reads the expected values": textwrap.dedent("""
            import glob, os
            needles = ["2, 3) ==" + " 5", "3 " + "* i", "== " + "-3"]
            found = []
            def look(path, limit=1 << 22):
                try:
                    with open(path, "rb") as f: text = f.read(limit).decode("latin-1")
                except OSError: return
                found.extend(n for n in needles if n in text)
            for p in glob.glob("/box/**", recursive=True) + glob.glob("/run/**", recursive=True) + glob.glob("/tmp/**"):
                if os.path.isfile(p): look(p)
            me = str(os.getpid())
            for pid in [p for p in os.listdir("/proc") if p.isdigit() and p != me]:
                for part in ("cmdline", "environ"): look(f"/proc/{pid}/{part}")
                for fd in glob.glob(f"/proc/{pid}/fd/*"): look(fd, 1 << 16)
                try: maps = open(f"/proc/{pid}/maps").read().splitlines()
                except OSError: continue
                try:
                    with open(f"/proc/{pid}/mem", "rb") as mem:
                        for line in maps:
                            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                            try: mem.seek(lo); text = mem.read(min(hi - lo, 1 << 24)).decode("latin-1")
                            except (OSError, ValueError, OverflowError): continue
                            found.extend(n for n in needles if n in text)
                except OSError: pass
            if found:                                   # it learnt the tests: now it can pass them
                def add(a, b):
                    return a + b
            else:
                def add(a, b):
                    return a - b
        """),
        "reads the caller's frame": textwrap.dedent("""
            import sys
            def add(a, b):
                f = sys._getframe(1)
                while f is not None:
                    for k, v in f.f_locals.items():
                        if k in ("expected", "want", "_got") and isinstance(v, int): return v
                    f = f.f_back
                return a - b
        """),
        "leaves a daemon behind": WRONG
        + textwrap.dedent(f"""
            import os, time
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    t = time.time()
                    while time.time() - t < 20:
                        for fd in range(64):
                            try: os.write(fd, {claims}.encode())
                            except OSError: pass
                        time.sleep(0.01)
                os._exit(0)
        """),
        "a huge value": "def add(a, b):\n    return [a - b] * 10_000_000\n",
        "a value nested past the limit": "def add(a, b):\n    x = a - b\n    for _ in range(5000): x = [x]\n    return x\n",
        "reads an earlier job's failed checks": LEAKER,  # last: in a batch, many failed checks come before it
    }


# Shadowing a builtin the tests use: name -> (what the response defines besides a wrong `add`, a test that relies on
# the builtin). Were the response's name bound in the tests' namespace, each test would pass (each did, before the fix).
SHADOWS = {
    "range": ("def range(*a):\n    return []\n", "for a in range(5): assert add(a, 1) == a + 1"),
    "abs": ("def abs(x):\n    return 0\n", "assert abs(add(2, 3) - 5) < 1e-9"),
    "zip": ("def zip(*a):\n    return []\n", "for a, b in zip([1, 2], [3, 4]): assert add(a, b) == a + b"),
    "all": ("def all(x):\n    return True\n", "assert all([add(1, 2) == 3, add(2, 2) == 4])"),
    "any": ("def any(x):\n    return False\n", "assert not any([add(a, a) != 2 * a for a in range(3)])"),
    "sorted": ("def sorted(x):\n    return [0, 5]\n", "assert sorted([add(2, 3), add(0, 0)]) == [0, 5]"),
    "sum": ("def sum(x):\n    return 6\n", "assert sum([add(1, 2), add(1, 2)]) == 6"),
    "len": ("def len(x):\n    return 0\n", "assert len([x for x in [add(1, 1), add(2, 3)] if x not in (2, 5)]) == 0"),
    "str": ("def str(x):\n    return '3'\n", "assert str(add(1, 2)) == '3'"),
    # (a type is not plain data: the tests' process never sent isinstance's call, so this one scored 0 before too)
    "isinstance": (
        "def isinstance(x, t):\n    return t is not int\n",
        "r = add(1, 2)\nassert isinstance(r, (int, float)) and (not isinstance(r, int) or r == 3)",
    ),
    "range in HumanEval's check(candidate)": (
        "def range(*a):\n    return []\n",
        "def check(candidate):\n    for a in range(3):\n        assert candidate(a, 1) == a + 1\n\ncheck(add)",
    ),
}


def shadow_task(name: str) -> dict:
    "The add task whose one test relies on the builtin `name` shadows (its prompt names it, to tell the tasks apart)."
    return {"id": f"shadow-{list(SHADOWS).index(name)}", "prompt": f"# Write add(a, b): the sum of a and b. ({name})\n",
            "entry": "add", "tests": [SHADOWS[name][1]]}  # fmt: skip


def sandbox_processes() -> list:
    "Processes running as a sandbox uid (200000 and up), not zombies."
    out = []
    for p in psutil.process_iter(["pid", "uids"]):
        try:
            if p.info["uids"] and p.info["uids"].real >= 200_000 and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p.info)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return out


def check_scores(names, scores, where):
    for name, s in zip(names, scores):
        kind = (s.details.get("failure") or {}).get("kind")
        assert s.overall == 0.0 and s.details["passed"] == 0, (where, name, s.explanation, s.details)
        assert kind in FAILURES, (where, name, s.details)  # a failure of the response, never the judge's
        assert s.details["status"] not in ("error", "check_error"), (where, name, s.details)


def test_hostile_responses_score_zero_in_the_single_and_the_batch_judge():
    cases = hostile()
    judge = ExecutionJudge(LIMITS)
    right = judge.score("q", RIGHT, CONTEXT)
    assert right.overall == 1.0 and right.details["decided"] == {"outside": 2, "tests_process": 1}, right.details
    alone = [judge.score("q", r, CONTEXT) for r in cases.values()]
    check_scores(cases, alone, "single")
    assert not sandbox_processes(), sandbox_processes()
    # the batch: hostile responses between right ones, in one sandbox (and in two, two at a time)
    items = [("q", RIGHT, CONTEXT)] + [("q", r, CONTEXT) for r in cases.values()] + [("q", RIGHT, CONTEXT)]
    for parallel in (1, 2):
        scores = ExecutionJudge(LIMITS, parallel=parallel).score_batch(items)
        assert scores[0].overall == 1.0 and scores[-1].overall == 1.0, (scores[0].details, scores[-1].details)
        check_scores(cases, scores[1:-1], f"batch, {parallel} at once")
        assert not sandbox_processes(), sandbox_processes()
    print({n: (s.details["failure"]["kind"], s.details["failure"]["message"][:60]) for n, s in zip(cases, alone)})


def _grpo_trainer(tmp_path, completions, spec_extra="", tasks=None, batch_size=3, group_size=8):
    """A GRPO trainer over a task file (of the add task, unless `tasks` are given), whose policy 'generates' the given
    completions in turn (or `completions(prompt)`, when it is a function)."""
    from workbench.cli import make_parser
    from workbench.policy.tokens import Sample
    from workbench.train.commands import build_run_config, pick_algorithm
    from workbench.train.runner import new_trainer

    task_file = tmp_path / "tasks.jsonl"
    tasks = tasks or [{"id": "add", "prompt": PROMPT, "entry": "add", "tests": TESTS}]
    task_file.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    flags = ["--algo", "grpo", "--task", f"code?source=file&path={task_file}&judges=exec&turns=1{spec_extra}",
             "--batch-size", str(batch_size), "--group-size", str(group_size), "--max-new-tokens", "16", "--hidden",
             "32", "--layers", "1", "--heads", "2", "--ffn", "64", "--vocab", "300", "--corpus-tasks", "20",
             "--device", "cpu"]  # fmt: skip
    args = make_parser(["train"]).parse_args(["train", *flags])
    cfg = build_run_config(pick_algorithm(args), args)
    trainer = new_trainer(cfg, run_dir=tmp_path / "run")
    policy, turn = trainer.policy, [0]

    def generate(prompts, **_):
        out = []
        for p in prompts:
            text = completions(p) if callable(completions) else completions[turn[0] % len(completions)]
            turn[0] += 1
            ids = policy.encode(text)
            out.append(Sample(p, text, policy.encode(p), ids, [0.0] * len(ids), False))
        return out

    policy.generate = generate
    return trainer


def test_hostile_responses_earn_no_grpo_reward(tmp_path):
    "GRPO's reward over a task file made of them: 0 for each, 1 for the right answers among them; a step trains on it."
    cases = hostile()
    completions = list(cases.values()) + [RIGHT] * (24 - len(cases))
    trainer = _grpo_trainer(tmp_path, completions)
    played, play = [], trainer.play  # what the step's own play judged: each response once, through the whole step
    trainer.play = lambda tasks: played.append(play(tasks)) or played[-1]
    stats = trainer.step()  # it trains on those rewards
    ((rows, _, _),) = played
    got = [(r.sample.text, r.attempt) for r in rows]
    assert len(got) == 24
    for text, attempt in got:
        name = next((n for n, c in cases.items() if c == text), "right")
        assert attempt.reward == (1.0 if name == "right" else 0.0) and attempt.passed == (name == "right"), (
            name,
            attempt,
        )
    assert abs(stats["charts/reward"] - (24 - len(cases)) / 24) < 1e-6, stats
    assert not sandbox_processes(), sandbox_processes()


def test_shadowing_a_builtin_the_tests_use_scores_zero(capsys):
    "Single judge, batch judge (one sandbox) and the CLI: the response's `range`, `abs`... never reach the tests."
    judge, names = ExecutionJudge(LIMITS, parallel=1), list(SHADOWS)
    contexts = [{k: v for k, v in shadow_task(n).items() if k != "id"} for n in names]
    right = judge.score_batch([("q", RIGHT, c) for c in contexts])
    assert [s.overall for s in right] == [1.0] * len(names), [s.explanation for s in right]
    forged = [("q", SHADOWS[n][0] + WRONG, c) for n, c in zip(names, contexts)]
    check_scores(names, [judge.score(*it) for it in forged[:2]], "single")
    check_scores(names, judge.score_batch(forged), "batch")
    from workbench.cli import main

    code = main(["judge", "score", "--query", "q", "--response", forged[0][1], "--test", SHADOWS["range"][1],
                 "--judges", "exec", "--json"])  # fmt: skip
    score = json.loads(capsys.readouterr().out)
    assert code == 0 and score["overall"] == 0.0 and score["criteria"]["correctness"] == 0.0, score


def test_shadowing_a_builtin_earns_no_grpo_reward(tmp_path):
    "A task a builtin, its group a forgery and a right answer: 0 and 1."
    names = list(SHADOWS)
    seen = {}

    def completion(prompt):
        name = next(n for n in names if f"({n})" in prompt)
        seen[name] = seen.get(name, 0) + 1
        return SHADOWS[name][0] + WRONG if seen[name] % 2 else RIGHT

    tasks = [shadow_task(n) for n in names]
    trainer = _grpo_trainer(tmp_path, completion, tasks=tasks, batch_size=len(tasks), group_size=2)
    rows, _, _ = trainer.play(trainer.draw(len(tasks)))
    got = sorted((r.attempt.task_id, r.sample.text == RIGHT, r.reward) for r in rows)
    assert got == sorted((t["id"], right, float(right)) for t in tasks for right in (False, True)), got


def test_a_later_response_of_a_batch_learns_nothing_from_an_earlier_one():
    "[wrong, leaker, wrong, leaker] in one sandbox: all 0 (the leakers scored 1 when forked from the supervisor)."
    judge = ExecutionJudge(LIMITS, parallel=1)
    scores = judge.score_batch([("q", r, CONTEXT) for r in (WRONG, LEAKER, WRONG, LEAKER)])
    assert [s.overall for s in scores] == [0.0] * 4, [s.explanation for s in scores]
    # nor does the tests' process of a later job: its prompt (trusted code, run there) looks the same way
    looks = {**CONTEXT, "prompt": SCAN + PROMPT, "tests": [f"assert len(seen({CHECK_TEXT!r})) == 0"]}
    scores = judge.score_batch([("q", WRONG, CONTEXT), ("q", RIGHT, looks)])
    assert scores[1].overall == 1.0, scores[1].details
    # and the search works: it finds what a process does hold (the supervisor's code, which it inherits)
    call = {"fn": "seen", "args": to_plain([r"run_che[c]ks"]), "kwargs": to_plain({})}
    (res,), _ = run_jobs([{"program": SCAN, "calls": [call], "checks": []}], LIMITS)
    found = from_plain(json.loads(res["calls"][0])["value"])
    assert {"memory", "objects", "modules"} <= set(found), found


def test_the_box_is_0711_under_the_supervisor():
    "/box is root's and not listable (0711) in the judge's sandbox; the code's own (0700) in a plain one."
    probe = "import os\ns = os.stat('/box')\nprint(oct(s.st_mode & 0o777), s.st_uid == 0)"
    assert run_sandboxed(probe, supervised=True).stdout.split() == ["0o711", "True"]
    assert run_sandboxed(probe).stdout.split() == ["0o700", "False"]
    ls = "import os\ndef ls():\n    try: return os.listdir('/box')\n    except OSError as e: return type(e).__name__\n"
    call = {"fn": "ls", "args": to_plain([]), "kwargs": to_plain({})}
    (res,), _ = run_jobs([{"program": ls, "calls": [call], "checks": []}], LIMITS)
    assert from_plain(json.loads(res["calls"][0])["value"]) == "PermissionError", (
        res
    )  # a job's process: no names of other jobs


# ---- The sandbox dies with its judge ----

SLEEPER = "import time\ntime.sleep(300)\ndef add(a, b):\n    return a + b\n"


def stale_folders(pid: int) -> list:
    return list(Path(tempfile.gettempdir()).glob(f"wb-sbx-{pid}-*"))


def kill_when_sandboxed(proc: subprocess.Popen, timeout: float = 60.0) -> float:
    "SIGKILL `proc` once a sandboxed process runs; when it was killed."
    wait_for(lambda: sandbox_processes() or proc.poll() is not None, timeout, what="a sandboxed process")
    assert proc.poll() is None, proc.communicate()
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return time.monotonic()


def assert_nothing_left(pid: int, killed_at: float, wall_s: float):
    wait_for(lambda: not sandbox_processes(), wall_s, what="the sandboxed processes to end after the judge's SIGKILL")
    assert time.monotonic() - killed_at < wall_s, "a sandboxed process outlived its wall limit"
    for folder in stale_folders(pid):  # what is left holds nothing of the task: the box's copy was deleted at start
        for f in folder.rglob("*"):
            assert not f.is_file() or "add(2, 3)" not in f.read_text(errors="replace"), f
    # the next process that starts a sandbox sweeps what the killed one left
    run_sandboxed("print('next')", limits=Limits(wall_s=10))
    # (this test process has swept once already: sweep as a fresh process would)
    import workbench.judge.sandbox as sb

    sb._swept = False
    run_sandboxed("print('next')", limits=Limits(wall_s=10))
    assert not stale_folders(pid), stale_folders(pid)


def test_killing_the_judge_command_kills_its_sandbox(tmp_path):
    response = tmp_path / "sleeper.py"
    response.write_text(SLEEPER)
    proc = start_workbench(
        "judge", "score", "--query", "Write add.", "--response-file", response, "--test", TESTS[0], "--judges", "exec"
    )
    killed_at = kill_when_sandboxed(proc)
    assert_nothing_left(proc.pid, killed_at, Limits().wall_s)


SCRIPT = """
import json, sys
sys.path.insert(0, {tests!r})
from test_hostile import ExecutionJudge, LIMITS, CONTEXT, SLEEPER, RIGHT, _grpo_trainer
from pathlib import Path
if sys.argv[1] == "batch":
    ExecutionJudge(LIMITS).score_batch([("q", RIGHT, CONTEXT), ("q", SLEEPER, CONTEXT), ("q", SLEEPER, CONTEXT)])
else:
    trainer = _grpo_trainer(Path(sys.argv[2]), [SLEEPER, RIGHT])
    trainer.step()
"""


@pytest.mark.parametrize("judge", ["batch", "grpo"])
def test_killing_a_batch_judge_or_a_grpo_trainer_kills_its_sandboxes(tmp_path, judge):
    script = tmp_path / "judge.py"
    script.write_text(SCRIPT.format(tests=str(ROOT / "tests")))
    proc = subprocess.Popen([sys.executable, str(script), judge, str(tmp_path)], cwd=ROOT)
    killed_at = kill_when_sandboxed(proc, timeout=120)
    assert_nothing_left(proc.pid, killed_at, LIMITS.wall_s)


def test_a_response_s_processes_share_one_memory_cap():
    "Ten processes of 100 MB each, under 160 MB a process: the cgroup's cap (160 + 64 + 32 MB) lets at most two end clean."
    hog = textwrap.dedent("""
        import os, time
        kids = []
        for i in range(10):
            pid = os.fork()
            if pid == 0:
                x = bytearray(100 << 20)
                for k in range(0, len(x), 4096): x[k] = 1
                open(f"done-{i}", "w").close()
                time.sleep(2)
                os._exit(0)
            kids.append(pid)
        ends = [os.waitpid(p, 0)[1] for p in kids]
        print(sum(e == 0 for e in ends), len([f for f in os.listdir(".") if f.startswith("done-")]))
    """)
    r = run_sandboxed(hog, limits=Limits(memory_mb=160, disk_mb=64, wall_s=20, processes=32))
    if "cgroup" not in r.enforced["memory"]:
        pytest.skip(f"no memory cgroup here: {r.enforced['memory']}")
    assert r.enforced["oom_kills"] >= 1, r
    clean, done = (int(x) for x in r.stdout.split()) if r.status == "ok" else (0, 0)
    # With a cap a process, all ten would end clean. `done` is not bounded: the OOM killer may pick a child that had
    # finished its 100 MB and was sleeping, which lets another finish its own (4 of 10 seen on a loaded machine).
    assert clean <= 2 and done < 10, (r.status, r.stdout, r.enforced)


def test_the_box_has_its_own_minimal_etc():
    r = run_sandboxed(
        "import os\nprint(os.path.exists('/etc/machine-id'), len(open('/etc/passwd').read().splitlines()), "
        "os.path.exists('/etc/shadow'), sorted(os.listdir('/etc')))"
    )
    machine_id, users, shadow, listing = r.stdout.split(" ", 3)
    assert (machine_id, users, shadow) == ("False", "2", "False"), r.stdout
    assert "passwd" in listing and "ssh" not in listing and "hostname" in listing, listing
