"Live controls from another thread take effect at the next update and are recorded in the store."

import threading, time

from conftest import wait_for
from workbench.runs.store import RunStore, StoreSink
from workbench.train.ppo import PPOTrainer
from workbench.train.config import TrainConfig


def test_pause_resume_set_lr_stop_from_another_thread(tmp_path):
    cfg = TrainConfig.from_dict(
        {
            "num_envs": 2,
            "num_steps": 16,
            "num_minibatches": 2,
            "update_epochs": 1,
            "total_timesteps": 50_000_000,
            "eval_every": 0,
            "anneal_lr": False,
            "learning_rate": 1e-3,
            "device": "cpu",
            "runs_dir": str(tmp_path),
        }
    )
    store = RunStore(tmp_path)
    run_id = store.create_run("controls", cfg.to_dict(), run_dir=tmp_path / "controls")
    trainer = PPOTrainer(cfg, run_dir=tmp_path / "controls")
    events, lock = [], threading.Lock()

    def record(e):
        with lock:
            events.append(e)

    trainer.bus.subscribe(record)
    trainer.bus.subscribe(StoreSink(RunStore(tmp_path), run_id))
    updates = lambda: [e for e in list(events) if e.kind == "update"]

    trainer.start()
    wait_for(lambda: len(updates()) >= 3, what="three updates")

    trainer.controls.pause(source="test")
    wait_for(lambda: trainer.status == "paused", what="the pause")
    paused_at = trainer.global_step
    time.sleep(1.0)
    assert trainer.global_step == paused_at, "no training while paused"
    n = len(updates())
    trainer.controls.set(learning_rate=2e-4, ent_coef=0.01, source="test")  # applied while paused
    trainer.controls.resume(source="test")
    wait_for(lambda: len(updates()) >= n + 2, what="updates after resume")
    trainer.controls.stop(source="test")
    trainer.thread.join(60)
    assert not trainer.thread.is_alive() and trainer.error is None
    trainer.bus.close()

    assert trainer.result["status"] == "stopped"
    kinds = [(e.kind, e.data.get("action")) for e in events if e.kind in ("control", "update")]
    # Nothing trained between pause and resume, and the first update after the `set` used the new values.
    i_pause, i_resume = kinds.index(("control", "pause")), kinds.index(("control", "resume"))
    assert all(k != "update" for k, _ in kinds[i_pause:i_resume])
    first_after = next(
        e
        for e in events[events.index(next(e for e in events if e.kind == "control" and e.data["action"] == "resume")) :]
        if e.kind == "update"
    )
    assert first_after.data["charts/learning_rate"] == 2e-4 and first_after.data["charts/ent_coef"] == 0.01
    assert first_after.step == paused_at + 32
    before = [e for e in events if e.kind == "update" and e.step <= paused_at]
    assert all(e.data["charts/learning_rate"] == 1e-3 for e in before)

    # The store recorded each control with its source, and the status changes.
    store = RunStore(tmp_path)
    recorded = [(e["data"]["action"], e["data"]["source"], e["data"]["ok"]) for e in store.events(run_id, "control")]
    assert recorded == [
        ("pause", "test", True),
        ("set", "test", True),
        ("resume", "test", True),
        ("stop", "test", True),
    ]
    assert store.events(run_id, "control")[1]["data"]["applied"] == {"learning_rate": 2e-4, "ent_coef": 0.01}
    statuses = [e["data"]["status"] for e in store.events(run_id, "status")]
    assert statuses == ["running", "paused", "running", "stopped"]
    assert store.get_run(run_id)["status"] == "stopped"
    lrs = [m["value"] for m in store.metrics(run_id, "charts/learning_rate")]
    assert lrs[0] == 1e-3 and lrs[-1] == 2e-4


def test_a_run_driven_to_nan_stops_as_diverged_and_resumes_from_its_last_finite_checkpoint(tmp_path):
    "A learning rate raised live to a diverging value: the run stops as `diverged`, its checkpoints stay finite."
    import torch
    from workbench.train.checkpoint import find_checkpoint, load_checkpoint
    from workbench.train.runner import new_trainer, record_run, fit_run

    settings = {"num_envs": 4, "num_steps": 16, "total_timesteps": 50_000_000, "eval_every": 0, "anneal_lr": False}
    cfg = TrainConfig.from_dict({**settings, "checkpoint_every": 1, "device": "cpu", "runs_dir": str(tmp_path)})
    trainer = new_trainer(cfg)
    store = record_run(trainer)
    result = {}
    thread = threading.Thread(target=lambda: result.update(zip(("summary", "run_id"), fit_run(trainer, store))))
    thread.start()
    wait_for(lambda: trainer.update_count >= 3, what="three updates")
    trainer.controls.set(learning_rate=1e30, source="test")  # finite, positive, and ruinous
    thread.join(120)
    assert result["summary"]["status"] == "diverged"
    run = store.get_run(result["run_id"])
    assert run["status"] == "diverged"
    status = [e for e in store.events(run["id"], "status") if e["data"]["status"] == "diverged"][0]["data"]
    assert "NaN or infinite" in status["error"] and status["checkpoint"], status
    path = find_checkpoint(trainer.run_dir)
    assert str(path) == status["checkpoint"]
    state = load_checkpoint(path)
    assert all(torch.isfinite(t).all() for t in state["model"].values()), "a checkpoint holds non-finite weights"
    resumed = new_trainer(
        TrainConfig.from_dict({**state["config"], "learning_rate": 1e-3}), resume=state, run_dir=trainer.run_dir
    )
    assert resumed.global_step == state["counters"]["global_step"] and not resumed.diverged
