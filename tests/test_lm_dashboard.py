"""A language-model run in the live app: a real GRPO run driven through a `TrainingSession` (its history, evaluations,
curriculum, samples, live knobs, pause, resume and stop), then its dashboard served by Panel and its run page served by
`workbench serve`, both in a real browser (Debian's chromium through Playwright)."""

import json
from pathlib import Path
import re, time

import pytest

from conftest import ARTIFACTS, free_port, wait_for, loopback_page
from lab_fixtures import chromium_fixture  # noqa: F401  (the fixture `chromium`)
from test_app import Server
from workbench.app.charts import chart_figure
from workbench.app.views import chart_set
from workbench.app.dashboard import status_line
from workbench.app.session import TrainingSession
from workbench.core import ConfigError
from workbench.runs.events import Event, Kind
from workbench.runs.store import RunStore
from workbench.train.lm import LMTrainConfig

GRPO_KEYS = [
    "charts/reward", "charts/pass_rate", "charts/pass_rate_first", "charts/level", "charts/completion_length",
    "charts/truncated", "charts/zero_std_groups", "losses/grpo_loss", "losses/kl", "losses/clip_low", "losses/clip_high",
    "losses/grad_norm", "perf/tokens_per_s", "judges/exec", "judges/static", "charts/learning_rate",
]  # fmt: skip
EVAL_KEYS = ["eval/pass_rate", "eval/pass_rate/easy", "eval/pass_rate/medium", "eval/pass_rate/hard"]
CHART_TITLES = {
    "pass_rate": "Pass rate",
    "reward": "Reward per judge",
    "loss": "Loss and KL",
    "time": "Time per step",
    "mismatch": "Sampler vs trainer",
    "completions": "Completions",
    "throughput": "Throughput",
    "lr": "Learning rate",
    "level": "Curriculum level",
}
# A curriculum that moves at once: four episodes a step (2 tasks x 2 samples), and an untrained model passes none of
# them, so after the first step the rolling pass rate (0) is below demote_at and the run goes down to easy.
MOVE = "medium -> easy at rolling pass rate"


def listening(port: int) -> bool:
    "Whether something accepts connections on loopback `port`."
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


GRPO_ONLY = {"group_size": 2, "window": 4, "demote_at": 0.5, "promote_at": 0.9}


def tiny_grpo(runs_dir, **overrides) -> LMTrainConfig:
    "A tiny GRPO run on one CPU thread: 2 tasks a step, 2 samples each, 16-token completions, evaluated every 3 steps."
    settings = {"algo": "grpo", "task": "code?level=medium&turns=2", "updates": 100_000, "batch_size": 2,
                "max_new_tokens": 16, "eval_every": 3, "eval_tasks": 2, "corpus_tasks": 40, "vocab": 300, "hidden": 32,
                "layers": 1, "heads": 2, "ffn": 64, "device": "cpu", "torch_threads": 1, "runs_dir": str(runs_dir),
                **(GRPO_ONLY if overrides.get("algo", "grpo") == "grpo" else {})}  # fmt: skip
    return LMTrainConfig.from_dict({**settings, **overrides})


