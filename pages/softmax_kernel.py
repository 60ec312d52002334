"""Softmax is a kernel: dot-product attention vs Gaussian-kernel attention, exactly when they agree."""

import streamlit as st

from explorer.lessons import softmax_kernel as L
from explorer.ui import cache
from explorer.ui.cache import spec_data
from explorer.ui.control import draw, rerun_alone, stop_page, value, values
from explorer.ui.controls import dataset_controls
from explorer.ui.figure import show_spec
from explorer.ui.follow import Follow
from explorer.ui.layout import controls_and_figure, explanation, heading_over_main, write
from explorer.ui.page import lesson_page, page_part
from explorer.ui.predict import prediction
from explorer.ui.state import lecture_mode, say, tr

IDENTITY = (r"\exp\!\left(\frac{q\cdot k}{\tau}\right) = \exp\!\left(-\frac{\|q-k\|^2}{2\tau}\right)"
            r"\exp\!\left(\frac{\|q\|^2}{2\tau}\right)\exp\!\left(\frac{\|k\|^2}{2\tau}\right)")

SIDE, TAU_PART = "sk.side", "sk.tau"     # the parts of the page a move of d (or of τ) redraws
MOVED = rerun_alone(SIDE, TAU_PART)


def kernel_view(data: dict) -> tuple[dict, dict]:
    """The page's figures at the current settings, and the side-by-side comparison's data (cached)."""
    specs = L.figures(values(L), data)
    return specs, spec_data(specs["softmax_vs_kernel"])


@page_part(L, SIDE)
def side_by_side(data: dict) -> None:
    """The question, then dot-product and Gaussian-kernel attention side by side (their slider follows d or τ)."""
    try:
        specs, res = kernel_view(data)
    except ValueError as err:
        stop_page(say(err))
    heading_over_main(tr("sk.side"))
    question = L.question(res, value(L.SPREAD))
    revealed = prediction(question)
    followed = L.D if value(L.TAU_SQRT_D) else L.TAU                                   # τ, or d when τ = √d
    show_spec(specs["softmax_vs_kernel"], res, key="side_by_side", main=True,
              follow=Follow(followed, lambda v: L.figures(v, data), values(L)),
              answer=say(L.answer_mark(question, res)) if revealed.shown else None)


@page_part(L, TAU_PART)
def what_tau_does(data: dict) -> None:
    """The widths, the numbers of the comparison, and the temperature's and top-k's sections."""
    specs, res = kernel_view(data)
    d, n_keys, spread = value(L.D), value(L.N_KEYS), value(L.SPREAD)
    if lecture_mode():                  # the figure first, then the identity and what it shows
        st.latex(IDENTITY)
    write(L.explain(d, L.temperature(values(L))))
    m1, m2, m3 = st.columns(3)
    m1.metric(tr("sk.max_diff"), f"{res['max_diff']:.2e}")
    m2.metric(tr("sk.max_diff_corrected"), f"{res['max_diff_corrected']:.2e}", help=tr("sk.bias_help"))
    norms = res["key_norms"]
    m3.metric(tr("sk.norms"), f"{norms.min():.2f} – {norms.max():.2f}")
    write(L.identity_text(res, d, spread))

    show_spec(specs["spread_curve"])

    st.subheader(tr("sk.temperature"))
    left, right = st.columns(2)
    with left:
        show_spec(specs["tau_sweep"], res)
    with right:
        nw = show_spec(specs["h_sweep"])
    write(L.temp_text(res, nw))

    st.subheader(tr("sk.topk"))
    k_top = draw(L.K_TOP, hi=n_keys)
    specs = L.figures(values(L), data)
    left, right = st.columns(2)
    with left:
        show_spec(specs["topk_curve"], res)
    with right:
        show_spec(specs["topk_heatmap"])
    write(L.topk_text(res, k_top, n_keys))


with lesson_page(L, question="sk.question"):
    if not lecture_mode():
        st.latex(IDENTITY)

    ds = dataset_controls()
    (c1, c2, c3), main = controls_and_figure(3)
    draw(L.D, c1, on_change=MOVED)
    draw(L.N_KEYS, c1)
    draw(L.SPREAD, c2)
    draw(L.SEED, c2)
    if not draw(L.TAU_SQRT_D, c3):
        draw(L.TAU, c3, on_change=MOVED)
    try:
        data = cache.dataset(*ds)
    except ValueError as err:
        stop_page(say(err))
    with main:
        side_by_side(data)
    what_tau_does(data)

    specs = L.figures(values(L), data)
    st.subheader(tr("sk.learned"))
    with st.spinner(tr("spin.learn")):
        lb = spec_data(specs["learned_h"])
    left, right = st.columns(2)
    with left:
        show_spec(specs["learned_h"], lb)
    with right:
        show_spec(specs["learned_loss"], lb)
    write(L.learned_text(lb))

    st.subheader(tr("sk.param"))
    c1, c2 = st.columns(2)
    nw_form = draw(L.NW_FORM, c1)
    draw(L.HIDDEN, c2)
    specs = L.figures(values(L), data)
    with st.spinner(tr("spin.param")):
        pf = spec_data(specs["param_rows"])
    show_spec(specs["param_rows"], pf)
    show_spec(specs["param_fit"], pf)
    write(L.param_text(pf, data, nw_form))

    with explanation("ui.what_to_notice"):
        write(L.notice())
