"""Bad input keeps the user's state; four sessions train at once without touching each other."""

import json
import threading

import numpy as np
from streamlit.testing.v1 import AppTest

from explorer.data import EXAMPLE_CSV
from explorer.training import Trainer, make_task
from explorer.ui import state
from tests.app.helpers import assert_clean, chart_data, page, set_bandwidth, shown, upload
from tests.conftest import ROOT


def fit_line(at):
    return next(np.asarray(t["y"], float) for t in chart_data(at, "fit") if t.get("name", "").startswith("Gaussian"))


def test_typed_bandwidth_of_zero_is_refused_and_nothing_changes():
    at = page("kernel_regression")
    set_bandwidth(at, 0.2)
    before = fit_line(at)
    for bad in ("0", "-1", "abc", "1e9", "nan"):
        at.text_input(key="nw.typed").input(bad).run()
        assert not at.exception
        assert len(at.error) == 1 and "bandwidth" in at.error[0].value
        assert at.session_state["nw.bandwidth"] == 0.2
        np.testing.assert_array_equal(fit_line(at), before)
    at.text_input(key="nw.typed").input("0.5").run()
    assert_clean(at)
    assert at.session_state["nw.bandwidth"] == 0.5


def test_broken_upload_keeps_the_previous_dataset():
    at = page("kernel_regression")
    before = fit_line(at)
    at.selectbox(key="data.name").set_value("upload").run()
    np.testing.assert_array_equal(fit_line(at), before)          # nothing uploaded yet: previous data
    upload(at, ("bad.csv", b"\xff\xfe\x00", "text/csv"))
    assert not at.exception and "UTF-8" in at.error[0].value
    np.testing.assert_array_equal(fit_line(at), before)
    # said under the uploader and above the figure; the uploader no longer lists the refused file
    assert [e.value for e in at.sidebar.error] == [e.value for e in at.main.error] == [at.error[0].value]
    assert "bad.csv was not used" in shown(at.error[0].value)
    assert at.file_uploader(key=f"data.file.{at.session_state['data.file_generation']}").value is None
    # the figure names the data it shows (the dataset before the upload), not "your data" (the menu's choice)
    title = json.loads(next(e.proto.spec for e in at.get("plotly_chart") if "fit" in e.proto.id))["layout"]["title"]
    assert "Sine mix" in title["text"] and "your data" not in title["text"], title["text"]
    assert "5 MB" in at.sidebar.get("file_uploader")[0].proto.label           # the size limit, where it is picked
    good = EXAMPLE_CSV.read_bytes()
    upload(at, ("good.csv", good, "text/csv"))
    assert_clean(at)
    uploaded = fit_line(at)
    assert not np.array_equal(uploaded, before)
    axes = json.loads(next(e.proto.spec for e in at.get("plotly_chart") if "fit" in e.proto.id))["layout"]
    assert (axes["xaxis"]["title"]["text"], axes["yaxis"]["title"]["text"]) == ("x", "y")   # the CSV's header
    # a later broken file keeps the good upload
    upload(at, ("bad.csv", b"a,b\nx,y\n", "text/csv"))
    assert "numeric columns" in at.error[0].value
    np.testing.assert_array_equal(fit_line(at), uploaded)


def _column_boxes(at):
    boxes = [b for b in at.selectbox if str(b.key).startswith(("data.x_col.", "data.y_col."))]
    assert len(boxes) == 2, [b.key for b in boxes]              # one pair of boxes: no old file's are left
    return {str(b.key).split(".")[1]: b for b in boxes}


