"""Kernel regression: fit noisy data with Nadaraya-Watson and see what the bandwidth does."""

import numpy as np
import streamlit as st

from explorer import lessons
from explorer.figures.regression import fit_figure, kernel_shapes_figure, loo_cv_figure
from explorer.kernels import KERNELS, equivalent_bandwidth
from explorer.regression import defined_mse
from explorer.ui import cache
from explorer.ui.controls import (
    BANDWIDTHS,
    SHARED_PARAMS,
    dataset_controls,
    dataset_label,
    kernel_bandwidth_controls,
    presets,
    set_bandwidth_button,
)
from explorer.ui.figure import show
from explorer.ui.layout import explanation
from explorer.ui.state import init_state, keep_shared_state, lang, say, tr
from explorer.ui.urlstate import Param, publish, restore

keep_shared_state()
PARAMS = [*SHARED_PARAMS, Param("nw.overlay", "bool"), Param("nw.overlay_h", "floats", tuple(BANDWIDTHS)),
          Param("nw.same_width", "bool")]
restore(PARAMS, "kernel_regression")
st.title(tr("page.kernel_regression"))
st.markdown(tr("kr.question"))

ds = dataset_controls()
init_state({"nw.compare": [], "nw.overlay": False, "nw.overlay_h": list(presets(ds[0]).values()),
            "nw.same_width": True})


left, right = st.columns([1, 2])
with left:
    kernel_bandwidth_controls(ds)
    st.multiselect(tr("kr.compare"), list(KERNELS), key="nw.compare", format_func=lambda k: tr(f"kernel.{k}"),
                   placeholder=tr("ui.choose"))
    st.toggle(tr("kr.same_width"), key="nw.same_width", help=tr("kr.same_width_help"))
    st.toggle(tr("kr.overlay"), key="nw.overlay")
    if st.session_state["nw.overlay"]:
        st.multiselect(tr("kr.overlay_h"), BANDWIDTHS, key="nw.overlay_h", format_func=lambda v: f"{v:g}",
                       placeholder=tr("ui.choose"))

kernel = st.session_state["nw.kernel"]
h = st.session_state["nw.bandwidth"]
kernels = [kernel] + [k for k in st.session_state["nw.compare"] if k != kernel]
bandwidths = [h]
if st.session_state["nw.overlay"]:
    bandwidths += [b for b in st.session_state["nw.overlay_h"] if b != h]
same_width = st.session_state["nw.same_width"]


def width_for(k: str, b: float) -> float:
    """The bandwidth kernel k is drawn at: b itself, or at equal effective width with the chosen kernel."""
    return equivalent_bandwidth(b, k, reference=kernel) if same_width else b


try:
    data = cache.dataset(*ds)
    curves, readouts = {}, []
    for k in kernels:
        for b in bandwidths:
            hk = width_for(k, b)
            est = cache.nw_curve(*ds, k, hk)
            label = f"{tr('kernel.' + k)}, h = {hk:.3g}"
            curves[label] = est
            mse = defined_mse(est, data["true"])[0] if data["true"] is not None else None
            readouts.append((label, mse, int(np.isnan(est).sum())))
except ValueError as err:
    st.error(say(err))
    st.stop()

with right:
    show(fit_figure(data["x"], data["y"], data["x_grid"], data["true"], curves,
                    title=tr("kr.fit_title", dataset=dataset_label(ds[0])), lang=lang()), key="fit")
    for label, mse, undefined in readouts:
        line = (tr("kr.readout", label=label, mse=f"{mse:.4f}") if data["true"] is not None
                else tr("kr.readout_upload", label=label))
        if undefined:
            line += tr("kr.undefined", n=undefined, m=len(data["x_grid"]), kernel=label.split(",")[0])
        st.markdown(line + ".")

st.subheader(tr("kr.kernels"))
show(kernel_shapes_figure(kernels, lang=lang()), key="shapes")

