"""Softmax is a kernel: dot-product attention vs Gaussian-kernel attention, exactly when they agree."""

import math

import numpy as np
import streamlit as st

from explorer.figures.common import heatmap, heatmap_grid, lines
from explorer.figures.regression import X_LABEL, Y_LABEL, fit_figure
from explorer.ui import cache
from explorer.ui.controls import SHARED_PARAMS, TEMPERATURES, dataset_controls
from explorer.ui.figure import show
from explorer.ui.layout import explanation
from explorer.ui.state import init_state, keep_shared_state
from explorer.ui.urlstate import Param, publish, restore

keep_shared_state()
PARAMS = [*SHARED_PARAMS, Param("sk.d", "int", lo=1, hi=256), Param("sk.n_keys", "int", lo=2, hi=128),
          Param("sk.spread", "float", lo=0, hi=1), Param("sk.tau_sqrt_d", "bool"),
          Param("sk.tau", "float", tuple(TEMPERATURES)), Param("sk.seed", "int", lo=0, hi=9999),
          Param("sk.k_top", "int", lo=1, hi=128), Param("sk.hidden", "int", lo=1, hi=16)]
restore(PARAMS, "softmax_kernel")
st.title("Softmax is a kernel")
st.markdown(
    "**The question.** Is dot-product attention really Gaussian kernel regression in disguise? "
    "Expand the square and see exactly when:")
st.latex(r"\exp\!\left(\frac{q\cdot k}{\tau}\right) = \exp\!\left(-\frac{\|q-k\|^2}{2\tau}\right)"
         r"\exp\!\left(\frac{\|q\|^2}{2\tau}\right)\exp\!\left(\frac{\|k\|^2}{2\tau}\right)")
st.markdown(
    "The **q factor** is the same for every key, so it cancels in the softmax over keys. The **k factor** "
    "does not. Hence dot-product attention at temperature τ equals Gaussian-kernel attention with "
    "**σ² = τ**, i.e. **σ = √τ** (σ = d^¼ at the usual τ = √d), **exactly when all keys have the same "
    "norm**; otherwise the two differ by a per-key logit bias −‖kⱼ‖²/(2τ). The value σ = √(d/2) "
    "(or √(τ/2)) that is often quoted is wrong: it makes the Gaussian twice as sharp.")

ds = dataset_controls()
init_state({"sk.d": 16, "sk.n_keys": 24, "sk.spread": 0.0, "sk.tau_sqrt_d": True,
            "sk.tau": min(TEMPERATURES, key=lambda t: abs(math.log(t / 4))),
            "sk.seed": 0, "sk.k_top": 4, "sk.hidden": 4})


c1, c2, c3 = st.columns(3)
with c1:
    st.slider("Head dimension d", 1, 256, key="sk.d", help="1 to 256.")
    st.slider("Number of keys N", 2, 128, key="sk.n_keys", help="2 to 128 (16 queries).")
with c2:
    st.slider("Key-norm spread", 0.0, 1.0, key="sk.spread", step=0.05,
              help="0 puts every key on the sphere of radius √d; larger values spread the norms "
                   "log-normally (norm = √d·exp(spread·z)).")
    st.number_input("Seed", 0, 9999, key="sk.seed", step=1)
with c3:
    st.toggle("Use the usual τ = √d", key="sk.tau_sqrt_d")
    st.select_slider("Temperature τ (log scale)", options=TEMPERATURES, key="sk.tau",
                     disabled=st.session_state["sk.tau_sqrt_d"], format_func=lambda t: f"{t:g}")

d, n_keys, spread, seed = (st.session_state[k] for k in ("sk.d", "sk.n_keys", "sk.spread", "sk.seed"))
tau = math.sqrt(d) if st.session_state["sk.tau_sqrt_d"] else st.session_state["sk.tau"]
sigma = math.sqrt(tau)
try:
    res = cache.bridge(d, n_keys, spread, tau, seed)
except ValueError as err:
    st.error(str(err))
    st.stop()

st.subheader("Side by side")
show(heatmap_grid([res["dot"], res["gauss"]],
                             [f"dot-product, τ = {tau:.3g}", f"Gaussian kernel, σ = √τ = {sigma:.3g}"],
                             None, None, "Attention weights of 16 random queries (rows) over the keys (columns)",
                             "key index j", "query index i", cols=2, height=380), key="side_by_side")