def test_a_second_upload_lists_its_own_columns():
    """The x / y column boxes offer the current file's columns only, and the fit uses them."""
    at = page("kernel_regression")
    at.selectbox(key="data.name").set_value("upload").run()
    upload(at, ("a.csv", ("a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(40))).encode(), "text/csv"))
    boxes = _column_boxes(at)
    assert boxes["x_col"].options == ["a", "b"] and boxes["y_col"].options == ["b"]
    upload(at, ("b.csv", ("p,q,r\n" + "".join(f"{i},{i % 5},{2 * i}\n" for i in range(40))).encode(), "text/csv"))
    assert_clean(at)
    boxes = _column_boxes(at)
    assert boxes["x_col"].options == ["p", "q", "r"] and boxes["y_col"].options == ["q", "r"]
    assert at.session_state["data.uploaded"]["columns"] == ("p", "q")


def test_missing_values_can_be_dropped_in_the_page():
    at = page("kernel_regression")
    at.selectbox(key="data.name").set_value("upload").run()
    upload(at, ("gaps.csv", b"x,y\n1,2\n2,\n3,4\n4,3\n5,1\n", "text/csv"))
    assert "missing or non-finite" in at.error[0].value
    at.checkbox(key="data.drop").check().run()
    assert_clean(at)
    assert any("Dropped 1 rows" in i.value for i in at.info)


def reference_losses(seed: int, steps: int) -> list[float]:
    task = make_task("reverse", 12)
    trainer = Trainer(task.model_config(n_layers=1, n_heads=2, d_model=64, with_mlp=False), task, lr=3e-3,
                      warmup=20, seed=seed)
    return [row["loss"] for row in trainer.step(steps)]


def test_four_sessions_train_at_once_like_each_alone():
    """Four sessions' models train in parallel threads (as the server runs sessions) and each ends exactly
    where it would alone. AppTest keeps process-wide state per script run (a mock Runtime it installs and
    clears, widget registries), so its runs cannot overlap safely: the pages are run one at a time, and
    the concurrent part is what the Step button's callback does, ``trainer.step(10)`` on the session's
    own trainer, three times per session."""
    seeds = [0, 1, 2, 3]
    apps = {}
    for seed in seeds:
        at = page("live_training")
        at.number_input(key="train.seed").set_value(seed).run()
        assert_clean(at)
        apps[seed] = at
    errors = []

    def session(seed):
        try:
            for _ in range(3):
                apps[seed].session_state["train.run"].trainer.step(10)
        except Exception as err:           # surfaced below: a thread's exception would be lost
            errors.append(f"seed {seed}: {err!r}")

    threads = [threading.Thread(target=session, args=(s,)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    results = {}
    for seed in seeds:
        at = apps[seed].run()                # each page draws its own session's 30 steps
        assert_clean(at)
        assert at.metric[0].value == "30"
        results[seed] = [row["loss"] for row in at.session_state["train.run"].trainer.history]
        # equal up to float rounding: torch's CPU reductions may split work differently when four sessions
        # run at once; interference between sessions would show as differences of order 1, not 1e-6
        np.testing.assert_allclose(results[seed], reference_losses(seed, 30), rtol=1e-5,
                                   err_msg=f"seed {seed} differs from its run alone")
    assert len({round(v[-1], 6) for v in results.values()}) == 4


def test_bad_input_messages_speak_the_page_language(monkeypatch):
    # AppTest formats widget values in the test's thread, which has no session: pin the language for both
    monkeypatch.setattr(state, "lang", lambda: "zh")
    at = AppTest.from_file(str(ROOT / "pages" / "kernel_regression.py"), default_timeout=60)
    at.session_state["ui.lang"] = "zh"
    at.run()
    at.text_input(key="nw.typed").input("0").run()
    assert "不是" in at.error[0].value and "0.01" in at.error[0].value
    at.selectbox(key="data.name").set_value("upload").run()
    upload(at, ("bad.csv", b"\xff\xfe\x00", "text/csv"))
    assert not at.exception and "文件不是 UTF-8 文本" in at.error[-1].value
    upload(at, ("gaps.csv", b"x,y\n1,2\n2,\n3,4\n4,3\n5,1\n", "text/csv"))
    assert "勾选“删除含缺失值或非有限值的行”" in at.error[-1].value
    at.checkbox(key="data.drop").check().run()
    assert any("已删除 1 行" in i.value for i in at.info)
    assert any("已上传：4 行" in c.value for c in at.caption)


def test_a_stopped_run_is_explained_in_the_page_language():
    task = make_task("reverse")
    trainer = Trainer(task.model_config(), task, lr=1e3, warmup=0)
    trainer.step(50)
    assert trainer.stopped and "Lower the learning rate" in trainer.stopped       # English by default
    assert "请降低学习率" in trainer.stopped.in_lang("zh")