def test_grpo_run_driven_through_a_session(tmp_path):
    "History, evaluations, curriculum and samples of a real GRPO run; knobs changed live; pause, resume, stop."
    session = TrainingSession(tiny_grpo(tmp_path, beta=0.02))  # beta > 0: it keeps a reference model, so beta may rise
    assert session.knobs == ("learning_rate", "max_grad_norm", "beta", "temperature")
    assert (session.learning_rate, session.beta, session.temperature, session.total_timesteps) == (
        1e-4,
        0.02,
        1.0,
        100_000,
    )
    with pytest.raises(ConfigError, match="'ent_coef' is not a live setting of this run"):
        session.set_hparams(ent_coef=0.01)
    session.start()
    try:
        wait_for(
            lambda: session.global_step >= 4 and session.history.last("eval/pass_rate") is not None,
            timeout=240,
            what="four steps and an evaluation",
        )
        session.pause(source="test")
        wait_for(lambda: session.status == "paused", timeout=60, what="the pause")
        paused_at = session.global_step
        time.sleep(1.5)
        assert session.global_step == paused_at, "steps while paused"
        session.set_hparams(temperature=0.5, beta=0.05, source="test")  # applied while paused
        wait_for(lambda: (session.temperature, session.beta) == (0.5, 0.05), timeout=30, what="the knobs to follow")
        session.resume(source="test")
        wait_for(lambda: session.global_step >= paused_at + 2, timeout=120, what="steps after the resume")
        session.stop(source="test")
        summary = session.wait(timeout=120)
    finally:
        session.close()

    assert summary["status"] == session.status == "stopped" and session.global_step >= paused_at + 2
    keys = set(session.history.keys())
    assert set(GRPO_KEYS) <= keys and set(EVAL_KEYS) <= keys, sorted(set(GRPO_KEYS + EVAL_KEYS) - keys)
    steps, temperatures = session.history.series("charts/temperature")
    assert {t for s, t in zip(steps, temperatures) if s <= paused_at} == {1.0}
    assert {t for s, t in zip(steps, temperatures) if s > paused_at} == {0.5}  # the trainer used the new values
    steps, betas = session.history.series("charts/beta")
    assert {b for s, b in zip(steps, betas) if s > paused_at} == {0.05}

    samples = session.samples
    assert 0 < len(samples) <= 16 and [s["step"] for s in samples] == sorted((s["step"] for s in samples), reverse=True)
    assert set(samples[0]) == {
        "step",
        "task",
        "prompt",
        "turn",
        "completion",
        "reward",
        "advantage",
        "judges",
        "passed",
        "outcome",
        "feedback",
    }
    assert all("def " in s["prompt"] for s in samples), samples[0]["prompt"]  # the prompt it answered (its end)
    log = session.log
    assert not [e for e in log if e["kind"] == "samples"], "completions went into the log"
    evals = [e["text"] for e in log if e["kind"] == "eval"]
    assert evals and all(
        re.fullmatch(r"evaluation: val pass@1 \d\.\d\d \[.*\] \(easy .*, medium .*, hard .*\)", t) for t in evals
    )
    moves = [e["text"] for e in log if e["kind"] == "curriculum"]
    assert moves and moves[0].startswith(f"curriculum: {MOVE} ") and moves[0].endswith(" over 4 episodes"), moves
    assert "set temperature=0.5, beta=0.05 from test: applied" in [e["text"] for e in log]
    _, flat = session.history.series("charts/zero_std_groups")  # GRPO with nothing to learn says so, once a streak
    streaks = "".join("1" if f >= 1.0 else "0" for f in flat).split("0")
    notices = [e["text"] for e in log if e["kind"] == "notice"]
    assert len(notices) == sum(len(s) >= 3 for s in streaks), (flat, notices)
    assert all(re.match(r"no reward spread in (\d+) of \1 groups for 3 steps: ", n) for n in notices), notices

    line = status_line(session)
    assert f"stopped</span> · step <b class='wb-step-count'>{session.global_step:,}</b> of 100,000 · " in line, line
    assert "steps/min" in line and "train pass rate " in line and "best val pass@1 <b>0.00</b>" in line, line
    charts = chart_set(session.config)
    assert list(charts) == list(CHART_TITLES)
    for name in charts:
        figure = chart_figure(session.history, name, charts)
        assert figure["layout"]["title"]["text"] == CHART_TITLES[name]
        assert any(len(t["x"]) for t in figure["data"]), f"the {name} chart is empty"

    store = RunStore(tmp_path)
    run = store.get_run(session.run_id)
    assert run["status"] == "stopped" and run["env"] == "code?level=medium&turns=2" and run["policy"] == "tiny"
    recorded = [(e["data"]["action"], e["data"]["source"]) for e in store.events(session.run_id, "control")]
    assert recorded == [("pause", "test"), ("set", "test"), ("resume", "test"), ("stop", "test")]
    assert store.events(session.run_id, "samples") and store.events(session.run_id, "curriculum")
    store.close()


