"""Scaling: why attention logits are divided by sqrt(d)."""

import math

import numpy as np
import streamlit as st

from explorer.figures.common import lines
from explorer.figures.scaling import logit_histogram, regime_figure
from explorer.scaling import scaling_summary
from explorer.ui import cache
from explorer.ui.figure import show
from explorer.ui.layout import explanation
from explorer.ui.state import init_state, keep_shared_state, lang, say, tr
from explorer.ui.urlstate import Param, publish, restore

D_CHOICES = [2 ** i for i in range(11)]
N_CHOICES = [32, 64, 128, 256, 512]

keep_shared_state()
PARAMS = [Param("scale.d", "int", tuple(D_CHOICES)), Param("scale.n", "int", tuple(N_CHOICES)),
          Param("scale.seed", "int", lo=0, hi=9999)]
restore(PARAMS, "scaling")
st.title(tr("page.scaling"))
st.markdown(tr("sc.question"))

init_state({"scale.d": 128, "scale.n": 256, "scale.seed": 0})

c1, c2, c3 = st.columns(3)
c1.select_slider(tr("sc.d"), D_CHOICES, key="scale.d")
c2.select_slider(tr("sc.n"), N_CHOICES, key="scale.n", help=tr("sc.n_help"))
c3.number_input(tr("ui.seed"), 0, 9999, key="scale.seed", step=1, help=tr("ui.seed_help"))
d, n, seed = st.session_state["scale.d"], st.session_state["scale.n"], st.session_state["scale.seed"]

try:
    tables = cache.scaling_tables(n, seed)
except ValueError as err:
    st.error(say(err))
    st.stop()
un, sc = tables["unscaled"], tables["scaled"]
row = un.set_index("d").loc[d]
st.metric(tr("sc.metric", d=d), f"{row['logit_std']:.2f}", help=tr("sc.metric_help", value=f"{math.sqrt(d):.2f}"))

ds = un["d"].to_numpy()
unscaled, scaled, sqrt_d, one = tr("fig.unscaled"), tr("fig.scaled"), tr("sc.theory_sqrt"), tr("sc.theory_one")
fig = lines(ds, {unscaled: un["logit_std"], scaled: sc["logit_std"], sqrt_d: np.sqrt(ds),
                 one: np.ones_like(ds, dtype=float)},
            tr("sc.std_title"), tr("sc.d_axis"), tr("sc.std_axis"), log_x=True, log_y=True, mode="lines+markers",
            dashes={sqrt_d: "dot", one: "dot"}, colors={sqrt_d: "#222", one: "#777"}, vlines=[(d, f"d = {d}")])
show(fig, key="std")

left, right = st.columns(2)
with left:
    show(lines(ds, {tr("sc.unscaled"): un["max_weight"], tr("sc.scaled"): sc["max_weight"]}, tr("sc.maxw_title"),
               tr("sc.d_axis"), tr("sc.maxw_axis"), log_x=True, mode="lines+markers", height=380), key="max_weight")
with right:
    show(lines(ds, {tr("sc.unscaled"): un["entropy"], tr("sc.scaled"): sc["entropy"]}, tr("sc.entropy_title"),
               tr("sc.d_axis"), tr("sc.entropy_axis"), log_x=True, mode="lines+markers",
               hlines=[(math.log(n), tr("sc.log_n", value=f"{math.log(n):.2f}"))], height=380), key="entropy")

summary = scaling_summary(un, sc)
left, right = st.columns(2)
with left:
    show(lines(ds, {tr("sc.unscaled"): un["softmax_grad_norm"], tr("sc.scaled"): sc["softmax_grad_norm"]},
               tr("sc.grad_title"), tr("sc.d_axis"), tr("sc.grad_axis"), log_x=True, mode="lines+markers",
               height=420), key="grad_norm")
with right:
    show(regime_figure(tables["regime"], un, sc, lang=lang()), key="regime")
st.markdown(tr("sc.grad_text", inv_sqrt_n=f"{1 / math.sqrt(n):.2f}", peak=f"{summary['peak']:.2f}",
               d_peak=summary["d_peak"], d_cross=summary["d_cross"] or "—",
               ent_lo=f"{summary['scaled_entropy'][0]:.2f}", ent_hi=f"{summary['scaled_entropy'][1]:.2f}",
               mw_lo=f"{summary['scaled_maxw'][0]:.3f}", mw_hi=f"{summary['scaled_maxw'][1]:.3f}",
               ent_1=f"{summary['unscaled_entropy'][0]:.2f}", ent_big=f"{summary['unscaled_entropy'][1]:.2f}",
               d_max=int(ds[-1])))

samples = cache.scaling_samples(d, seed)
show(logit_histogram(samples["unscaled"], samples["scaled"], d, lang=lang()), key="hist")

with explanation("ui.what_to_notice"):
    norms = cache.scaling_key_norms(d, seed)
    st.markdown(tr("sc.notice", std128=f"{un.set_index('d').loc[128, 'logit_std']:.1f}",
                   lo=f"{summary['scaled_std'][0]:.2f}", hi=f"{summary['scaled_std'][1]:.2f}",
                   d_half=summary["d_half"] or "—", mw=f"{summary['mw_half']:.3f}",
                   mw_lo=f"{summary['scaled_maxw'][0]:.3f}", mw_hi=f"{summary['scaled_maxw'][1]:.3f}",
                   d=d, kmin=f"{norms[0]:.1f}", kmax=f"{norms[1]:.1f}", sqrt_d=f"{math.sqrt(d):.1f}"))
    st.latex(r"\operatorname{Var}(q\cdot k) = \sum_{m=1}^{d}\operatorname{Var}(q_m k_m) = d"
             r"\quad\Rightarrow\quad \operatorname{std}\left(\frac{q\cdot k}{\sqrt d}\right) = 1")

publish(PARAMS)
