"""The controls of each lesson page, declared once (``explorer.ui.control.Control``).

One class per page, one attribute per control, ``ALL`` in URL order, ``FILE_NAME`` the settings an exported
figure's file name carries (control, format). The page script draws them; the URL, the defaults the lecture
export uses (``explorer.export``) and the state kept between pages read them here.
The Live training page's controls live with its controller (``explorer.ui.live``).
"""

from __future__ import annotations

import math

import streamlit as st

from ..attention import MASK_MODES
from ..kernels import KERNELS
from ..masking import MASK_TYPES
from .control import Control
from .controls import BANDWIDTH, BANDWIDTHS, KERNEL, SHARED_CONTROLS, TEMPERATURES, presets, seed_control

WRONG_MODES = tuple(m for m in MASK_MODES if m != "pre")



class KernelRegression:
    COMPARE = Control("nw.compare", "multiselect", [], "kr.compare", options=tuple(KERNELS), names="kernel.")
    SAME_WIDTH = Control("nw.same_width", "toggle", True, "kr.same_width", "kr.same_width_help")
    OVERLAY = Control("nw.overlay", "toggle", False, "kr.overlay")
    OVERLAY_H = Control("nw.overlay_h", "multiselect", lambda: list(presets(st.session_state["data.name"]).values()),
                        "kr.overlay_h", options=tuple(BANDWIDTHS), fmt="g")
    ALL = (*SHARED_CONTROLS, COMPARE, SAME_WIDTH, OVERLAY, OVERLAY_H)
    FILE_NAME = ((KERNEL, "{}"), (BANDWIDTH, "h{}"))


class AttentionHeatmap:
    N_QUERIES = Control("heat.n_queries", "slider", 100, "ah.n_queries", "ah.n_queries_help", lo=10, hi=1000, step=10)
    # any finite x in a link; drawn over the data's own x range (``draw(lo=, hi=)``)
    QUERY_X = Control("heat.query_x", "slider", 0.0, "ah.query_x", "ah.query_x_help", lo=-1e9, hi=1e9, step=0.01)
    SWEEP = Control("heat.sweep", "multiselect", [0.1, 0.2, 0.5, 1.0], "ah.sweep_pick", options=tuple(BANDWIDTHS),
                    fmt="g", max_selections=6)
    ALL = (*SHARED_CONTROLS, N_QUERIES, QUERY_X, SWEEP)
    FILE_NAME = ((KERNEL, "{}"), (BANDWIDTH, "h{}"))


class SoftmaxKernel:
    D = Control("sk.d", "slider", 16, "sk.d", "sk.d_help", lo=1, hi=256)
    N_KEYS = Control("sk.n_keys", "slider", 24, "sk.n_keys", "sk.n_keys_help", lo=2, hi=128)
    SPREAD = Control("sk.spread", "slider", 0.0, "sk.spread", "sk.spread_help", lo=0.0, hi=1.0, step=0.05)
    SEED = seed_control("sk.seed")
    TAU_SQRT_D = Control("sk.tau_sqrt_d", "toggle", True, "sk.tau_sqrt_d")
    TAU = Control("sk.tau", "select_slider", min(TEMPERATURES, key=lambda t: abs(math.log(t / 4))), "sk.tau",
                  options=tuple(TEMPERATURES), fmt="g")
    K_TOP = Control("sk.k_top", "slider", 4, "sk.k_top", "sk.k_top_help", lo=1, hi=128)
    NW_FORM = Control("sk.nw_form", "toggle", True, "sk.nw_form", "sk.nw_form_help")
    HIDDEN = Control("sk.hidden", "slider", 4, "sk.hidden", "sk.hidden_help", lo=2, hi=16)
    ALL = (*SHARED_CONTROLS, D, N_KEYS, SPREAD, SEED, TAU_SQRT_D, TAU, K_TOP, NW_FORM, HIDDEN)
    FILE_NAME = ((D, "d{}"), (SPREAD, "spread{}"))


class Masking:
    LENGTH = Control("mask.length", "slider", 8, "mk.length", "mk.length_help", lo=2, hi=32)
    D = Control("mask.d", "slider", 16, "mk.d", "mk.d_help", lo=1, hi=256)
    KIND = Control("mask.kind", "select", "causal", "mk.mask", options=MASK_TYPES, names="masktype.")
    VALID = Control("mask.valid", "slider", 6, "mk.valid", "mk.valid_help", lo=0, hi=32)
    WRONG = Control("mask.wrong", "select", "post", "mk.wrong", options=tuple(WRONG_MODES), names="mode.")
    SEED = seed_control("mask.seed")
    ALL = (LENGTH, D, KIND, VALID, WRONG, SEED)
    FILE_NAME = ((KIND, "{}"), (LENGTH, "L{}"), (WRONG, "vs-{}"))


class Scaling:
    D = Control("scale.d", "select_slider", 128, "sc.d", options=tuple(2 ** i for i in range(11)))
    N = Control("scale.n", "select_slider", 256, "sc.n", "sc.n_help", options=(32, 64, 128, 256, 512))
    SEED = seed_control("scale.seed")
    ALL = (D, N, SEED)
    FILE_NAME = ((D, "d{}"),)


class EfficientAttention:
    H = Control("ef.h", "select_slider", 1.0, "ef.h", "ef.h_help",
                options=(0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0), fmt="g")
    KIND = Control("ef.kind", "select", "trig", "ef.kind", options=("trig", "positive"), names="ef.kind_")
    M = Control("ef.m", "select_slider", 64, "ef.m", options=(8, 16, 32, 64, 128, 256, 512, 1024))
    ORTH = Control("ef.orth", "toggle", False, "ef.orth", "ef.orth_help")
    SEED = seed_control("ef.seed")
    X0 = Control("ef.x0", "slider", 0.3, "ef.x0", lo=0.0, hi=1.0, step=0.01)
    BLOCK = Control("ef.block", "select_slider", 25, "ef.block", options=(10, 25, 50, 100, 250, 500))
    STEP = Control("ef.step", "slider", 1, "ef.step", lo=1, hi=200)
    T = Control("ef.rnn_t", "slider", 12, "ef.rnn_t", lo=1, hi=12)
    ALL = (*SHARED_CONTROLS, H, KIND, M, ORTH, SEED, X0, BLOCK, STEP, T)
    FILE_NAME = ((H, "h{}"), (KIND, "{}"), (M, "m{}"))


PAGES = {"kernel_regression": KernelRegression, "attention_heatmap": AttentionHeatmap,
         "softmax_kernel": SoftmaxKernel, "masking": Masking, "scaling": Scaling,
         "efficient_attention": EfficientAttention}
