import pytest
import torch

from explorer.training import TASKS
from tests.app.helpers import assert_clean, chart_data, page, shown
from tests.conftest import until


def buttons(at):
    return {b.label: b for b in at.button}


def step_ten(at):
    """Press Step ×10 and run the page until its ten steps are in: Step waits up to ``STEP_SECONDS`` for them, and
    a trainer process still starting on a busy machine brings them at the live view's next ticks instead."""
    buttons(at)["Step ×10"].click().run()
    assert until(lambda: not at.run().session_state["train.run"].running, 60)
    return at


def test_start_ticks_pause_and_reset():
    at = page("live_training")
    assert_clean(at)
    buttons(at)["Start"].click().run()
    assert at.session_state["train.run"].running
    # timers do not fire in AppTest: run the page by hand until the worker process has published a few steps
    assert until(lambda: len(at.run().session_state["train.run"].trainer.history) > 3, 60)
    assert_clean(at)
    buttons(at)["Pause"].click().run()            # (the steps since the last tick come back with the model)
    assert not at.session_state["train.run"].running
    n = len(at.session_state["train.run"].trainer.history)
    assert at.session_state["train.run"].trainer.step_count == n > 3
    at.run()                                      # paused: no more steps
    assert len(at.session_state["train.run"].trainer.history) == n
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["step"]) == n and float(metrics["loss"]) < 3.0
    assert len(chart_data(at, "entropy")) >= 2
    loss_before = at.session_state["train.run"].trainer.history[-1]["loss"]
    buttons(at)["Reset"].click().run()
    assert at.session_state["train.run"].trainer.history == [] and at.session_state["train.run"].trainer.step_count == 0
    step_ten(at)
    rows = at.session_state["train.run"].trainer.history
    assert len(rows) == 10 and rows[0]["loss"] > loss_before     # re-initialised weights


def test_a_killed_trainer_process_is_said_and_reset_goes_on():
    """The worker training this session's model is killed: the page says so in one sentence (the exit status and
    the step), Start and Step are off, Reset gives a new model that trains in a new process."""
    at = page("live_training")
    buttons(at)["Start"].click().run()
    assert until(lambda: at.run().session_state["train.run"].trainer.step_count > 0, 60)
    run = at.session_state["train.run"]
    run.job.worker.process.kill()
    assert until(lambda: not at.run().session_state["train.run"].running, 30)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "ended without warning (exit status -9" in errors[0]
    assert f"after step {run.trainer.step_count}" in errors[0]
    assert buttons(at)["Start"].disabled and buttons(at)["Step ×10"].disabled
    buttons(at)["Reset"].click().run()
    assert not at.error and not buttons(at)["Start"].disabled
    step_ten(at)
    assert at.session_state["train.run"].trainer.step_count == 10
    assert_clean(at)


def test_changing_lr_while_paused_keeps_the_weights():
    at = page("live_training")
    step_ten(at)
    trainer = at.session_state["train.run"].trainer
    at.select_slider(key="train.lr").set_value(1e-3).run()
    assert at.session_state["train.run"].trainer is trainer and trainer.step_count == 10
    assert trainer.lr == 1e-3
    at.selectbox(key="train.temp_kind").set_value("linear").run()
    at.select_slider(key="train.temp_end").set_value(0.5).run()
    assert at.session_state["train.run"].trainer is trainer
    assert trainer.temperature_schedule.end == 0.5
    assert_clean(at)


def test_huge_learning_rate_stops_with_a_message():
    at = page("live_training")
    at.select_slider(key="train.lr").set_value(1000.0)
    at.slider(key="train.warmup").set_value(0).run()
    buttons(at)["Start"].click().run()
    assert until(lambda: not at.run().session_state["train.run"].running, 60)
    assert any("Lower the learning rate" in e.value for e in at.error)
    assert not at.exception
    # the loss tile is short and says it shows the last good step (the message names the bad value)
    trainer = at.session_state["train.run"].trainer
    metrics = {m.label: m.value for m in at.metric}
    assert "loss (last good step)" in metrics and "loss" not in metrics
    value = metrics["loss (last good step)"]
    assert len(value) <= 10 and abs(float(value) / trainer.history[-1]["loss"] - 1) < 1e-2