st.subheader(tr("kr.loo_header"))
st.markdown(tr("kr.loo_text"))
loo = {k: cache.loo_curve(*ds, k) for k in kernels}
primary = loo[kernel]
# at equal effective width, each compared kernel's curve is drawn against the chosen kernel's equivalent h
x_of = {tr(f"kernel.{k}"): v["bandwidths"] / (equivalent_bandwidth(1.0, k, reference=kernel) if same_width else 1)
        for k, v in loo.items()}
show(loo_cv_figure(primary["bandwidths"],
                   {tr(f"kernel.{k}"): v["scores"] for k, v in loo.items()},
                   current=h, optimum=primary["optimum"], silverman=primary["silverman"], lang=lang(),
                   x_by_series=x_of if same_width and len(kernels) > 1 else None),
     key="loo")
c1, c2 = st.columns(2)
with c1:
    st.metric(tr("kr.optimum"), f"{primary['optimum']:.3g}")
    set_bandwidth_button(tr("kr.use_optimum", h=f"{primary['optimum']:.3g}"), primary["optimum"], key="use_optimum")
with c2:
    st.metric(tr("kr.silverman"), f"{primary['silverman']:.3g}")
    set_bandwidth_button(tr("kr.use_silverman", h=f"{primary['silverman']:.3g}"), primary["silverman"],
                         key="use_silverman")
st.caption(tr("kr.snap", pct=f"{lessons.snap_error(BANDWIDTHS):.1%}"))
with st.expander(tr("kr.width_rule")):
    widths = [k for k in KERNELS if KERNELS[k].canonical]
    spread, raw = lessons.width_agreement({k: cache.loo_curve(*ds, k)["optimum"] for k in widths})
    st.markdown(tr("kr.width_text", spread=f"{spread:.0%}", raw=f"{raw:.1f}"))
    st.latex(r"h_K = h_{\mathrm{Gauss}}\,\frac{\delta_K}{\delta_{\mathrm{Gauss}}},\qquad "
             r"\delta_K = \left(\frac{\int K^2}{\left(\int u^2 K\right)^2}\right)^{1/5},\qquad "
             r"h_{\mathrm{Silverman}} = 0.9\,\min\!\left(s, \tfrac{\mathrm{IQR}}{1.34}\right) n^{-1/5}"
             r"\cdot \frac{\delta_K}{\delta_{\mathrm{Gauss}}}")
    st.markdown("  \n".join(f"{tr('kernel.' + k)}: δ = {KERNELS[k].canonical:.4f}, "
                             f"× {equivalent_bandwidth(1.0, k):.2f}" for k in KERNELS if KERNELS[k].canonical))

with explanation("ui.what_to_notice"):
    if data["true"] is not None:
        preset_mse = {b: defined_mse(cache.nw_curve(*ds, kernel, b), data["true"])[0] for b in presets(ds[0]).values()}
        errors = ", ".join(tr("kr.notice_error", mse=f"{mse:.3f}", h=f"{b:g}") for b, mse in preset_mse.items())
        first = tr("kr.notice_first", kernel=tr(f"kernel.{kernel}"), errors=errors, h=f"{primary['optimum']:.3g}")
    else:
        first = tr("kr.notice_first_upload", h=f"{primary['optimum']:.3g}")
    st.markdown(first + tr("kr.notice", silverman=f"{primary['silverman']:.3g}", h=f"{primary['optimum']:.3g}"))

with explanation("ui.formula"):
    st.latex(r"\hat f(x) = \sum_{i=1}^{N} \frac{K\left(\frac{x - x_i}{h}\right)}"
             r"{\sum_{j=1}^{N} K\left(\frac{x - x_j}{h}\right)}\, y_i"
             r"\;=\; \sum_{i=1}^{N} \alpha(x, x_i)\, y_i")
    st.markdown(tr("kr.formula_text"))
    st.latex(r"\alpha(x, x_i) = \operatorname{softmax}_i\left(-\frac{(x - x_i)^2}{2h^2}\right)")
    st.latex(KERNELS[kernel].latex)

publish(PARAMS)
