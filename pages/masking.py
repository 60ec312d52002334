"""Masking: mask the logits before the softmax, and see what the common mistakes do instead."""

import numpy as np
import pandas as pd
import streamlit as st

from explorer.attention import MASK_MODES
from explorer.figures.common import lines
from explorer.figures.masking import gradient_heatmap, leak_bars, masked_pair
from explorer.masking import MASK_TYPES, renorm_underflow
from explorer.ui import cache
from explorer.ui.figure import show
from explorer.ui.layout import explanation
from explorer.ui.state import init_state, keep_shared_state
from explorer.ui.urlstate import Param, publish, restore

TOL = 1e-9
WRONG_MODES = [m for m in MASK_MODES if m != "pre"]

keep_shared_state()
PARAMS = [Param("mask.length", "int", lo=2, hi=32), Param("mask.d", "int", lo=1, hi=256),
          Param("mask.kind", "str", MASK_TYPES), Param("mask.valid", "int", lo=0, hi=32),
          Param("mask.seed", "int", lo=0, hi=9999), Param("mask.wrong", "str", tuple(WRONG_MODES))]
restore(PARAMS, "masking")
st.title("Masking")
st.markdown(
    "**The question.** A causal model must not let position i look at positions after i; a padded batch "
    "must not attend to padding. Where exactly does the mask go? **Before the softmax**: set the "
    "masked logits to −∞, so they get weight exactly 0 and take no part in the normaliser. Below, that "
    "correct version (\"pre\") runs next to the mistakes people make.")

init_state({"mask.length": 8, "mask.d": 16, "mask.kind": "causal", "mask.valid": 6, "mask.seed": 0,
            "mask.wrong": "post"})

c1, c2, c3 = st.columns(3)
with c1:
    st.slider("Sequence length L", 2, 32, key="mask.length", help="2 to 32 positions.")
    st.slider("Head dimension d", 1, 256, key="mask.d", help="1 to 256.")
with c2:
    st.selectbox("Mask", MASK_TYPES, key="mask.kind")
    length = st.session_state["mask.length"]
    st.session_state["mask.valid"] = min(st.session_state["mask.valid"], length)
    st.slider("Valid length (padding: keys from here on are padding)", 0, length, key="mask.valid",
              disabled=st.session_state["mask.kind"] == "causal", help=f"0 to L = {length}.")
with c3:
    st.selectbox("Incorrect mode to compare", WRONG_MODES, key="mask.wrong",
                 format_func=lambda m: f"{m}: {MASK_MODES[m]}")
    st.number_input("Seed", 0, 9999, key="mask.seed", step=1)

kind, wrong = st.session_state["mask.kind"], st.session_state["mask.wrong"]
valid = st.session_state["mask.valid"] if kind != "causal" else length
try:
    ex = cache.masking_example(length, st.session_state["mask.d"], kind, valid, st.session_state["mask.seed"])
except ValueError as err:
    st.error(str(err))
    st.stop()
mask, report = ex["mask"], ex["report"].set_index("mode")

show(masked_pair(ex["pre.weights"], ex[f"{wrong}.weights"], mask,
                 ("pre (correct)", f"{wrong}")), key="pair")


def verdict(mode: str, r: pd.Series) -> str:
    parts = ["matches SDPA" if r.max_diff_vs_sdpa < TOL else f"differs from SDPA by up to {r.max_diff_vs_sdpa:.2f}"]
    if abs(r.mean_row_sum - 1) > TOL:
        parts.append(f"rows sum to {r.mean_row_sum:.2f} on average (lowest {r.min_row_sum:.2f})")
    if r.mass_on_masked > TOL:
        parts.append(f"puts weight {r.mass_on_masked:.2f} (summed over rows) on masked cells")
    parts.append(f"**leaks**: perturbing the last key changes outputs that must not see it by {r.leak:.2g}"
                 if r.leak > TOL else "no leak")
    if r.grad_on_masked > TOL:
        parts.append(f"gradient reaches masked logits (up to {r.grad_on_masked:.2g})")
    return f"- **{mode}**: " + "; ".join(parts) + "."


