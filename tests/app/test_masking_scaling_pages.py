from tests.app.helpers import assert_clean, chart_data, page


def test_masking_page_defaults_and_every_control():
    at = page("masking")
    assert_clean(at)
    verdicts = next(m.value for m in at.markdown if m.value.startswith("- **pre**"))
    assert "**pre**: matches SDPA; no leak" in verdicts and "leaks" in verdicts
    for key, value in [("mask.length", 12), ("mask.d", 64)]:
        at.slider(key=key).set_value(value).run()
        assert_clean(at)
    for kind in ("padding", "causal + padding"):
        at.selectbox(key="mask.kind").set_value(kind).run()
        assert_clean(at)
    at.slider(key="mask.valid").set_value(0).run()           # every row fully masked
    assert_clean(at)
    for wrong in ("post_renorm", "multiply_logits"):
        at.selectbox(key="mask.wrong").set_value(wrong).run()
        assert_clean(at)
    at.number_input(key="mask.seed").set_value(5).run()
    assert_clean(at)
    at.slider(key="mask.length").set_value(4).run()          # valid length is clamped, no error
    assert_clean(at)


def test_scaling_page_reads_sqrt_d():
    at = page("scaling")
    assert_clean(at)
    assert abs(float(at.metric[0].value) - 11.3) < 0.6       # d = 128
    std = chart_data(at, "std")
    assert std[0]["name"] == "unscaled q·k"
    at.select_slider(key="scale.d").set_value(16).run()
    assert_clean(at)
    assert abs(float(at.metric[0].value) - 4.0) < 0.3
    at.select_slider(key="scale.n").set_value(64).run()
    at.number_input(key="scale.seed").set_value(3).run()
    assert_clean(at)


def test_masking_leak_chart_marks_post_and_multiply_as_leaking():
    at = page("masking")
    leaks = {}
    for trace in chart_data(at, "leak"):           # one trace per channel (key, value)
        for mode, y in zip(trace["x"], trace["y"], strict=True):
            leaks[mode] = max(leaks.get(mode, 0.0), float(y))
    assert leaks["pre"] == 0 and leaks["post_renorm"] < 1e-9
    assert leaks["post"] > 1e-3 and leaks["multiply_logits"] > 1e-3
