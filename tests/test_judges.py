"""The judges: the execution judge against hostile responses (each is contained, scores 0 quickly, changes nothing
outside, leaves nothing running), the LLM judge against a local server, the ensemble, and the command line."""

import json as _json
import os, socket, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
import pytest

from conftest import ROOT, workbench, workbench_main
from workbench.judge.responses import EnsembleJudge, ExecutionJudge, JudgeError, LLMJudge, Score, StaticJudge
from workbench.judge.sandbox import Limits, namespaces_available

# (a check of the hostile responses: no sandbox's process left on the machine)
pytestmark = pytest.mark.usefixtures("machine_to_ourselves")

TESTS = ["assert answer() == 42"]
LIMITS = Limits(cpu_s=1, wall_s=4, memory_mb=256, file_mb=8, processes=16, output_kb=64)


def sandbox_processes():
    "Processes running as a sandbox uid (200000 and up)."
    out = []
    for p in psutil.process_iter(["pid", "uids"]):
        try:
            if p.info["uids"] and p.info["uids"].real >= 200_000 and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return out


@pytest.fixture
def world(tmp_path):
    "Files outside the sandbox that no response may read or change: one in a temp folder, one in the checkout."
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret is 1234")
    art = ROOT / "test-artifacts"
    art.mkdir(exist_ok=True)
    canary = art / f"canary-{os.getpid()}.txt"
    canary.write_text("canary")
    before = {p: (p.read_bytes(), p.stat().st_mtime) for p in (secret, canary)}
    listing = sorted(os.listdir(tmp_path))
    yield {"secret": secret, "canary": canary, "tmp": tmp_path}
    for p, (data, mtime) in before.items():
        assert p.exists() and p.read_bytes() == data and p.stat().st_mtime == mtime, f"{p} changed"
    assert sorted(os.listdir(tmp_path)) == listing, "a file appeared or vanished outside the sandbox"
    assert not Path("/tmp/pwned").exists()
    canary.unlink()


@pytest.fixture
def loopback_server():
    "A TCP server on loopback that counts connections (a response must not reach it)."
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(0.2)
    hits, stop = [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                hits.append(1)
                conn.close()
            except OSError:
                pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], hits
    stop.set()
    t.join()
    srv.close()


def hostile_cases(world, port):
    secret, canary, tmp = world["secret"], world["canary"], world["tmp"]
    return {
        # whichever limit comes first: on a busy machine 1 s of CPU can take longer than 4 s of wall clock
        "infinite loop": ("def answer():\n    while True: pass\nanswer()", {"cpu_limit", "timeout"}),
        "sleep forever": ("import time\ntime.sleep(10_000)", {"timeout"}),
        "fork bomb": ("import os\nwhile True:\n    try: os.fork()\n    except OSError: pass", {"cpu_limit", "timeout"}),
        "memory bomb": ("x = []\nwhile True: x.append(bytearray(10**7))", {"memory_limit"}),
        "huge file": ("with open('big.bin', 'wb') as f:\n    while True: f.write(b'0' * 2**20)", {"file_limit"}),
        "read outside": (f"print(open({str(secret)!r}).read())\ndef answer(): return 42", {"exception"}),
        "read checkout": (f"print(open({str(canary)!r}).read())\ndef answer(): return 42", {"exception"}),
        "delete files": (
            f"import os, shutil\nshutil.rmtree({str(tmp)!r}, ignore_errors=True)\nos.remove({str(canary)!r})",
            {"exception"},
        ),
        "network socket": (
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "socket.create_connection(('1.1.1.1', 80), timeout=2)",
            {"exception"},
        ),
        "spawn a shell": (
            "import os, subprocess\nos.system('echo pwned > /tmp/pwned; rm -rf $HOME/* /work/* 2>/dev/null')\n"
            f"subprocess.run(['sh', '-c', 'rm -f {canary}; cat {secret}'])",
            {"test"},
        ),
        "output flood": ("while True: print('x' * 10_000)", {"output_limit"}),
    }


