"""Kernel regression: fit noisy data with Nadaraya-Watson and see what the bandwidth does."""

import streamlit as st

from explorer.kernels import KERNELS, equivalent_bandwidth
from explorer.lessons import kernel_regression as L
from explorer.regression import defined_mse
from explorer.ui import cache
from explorer.ui.cache import spec_data
from explorer.ui.control import rerun_alone, stop_page
from explorer.ui.controls import (
    BANDWIDTHS,
    TYPED_PART,
    dataset_controls,
    kernel_bandwidth_controls,
    lesson_controls,
    presets,
    set_bandwidth_button,
)
from explorer.ui.figure import show_spec
from explorer.ui.follow import Follow
from explorer.ui.layout import explanation
from explorer.ui.page import lesson_page, page_part
from explorer.ui.predict import prediction
from explorer.ui.state import lang, say, tr

C = lesson_controls(L)
FIT, LOO = "kr.fit", "kr.loo"          # the parts of the page a bandwidth move redraws (with the typed box)


@page_part(C, FIT)
def fit_and_readouts(data: dict) -> None:
    """The fit at the current bandwidth (its slider follows the thumb) and a readout per curve."""
    try:
        fit = show_spec(L.figures(C.values(), data)["fit"], main=True,
                        follow=Follow(C.BANDWIDTH, lambda v: L.figures(v, data), C.values()))
    except ValueError as err:
        stop_page(say(err))
    if len(fit["curves"]) <= 2:
        for curve in fit["curves"]:
            label = L.curve_label(curve, lang())
            line = (tr("kr.readout", label=label, mse=curve['mse']) if data["true"] is not None
                    else tr("kr.readout_upload", label=label))
            if curve["undefined"]:
                line += tr("kr.undefined", n=curve["undefined"], m=len(data["x_grid"]),
                           kernel=tr(f"kernel.{curve['kernel']}"))
            st.markdown(line + tr("punct.end"))
    else:                           # many curves: one table, not a paragraph per curve
        st.dataframe(L.fit_table(fit["curves"], len(data["x_grid"]), lang()), hide_index=True)


@page_part(C, LOO)
def loo_curve(data: dict, loo: dict, answer: dict | None) -> None:
    """The LOO curves, the current bandwidth marked on them."""
    show_spec(L.figures(C.values(), data)["loo_cv"], loo, key="loo", answer=answer)


with lesson_page(C, question="kr.question"):
    ds = dataset_controls()
    left, right = st.columns([1, 2])
    with left:
        kernel_bandwidth_controls(ds, on_move=rerun_alone(FIT, LOO, TYPED_PART))
        kernel = C.KERNEL.value
        C.COMPARE.draw(options=[k for k in KERNELS if k != kernel])
        C.SAME_WIDTH.draw()
        if C.OVERLAY.draw():
            C.OVERLAY_H.draw()

    try:
        data = cache.dataset(*ds)
        specs = L.figures(C.values(), data)
    except ValueError as err:
        stop_page(say(err))
    with right:
        fit_and_readouts(data)

    st.subheader(tr("kr.kernels"))
    show_spec(specs["kernel_shapes"], key="shapes")

    st.subheader(tr("kr.loo_header"))
    st.markdown(tr("kr.loo_text"))
    loo = spec_data(specs["loo_cv"])
    question = cache.loo_question(*ds, kernel, loo["optimum"], tuple(presets(ds[0]).values()))
    offered = [f"h = {c:g}" for c in question["h"]]
    best = question["best"]
    why = tr("kr.predict_why", h=offered[best], mse=question['scores'][best],
             margin=question['margin']) if len(question["right"]) == 1 else \
        tr("kr.predict_why_tie", h=offered[best], tie=tr("punct.list").join(offered[i] for i in question["right"]),
           pct=L.LOO_TIE)
    asked = tr("kr.predict_q", kernel=tr(f"kernel.{kernel}"), choices=tr("punct.list").join(offered))
    revealed = prediction("kr.loo", asked, offered, best, why, also_right=question["right"])
    loo_curve(data, loo, question if revealed.shown else None)
    ends = L.loo_ends(loo["bandwidths"], loo["scores"][kernel])
    st.caption(tr("kr.loo_ends", h_lo=ends['h_lo'], r_lo=ends['r_lo'], h_hi=ends['h_hi'],
                  r_hi=ends['r_hi']))
    c1, c2 = st.columns(2)
    with c1:
        st.metric(tr("kr.optimum"), f"{loo['optimum']:.3g}")
        set_bandwidth_button(tr("kr.use_optimum", h=loo['optimum']), loo["optimum"], key="use_optimum")
    with c2:
        st.metric(tr("kr.silverman"), f"{loo['silverman']:.3g}")
        set_bandwidth_button(tr("kr.use_silverman", h=loo['silverman']), loo["silverman"],
                             key="use_silverman")
    st.caption(tr("kr.snap", pct=L.snap_error(BANDWIDTHS)))
    with st.expander(tr("kr.width_rule")):
        widths = [k for k in KERNELS if KERNELS[k].canonical]
        agree = L.width_agreement({k: cache.loo_optimum(*ds, k) for k in widths})
        st.markdown(tr("kr.width_text") + tr("punct.space") + tr(
            "kr.width_optima" if agree["closer"] else "kr.width_optima_not_closer", lo=agree['lo'],
            hi=agree['hi'], units=agree['units'], raw=agree['raw']))
        st.latex(r"h_K = h_{\mathrm{Gauss}}\,\frac{\delta_K}{\delta_{\mathrm{Gauss}}},\qquad "
                 r"\delta_K = \left(\frac{\int K^2}{\left(\int u^2 K\right)^2}\right)^{1/5},\qquad "
                 r"h_{\mathrm{Silverman}} = 0.9\,\min\!\left(s, \tfrac{\mathrm{IQR}}{1.34}\right) n^{-1/5}"
                 r"\cdot \frac{\delta_K}{\delta_{\mathrm{Gauss}}}")
        st.markdown("  \n".join(tr("kr.width_row", kernel=tr(f"kernel.{k}"), delta=KERNELS[k].canonical,
                                    factor=equivalent_bandwidth(1.0, k)) for k in widths))

    with explanation("ui.what_to_notice"):
        if data["true"] is not None:
            preset_mse = {b: defined_mse(cache.nw_curve(*ds, kernel, b), data["true"])[0]
                          for b in presets(ds[0]).values()}
            errors = tr("punct.list").join(tr("kr.notice_error", mse=mse, h=b)
                                           for b, mse in preset_mse.items())
            first = tr("kr.notice_first", kernel=tr(f"kernel.{kernel}"), errors=errors, h=loo['optimum'])
        else:
            first = tr("kr.notice_first_upload", h=loo['optimum'])
        st.markdown(first + tr("kr.notice", silverman=loo['silverman'], h=loo['optimum']))

    with explanation("ui.formula"):
        st.latex(r"\hat f(x) = \sum_{i=1}^{N} \frac{K\left(\frac{x - x_i}{h}\right)}"
                 r"{\sum_{j=1}^{N} K\left(\frac{x - x_j}{h}\right)}\, y_i"
                 r"\;=\; \sum_{i=1}^{N} \alpha(x, x_i)\, y_i")
        st.markdown(tr("kr.formula_text"))
        st.latex(r"\alpha(x, x_i) = \operatorname{softmax}_i\left(-\frac{(x - x_i)^2}{2h^2}\right)")
        st.latex(KERNELS[kernel].latex)
