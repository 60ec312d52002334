"""Kernel regression: fit noisy data with Nadaraya-Watson and see what the bandwidth does."""

import streamlit as st

from explorer.kernels import KERNELS
from explorer.lessons import kernel_regression as L
from explorer.ui import cache
from explorer.ui.cache import spec_data
from explorer.ui.control import draw, rerun_alone, stop_page, value, values
from explorer.ui.controls import (
    BANDWIDTHS,
    TYPED_PART,
    dataset_controls,
    kernel_bandwidth_controls,
    presets,
    set_bandwidth_button,
)
from explorer.ui.figure import show_spec
from explorer.ui.follow import Follow
from explorer.ui.layout import explanation, write
from explorer.ui.page import lesson_page, page_part
from explorer.ui.predict import prediction
from explorer.ui.state import lang, say, tr

FIT, LOO = "kr.fit", "kr.loo"          # the parts of the page a bandwidth move redraws (with the typed box)


@page_part(L, FIT)
def fit_and_readouts(data: dict) -> None:
    """The fit at the current bandwidth (its slider follows the thumb) and a readout per curve."""
    try:
        fit = show_spec(L.figures(values(L), data)["fit"], main=True,
                        follow=Follow(L.BANDWIDTH, lambda v: L.figures(v, data), values(L)))
    except ValueError as err:
        stop_page(say(err))
    lines = L.readouts(fit)
    if lines is None:               # many curves: one table, not a paragraph per curve
        st.dataframe(L.fit_table(fit["curves"], len(data["x_grid"]), lang()), hide_index=True)
    for line in lines or ():
        write(line)


@page_part(L, LOO)
def loo_curve(data: dict, loo: dict, answer: dict | None) -> None:
    """The LOO curves, the current bandwidth marked on them."""
    show_spec(L.figures(values(L), data)["loo_cv"], loo, key="loo", answer=answer)


with lesson_page(L, question="kr.question"):
    ds = dataset_controls()
    left, right = st.columns([1, 2])
    with left:
        kernel_bandwidth_controls(ds, on_move=rerun_alone(FIT, LOO, TYPED_PART))
        kernel = value(L.KERNEL)
        draw(L.COMPARE, options=[k for k in KERNELS if k != kernel])
        draw(L.SAME_WIDTH)
        if draw(L.OVERLAY):
            draw(L.OVERLAY_H)

    try:
        data = cache.dataset(*ds)
        specs = L.figures(values(L), data)
    except ValueError as err:
        stop_page(say(err))
    with right:
        fit_and_readouts(data)

    st.subheader(tr("kr.kernels"))
    show_spec(specs["kernel_shapes"], key="shapes")

    st.subheader(tr("kr.loo_header"))
    write(L.loo_text())
    loo = spec_data(specs["loo_cv"])
    asked = cache.loo_question(*ds, kernel, loo["optimum"], tuple(presets(ds[0]).values()))
    revealed = prediction(L.question(asked, kernel, L.is_clean(data, ds[2])))
    loo_curve(data, loo, asked if revealed.shown else None)
    write(L.loo_ends_caption(loo, kernel))
    c1, c2 = st.columns(2)
    with c1:                            # (a kernel that ignores h, or a curve flat below its minimum: no optimum)
        if loo["flat"] is not None and not L.ignores_h(kernel):
            st.metric(tr("kr.optimum_flat"), f"{loo['flat']:.3g}", help=tr("kr.optimum_flat_help"))
        else:
            st.metric(tr("kr.optimum"), "—" if L.ignores_h(kernel) else f"{loo['optimum']:.3g}")
            if not L.ignores_h(kernel):
                set_bandwidth_button(tr("kr.use_optimum", h=loo['optimum']), loo["optimum"], key="use_optimum")
    with c2:
        st.metric(tr("kr.silverman"), f"{loo['silverman']:.3g}")
        set_bandwidth_button(tr("kr.use_silverman", h=loo['silverman']), loo["silverman"],
                             key="use_silverman")
    write(L.snap_caption(BANDWIDTHS, loo, kernel))
    # each kernel's leave-one-out optimum is computed when the box is opened (on a 5,000-row upload, most of the
    # first fit's time), not on every run of the page
    with st.expander(tr("kr.width_rule"), key="kr.width_open", on_change="rerun") as rule:
        if rule.open:
            widths = [k for k in KERNELS if KERNELS[k].canonical]
            write(L.width_text({k: cache.loo_optimum(*ds, k) for k in widths},
                               {k: cache.loo_flat(*ds, k) for k in widths}))
        st.latex(r"h_K = h_{\mathrm{Gauss}}\,\frac{\delta_K}{\delta_{\mathrm{Gauss}}},\qquad "
                 r"\delta_K = \left(\frac{\int K^2}{\left(\int u^2 K\right)^2}\right)^{1/5},\qquad "
                 r"h_{\mathrm{Silverman}} = 0.9\,\min\!\left(s, \tfrac{\mathrm{IQR}}{1.34}\right) n^{-1/5}"
                 r"\cdot \frac{\delta_K}{\delta_{\mathrm{Gauss}}}")
        write(L.width_rows(), join="  \n")

    with explanation("ui.what_to_notice"):
        write(L.notice(data, loo, kernel, cache.preset_errors(*ds, kernel)), join="")

    with explanation("ui.formula"):
        st.latex(r"\hat f(x) = \sum_{i=1}^{N} \frac{K\left(\frac{x - x_i}{h}\right)}"
                 r"{\sum_{j=1}^{N} K\left(\frac{x - x_j}{h}\right)}\, y_i"
                 r"\;=\; \sum_{i=1}^{N} \alpha(x, x_i)\, y_i")
        write(L.formula_text())
        st.latex(r"\alpha(x, x_i) = \operatorname{softmax}_i\left(-\frac{(x - x_i)^2}{2h^2}\right)")
        st.latex(KERNELS[kernel].latex)