m1, m2, m3 = st.columns(3)
m1.metric("max |dot − Gaussian|", f"{res['max_diff']:.2e}")
m2.metric("max |dot + bias − Gaussian|", f"{res['max_diff_corrected']:.2e}",
          help="Adding −‖kⱼ‖²/(2τ) to the dot-product logits.")
norms = res["key_norms"]
m3.metric("key norms (min – max)", f"{norms.min():.2f} – {norms.max():.2f}")
if spread == 0:
    st.success(f"All keys have norm √d = {math.sqrt(d):.2f}: the two weight matrices agree to "
               f"{res['max_diff']:.1e}, i.e. to rounding.")
else:
    st.info(f"Key norms differ, so the weights differ by up to {res['max_diff']:.3f}; with the per-key "
            f"bias −‖kⱼ‖²/(2τ) added to the logits they agree again to {res['max_diff_corrected']:.1e}.")

curve = cache.bridge_spread_curve(d, n_keys, tau, seed)
show(lines(curve["norm_spread"], {"max |dot − Gaussian|": curve["max_abs_diff"],
                                             "max |dot + bias − Gaussian|": curve["max_abs_diff_corrected"]
                                             .clip(lower=1e-18)},
                      "The gap opens as soon as key norms differ",
                      "key-norm spread (0 = all keys on a sphere)", "max absolute weight difference (log)",
                      log_y=True, mode="lines+markers", vlines=[(spread, "current")], height=360),
                key="spread_curve")

st.subheader("Temperature is a bandwidth")
sweep = res["tau_sweep"]
log_n = math.log(n_keys)
left, right = st.columns(2)
with left:
    show(lines(sweep["tau"], {"mean entropy ÷ log N": sweep["entropy"] / log_n,
                                         "mean max weight": sweep["max_weight"]},
                          "Dot-product attention as τ sweeps", "temperature τ (log scale)",
                          "fraction (0 to 1)", log_x=True,
                          vlines=[(tau, f"τ = {tau:.3g}")], height=360), key="tau_sweep")
with right:
    nw = cache.nw_entropy(*ds, st.session_state["nw.kernel"])
    log_nd = math.log(ds[1])
    show(lines(nw["bandwidth"], {"mean entropy ÷ log N": nw["entropy"] / log_nd,
                                            "mean max weight": nw["max_weight"]},
                          "NW weights on the data as h sweeps", "bandwidth h (units of x, log scale)",
                          "fraction (0 to 1)", log_x=True,
                          vlines=[(st.session_state["nw.bandwidth"], "current h")], height=360), key="h_sweep")
st.markdown("Small τ (small h): each query puts nearly all its weight on one key (spiky, entropy → 0). "
            "Large τ (large h): the weights flatten to uniform (entropy → log N). The temperature plays "
            "the role of h² for the Gaussian kernel: σ = √τ.")

st.subheader("Top-k sparse attention")
st.slider("Keys kept per query k_top", 1, n_keys, key="sk.k_top",
          help=f"1 to N = {n_keys}. k_top = N is dense attention.")
k_top = min(st.session_state["sk.k_top"], n_keys)
topk = res["topk_curve"]
left, right = st.columns(2)
with left:
    show(lines(topk["k_top"], {"max |output − dense output|": topk["max_abs_output_error"].clip(lower=1e-17),
                                          "mean L1 weight error": topk["mean_weight_l1_error"].clip(lower=1e-17)},
                          "Error of top-k vs dense attention", "keys kept per query k_top",
                          "error (value units; log scale)", log_y=True, mode="lines+markers",
                          vlines=[(k_top, "current")], height=380), key="topk_curve")
with right:
    w_top = cache.topk_weights(d, n_keys, spread, tau, seed, k_top)
    show(heatmap(w_top, None, None, f"Top-{k_top} weights (zero off the kept keys)",
                            "key index j", "query index i", height=380), key="topk_heatmap")
kept = float(topk.loc[topk["k_top"] == k_top, "dense_mass_kept"].iloc[0])
st.markdown(f"Keeping {k_top} of {n_keys} keys per query keeps **{kept:.1%}** of dense attention's weight "
            "before renormalising. Top-k takes each query's largest logits, softmaxes them, and sums the "
            "values **gathered at those keys**; at k_top = N it is dense attention exactly.")