def test_sft_run_in_a_session(tmp_path):
    "An SFT run: its two knobs, its loss and held-out loss, its pass rates, its own charts; no samples."
    cfg = tiny_grpo(tmp_path, algo="sft", updates=6, batch_size=4, learning_rate=2e-3)
    session = TrainingSession(cfg)
    assert session.knobs == ("learning_rate", "max_grad_norm") and session.learning_rate == 2e-3
    with pytest.raises(ConfigError, match="'temperature' is not a live setting of this run"):
        session.set_hparams(temperature=0.5)
    summary = session.start().wait(timeout=240)
    assert summary["status"] == session.status == "finished" and session.global_step == 6
    keys = set(session.history.keys())
    assert {"losses/sft_loss", "losses/grad_norm", "perf/tokens_per_s", "eval/val_loss", *EVAL_KEYS} <= keys, sorted(
        keys
    )
    assert session.samples == [] and "charts/reward" not in keys
    evals = [e["text"] for e in session.log if e["kind"] == "eval"]
    assert len(evals) == 2 and all(", val loss " in t for t in evals), evals
    line = status_line(session)
    assert "of 6 · " in line and " · loss " in line and "best val pass@1" in line, line
    charts = chart_set(session.config)
    assert list(charts) == ["pass_rate", "loss", "throughput", "lr"]
    for name in charts:
        assert any(len(t["x"]) for t in chart_figure(session.history, name, charts)["data"]), name


