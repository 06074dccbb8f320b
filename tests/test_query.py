"""`workbench query`: read-only SQL over a real run store (a SQLite file written through `RunStore`, as training writes
it): a SELECT answers as a table, CSV or JSON, and the same from Python as a DataFrame; a write of any kind is refused in
one line with exit code 2 and leaves the file as it was; a missing store or bad SQL is one line too."""

import hashlib, json, subprocess, sys, time

import pytest

from workbench.runs.store import RunStore


def workbench(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    "Two sweeps on two envs (three trials each, their runs finished with a score), and a code agent's run with samples."
    runs = tmp_path_factory.mktemp("query") / "runs"
    store = RunStore(runs)
    for env, lrs, scores in [("gym:CartPole-v1", (1e-3, 3e-3, 1e-2), (180.0, 475.0, 9.5)),
                             ("gym:Acrobot-v1", (3e-4, 1e-3, 3e-3), (-120.0, -85.5, -300.0))]:  # fmt: skip
        sweep = f"sweep-{env[4:-3]}"
        store.create_sweep(sweep, sweep, "train", env, "random", "eval/mean_return", "maximize", {"options": {}})
        for i, (lr, score) in enumerate(zip(lrs, scores)):
            trial = store.add_trial(sweep, i, {"learning_rate": lr, "gamma": 0.99})
            run = store.create_run(f"{trial}-run", {"algo": "ppo", "run": {"seed": i}, "ppo": {"learning_rate": lr}},
                                   env=env, policy="mlp")  # fmt: skip
            store.log_metrics(run, 1000, {"charts/episodic_return": score / 2})
            store.update_run(
                run, status="finished", best_return=score, started_at=time.time() - 30, ended_at=time.time()
            )
            store.update_trial(trial, status="finished", run_id=run, score=score)
        store.update_sweep(sweep, status="finished")
    agent = store.create_run("code-grpo", {"algo": "grpo", "optim": {"learning_rate": 1e-4}}, env="code?level=easy",
                             policy="tiny")  # fmt: skip
    shown = [{"task": "t1", "prompt": "def f():", "completion": "    return 1", "reward": 1.0, "passed": True,
              "feedback": "ok"}, {"task": "t2", "prompt": "def g():", "completion": "pass", "reward": 0.0,
                                  "passed": False, "feedback": "line 1: wrong"}]  # fmt: skip
    store.log_event(agent, 5, "samples", {"samples": shown})
    store.close()
    return runs


def digest(runs) -> str:
    return hashlib.sha256((runs / "workbench.db").read_bytes()).hexdigest()


BEST_LR = (
    "SELECT env, learning_rate, max(score) AS best FROM trials WHERE status = 'finished' GROUP BY env ORDER BY env"
)


def test_the_best_learning_rate_per_env_across_sweeps(runs):
    "The guide's question, as a table, CSV and JSON."
    r = workbench("query", BEST_LR, "--runs-dir", runs)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["env", "learning_rate", "best"] and set(lines[1]) <= {"-", " "}
    assert lines[2].split() == ["gym:Acrobot-v1", "0.001", "-85.5"] and lines[3].split() == [
        "gym:CartPole-v1",
        "0.003",
        "475",
    ]
    csv = workbench("query", BEST_LR, "--runs-dir", runs, "--format", "csv").stdout.splitlines()
    assert csv == ["env,learning_rate,best", "gym:Acrobot-v1,0.001,-85.5", "gym:CartPole-v1,0.003,475.0"]
    rows = json.loads(workbench("query", BEST_LR, "--runs-dir", runs, "--format", "json").stdout)
    assert rows[1] == {"env": "gym:CartPole-v1", "learning_rate": 0.003, "best": 475.0}


def test_the_views(runs):
    got = workbench("query", "SELECT count(*), min(seed), max(steps) FROM runs WHERE algo = 'ppo'", "--runs-dir", runs)
    assert got.stdout.splitlines()[2].split() == ["6", "0", "0"], got.stdout
    samples = json.loads(workbench("query", "SELECT task, reward, passed FROM samples ORDER BY task", "--runs-dir", runs,
                                   "--format", "json").stdout)  # fmt: skip
    assert samples == [{"task": "t1", "reward": 1.0, "passed": 1}, {"task": "t2", "reward": 0.0, "passed": 0}]
    sweeps = workbench("query", "SELECT name, trials FROM sweeps ORDER BY name", "--runs-dir", runs, "--format", "csv")
    assert sweeps.stdout.splitlines()[1:] == ["sweep-Acrobot,3", "sweep-CartPole,3"]
    metric = workbench("query", "SELECT value FROM metrics WHERE run LIKE '%CartPole%t001%'", "--runs-dir", runs)
    assert metric.stdout.splitlines()[2].strip() == "237.5"
    views = workbench("query", "--views")
    assert views.returncode == 0 and all(f"{v}: one row a" in views.stdout for v in ("runs", "metrics", "samples"))
    assert "learning_rate" in workbench("query", "--help").stdout  # the views' columns are in the help


def test_from_python_as_a_dataframe(runs):
    from workbench import query

    df = query(BEST_LR, runs)
    assert list(df.columns) == ["env", "learning_rate", "best"] and df["best"].tolist() == [-85.5, 475.0]


@pytest.mark.parametrize(
    "sql, says",
    [
        ("DELETE FROM main.runs", "DELETE is refused"),
        ("UPDATE main.trials SET score = 1e9", "UPDATE is refused"),
        ("INSERT INTO main.tags VALUES ('x', 'y', 0)", "INSERT is refused"),
        ("ATTACH DATABASE 'other.db' AS other", "ATTACH is refused"),
        ("PRAGMA writable_schema = ON", "PRAGMA writable_schema is refused"),
        ("PRAGMA journal_mode = DELETE", "PRAGMA journal_mode is refused"),
        ("DROP TABLE main.runs", "DROP TABLE is refused"),
        ("CREATE TABLE main.x (y)", "CREATE TABLE is refused"),
        ("VACUUM", "VACUUM is refused"),
        ("SELECT 1; DELETE FROM main.runs", "one statement at a time"),
        ("SELEC name FROM runs", "syntax error"),
        ("SELECT nope FROM runs", "no such column: nope"),
        ("", "give a query"),
    ],
)
def test_a_write_is_refused_in_one_line_and_nothing_changes(runs, sql, says, tmp_path):
    before = digest(runs)
    r = subprocess.run([sys.executable, "-m", "workbench.cli", "query", sql, "--runs-dir", str(runs)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert digest(runs) == before and not list(tmp_path.iterdir())  # the store as it was, no file attached or made


@pytest.mark.parametrize(
    "args, says",
    [
        (["SELECT 1", "--runs-dir", "nowhere"], "no run store in 'nowhere'"),
        (["SELECT 1", "--format", "xml"], "unknown format 'xml'"),
        (["SELECT 1", "--max-rows", "0"], "--max-rows must be at least 1"),
    ],
)
def test_bad_input_is_one_line(runs, args, says):
    r = workbench("query", *args, *([] if "--runs-dir" in args else ["--runs-dir", runs]))
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
