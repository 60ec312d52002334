from explorer.i18n import t
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
    name = {m: t(f"modename.{m}") for m in ("pre", "post", "post_renorm", "multiply_logits")}    # as the bars read
    assert leaks[name["pre"]] == 0 and leaks[name["post_renorm"]] < 1e-9
    assert leaks[name["post"]] > 1e-3 and leaks[name["multiply_logits"]] > 1e-3


def _chart_spec(at, key):
    import json
    return next(json.loads(el.proto.spec) for el in at.get("plotly_chart") if key in el.proto.id)


def test_masking_details_hold_in_front_of_a_class():
    """Every mode visible in the row-sum charts (pre first and widest, no two modes drawn alike); weight colours
    start at 0 even when every weight is 0; masked-cell marks shrink with the cells and are not red on the
    gradient map; SDPA is said in words."""
    at = page("masking")
    at.session_state["mask.kind"] = "padding"
    at.session_state["mask.valid"] = 0
    at.run()
    assert_clean(at)
    for key in ("row_sums", "output_norms"):
        traces = _chart_spec(at, key)["data"]
        assert traces[0]["name"] == "pre"
        looks = {(t["line"]["dash"], t["marker"]["symbol"]) for t in traces}
        assert len(looks) == len(traces) == 4
        assert traces[0]["line"]["width"] > max(t["line"]["width"] for t in traces[1:])
    pair = _chart_spec(at, "pair")
    axis = pair["layout"]["coloraxis"]
    assert axis["cmin"] == 0 and axis["cmax"] > 0
    assert any("scaled_dot_product_attention" in c.value for c in at.caption)

    def marks(length):
        at.session_state["mask.kind"] = "causal"
        at.session_state["mask.length"] = length
        at.run()
        trace = next(t for t in _chart_spec(at, "grad_heatmap")["data"] if t["type"] == "scatter")
        return trace["marker"]
    small, large = marks(32), marks(8)
    assert small["size"] < 0.5 * large["size"]
    assert small["color"] != "#ff4b4b"