MARKUP = '<b class="wb-injected">bold</b><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def test_lm_dashboard_and_run_page_in_a_browser(tmp_path, chromium):
    """A GRPO session's dashboard served by Panel: its title, knobs, charts and samples table; a completion holding markup
    shows as text; a temperature change applies and a beta change (the run keeps no reference model) is refused.
    Then the run's page from `workbench serve`: the language-model charts, pass rates by level, the curriculum move."""
    import panel as pn

    runs_dir = tmp_path / "runs"
    session = TrainingSession(tiny_grpo(runs_dir)).start()

    def dashboard():
        pn.extension("plotly")
        return session.dashboard(control_source="app")

    port = free_port()
    server = pn.serve({"lm": dashboard}, port=port, address="127.0.0.1", websocket_origin=[f"127.0.0.1:{port}"],
                      show=False, threaded=True, title="LM run")  # fmt: skip
    try:
        wait_for(lambda: listening(port), timeout=60, what="the dashboard's server")  # (its thread starts it)
        with loopback_page(chromium, 1400, 1100) as (page, blocked):
            page.goto(f"http://127.0.0.1:{port}/lm")
            page.locator(".wb-title").get_by_text(
                "code (level medium, turns 2), tiny model, GRPO, 2 samples a task"
            ).wait_for(timeout=60_000)
            for name, title in CHART_TITLES.items():
                chart = page.locator(f".wb-chart-{name} .gtitle")
                chart.wait_for(timeout=30_000)
                assert chart.text_content() == title
            assert page.locator(".wb-knob-beta").is_visible() and page.locator(".wb-knob-temperature").is_visible()
            assert (
                not page.locator(".wb-knob-ent_coef").is_visible()
                and not page.locator(".wb-knob-clip_coef").is_visible()
            )

            # It trains: the reward chart gains points, the samples table fills, the status line counts steps a minute.
            reward = page.locator(".wb-chart-reward .js-plotly-plot")
            points = lambda: reward.evaluate("el => (el.data && el.data[0].x) ? el.data[0].x.length : 0")
            wait_for(lambda: points() >= 2, timeout=120, what="the reward chart to gain points")
            # where each step's time went, and the sampler's gap to the trainer, drawn as the run goes
            drawn = lambda name: page.locator(f".wb-chart-{name} .js-plotly-plot").evaluate(
                "el => el.data ? Object.fromEntries(el.data.map(t => [t.name, (t.x || []).length])) : {}"
            )
            times = wait_for(
                lambda: (d := drawn("time")).get("update", 0) >= 2 and d, timeout=60, what="the time chart"
            )
            assert all(times[k] >= 2 for k in ("step", "generate", "judge", "logprob", "update", "waiting", "other")), (
                times
            )
            gaps = wait_for(lambda: (d := drawn("mismatch")).get("RMS", 0) >= 2 and d, timeout=60, what="the gap chart")
            assert gaps["max"] >= 2 and gaps["capped (right)"] >= 2, gaps
            row = page.locator(".wb-samples tbody tr").first
            row.wait_for(timeout=60_000)
            assert re.search(r"gen-(easy|medium)-", row.inner_text()), row.inner_text()
            assert "def " in (row.locator("details pre").first.text_content() or "")  # its prompt, folded under the id
            cells = row.locator("td").all_inner_texts()  # step, task, turn, outcome, reward (+ judges), advantage, ...
            assert cells[3] in ("passed", "syntax error", "test failed", "unsafe", "timeout", "error", "failed"), cells
            assert "exec" in cells[4] and re.fullmatch(r"-?\d+\.\d\d", cells[5]), cells
            status = page.locator(".wb-status").inner_text()
            assert "steps/min" in status and "train pass rate" in status, status
            page.locator(".wb-log").get_by_text(f"curriculum: {MOVE}").wait_for(timeout=60_000)

            # Paused, a crafted sample: its completion and feedback hold markup, which must show as text.
            page.get_by_role("button", name="Pause").click()
            page.locator(".wb-status-value").get_by_text("paused").wait_for(timeout=60_000)
            crafted = {"task": "gen-<i>x</i>", "prompt": "<b class='wb-injected'>prompt</b>", "turn": 2, "completion": MARKUP,
                       "reward": 0.5, "passed": True,
                       "feedback": "<b class='wb-injected'>feedback</b>"}  # fmt: skip
            session._on_event(Event(Kind.SAMPLES, session.global_step + 1, {"samples": [crafted]}))
            shown = page.locator(".wb-samples pre").filter(has_text='<b class="wb-injected">bold</b><script>')
            shown.wait_for(timeout=30_000)
            first = page.locator(".wb-samples tbody tr").first.inner_text()
            assert "gen-<i>x</i>" in first and "<b class='wb-injected'>feedback</b>" in first, first
            assert page.locator(".wb-injected").count() == 0 and page.locator(".wb-samples img").count() == 0
            assert page.evaluate("window.__pwned") is None, "a completion's markup ran in the page"

            # Knobs: a new temperature applies; beta cannot rise in a run started without a reference model.
            temperature = page.locator(".wb-knob-temperature input").first
            temperature.fill("0.5")
            temperature.press("Enter")
            wait_for(lambda: session.temperature == 0.5, timeout=30, what="the temperature to be applied")
            beta = page.locator(".wb-knob-beta input").first
            beta.fill("0.1")
            beta.press("Enter")
            page.locator(".wb-log").get_by_text("beta can rise above 0 only in a run started with beta > 0").wait_for(
                timeout=30_000
            )
            wait_for(lambda: beta.input_value() in ("0", "0.0", "0.000"), timeout=30, what="the beta knob to go back")
            assert session.beta == 0.0
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "lm_dashboard.png"), full_page=True)
            page.get_by_role("button", name="Stop").click()
            page.locator(".wb-status-value").get_by_text("stopped").wait_for(timeout=60_000)
        assert not blocked, blocked
        session.wait(timeout=60)
    finally:
        session.close()
        server.stop()

    # The run's own page, from the store: the language-model charts with the pass rates by level, the curriculum move,
    # and its samples (one written here, whose completion does not parse).
    store = RunStore(runs_dir)
    broken = {"task": "gen-easy-broken", "prompt": "def add(a, b):", "turn": 1, "completion": "return (a +", "reward": 0.0,
              "passed": False, "feedback": "a syntax error: line 1: '(' was never closed"}  # fmt: skip
    store.log_event(session.run_id, session.global_step, "samples", {"samples": [broken]})
    evals = Path(store.get_run(session.run_id)["run_dir"]) / "evals"  # what `workbench eval RUN` writes, task by task
    evals.mkdir()
    (evals / "20261129-120000.jsonl").write_text(
        "".join(
            json.dumps({"task": t, "level": "humaneval", "sample": 0, "passed": ok, "pass_rate": rate, "message": msg,
                        "completion": "    return <b class='wb-injected'>x</b>", "program": "def f(x):\n    return x"})
            + "\n"
            for t, ok, rate, msg in [("HumanEval-0", True, 1.0, ""), ("HumanEval-1", False, 0.5, "a test failed: f(1)")]
        )
    )  # fmt: skip
    store.close()
    served = Server(runs_dir)
    try:
        with loopback_page(chromium, 1400, 1100) as (page, blocked):
            page.goto(f"{served.base}/run?id={session.run_id}")
            chart = page.locator(".wb-run-chart-pass_rate .js-plotly-plot")
            names = "el => el.data ? Object.fromEntries(el.data.map(t => [t.name, (t.x || []).length])) : {}"
            drawn = wait_for(lambda: chart.evaluate(names), timeout=60, what="the run page's pass-rate chart")
            evals = len(RunStore(runs_dir).events(session.run_id, "eval"))
            assert evals and drawn["val pass@1"] == drawn["val easy"] == drawn["val hard"] == evals, drawn
            assert drawn["train (sampled)"] >= 2
            assert page.locator(".wb-run-chart-reward .gtitle").text_content() == "Reward per judge"
            timed = page.locator(".wb-run-chart-time .js-plotly-plot").evaluate(names)
            assert timed["update"] >= 2 and timed["generate"] >= 2, timed  # the run page draws the time split too
            page.locator(".wb-run-head").get_by_text("tiny model").wait_for(timeout=30_000)
            page.locator(".wb-events .tabulator-tableholder").get_by_text(MOVE).first.wait_for(timeout=30_000)
            assert page.locator(".wb-events .tabulator-tableholder").get_by_text("samples", exact=True).count() == 0
            page.locator(".bk-tab").filter(has_text="Samples").click()
            table = page.locator(".wb-samples-table")
            table.locator(".tabulator-row").first.wait_for(timeout=30_000)
            table.locator(".tabulator-col[tabulator-field='outcome'] .tabulator-header-filter input").fill("syntax")
            row = table.locator(".tabulator-row").filter(has_text="gen-easy-broken")
            row.wait_for(timeout=30_000)
            shown = [
                r.locator("[tabulator-field='outcome']").inner_text() for r in table.locator(".tabulator-row").all()
            ]
            assert shown and set(shown) == {"syntax error"}, shown
            assert "return (a +" in row.inner_text() and "def add(a, b):" in row.inner_text(), row.inner_text()
            width = table.locator(".tabulator-tableholder .tabulator-table").bounding_box()["width"]
            header = table.locator(".tabulator-col[tabulator-field='advantage'] .tabulator-col-title")
            assert width <= 1400 and header.evaluate("el => el.scrollHeight <= el.clientHeight + 1"), width  # one line
            page.locator(".bk-tab").filter(has_text="Evaluations").click()  # the evaluation, task by task
            scored = page.locator(".wb-evals")
            scored.locator(".tabulator-row").first.wait_for(timeout=30_000)
            looked = scored.locator(".tabulator-col[tabulator-field='passed'] .tabulator-header-filter input")
            looked.fill("failed")
            looked.press("Enter")
            failed = scored.locator(".tabulator-row").filter(has_text="HumanEval-1")
            failed.wait_for(timeout=30_000)
            wait_for(lambda: scored.locator(".tabulator-row").count() == 1, timeout=30, what="the failed task alone")
            assert "a test failed: f(1)" in failed.inner_text() and "def f(x):" in failed.inner_text(), (
                failed.inner_text()
            )
            assert page.locator(".wb-injected").count() == 0
        assert not blocked, blocked
    finally:
        served.stop()
