"""Softmax is a kernel: dot-product attention vs Gaussian-kernel attention, exactly when they agree."""

import math

import streamlit as st

from explorer import lessons
from explorer.figures.common import heatmap, lines
from explorer.ui import cache
from explorer.ui.control import lesson_page, stop_page
from explorer.ui.controls import dataset_controls
from explorer.ui.figure import show, show_lesson
from explorer.ui.layout import controls_and_figure, explanation
from explorer.ui.page_controls import SoftmaxKernel as C
from explorer.ui.predict import prediction
from explorer.ui.state import lang, lecture_mode, say, tr

IDENTITY = (r"\exp\!\left(\frac{q\cdot k}{\tau}\right) = \exp\!\left(-\frac{\|q-k\|^2}{2\tau}\right)"
            r"\exp\!\left(\frac{\|q\|^2}{2\tau}\right)\exp\!\left(\frac{\|k\|^2}{2\tau}\right)")

with lesson_page("softmax_kernel", C.ALL, question="sk.question", file_name=C.FILE_NAME):
    if not lecture_mode():
        st.latex(IDENTITY)

    ds = dataset_controls()
    (c1, c2, c3), main = controls_and_figure(3)
    d, n_keys = C.D.draw(c1), C.N_KEYS.draw(c1)
    spread, seed = C.SPREAD.draw(c2), C.SEED.draw(c2)
    tau = math.sqrt(d) if C.TAU_SQRT_D.draw(c3) else C.TAU.draw(c3, disabled=C.TAU_SQRT_D.value)
    sigma = math.sqrt(tau)
    wrong = lessons.wrong_widths(d, tau)
    explain = tr("sk.explain", tau=f"{tau:.3g}", sigma=f"{sigma:.3g}", half_tau=f"{wrong['half_tau']:.3g}",
                 half_d=f"{wrong['half_d']:.3g}", half_d_effect=tr(f"sk.{wrong['half_d_effect']}"))
    if not lecture_mode():
        st.markdown(explain)
    try:
        res = cache.lesson_data("softmax_vs_kernel", d=d, n_keys=n_keys, spread=spread, tau=tau, seed=seed)
    except ValueError as err:
        stop_page(say(err))

    with main:
        st.subheader(tr("sk.side"))
        gaps = [tr(f"sk.gap_{i}") for i in range(3)]
        gap = lessons.gap_size(res["max_diff"])
        revealed = prediction("sk.gap", tr("sk.predict_q", spread=f"{spread:g}"), gaps, gap,
                              tr("sk.predict_why", diff=f"{res['max_diff']:.1e}", lo=f"{res['key_norms'].min():.2f}",
                                 hi=f"{res['key_norms'].max():.2f}"))
        show_lesson("softmax_vs_kernel", res, key="side_by_side", main=True,
                    answer=tr("sk.answer_mark", answer=gaps[gap], diff=f"{res['max_diff']:.1e}")
                    if revealed.shown else None)
    if lecture_mode():                  # the figure first, then the identity and what it shows
        st.latex(IDENTITY)
        st.markdown(explain)
    m1, m2, m3 = st.columns(3)
    m1.metric(tr("sk.max_diff"), f"{res['max_diff']:.2e}")
    m2.metric(tr("sk.max_diff_corrected"), f"{res['max_diff_corrected']:.2e}", help=tr("sk.bias_help"))
    norms = res["key_norms"]
    m3.metric(tr("sk.norms"), f"{norms.min():.2f} – {norms.max():.2f}")
    if spread == 0:
        st.success(tr("sk.equal", r=f"{math.sqrt(d):.2f}", diff=f"{res['max_diff']:.1e}"))
    else:
        st.info(tr("sk.unequal", diff=f"{res['max_diff']:.3f}", fixed=f"{res['max_diff_corrected']:.1e}"))

    curve = cache.bridge_spread_curve(d, n_keys, tau, seed)
    show(lines(curve["norm_spread"], {tr("sk.max_diff"): curve["max_abs_diff"],
                                      tr("sk.max_diff_corrected"): curve["max_abs_diff_corrected"].clip(lower=1e-18)},
               tr("sk.gap_title"), tr("sk.gap_x"), tr("sk.gap_y"), log_y=True, mode="lines+markers",
               vlines=[(spread, tr("sk.current"))], height=360), key="spread_curve")

    st.subheader(tr("sk.temperature"))
    sweep = res["tau_sweep"]
    log_n = math.log(n_keys)
    left, right = st.columns(2)
    with left:
        series = {tr("sk.entropy_frac"): sweep["entropy"] / log_n, tr("sk.max_weight"): sweep["max_weight"]}
        show(lines(sweep["tau"], series, tr("sk.tau_title"), tr("sk.tau_x"), tr("sk.fraction"), log_x=True,
                   vlines=[(tau, f"τ = {tau:.3g}")], height=360), key="tau_sweep")
    with right:
        nw = cache.nw_entropy(*ds, st.session_state["nw.kernel"])
        log_nd = math.log(ds[1])
        series = {tr("sk.entropy_frac"): nw["entropy"] / log_nd, tr("sk.max_weight"): nw["max_weight"]}
        show(lines(nw["bandwidth"], series, tr("sk.h_title"), tr("sk.h_axis"), tr("sk.fraction"), log_x=True,
                   vlines=[(st.session_state["nw.bandwidth"], tr("fig.current_h"))], height=360), key="h_sweep")
    st.markdown(tr("sk.temp_text", mw_tau=f"{sweep['max_weight'].iloc[0]:.2f}", tau_lo=f"{sweep['tau'].iloc[0]:g}",
                   mw_h=f"{nw['max_weight'].iloc[0]:.2f}", h_lo=f"{nw['bandwidth'].iloc[0]:g}"))

    st.subheader(tr("sk.topk"))
    k_top = C.K_TOP.draw(hi=n_keys, help={"n": n_keys})
    topk = res["topk_curve"]
    left, right = st.columns(2)
    with left:
        show(lines(topk["k_top"], {tr("sk.topk_out"): topk["max_abs_output_error"].clip(lower=1e-17),
                                   tr("sk.topk_w"): topk["mean_weight_l1_error"].clip(lower=1e-17)},
                   tr("sk.topk_title"), tr("sk.topk_x"), tr("sk.topk_y"), log_y=True, mode="lines+markers",
                   vlines=[(k_top, tr("sk.current"))], height=380), key="topk_curve")
    with right:
        w_top = cache.topk_weights(d, n_keys, spread, tau, seed, k_top)
        show(heatmap(w_top, None, None, tr("sk.topk_heat", k=k_top), tr("sk.key_j"), tr("sk.query_i"), height=380,
                     colorbar_title=tr("fig.weight"), lang=lang()), key="topk_heatmap")
    kept = float(topk.loc[topk["k_top"] == k_top, "dense_mass_kept"].iloc[0])
    st.markdown(tr("sk.topk_text", k=k_top, n=n_keys, kept=f"{kept:.1%}"))

    st.subheader(tr("sk.learned"))


    data = cache.dataset(*ds)
    with st.spinner(tr("spin.learn")):
        lb = cache.lesson_data("learned_h", data=data)
    left, right = st.columns(2)
    with left:
        show_lesson("learned_h", lb)
    with right:
        show_lesson("learned_loss", lb)
    learned = lessons.learned_summary(lb)
    st.markdown(tr("sk.learned_text" if learned["near"] else "sk.learned_text_far", h_loo=f"{learned['h_loo']:.3g}",
                   h_opt=f"{learned['h_opt']:.3g}", h_self=f"{learned['h_self']:.2g}", ratio=f"{learned['ratio']:.2g}",
                   n=learned["n"], steps=learned["steps"]))

    st.subheader(tr("sk.param"))
    c1, c2 = st.columns(2)
    nw_form, hidden = C.NW_FORM.draw(c1), C.HIDDEN.draw(c2)
    with st.spinner(tr("spin.param")):
        pf = cache.lesson_data("param_rows", data=data, hidden=hidden, nw_form=nw_form, seed=ds[3])
    show_lesson("param_rows", pf)
    show_lesson("param_fit", pf, key="param_fit")
    summary = lessons.parametric_summary(pf, data)
    key = "sk.param_text_free" if not nw_form else "sk.param_text_nw" if summary["local"] else "sk.param_text_nw_drift"
    st.markdown(tr(key, dist=f"{summary['max_top_distance']:.2f}", reach=f"{summary['reach']:.2f}",
                   mse=f"{summary['mse']:.4f}", nw_mse=f"{summary['nw_mse']:.4f}", x=f"{summary['far_query']:.2f}",
                   x_top=f"{summary['far_top']:.2f}"))

    with explanation("ui.what_to_notice"):
        st.markdown(tr("sk.notice"))
