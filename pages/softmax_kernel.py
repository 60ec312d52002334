"""Softmax is a kernel: dot-product attention vs Gaussian-kernel attention, exactly when they agree."""

import math

import streamlit as st

from explorer.lessons import softmax_kernel as L
from explorer.ui import cache
from explorer.ui.cache import spec_data
from explorer.ui.control import rerun_alone, stop_page
from explorer.ui.controls import dataset_controls, lesson_controls
from explorer.ui.figure import show_spec
from explorer.ui.follow import Follow
from explorer.ui.layout import controls_and_figure, explanation
from explorer.ui.page import lesson_page, page_part
from explorer.ui.predict import prediction
from explorer.ui.state import lecture_mode, say, tr

C = lesson_controls(L)

IDENTITY = (r"\exp\!\left(\frac{q\cdot k}{\tau}\right) = \exp\!\left(-\frac{\|q-k\|^2}{2\tau}\right)"
            r"\exp\!\left(\frac{\|q\|^2}{2\tau}\right)\exp\!\left(\frac{\|k\|^2}{2\tau}\right)")

SIDE, TAU_PART = "sk.side", "sk.tau"     # the parts of the page a move of d (or of τ) redraws


def kernel_view(data: dict) -> tuple[dict, dict]:
    """The page's figures at the current settings, and the side-by-side comparison's data (cached)."""
    specs = L.figures(C.values(), data)
    return specs, spec_data(specs["softmax_vs_kernel"])


@page_part(C, SIDE)
def side_by_side(data: dict) -> None:
    """The question, then dot-product and Gaussian-kernel attention side by side (their slider follows d or τ)."""
    try:
        specs, res = kernel_view(data)
    except ValueError as err:
        stop_page(say(err))
    st.subheader(tr("sk.side"))
    gaps = [tr(f"sk.gap_{i}") for i in range(3)]
    gap = L.gap_size(res["max_diff"])
    revealed = prediction("sk.gap", tr("sk.predict_q", spread=C.SPREAD.value), gaps, gap,
                          tr("sk.predict_why", diff=res['max_diff'], lo=res['key_norms'].min(),
                             hi=res['key_norms'].max()))
    show_spec(specs["softmax_vs_kernel"], res, key="side_by_side", main=True,    # τ, or d when τ = √d
              follow=Follow(C.D if C.TAU_SQRT_D.value else C.TAU, lambda v: L.figures(v, data), C.values()),
              answer=tr("sk.answer_mark", answer=gaps[gap], diff=res['max_diff']) if revealed.shown else None)


@page_part(C, TAU_PART)
def what_tau_does(data: dict) -> None:
    """The widths, the numbers of the comparison, and the temperature's and top-k's sections."""
    specs, res = kernel_view(data)
    d, n_keys, spread = C.D.value, C.N_KEYS.value, C.SPREAD.value
    tau = L.temperature(C.values())
    wrong = L.wrong_widths(d, tau)
    if lecture_mode():                  # the figure first, then the identity and what it shows
        st.latex(IDENTITY)
    st.markdown(tr("sk.explain", tau=tau, sigma=math.sqrt(tau), half_tau=wrong['half_tau'],
                   half_d=wrong['half_d'], half_d_effect=tr(f"sk.{wrong['half_d_effect']}")))
    m1, m2, m3 = st.columns(3)
    m1.metric(tr("sk.max_diff"), f"{res['max_diff']:.2e}")
    m2.metric(tr("sk.max_diff_corrected"), f"{res['max_diff_corrected']:.2e}", help=tr("sk.bias_help"))
    norms = res["key_norms"]
    m3.metric(tr("sk.norms"), f"{norms.min():.2f} – {norms.max():.2f}")
    if spread == 0:
        st.success(tr("sk.equal", r=math.sqrt(d), diff=res['max_diff']))
    else:
        st.info(tr("sk.unequal", diff=res['max_diff'], fixed=res['max_diff_corrected']))

    show_spec(specs["spread_curve"])

    st.subheader(tr("sk.temperature"))
    sweep = res["tau_sweep"]
    left, right = st.columns(2)
    with left:
        show_spec(specs["tau_sweep"], res)
    with right:
        nw = show_spec(specs["h_sweep"])["sweep"]
    st.markdown(tr("sk.temp_text", mw_tau=sweep['max_weight'].iloc[0], tau_lo=sweep['tau'].iloc[0],
                   mw_h=nw['max_weight'].iloc[0], h_lo=nw['bandwidth'].iloc[0]))

    st.subheader(tr("sk.topk"))
    k_top = C.K_TOP.draw(hi=n_keys)
    specs = L.figures(C.values(), data)
    left, right = st.columns(2)
    with left:
        show_spec(specs["topk_curve"], res)
    with right:
        show_spec(specs["topk_heatmap"])
    kept = L.mass_kept(res["topk_curve"], k_top)
    st.markdown(tr("sk.topk_text", k=k_top, n=n_keys, kept=kept))


with lesson_page(C, question="sk.question"):
    if not lecture_mode():
        st.latex(IDENTITY)

    ds = dataset_controls()
    (c1, c2, c3), main = controls_and_figure(3)
    moved = rerun_alone(SIDE, TAU_PART)
    C.D.draw(c1, on_change=moved)
    C.N_KEYS.draw(c1)
    C.SPREAD.draw(c2)
    C.SEED.draw(c2)
    if not C.TAU_SQRT_D.draw(c3):
        C.TAU.draw(c3, on_change=moved)
    try:
        data = cache.dataset(*ds)
    except ValueError as err:
        stop_page(say(err))
    with main:
        side_by_side(data)
    what_tau_does(data)

    specs = L.figures(C.values(), data)
    st.subheader(tr("sk.learned"))


    with st.spinner(tr("spin.learn")):
        lb = spec_data(specs["learned_h"])
    left, right = st.columns(2)
    with left:
        show_spec(specs["learned_h"], lb)
    with right:
        show_spec(specs["learned_loss"], lb)
    learned = L.learned_summary(lb)
    st.markdown(tr("sk.learned_text" if learned["near"] else "sk.learned_text_far", h_loo=learned['h_loo'],
                   h_opt=learned['h_opt'], h_self=learned['h_self'], ratio=learned['ratio'],
                   n=learned["n"], steps=learned["steps"]))

    st.subheader(tr("sk.param"))
    c1, c2 = st.columns(2)
    nw_form, hidden = C.NW_FORM.draw(c1), C.HIDDEN.draw(c2)
    specs = L.figures(C.values(), data)
    with st.spinner(tr("spin.param")):
        pf = spec_data(specs["param_rows"])
    show_spec(specs["param_rows"], pf)
    show_spec(specs["param_fit"], pf)
    summary = L.parametric_summary(pf, data)
    key = "sk.param_text_free" if not nw_form else "sk.param_text_nw" if summary["local"] else "sk.param_text_nw_drift"
    st.markdown(tr(key, dist=summary['max_top_distance'], reach=summary['reach'],
                   mse=summary['mse'], nw_mse=summary['nw_mse'], x=summary['far_query'], x_top=summary['far_top']))

    with explanation("ui.what_to_notice"):
        st.markdown(tr("sk.notice"))