def test_every_task_and_architecture_control():
    at = page("live_training")
    for task in ("induction", "sort", "sine_icl", "reverse"):
        at.selectbox(key="train.task").set_value(task).run()
        step_ten(at)
        assert not at.exception, task
    at.slider(key="train.layers").set_value(2).run()
    at.select_slider(key="train.heads").set_value(4).run()
    at.select_slider(key="train.d_model").set_value(32).run()
    at.slider(key="train.seq_len").set_value(10).run()
    at.toggle(key="train.mlp").set_value(True).run()
    at.number_input(key="train.seed").set_value(4).run()
    assert_clean(at)
    assert at.session_state["train.run"].trainer.config.n_heads == 4


def test_the_new_model_notice_moves_no_later_element_of_the_page():
    """A change of architecture says "a new model was initialised" in a place the page draws on every run, so every
    element after it keeps its index: when a notice came and went, two slider steps in quick succession (the first
    run cut short by the second) left the browser the old copies of the page's keyed parts beside the new ones."""
    at = page("live_training")
    before = [type(node).__name__ for node in at.main.children.values()]
    assert not at.info
    at.slider(key="train.layers").set_value(2).run()
    after = [type(node).__name__ for node in at.main.children.values()]
    assert [e.value for e in at.info] == ["The task or architecture changed, so a new model was initialised (seed 0)."]
    assert len(after) == len(before), (before, after)
    assert [(b, a) for b, a in zip(before, after, strict=True) if b != a] == [("UnknownElement", "Info")]   # st.empty
    at.run()                                                            # the same model again: no notice
    assert not at.info and [type(node).__name__ for node in at.main.children.values()] == before


def test_head_notices_come_in_one_box_under_the_charts():
    """Reverse trained 300 steps raises a collapse note for every head and a near-duplicate note: all in one box."""
    from explorer.training import head_warnings

    at = page("live_training")
    trainer = at.session_state["train.run"].trainer
    trainer.step(300)
    at.run()
    assert_clean(at)
    notes = head_warnings(trainer.history, trainer.config.n_layers, trainer.config.n_heads,
                          trainer.task.entropy_ceiling())
    assert len(notes) >= 2
    boxes = [a for a in (*at.warning, *at.info) if "layer" in a.value.lower()]
    assert len(boxes) == 1 and boxes[0].value.count("\n- ") == len(notes) - 1