st.subheader("Verdicts")
st.markdown("\n".join(verdict(m, report.loc[m]) for m in MASK_MODES))

st.subheader("Row sums and output size")
pos = np.arange(length)
left, right = st.columns(2)
with left:
    show(lines(pos, {m: ex[f"{m}.row_sum"] for m in MASK_MODES}, "Sum of each query's weights",
               "query position i", "row sum (1 = a proper average)", mode="lines+markers", height=360,
               dashes={"post_renorm": "dash"}), key="row_sums")
with right:
    show(lines(pos, {m: ex[f"{m}.output_norm"] for m in MASK_MODES}, "Size of each query's output",
               "query position i", "‖output‖ (value units)", mode="lines+markers", height=360,
               dashes={"post_renorm": "dash"}), key="output_norms")
st.markdown(
    "\"post\" zeroes masked weights after normalising, so each row sums to less than 1 and the output "
    "shrinks towards 0, most for early positions in a causal mask (they lose the most keys). The masked "
    "keys still sat in the normaliser: change a future key and the weights of the past change. ")

st.subheader("Leakage probe")
show(leak_bars(list(MASK_MODES), [report.loc[m, "leak"] for m in MASK_MODES], TOL), key="leak")
st.caption("Green: no output that may not see the last position changes (beyond rounding). Red: information "
           "from a masked position reaches the output.")

st.subheader("Gradients")
grads = ex["grads"]
st.markdown("A fixed loss Σ output·G (G random) is backpropagated through each mode. The heatmap shows "
            "∂loss/∂logits for the chosen incorrect mode; red × marks masked cells.")
left, right = st.columns(2)
with left:
    show(gradient_heatmap(grads[wrong], mask, f"∂loss/∂logits, {wrong}"), key="grad_heatmap")
with right:
    table = pd.DataFrame({
        "max |grad| on masked logits": [report.loc[m, "grad_on_masked"] for m in MASK_MODES],
        "max |grad − grad of pre|": [report.loc[m, "grad_diff_vs_pre"] for m in MASK_MODES],
    }, index=list(MASK_MODES))
    st.dataframe(table.style.format("{:.2e}"), width="stretch")
demo = renorm_underflow()
st.markdown(
    "- **pre**: masked logits are −∞ constants, so no gradient reaches them.\n"
    "- **post**: gradient flows into masked logits through the normaliser: training would tune the future.\n"
    "- **post_renorm**: the masked terms cancel between the softmax and the renormalisation, so the forward "
    "pass and the gradient equal \"pre\" up to rounding. It still computes the masked exponentials and "
    "fails numerically when masked logits dominate: in float32, with masked logits 120 above the allowed "
    f"ones, \"pre\" rows sum to {demo['pre']:.0f} while \"post_renorm\" rows sum to {demo['post_renorm']:.0f} "
    "(every allowed weight underflowed before renormalising).\n"
    "- **multiply_logits**: masked logits become 0, not −∞: masked keys keep weight e⁰ relative to the "
    "rest and their values flow straight into the output. Its gradient on the masked logits is 0 (they were "
    "multiplied by 0), which hides the bug.")

with explanation("What to notice"):
    st.markdown(
        "- Only \"pre\" matches torch's `scaled_dot_product_attention` with the same mask.\n"
        "- A fully masked row (valid length 0) gives zero weights and zero output in \"pre\", never NaN.\n"
        "- The causal mask's upper triangle is exactly 0 in \"pre\"; \"multiply_logits\" fills it.\n"
        "- Errors in masking are silent: every mode returns numbers of the right shape.")
    st.latex(r"\alpha_{ij} = \frac{\exp(s_{ij})\,[m_{ij}]}{\sum_{l} \exp(s_{il})\,[m_{il}]},\qquad "
             r"s_{ij} = \frac{q_i\cdot k_j}{\sqrt d},\quad s_{ij} \leftarrow -\infty \text{ where } m_{ij} = 0")

publish(PARAMS)
