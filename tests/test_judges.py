"The execution judge against hostile responses: each is contained, scores 0 quickly, changes nothing outside, leaves nothing running."
import os, socket, threading, time
from pathlib import Path

import psutil
import pytest

from conftest import ROOT
from workbench.judges import ExecutionJudge, Score
from workbench.sandbox import Limits, namespaces_available

TESTS = ["assert answer() == 42"]
LIMITS = Limits(cpu_s=1, wall_s=4, memory_mb=256, file_mb=8, processes=16, output_kb=64)


def sandbox_processes():
    "Processes running as a sandbox uid (200000 and up)."
    out = []
    for p in psutil.process_iter(["pid", "uids"]):
        try:
            if p.info["uids"] and p.info["uids"].real >= 200_000: out.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied): pass
    return out


@pytest.fixture
def world(tmp_path):
    "Files outside the sandbox that no response may read or change: one in a temp folder, one in the checkout."
    secret = tmp_path / "secret.txt"; secret.write_text("the secret is 1234")
    art = ROOT / "test-artifacts"; art.mkdir(exist_ok=True)
    canary = art / f"canary-{os.getpid()}.txt"; canary.write_text("canary")
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
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(); srv.settimeout(0.2)
    hits, stop = [], threading.Event()
    def serve():
        while not stop.is_set():
            try: conn, _ = srv.accept(); hits.append(1); conn.close()
            except OSError: pass
    t = threading.Thread(target=serve, daemon=True); t.start()
    yield srv.getsockname()[1], hits
    stop.set(); t.join(); srv.close()


def hostile_cases(world, port):
    secret, canary, tmp = world["secret"], world["canary"], world["tmp"]
    return {
        "infinite loop": ("def answer():\n    while True: pass\nanswer()", {"cpu_limit"}),
        "sleep forever": ("import time\ntime.sleep(10_000)", {"timeout"}),
        "fork bomb": ("import os\nwhile True:\n    try: os.fork()\n    except OSError: pass", {"cpu_limit", "timeout"}),
        "memory bomb": ("x = []\nwhile True: x.append(bytearray(10**7))", {"memory_limit"}),
        "huge file": ("with open('big.bin', 'wb') as f:\n    while True: f.write(b'0' * 2**20)", {"file_limit"}),
        "read outside": (f"print(open({str(secret)!r}).read())\ndef answer(): return 42", {"exception"}),
        "read checkout": (f"print(open({str(canary)!r}).read())\ndef answer(): return 42", {"exception"}),
        "delete files": (f"import os, shutil\nshutil.rmtree({str(tmp)!r}, ignore_errors=True)\nos.remove({str(canary)!r})", {"exception"}),
        "network socket": (f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
                           "socket.create_connection(('1.1.1.1', 80), timeout=2)", {"exception"}),
        "spawn a shell": ("import os, subprocess\nos.system('echo pwned > /tmp/pwned; rm -rf $HOME/* /work/* 2>/dev/null')\n"
                          f"subprocess.run(['sh', '-c', 'rm -f {canary}; cat {secret}'])", {"test"}),
        "output flood": ("while True: print('x' * 10_000)", {"output_limit"}),
    }


@pytest.mark.skipif(not namespaces_available(), reason="needs root and unshare for the namespaces (the limits alone are tested in the notebook)")
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
        assert took < LIMITS.wall_s + 3, (name, took)                     # quickly: within the wall limit and teardown
        assert "the secret is 1234" not in str(score.to_dict()), name      # nothing of ours came back
        assert not sandbox_processes(), (name, [p.info for p in sandbox_processes()])   # nothing left running
    assert not hits, "a response reached a server on the host's loopback"
    assert "FileNotFoundError" in outcomes["read outside"][2] and "FileNotFoundError" in outcomes["read checkout"][2] \
        or "Permission" in outcomes["read checkout"][2], outcomes
    assert "unreachable" in outcomes["network socket"][2], outcomes
    print(outcomes)


def test_a_correct_response_still_passes():
    judge = ExecutionJudge(LIMITS)
    s = judge.score("Write answer() returning 42.", "def answer():\n    return 6 * 7\n", {"tests": TESTS})
    assert s.overall == 1.0 and s.details["status"] == "ok" and s.details["runtime_s"] is not None
    batch = judge.score_batch([("q", "def answer(): return 42", {"tests": TESTS}), ("q", "def answer(): return 41", {"tests": TESTS})])
    assert [b.overall for b in batch] == [1.0, 0.0]