@pytest.mark.skipif(
    not namespaces_available(),
    reason="needs root and unshare for the namespaces (the limits alone are tested in the notebook)",
)
def test_hostile_responses_are_contained(world, loopback_server):
    port, hits = loopback_server
    judge = ExecutionJudge(LIMITS)
    outcomes = {}
    for name, (response, kinds) in hostile_cases(world, port).items():
        t0 = time.monotonic()
        score = judge.score("Write answer() returning 42.", response, {"tests": TESTS})
        took = time.monotonic() - t0
        assert isinstance(score, Score) and score.overall == 0.0, (name, score)
        kind = score.details["failure"]["kind"]
        outcomes[name] = (kind, round(took, 2), score.details["failure"]["message"][:80])
        assert kind in kinds, (name, score.details)
        assert took < LIMITS.wall_s + 3, (name, took)  # quickly: within the wall limit and teardown
        assert "the secret is 1234" not in str(score.to_dict()), name  # nothing of ours came back
        assert not sandbox_processes(), (name, [p.info for p in sandbox_processes()])  # nothing left running
    assert not hits, "a response reached a server on the host's loopback"
    assert (
        "FileNotFoundError" in outcomes["read outside"][2]
        and "FileNotFoundError" in outcomes["read checkout"][2]
        or "Permission" in outcomes["read checkout"][2]
    ), outcomes
    assert "unreachable" in outcomes["network socket"][2], outcomes
    print(outcomes)


def test_a_correct_response_still_passes():
    judge = ExecutionJudge(LIMITS)
    s = judge.score("Write answer() returning 42.", "def answer():\n    return 6 * 7\n", {"tests": TESTS})
    assert s.overall == 1.0 and s.details["status"] == "ok" and s.details["runtime_s"] is not None
    batch = judge.score_batch(
        [("q", "def answer(): return 42", {"tests": TESTS}), ("q", "def answer(): return 41", {"tests": TESTS})]
    )
    assert [b.overall for b in batch] == [1.0, 0.0]


def test_a_host_that_forbids_the_mounts_falls_back_to_the_limits(monkeypatch):
    "If the isolated root cannot be built here, the probe says so once and runs keep their limits, not fail."
    import workbench.judge.sandbox as sb

    monkeypatch.setattr(sb, "_NAMESPACES", None)
    monkeypatch.setattr(sb, "_MOUNT_SCRIPT", "echo 'mount: permission denied' >&2; exit 32")
    monkeypatch.setattr(sb.os, "geteuid", lambda: 0)
    monkeypatch.setattr(sb.shutil, "which", lambda *a, **k: "/bin/true")
    assert sb.namespaces_available() is False
    r = sb.run_sandboxed("print(6 * 7)", limits=LIMITS)
    assert r.status == "ok" and r.stdout.strip() == "42" and r.enforced["namespaces"] is False
    assert r.enforced["network"] == "not blocked" and r.enforced["limits"]["cpu_s"] == LIMITS.cpu_s


# ---- The LLM judge against an OpenAI-compatible server started here, on loopback ----


