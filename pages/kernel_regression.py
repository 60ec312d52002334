"""Kernel regression: fit noisy data with Nadaraya-Watson and see what the bandwidth does."""

import numpy as np
import streamlit as st

from explorer.figures.regression import fit_figure, kernel_shapes_figure, loo_cv_figure
from explorer.kernels import KERNELS
from explorer.regression import defined_mse
from explorer.ui import cache
from explorer.ui.controls import (
    BANDWIDTHS,
    SHARED_PARAMS,
    dataset_controls,
    dataset_label,
    kernel_bandwidth_controls,
    set_bandwidth_button,
)
from explorer.ui.figure import show
from explorer.ui.layout import explanation
from explorer.ui.state import init_state, keep_shared_state
from explorer.ui.urlstate import Param, publish, restore

keep_shared_state()
PARAMS = [*SHARED_PARAMS, Param("nw.overlay", "bool"), Param("nw.overlay_h", "floats", tuple(BANDWIDTHS))]
restore(PARAMS, "kernel_regression")
st.title("Kernel regression")
st.markdown(
    "**The question.** Attention started as a smoother: to predict y at a query x, average the "
    "training targets, weighting each by how close its input is to the query. How much does the "
    "answer depend on the kernel and, above all, on its width h?")

ds = dataset_controls()
init_state({"nw.compare": [], "nw.overlay": False, "nw.overlay_h": [0.05, 0.5, 10.0]})


left, right = st.columns([1, 2])
with left:
    kernel_bandwidth_controls()
    st.multiselect("Compare with other kernels", list(KERNELS), key="nw.compare",
                   format_func=lambda k: KERNELS[k].display)
    st.toggle("Overlay several bandwidths", key="nw.overlay")
    if st.session_state["nw.overlay"]:
        st.multiselect("Bandwidths to overlay", BANDWIDTHS, key="nw.overlay_h",
                       format_func=lambda v: f"{v:g}")

kernel = st.session_state["nw.kernel"]
h = st.session_state["nw.bandwidth"]
kernels = [kernel] + [k for k in st.session_state["nw.compare"] if k != kernel]
bandwidths = [h]
if st.session_state["nw.overlay"]:
    bandwidths += [b for b in st.session_state["nw.overlay_h"] if b != h]

try:
    data = cache.dataset(*ds)
    curves, readouts = {}, []
    for k in kernels:
        for b in bandwidths:
            est = cache.nw_curve(*ds, k, b)
            label = f"{KERNELS[k].display}, h = {b:g}"
            curves[label] = est
            target = data["true"] if data["true"] is not None else np.full_like(est, np.nan)
            mse, undefined = defined_mse(est, target)
            readouts.append((label, mse, int(np.isnan(est).sum())))
except ValueError as err:
    st.error(f"{err}")
    st.stop()

with right:
    show(fit_figure(data["x"], data["y"], data["x_grid"], data["true"], curves,
                               title=f"NW fit on {dataset_label(ds[0])}"), key="fit")
    for label, mse, undefined in readouts:
        line = (f"**{label}**: MSE against the true function = {mse:.4f} (y units²)" if data["true"] is not None
                else f"**{label}**: uploaded data has no known true function; see the leave-one-out error below")
        if undefined:
            line += (f"; undefined at {undefined} of {len(data['x_grid'])} query points: no training "
                     f"point lies within h of them, so the {label.split(',')[0]} kernel gives every "
                     "point weight 0 and the average is 0/0")
        st.markdown(line + ".")

st.subheader("The kernels")
show(kernel_shapes_figure(kernels), key="shapes")

st.subheader("Choosing h by leave-one-out cross-validation")
st.markdown(
    "Predict each training point from all the others and average the squared errors. Too small an h "
    "chases the noise; too large an h flattens the curve. For compact kernels very small h leave "
    "some point with no neighbour at all: those bandwidths have no score.")
loo = {k: cache.loo_curve(*ds, k) for k in kernels}
primary = loo[kernel]
show(loo_cv_figure(primary["bandwidths"],
                              {KERNELS[k].display: v["scores"] for k, v in loo.items()},
                              current=h, optimum=primary["optimum"], silverman=primary["silverman"]),
                key="loo")
c1, c2 = st.columns(2)
with c1:
    st.metric("LOO-CV optimum", f"{primary['optimum']:.3g}")
    set_bandwidth_button(f"Use the optimum (h ≈ {primary['optimum']:.3g})", primary["optimum"],
                         key="use_optimum")
with c2:
    st.metric("Silverman's rule", f"{primary['silverman']:.3g}")
    set_bandwidth_button(f"Use Silverman's h ≈ {primary['silverman']:.3g}", primary["silverman"],
                         key="use_silverman")
st.caption("Buttons snap to the slider's grid (40 steps per decade, within 3 % of the exact value).")

with explanation("What to notice"):
    if data["true"] is not None:
        preset_mse = {b: defined_mse(cache.nw_curve(*ds, kernel, b), data["true"])[0] for b in (0.05, 0.5, 10.0)}
        first = (f"- On this data, with the {KERNELS[kernel].display} kernel, the error against the true function is "
                 + ", ".join(f"**{mse:.3f}** at h = {b:g}" for b, mse in preset_mse.items())
                 + f"; leave-one-out picks h ≈ {primary['optimum']:.3g}.\n")
    else:
        first = f"- On your data leave-one-out picks h ≈ {primary['optimum']:.3g}.\n"
    st.markdown(
        first +
        "- Small h follows the noise (low bias, high variance); large h averages almost everything and "
        "the estimate tends to the mean of y (high bias). With 40 noisy points (the D2L dataset) h = 0.05 "
        "over-fits badly and 0.5 is near the optimum; with 200 points the optimum is narrower: more data "
        "lets a narrower kernel average enough points.\n"
        "- The estimate is a weighted **average** of the y values, so it never leaves [min y, max y].\n"
        "- Compact kernels (boxcar, Epanechnikov, triangular) have no estimate where no training point lies "
        "within h of the query; the Gaussian and Laplace kernels always give one.\n"
        "- Silverman's rule is built for density estimation, not regression: compare it with the "
        "LOO-CV optimum.")

with explanation("The formula"):
    st.latex(r"\hat f(x) = \sum_{i=1}^{N} \frac{K\left(\frac{x - x_i}{h}\right)}"
             r"{\sum_{j=1}^{N} K\left(\frac{x - x_j}{h}\right)}\, y_i"
             r"\;=\; \sum_{i=1}^{N} \alpha(x, x_i)\, y_i")
    st.markdown("With the Gaussian kernel the weights are a softmax over the training points: "
                "query x, keys xᵢ, values yᵢ. That is attention.")
    st.latex(r"\alpha(x, x_i) = \operatorname{softmax}_i\left(-\frac{(x - x_i)^2}{2h^2}\right)")
    st.latex(KERNELS[kernel].latex)

publish(PARAMS)