st.subheader("Learning the bandwidth")


@st.cache_resource(max_entries=32, show_spinner=False)
def learned_figures(name: str, n: int, noise: float, seed: int):
    """Both figures of this section; built once per dataset (figures are never modified)."""
    lb = cache.learned_bandwidth(name, n, noise, seed)
    loo, no_loo = lb["loo"], lb["no_loo"]
    fig_h = lines(loo["step"], {"leave-one-out": loo["h"], "each point sees itself": no_loo["h"]},
                  "Bandwidth during gradient descent on log h", "Adam step", "bandwidth h (units of x, log scale)",
                  log_y=True, hlines=[(lb["optimum"], f"LOO-CV grid optimum {lb['optimum']:.3g}")], height=360)
    fig_loss = lines(loo["step"], {"leave-one-out": loo["loss"], "each point sees itself": no_loo["loss"]},
                     "Training loss", "Adam step", "mean squared error (y units², log scale)", log_y=True, height=360)
    return lb, fig_h, fig_loss


@st.cache_resource(max_entries=32, show_spinner=False)
def parametric_figures(name: str, n: int, noise: float, seed: int, hidden: int):
    pf = cache.parametric_fit(name, n, noise, seed, hidden)
    data = cache.dataset(name, n, noise, seed)
    picks = [int(len(data["x_grid"]) * f) for f in (0.2, 0.5, 0.8)]
    rows = heatmap_grid([pf["weights"][picks], pf["gauss_weights"][picks]],
                        ["learned attention layer", f"Gaussian kernel, h = {pf['h_opt']:.3g}"],
                        np.round(pf["x"], 2), [f"x = {data['x_grid'][i]:.2f}" for i in picks],
                        "Weight rows of three queries", "key xᵢ", "query", cols=2, height=300)
    fits = fit_figure(data["x"], data["y"], data["x_grid"], data["true"],
                      {"learned attention layer": pf["pred"], f"NW, Gaussian, h = {pf['h_opt']:.3g}": pf["nw_pred"]},
                      title="Fits")
    return rows, fits


lb, fig_h, fig_loss = learned_figures(*ds)
loo, no_loo = lb["loo"], lb["no_loo"]
left, right = st.columns(2)
with left:
    show(fig_h, key="learned_h")
with right:
    show(fig_loss, key="learned_loss")
st.markdown(
    f"With leave-one-out the learned h ends at **{loo['h'].iloc[-1]:.3g}**, next to the LOO-CV optimum "
    f"{lb['optimum']:.3g}. Without it h falls to **{no_loo['h'].iloc[-1]:.2g}** and keeps falling: the "
    "training loss rewards a point for predicting itself, and as h → 0 its own weight → 1 and its error "
    f"→ 0. (Fitted on {lb['n_used']} points.)")

st.subheader("A parametric attention layer")
st.slider("Hidden units", 1, 16, key="sk.hidden", help="1 to 16.")
fig_rows, fig_fits = parametric_figures(*ds, st.session_state["sk.hidden"])
show(fig_rows, key="param_rows")
show(fig_fits, key="param_fit")
st.markdown(
    "The layer embeds x as [x, x², 1] (standardised) and learns W_q, W_k, W_v and an output map, "
    "trained with leave-one-out so it cannot copy each point's own target. Because "
    "−(x − xᵢ)²/(2h²) = x·xᵢ/h² − xᵢ²/(2h²) + (a term in x alone), q·k over these features can express "
    "the Gaussian kernel exactly, and the learned rows are local bumps like the kernel's.")
st.caption(f"Axes: {X_LABEL}; {Y_LABEL}.")

with explanation("What to notice"):
    st.markdown(
        "- At spread 0 the two heatmaps are identical to ~1e-16; raise the spread and they differ, "
        "but adding the bias −‖kⱼ‖²/(2τ) restores equality.\n"
        "- σ = √τ: doubling the temperature widens the equivalent Gaussian by √2.\n"
        "- Dot-product attention prefers long keys (the k factor): that is the bias a Gaussian kernel removes.\n"
        "- A small h and a small τ do the same thing to the weights: spiky, low-entropy rows.")

publish(PARAMS)