class FakeLLM:
    "A chat-completions server whose replies the test scripts: a list of reply texts, or 'hang' to never answer."

    def __init__(self, replies):
        self.replies, self.requests = list(replies), []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = _json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                reply = fake.replies.pop(0) if len(fake.replies) > 1 else fake.replies[0]
                if reply == "hang":
                    time.sleep(5)
                    return
                if reply == "500":
                    self.send_response(500)
                    self.end_headers()
                    return
                if callable(reply):
                    reply = reply(body)
                data = _json.dumps({"choices": [{"message": {"role": "assistant", "content": reply}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_llm():
    servers = []

    def start(replies):
        servers.append(FakeLLM(replies))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def test_llm_judge_reads_a_verdict(fake_llm):
    srv = fake_llm(['{"score": 8, "criteria": {"correctness": 9, "safety": 10}, "explanation": "correct"}'])
    judge = LLMJudge(base_url=srv.url, model="judge-model", api_key="k-test", timeout_s=2, retries=0)
    s = judge.score("Write add(a, b).", "def add(a, b): return a + b", {"references": ["a + b"]})
    assert s.overall == pytest.approx(0.8) and s.criteria["correctness"] == pytest.approx(0.9) and s.judges == ["llm"]
    req = srv.requests[0]
    assert (
        req["path"] == "/v1/chat/completions"
        and req["auth"] == "Bearer k-test"
        and req["body"]["model"] == "judge-model"
    )
    prompt = req["body"]["messages"][0]["content"]
    assert "Write add(a, b)." in prompt and "def add(a, b)" in prompt and "reference answer" in prompt


def test_llm_judge_tolerates_malformed_replies(fake_llm):
    # Prose around fenced JSON with a score as a string; a reply with no score, then a good one (a retry).
    srv = fake_llm(['Here you go:\n```json\n{"score": "7/10", "explanation": "mostly right"}\n```'])
    assert LLMJudge(base_url=srv.url, timeout_s=2, retries=0).score("q", "r").overall == pytest.approx(0.7)
    srv = fake_llm(["I refuse to grade.", "500", '{"score": 3}'])
    s = LLMJudge(base_url=srv.url, timeout_s=2, retries=2).score("q", "r")
    assert s.overall == pytest.approx(0.3) and s.details["tries"] == 3 and len(srv.requests) == 3
    srv = fake_llm(["not json, no score, nothing"])
    with pytest.raises(JudgeError, match="gave no verdict in 2 tries"):
        LLMJudge(base_url=srv.url, timeout_s=2, retries=1).score("q", "r")


def test_llm_judge_gives_up_on_a_server_that_never_answers(fake_llm):
    srv = fake_llm(["hang"])
    t0 = time.monotonic()
    with pytest.raises(JudgeError, match="timed out|TimeoutError|timeout"):
        LLMJudge(base_url=srv.url, timeout_s=0.5, retries=1).score("q", "r")
    assert time.monotonic() - t0 < 4


def test_llm_pairwise_checks_position_bias(fake_llm):
    # A judge that always prefers whatever comes first: the swap exposes it.
    srv = fake_llm(['{"winner": "A", "explanation": "first is best"}'])
    r = LLMJudge(base_url=srv.url, timeout_s=2, retries=0).compare("q", "answer one", "answer two")
    assert r["position_consistent"] is False and r["winner"] == "tie"
    # A judge that prefers the answer mentioning 'set', wherever it stands.
    pick = lambda body: (
        '{"winner": "%s"}' % ("A" if "set(" in body["messages"][0]["content"].split("ANSWER B:")[0] else "B")
    )
    srv = fake_llm([pick])
    r = LLMJudge(base_url=srv.url, timeout_s=2, retries=0).compare("dedupe", "sorted(set(xs))", "a loop with a list")
    assert r == {"winner": "a", "position_consistent": True, "first": "a", "second_swapped_back": "a"}


def test_transformer_judge_offline_ranks_right_above_irrelevant():
    import subprocess, sys

    code = (
        "import os; os.environ['HF_HUB_OFFLINE'] = '1'\n"
        "from workbench.judge.responses import EmbeddingJudge\n"
        "ctx = {'references': ['Reverse a string in Python with slicing: s[::-1].']}\n"
        "a, b = EmbeddingJudge().score_batch([('reverse', 'return s[::-1], the slice that reverses the string', ctx),\n"
        "                                     ('reverse', 'Bananas are rich in potassium.', ctx)])\n"
        "print(a.overall, b.overall)"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HOME": "/nonexistent-hf-home"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    right, irrelevant = map(float, r.stdout.split()[-2:])
    assert right > irrelevant + 0.3, (right, irrelevant)


def test_ensemble_leaves_out_a_failing_member_and_names_it(fake_llm):
    srv = fake_llm(["hang"])
    ens = EnsembleJudge(
        {
            "static": StaticJudge(),
            "exec": ExecutionJudge(LIMITS),
            "llm": LLMJudge(base_url=srv.url, timeout_s=0.5, retries=0),
        },
        weights={"exec": 2},
    )
    s = ens.score("Write answer() returning 42.", "def answer():\n    return 42\n", {"tests": TESTS})
    assert sorted(s.judges) == ["exec", "static"] and "llm" in s.details["left_out"]
    assert s.overall == pytest.approx((2 * 1.0 + 1 * s.details["members"]["static"]["overall"]) / 3)
    assert "left out: llm" in s.explanation and s.details["disagreement"] >= 0


# ---- The command line ----


def test_judge_score_command(tmp_path):
    r = workbench(
        "judge",
        "score",
        "--query",
        "Write add(a, b).",
        "--response",
        "def add(a, b):\n    return a + b\n",
        "--test",
        "assert add(2, 3) == 5",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    s = _json.loads(r.stdout)
    assert s["judges"] == ["exec", "static"] and s["criteria"]["correctness"] == 1.0 and s["overall"] > 0.8
    # Unsafe but passing: the objective's safety gate takes the reward to 0.
    (tmp_path / "resp.py").write_text(
        "import subprocess\ndef add(a, b):\n    subprocess.run(['ls'])\n    return a + b\n"
    )
    r = workbench_main(  # the rest in this process: what the command does, its process shown above
        "judge",
        "score",
        "--query",
        "Write add(a, b).",
        "--response-file",
        tmp_path / "resp.py",
        "--test",
        "assert add(2, 3) == 5",
        "--json",
    )
    s = _json.loads(r.stdout)
    assert (
        r.returncode == 0
        and s["criteria"]["correctness"] == 1.0
        and s["criteria"]["safety"] == 0.0
        and s["overall"] == 0.0
    )
    for args, message in [
        (["--judges", "exec,magic"], "unknown judge 'magic'"),
        (["--judges", "exec"], "the exec judge needs tests"),
        (["--judges", "embedding"], "needs --reference"),
        (["--response-file", tmp_path / "missing.py"], "--response-file not found"),
    ]:
        base = ["--query", "q"] + ([] if "--response-file" in args else ["--response", "x = 1"])
        r = workbench_main("judge", "score", *base, *args)
        assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


def test_a_tests_file_with_no_test_is_refused(tmp_path, capsys, monkeypatch):
    "Empty, only comments or only definitions (.py), an empty list (.json), a test with no code: exit 2, one line."
    import workbench.judge.responses as responses
    from workbench.cli import main

    monkeypatch.setattr(responses, "run_jobs", lambda *a, **k: pytest.fail("a sandbox ran"))  # refused before any work
    files = {"empty.py": "", "comments.py": "# assert f(1) == 2\n\n", "defs.py": "def test_f():\n    assert f(1) == 2\n",
             "empty.json": "[]"}  # fmt: skip
    cases = [
        (["--tests-file", str(tmp_path / name)], f"--tests-file {tmp_path / name} holds no test") for name in files
    ]
    cases.append((["--test", "# assert f(1) == 2"], "test 1 of 1 holds no code"))
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    for args, message in cases:
        code = main(
            ["judge", "score", "--query", "q", "--response", "def f(x):\n    return 2\n", "--judges", "exec", *args]
        )
        out, err = capsys.readouterr()
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out, (args, err)


def test_run_jobs_refuses_bad_arguments():
    "A `WorkbenchError` naming the problem in one line, before any sandbox starts."
    from workbench.core import WorkbenchError
    from workbench.judge.harness import run_jobs

    job = {"program": "x = 1", "calls": [], "checks": []}
    for jobs, limits, message in [
        ([{}], Limits(), "job 0 of run_jobs has no 'program', 'calls', 'checks'"),
        (job, Limits(), "run_jobs takes a list of jobs, got dict"),
        ([job], None, "run_jobs's limits must be a Limits, got NoneType"),
        ([job, "x = 1"], Limits(), "job 1 of run_jobs is a str"),
        ([{**job, "program": None}], Limits(), "has a program of type NoneType"),
        ([{**job, "calls": [{"fn": "f"}]}], Limits(), "has calls that are not a list of calls"),
        ([{**job, "checks": "assert f(1)"}], Limits(), "has checks that are not a list of text"),
        ([{**job, "entry": "f(x)"}], Limits(), "has an entry 'f(x)', not a name"),
        ([{**job, "test": []}], Limits(), "has unknown key(s) 'test'"),
    ]:
        with pytest.raises(WorkbenchError) as e:
            run_jobs(jobs, limits)
        assert message in str(e.value) and "\n" not in str(e.value), (message, str(e.value))


def test_judge_benchmark_command():
    r = workbench("judge", "benchmark", "--tasks", "4", "--judges", "exec,static", "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    report = _json.loads(r.stdout)
    assert set(report) == {"exec", "static", "ensemble"}
    for name, m in report.items():
        assert 0 <= m["roc_auc"] <= 1 and 0 <= m["accuracy"] <= 1 and m["ms_per_item"] > 0, (name, m)
    # The labels hold when the candidates actually run: correct, slow and unsafe pass all their tests in the sandbox.
    assert all(report["exec"]["mean_by_kind"][k] == 1.0 for k in ("correct", "slow", "unsafe")), report["exec"][
        "mean_by_kind"
    ]
    assert report["exec"]["mean_by_kind"]["wrong"] < 1 and report["exec"]["mean_by_kind"]["irrelevant"] == 0
    assert report["static"]["mean_by_kind"]["unsafe"] < report["static"]["mean_by_kind"]["correct"]
    assert report["ensemble"]["roc_auc"] > max(report["exec"]["roc_auc"], report["static"]["roc_auc"])
    r = workbench_main("judge", "benchmark", "--tasks", "0")
    assert r.returncode == 2 and "--tasks must be between 1 and 100" in r.stderr


def test_plateau_stop_ends_training(tmp_path):
    "Convergence as the trainer uses it: a sink on its bus stops the run once the watched metric plateaus."
    from workbench.judge.objective import PlateauStop
    from workbench.runs.events import Kind, Metric
    from workbench.train.ppo import PPOTrainer
    from workbench.train.config import TrainConfig

    cfg = TrainConfig.from_dict(
        {
            "env": "gym:CartPole-v1",
            "total_timesteps": 200_000,
            "num_envs": 4,
            "num_steps": 16,
            "num_minibatches": 1,
            "update_epochs": 1,
            "eval_every": 0,
            "device": "cpu",
            "runs_dir": str(tmp_path),
        }
    )
    trainer = PPOTrainer(cfg, run_dir=tmp_path / "run")
    # the update counter rises by 1 a step: flat within a tolerance of 10
    stopper = PlateauStop(trainer.controls, kind=Kind.UPDATE, key=Metric.UPDATE, window=6, tolerance=10)
    trainer.bus.subscribe(stopper)
    summary = trainer.fit()
    assert stopper.stopped_at is not None and summary["status"] == "stopped"
    assert summary["global_step"] < 20_000, summary["global_step"]


IPC_WRITE = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shm = libc.shmget(0x5EED, 1 << 20, 0o1666)           # IPC_CREAT | 0666: a segment anyone may attach
addr = libc.shmat(shm, None, 0)
ctypes.memmove(addr, b"SECRET-FROM-RUN-1", 17)
queue = libc.msgget(0x5EED, 0o1666)
sems = libc.semget(0x5EED, 3, 0o1666)
print(shm, queue, sems)
"""

IPC_READ = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.shmget(0x5EED, 0, 0), libc.msgget(0x5EED, 0), libc.semget(0x5EED, 0, 0))   # -1: no such object
"""


def sysv_objects_of_sandbox_uids() -> list[str]:
    "SysV shared memory, queues and semaphores on the host owned by a sandbox uid (200000 and up)."
    found = []
    for kind in ("shm", "msg", "sem"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        uid_col = lines[0].split().index("uid")
        found += [f"{kind}: {line}" for line in lines[1:] if int(line.split()[uid_col]) >= 200_000]
    return found


@pytest.mark.skipif(not namespaces_available(), reason="needs root and unshare for the namespaces")
def test_sysv_ipc_stays_inside_one_run():
    "Shared memory, message queues and semaphores made by one run die with it: the host and a later run see none."
    from workbench.judge.sandbox import run_sandboxed

    t0 = time.monotonic()
    first = run_sandboxed(IPC_WRITE, limits=LIMITS)
    assert first.status == "ok" and first.enforced["ipc"] == "private", first.stderr
    assert all(int(x) >= 0 for x in first.stdout.split()), first.stdout  # it could make them, in its own namespace
    assert not sysv_objects_of_sandbox_uids() and time.monotonic() - t0 < 5
    second = run_sandboxed(IPC_READ, limits=LIMITS)
    assert second.status == "ok" and second.stdout.split() == ["-1", "-1", "-1"], second.stdout


@pytest.mark.skipif(not namespaces_available(), reason="needs root and unshare for the namespaces")
def test_writing_is_bounded_in_total_and_leaves_nothing(tmp_path):
    "Many files under the size limit each still cannot fill the host's disk: the folder is a tmpfs of `disk_mb`."
    import shutil
    from workbench.judge.sandbox import run_sandboxed

    fill = "i = 0\nwhile True:\n    open(f'f{i}.bin', 'wb').write(b'0' * (4 << 20)); i += 1"
    before = set(Path("/tmp").glob("wb-sbx-*"))  # (another process's sandboxes may be running)
    free = shutil.disk_usage("/tmp").free
    t0 = time.monotonic()
    result = run_sandboxed(fill, limits=Limits(cpu_s=2, wall_s=4, file_mb=8, disk_mb=32))
    assert result.status == "disk_limit" and time.monotonic() - t0 < 5, (result.status, result.stderr[-300:])
    assert abs(shutil.disk_usage("/tmp").free - free) < 16 << 20  # nothing of it stayed on the host's disk
    assert not set(Path("/tmp").glob("wb-sbx-*")) - before
    judge = ExecutionJudge(Limits(cpu_s=2, wall_s=4, file_mb=8, disk_mb=32))
    score = judge.score("Write answer() returning 42.", fill + "\ndef answer(): return 42", {"tests": TESTS})
    assert score.overall == 0.0 and score.details["failure"]["kind"] == "disk_limit", score.details
    assert "No space left on device" in score.explanation, score.explanation


def test_judge_benchmark_quick_through_the_runner(tmp_path):
    """`python -m bench judge_benchmark --quick` (4 queries x 5 responses, every judge and both ensembles) through the
    runner; here, beside the checks that no sandbox is left running, since it starts sandboxes. What the figures say on
    20 items is not asserted (RESULTS section 7 has the full run)."""
    from test_bench_runner import quick_record

    rec = quick_record("judge_benchmark", tmp_path)
    assert rec["settings"]["items"] == 20 and {"exec", "static", "embedding", "ensemble (objective)"} <= set(rec["raw"])
    assert not sandbox_processes()