def test_induction_maps_have_square_cells_and_outline_the_repeat():
    """The outlined block is the repeat's queries over the first copy's keys, found here from the tokens."""
    import json

    from explorer.ui import live
    at = page("live_training")
    at.selectbox(key="train.task").set_value("induction").run()
    tokens = at.session_state["train.run"].trainer.example.inputs[0].tolist()
    p = next(p for p in range(2, len(tokens) // 2 + 1) if tokens[p:2 * p] == tokens[:p])
    spec = next(json.loads(e.proto.spec) for e in at.get("plotly_chart") if "maps" in e.proto.id)
    rects = [s for s in spec["layout"]["shapes"] if s["type"] == "rect"]
    assert len(rects) == 4 and all((r["y0"], r["y1"], r["x0"], r["x1"]) == (p - 0.5, 2 * p - 0.5, -0.5, p - 0.5)
                                   for r in rects)
    y_axes = [v for k, v in spec["layout"].items() if k.startswith("yaxis")]
    assert len(y_axes) == 4 and all(a.get("scaleanchor", "").startswith("x") for a in y_axes)
    assert live.compact(1266926878.0) == "1.27e+09" and live.compact(0.12345) == "0.1235"
    for lr in (3e-3, 9.9e-4, 4e-4, 0.01, 0.5, 3.0, 1e-5):       # a tile's learning rate: short, and the same number
        assert len(live.rate(lr)) <= 6 and float(live.rate(lr)) == pytest.approx(lr, rel=0.05)
    assert [live.percent(a) for a in (0.97312, 0.9994, 0.99951, 1.0)] == ["97.3%", "99.9%", "100%", "100%"]


def test_scores_over_training_sit_with_the_loss_for_a_two_layer_task():
    at = page("live_training")
    at.selectbox(key="train.task").set_value("induction").run()
    trainer = at.session_state["train.run"].trainer
    trainer.step(60)
    at.run()
    assert_clean(at)
    traces = chart_data(at, "scores")
    names = [t["name"] for t in traces]
    assert names == ["previous-token score, layer 0 head 0", "previous-token score, layer 0 head 1",
                     "induction score, layer 1 head 0", "induction score, layer 1 head 1", "loss"]
    assert traces[-1]["yaxis"] == "y2"
    steps = [row["step"] for row in trainer.history]
    assert set(traces[0]["x"].tolist()) <= set(steps) and traces[0]["x"][-1] == steps[-1]     # aligned by step


def test_sessions_queue_for_the_training_slots_and_move_up(monkeypatch):
    """With one slot: the first to press Start trains, the next two wait with their place in line (and do not
    train), Pause works for a waiting session, and when the trainer pauses the next in line starts."""
    from explorer.training.slots import SLOTS

    monkeypatch.setattr(SLOTS, "k", 1)
    # the line's clock stands still: a session that has not ticked for STALE_SECONDS leaves the line (a closed tab),
    # and on a loaded machine the wait below for the first model's steps, which runs the first tab alone, took longer
    # than that (a fresh-clone run found the third tab gone: "place 1 of 1"); leaving is tests/unit/test_slots.py's
    monkeypatch.setattr(SLOTS, "clock", lambda: 0.0)
    SLOTS.holders.clear()
    SLOTS.waiting.clear()
    tabs = [page("live_training") for _ in range(3)]
    for at in tabs:
        buttons(at)["Start"].click().run()
    for at in tabs[1:]:
        at.run()                                     # a tick of each live view, all three in line now
    assert until(lambda: tabs[0].run().session_state["train.run"].trainer.step_count > 0, 60)
    for at in tabs[1:]:
        at.run()
    steps = [at.session_state["train.run"].trainer.step_count for at in tabs]
    assert steps[0] > 0 and steps[1:] == [0, 0]
    waits = [next((i.value for i in at.info if "Waiting for a training slot" in i.value), "") for at in tabs]
    assert waits[0] == "" and "place 1 of 2" in waits[1] and "place 2 of 2" in waits[2]
    buttons(tabs[1])["Pause"].click().run()          # a waiting session pauses: it leaves the line
    assert not tabs[1].session_state["train.run"].running
    buttons(tabs[0])["Pause"].click().run()          # the trainer pauses: its slot frees
    assert until(lambda: tabs[2].run().session_state["train.run"].trainer.step_count > 0, 60)
    buttons(tabs[2])["Pause"].click().run()
    assert tabs[1].session_state["train.run"].trainer.step_count == 0
    SLOTS.holders.clear()
    SLOTS.waiting.clear()


def test_a_task_in_a_link_loads_its_defaults():
    """watch.induction holds for the settings a shared link to the task shows: its own defaults."""
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    at = AppTest.from_file(str(ROOT / "pages" / "live_training.py"), default_timeout=60)
    at.query_params["train.task"] = "induction"
    at.run()
    assert not at.exception, at.exception
    d = TASKS["induction"].defaults
    assert (at.session_state["train.layers"], at.session_state["train.seq_len"], at.session_state["train.lr"]) == \
        (d.n_layers, d.seq_len, d.lr)
    at.query_params["train.layers"] = "1"          # a setting the link does give wins
    at2 = AppTest.from_file(str(ROOT / "pages" / "live_training.py"), default_timeout=60)
    at2.query_params.update({"train.task": "induction", "train.layers": "1"})
    at2.run()
    assert at2.session_state["train.layers"] == 1 and at2.session_state["train.seq_len"] == d.seq_len


def test_switching_heads_off_on_the_page_never_touches_the_trained_weights():
    """lt.test_text / lt.ablate_help: the page's ablation changes the evaluation loss, not the model."""
    at = page("live_training")
    trainer = at.session_state["train.run"].trainer
    trainer.step(100)
    at.run()
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    at.multiselect(key="train.ablate").set_value(["l0h0", "l0h1"]).run()
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["loss, 2 off"]) > float(metrics["loss, intact"])
    at.selectbox(key="train.ablate_how").set_value("mean").run()
    assert not at.exception
    assert trainer.step_count == 100
    assert all(torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())


def load_file(at, name: str, data: bytes):
    generation = at.session_state["train.load_generation"] if "train.load_generation" in at.session_state else 0
    return at.file_uploader(key=f"train.load.{generation}").set_value((name, data, "application/octet-stream")).run()


def test_a_model_trained_by_the_cli_loads_paused_at_its_step_and_start_goes_on_from_there(tmp_path):
    """The lecturer's long run: trained by ``explorer-train --save`` before class, loaded on the page. The controls
    show what it was trained with, the model is the file's (not a new one built from the controls), and training
    goes on from its step exactly as the same run would have without the stop (retrained here in one go)."""
    from explorer.device import torch_threads, trainer_threads
    from explorer.training import Trainer
    from tests.unit.test_training import run_cli

    saved = tmp_path / "sort-30.safetensors"
    # the command and the reference here on one thread each: the same sums in the same order, whatever thread count
    # this process was left with (a page run sets its own; a plain `pytest` run starts with torch's default)
    res = run_cli("--task", "sort", "--steps", "30", "--seed", "7", "--lr", "1e-3", "--warmup", "10", "--heads", "4",
                  "--out", str(tmp_path / "run.csv"), "--save", str(saved), env={"OMP_NUM_THREADS": "1"})
    assert res.returncode == 0, res.stderr
    before_class = Trainer.for_task("sort", seed=7, lr=1e-3, warmup=10, n_heads=4, total_steps=30)
    with torch_threads(1):
        before_class.step(30)
    at = page("live_training")
    step_ten(at)                                                      # a model of the page's own, 10 steps in
    load_file(at, saved.name, saved.read_bytes())
    assert_clean(at)
    run = at.session_state["train.run"]
    assert run.trainer.step_count == 30 and not run.running
    assert (at.session_state["train.task"], at.session_state["train.heads"], at.session_state["train.seed"],
            at.session_state["train.lr"], at.session_state["train.warmup"]) == ("sort", 4, 7, 1e-3, 10)
    assert [shown(s.value) for s in at.success] == [
        "Loaded sort-30.safetensors: a sort model trained 30 steps. Start goes on from step 30."]
    at.run()                                                          # a rerun keeps the loaded model
    assert at.session_state["train.run"].trainer is run.trainer
    step_ten(at)                                                      # (trained in a worker process)
    with torch_threads(trainer_threads()):                            # ... on the worker's threads
        before_class.step(10)                                         # the reference: the same run, not stopped
    assert [r["loss"] for r in run.trainer.history] == [r["loss"] for r in before_class.history]
    assert_clean(at)


def test_a_file_that_is_not_a_saved_model_is_refused_in_one_sentence_and_the_model_is_kept():
    at = page("live_training")
    step_ten(at)
    trainer = at.session_state["train.run"].trainer
    load_file(at, "[notes](https://evil.example).safetensors", b"step,loss\n0,1.0\n" * 20)
    assert not at.exception
    (error,) = at.error
    said = shown(error.value)                        # as a reader sees it: the file's name as text, not a link
    assert said.startswith("[notes](https://evil.example).safetensors was not loaded: this is not a saved trainer")
    assert said.endswith("The model you had is kept.")
    assert at.session_state["train.run"].trainer is trainer and trainer.step_count == 10


def test_a_model_the_page_cannot_show_is_refused_with_what_it_offers():
    from explorer.training import Trainer
    from explorer.training.saved import to_bytes

    at = page("live_training")
    trainer = at.session_state["train.run"].trainer
    for made, said in ((Trainer.for_task("reverse", lr=4e-3), "Learning rate = 0.004, which this page does not "
                                                               "offer (it offers 0.0001, 0.0002,"),
                       (Trainer.for_task("induction", position="rope"), 'it sees positions by "rope"')):
        load_file(at, "run.safetensors", to_bytes(made))
        (error,) = at.error
        assert said in shown(error.value)
        assert at.session_state["train.run"].trainer is trainer


def test_the_loaded_notice_goes_with_the_loaded_model_and_follows_the_language():
    """After Reset the page no longer says a file's model is on it; a refusal is said in the language the page is in
    when it is read again."""
    from explorer.training import Trainer
    from explorer.training.saved import to_bytes

    at = page("live_training")
    load_file(at, "reverse.safetensors", to_bytes(Trainer.for_task("reverse", seed=1)))
    assert len(at.success) == 1
    buttons(at)["Reset"].click().run()
    assert not at.success
    load_file(at, "notes.safetensors", b"not a model at all")
    at.session_state["ui.lang"] = "zh"
    at.run()
    (error,) = at.error
    assert "未载入" in error.value and "保留原来的模型" in error.value
