"""Scaling: why attention logits are divided by sqrt(d)."""

import math

import numpy as np
import streamlit as st

from explorer.figures.common import lines
from explorer.figures.scaling import logit_histogram
from explorer.ui import cache
from explorer.ui.figure import show
from explorer.ui.layout import explanation
from explorer.ui.state import init_state, keep_shared_state
from explorer.ui.urlstate import Param, publish, restore

D_CHOICES = [2 ** i for i in range(11)]
N_CHOICES = [32, 64, 128, 256, 512]

keep_shared_state()
PARAMS = [Param("scale.d", "int", tuple(D_CHOICES)), Param("scale.n", "int", tuple(N_CHOICES)),
          Param("scale.seed", "int", lo=0, hi=9999)]
restore(PARAMS, "scaling")
st.title("Scaling by √d")
st.markdown(
    "**The question.** Why does attention compute softmax(q·k / √d) and not softmax(q·k)? For q and k "
    "with independent N(0, 1) entries, q·k is a sum of d products of variance 1, so **Var(q·k) = d**: "
    "the logits grow like √d, the softmax saturates towards one-hot, and its gradient vanishes.")

init_state({"scale.d": 128, "scale.n": 256, "scale.seed": 0})

c1, c2, c3 = st.columns(3)
c1.select_slider("Head dimension d for the histogram", D_CHOICES, key="scale.d")
c2.select_slider("Queries = keys per d (n)", N_CHOICES, key="scale.n",
                 help="n × n logits per d; larger is smoother and slower (32 to 512).")
c3.number_input("Seed", 0, 9999, key="scale.seed", step=1)
d, n, seed = st.session_state["scale.d"], st.session_state["scale.n"], st.session_state["scale.seed"]

try:
    tables = cache.scaling_tables(n, seed)
except ValueError as err:
    st.error(str(err))
    st.stop()
un, sc = tables["unscaled"], tables["scaled"]
row = un.set_index("d").loc[d]
st.metric(f"Unscaled logit std at d = {d}", f"{row['logit_std']:.2f}", help=f"Theory: √d = {math.sqrt(d):.2f}.")

ds = un["d"].to_numpy()
fig = lines(ds, {"unscaled q·k": un["logit_std"], "scaled q·k/√d": sc["logit_std"],
                 "theory √d": np.sqrt(ds), "theory 1": np.ones_like(ds, dtype=float)},
            "Logit standard deviation", "head dimension d (log scale)", "std of logits (log scale)",
            log_x=True, log_y=True, mode="lines+markers",
            dashes={"theory √d": "dot", "theory 1": "dot"}, colors={"theory √d": "#222", "theory 1": "#777"},
            vlines=[(d, f"d = {d}")])
show(fig, key="std")

left, right = st.columns(2)
with left:
    show(lines(ds, {"unscaled": un["max_weight"], "scaled": sc["max_weight"]},
               "Softmax saturation: the largest weight", "head dimension d (log scale)",
               "mean max weight (1 = one-hot)", log_x=True, mode="lines+markers",
               height=380), key="max_weight")
with right:
    show(lines(ds, {"unscaled": un["entropy"], "scaled": sc["entropy"]}, "Entropy of the weights",
               "head dimension d (log scale)", "mean row entropy (nats)", log_x=True, mode="lines+markers",
               hlines=[(math.log(n), f"log n = {math.log(n):.2f} (uniform)")], height=380), key="entropy")

show(lines(ds, {"unscaled": un["softmax_grad_norm"], "scaled": sc["softmax_grad_norm"]},
           "How much gradient passes through the softmax", "head dimension d (log scale)",
           "mean ‖∂softmax/∂logits‖ (Frobenius)", log_x=True, mode="lines+markers", height=380),
     key="grad_norm")
st.markdown(
    "The Jacobian of the softmax, diag(p) − ppᵀ, is small for two reasons: near-uniform rows (every p "
    "tiny) and near-one-hot rows (p ≈ 0 or 1). Unscaled, it rises at first as rows leave uniform, then falls "
    "towards 0 as they saturate: the logits stop learning. Scaled, it stays at the same level for every d.")

samples = cache.scaling_samples(d, seed)
show(logit_histogram(samples["unscaled"], samples["scaled"], d), key="hist")

with explanation("What to notice"):
    st.markdown(
        f"- Unscaled, the std follows √d: about {math.sqrt(128):.1f} at d = 128. Scaled, it stays at 1.\n"
        "- Unscaled, by d ≈ 64 the typical row puts most of its weight on one key: the softmax has become a "
        "hard max, and its gradient fades.\n"
        "- Dividing by √d is the same as a softmax temperature τ = √d, and by the Softmax-is-a-kernel page, "
        "a Gaussian kernel of width σ = √τ = d^¼ in q-k space.")
    st.latex(r"\operatorname{Var}(q\cdot k) = \sum_{m=1}^{d}\operatorname{Var}(q_m k_m) = d"
             r"\quad\Rightarrow\quad \operatorname{std}\left(\frac{q\cdot k}{\sqrt d}\right) = 1")

publish(PARAMS)
