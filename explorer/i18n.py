"""Every piece of UI text, in English and 中文: one dictionary per language, in this one place.

``t(key, lang, **values)`` looks a key up and fills ``{placeholders}``. Formulas stay LaTeX in the
pages. A test fails when a key exists in one language and not the other.
"""

from __future__ import annotations

LANGUAGES = {"en": "English", "zh": "中文"}

EN: dict[str, str] = {
    # --- app and shared controls
    "app.title": "Attention Explorer",
    "ui.choose": "Choose one or more",
    "nav.kernels": "Kernel regression",
    "nav.attention": "Attention",
    "nav.transformers": "Transformers",
    "page.kernel_regression": "Kernel regression",
    "page.attention_heatmap": "Attention heatmap",
    "page.softmax_kernel": "Softmax is a kernel",
    "page.masking": "Masking",
    "page.scaling": "Scaling by √d",
    "page.live_training": "Live training",
    "ui.language": "Language",
    "ui.lecture": "Lecture mode",
    "ui.lecture_help": "Larger fonts, thicker lines and markers in every figure (exports too); explanations fold "
                       "into expanders. Also ?lecture=1 in the URL.",
    "ui.device": "Compute device: **{device}**",
    "ui.export": "Export",
    "ui.export_no_browser": "PNG and SVG need Chrome or Chromium on the server (set BROWSER_PATH to one).",
    "ui.url_ignored": "Ignored link values that are malformed or out of range ({bad}): using the defaults for those.",
    "ui.what_to_notice": "What to notice",
    "ui.formula": "The formula",
    "ui.seed": "Seed",
    "ui.seed_help": "Same seed, same numbers (0 to 9999).",
    "data.header": "Data",
    "data.dataset": "Dataset",
    "data.dataset_help": "Seeded toy datasets, or a CSV file of your own.",
    "data.upload_option": "Your own CSV",
    "data.n": "Training points n",
    "data.n_help": "From 10 to 2000 points.",
    "data.noise": "Noise sd σ_ε",
    "data.noise_help": "Standard deviation of the Gaussian noise added to y (0 to 2).",
    "data.example": "Download an example CSV",
    "data.file": "CSV file (header row, numeric columns)",
    "data.file_help": "Up to {rows} rows; the size limit is set in .streamlit/config.toml.",
    "data.x_col": "x column",
    "data.y_col": "y column",
    "data.drop": "Drop rows with missing or non-finite values",
    "data.standardise": "Standardise huge values (above 1e6)",
    "data.previous_upload": "Still using the previous upload: {description}",
    "data.no_upload": "No usable upload yet: the pages keep showing the previous dataset.",
    "data.your_data": "your data",
    "dataset.sine_mix": "Sine mix",
    "dataset.d2l": "D2L 11.2",
    "kernel.gaussian": "Gaussian",
    "kernel.boxcar": "Boxcar",
    "kernel.constant": "Constant",
    "kernel.epanechnikov": "Epanechnikov",
    "kernel.triangular": "Triangular",
    "kernel.laplace": "Laplace",
    "nw.kernel": "Kernel",
    "nw.bandwidth": "Bandwidth h (log scale, 0.01 to 20)",
    "nw.bandwidth_help": "Width of the kernel, in the units of x.",
    "nw.presets": "Presets: {presets}. The labels are checked on the data shown: the {kernel} fit's error "
                  "against the true function is lowest at the “good” one.",
    "nw.preset.over-fit": "over-fit",
    "nw.preset.good": "good",
    "nw.preset.over-smooth": "over-smooth",
    "nw.typed": "…or type a bandwidth",
    "nw.typed_help": "A number from {lo} to {hi}, snapped to the slider's grid.",
    "nw.typed_error": "“{text}” is not a bandwidth from {lo} to {hi}: type a number in that range. The bandwidth "
                      "stays at its previous value.",
    # --- figures
    "fig.x": "x (input, arbitrary units)",
    "fig.y": "y (target, arbitrary units)",
    "fig.training_points": "training points",
    "fig.true_function": "true function",
    "fig.kernel_profiles": "Kernel profiles",
    "fig.u": "u = (x − xᵢ) / h (bandwidths)",
    "fig.loo_title": "Leave-one-out cross-validation",
    "fig.loo_x": "bandwidth h (units of x, log scale)",
    "fig.loo_y": "LOO MSE (y units², log scale)",
    "fig.current_h": "current h",
    "fig.loo_optimum": "LOO-CV optimum",
    "fig.silverman": "Silverman",
    "fig.weight": "weight",
    "fig.weights_of_query": "Weights of the query x = {x}",
    "fig.undefined": " (no training point within h: undefined)",
    "fig.points_by_weight": "training points (size, colour = weight)",
    "fig.estimate": "estimate = {value}",
    "fig.masked": "masked (may not attend)",
    "fig.mask_pair_title": "Attention weights (rows: query position, columns: key position)",
    "fig.key_pos": "key position j",
    "fig.query_pos": "query position i",
    "fig.gradient": "gradient",
    "fig.leak_title": "Perturb the last position's key, or its value, by +5: how much do outputs that must not "
                      "see it move?",
    "fig.leak_x": "masking mode",
    "fig.leak_y": "max |Δ output| (value units)",
    "fig.hist_title": "Logits at d = {d} ({n} samples)",
    "fig.logit_value": "logit value",
    "fig.density": "probability density",
    "fig.unscaled": "unscaled q·k",
    "fig.scaled": "scaled q·k/√d",
    "fig.loss_ce": "Training loss (cross-entropy) and accuracy",
    "fig.loss_mse": "Training loss (MSE)",
    "fig.loss_ce_y": "loss (nats), accuracy (fraction)",
    "fig.loss_mse_y": "MSE (y units²)",
    "fig.loss": "loss",
    "fig.accuracy": "accuracy",
    "fig.step": "step",
    "fig.entropy_title": "Per-head attention entropy (mean over queries)",
    "fig.entropy_nats": "entropy (nats)",
    "fig.layer_head": "layer {layer}, head {head}",
    "fig.collapse_line": "0.1 nats: collapse threshold",
    "fig.maps_title": "Attention maps on a fixed held-out example",
    "fig.key_position": "key position",
    "fig.query_position": "query position",
    "fig.icl_title": "In-context regression on the held-out example",
    "fig.context": "context (xᵢ, yᵢ)",
    "fig.prediction": "model's prediction",
    "fig.kv_title": "Time per generated token",
    "fig.kv_x": "sequence length (tokens)",
    "fig.kv_y": "milliseconds per token",
    "fig.with_cache": "with KV cache",
    "fig.no_cache": "recompute everything",
    # --- Kernel regression page
    "kr.question": "**The question.** One way to read attention is as a kernel smoother (a reading, not the "
                   "history: attention was introduced for machine translation, not derived from smoothing). To "
                   "predict y at a query x, average the training targets, weighting each by how close its input "
                   "is to the query. How much does the answer depend on the kernel and, above all, on its width "
                   "h?",
    "kr.compare": "Compare with other kernels",
    "kr.overlay": "Overlay several bandwidths",
    "kr.overlay_h": "Bandwidths to overlay",
    "kr.fit_title": "NW fit on {dataset}",
    "kr.readout": "**{label}**: MSE against the true function = {mse} (y units²)",
    "kr.readout_upload": "**{label}**: uploaded data has no known true function; see the leave-one-out error below",
    "kr.undefined": "; undefined at {n} of {m} query points: no training point lies within h of them, so the "
                    "{kernel} kernel gives every point weight 0 and the average is 0/0",
    "kr.kernels": "The kernels",
    "kr.loo_header": "Choosing h by leave-one-out cross-validation",
    "kr.loo_text": "Predict each training point from all the others and average the squared errors. Too small "
                   "an h chases the noise; too large an h flattens the curve. For compact kernels very small h "
                   "leave some point with no neighbour at all: those bandwidths have no score.",
    "kr.optimum": "LOO-CV optimum",
    "kr.use_optimum": "Use the optimum (h ≈ {h})",
    "kr.silverman": "Silverman's rule",
    "kr.use_silverman": "Use Silverman's h ≈ {h}",
    "kr.snap": "Buttons snap to the slider's grid (40 steps per decade, within {pct} of the exact value).",
    "kr.notice_first": "- On this data, with the {kernel} kernel, the error against the true function is {errors}; "
                       "leave-one-out picks h ≈ {h}.\n",
    "kr.notice_error": "**{mse}** at h = {h}",
    "kr.notice_first_upload": "- On your data leave-one-out picks h ≈ {h}.\n",
    "kr.notice": "- Small h follows the noise (low bias, high variance); large h averages almost everything and "
                 "the estimate tends to the mean of y (high bias).\n- The estimate is a weighted **average** of "
                 "the y values, so it never leaves [min y, max y].\n- Compact kernels (boxcar, Epanechnikov, "
                 "triangular) have no estimate where no training point lies within h of the query; the Gaussian "
                 "and Laplace kernels always give one.\n- Silverman's rule is built for density estimation, not "
                 "regression: here it gives h ≈ {silverman}, against {h} from leave-one-out.",
    "kr.formula_text": "With the Gaussian kernel the weights are a softmax over the training points: query x, "
                       "keys xᵢ, values yᵢ. That is attention.",
    # --- Attention heatmap page
    "ah.question": "**The question.** Kernel regression is attention with queries = the x where we predict, "
                   "keys = the training inputs, values = the training targets. What does the whole attention "
                   "matrix look like, and how does the bandwidth shape it?",
    "ah.n_queries": "Number of queries M",
    "ah.n_queries_help": "Evenly spaced query points over the data range (10 to 1000).",
    "ah.heat_title": "NW weights α(x, xᵢ): {kernel}, h = {h}",
    "ah.key_axis": "key: training input xᵢ (sorted)",
    "ah.query_axis": "query x (sorted)",
    "ah.size": "{m} queries × {n} keys = {cells} weights.",
    "ah.downsampled": " The picture is block-averaged {factor}× along each axis to stay under {limit} cells; every "
                      "number on this page uses the full matrix.",
    "ah.one_query": "One query",
    "ah.query_pos": "Query position (fraction of the x range, 0 = left end, 1 = right end)",
    "ah.entropy_title": "Entropy of each query's weights",
    "ah.entropy_series": "row entropy H(x)",
    "ah.query_x": "query x (input units)",
    "ah.log_n": "log N = {value} (uniform)",
    "ah.one_hot": "0 (one-hot)",
    "ah.picked": "picked query",
    "ah.row_text": "Query x = {x}: the largest weight is **{wmax}**, {n_big} of {n} training points get more than "
                   "1 %, entropy **{h}** nats (uniform would be {log_n}).",
    "ah.sweep": "Bandwidth sweep",
    "ah.sweep_pick": "Bandwidths to compare",
    "ah.sweep_title": "{kernel} kernel: one colour scale for all panels",
    "ah.key_short": "key xᵢ",
    "ah.query_short": "query x",
    "ah.notice": "- Each row is one query's attention: non-negative and summing to 1 (or all zero where a "
                 "compact kernel finds no training point within h: that query has no estimate and no "
                 "entropy).\n- Keys and queries are both sorted, so a local kernel draws a **diagonal band**: "
                 "each query attends to the training inputs near it. The band's width is the bandwidth.\n- Small "
                 "h (h = {small} with the {kernel} kernel): a thin band of near one-hot rows, mean entropy "
                 "{ent_small} nats; the fit follows the noise. Large h (h = {large}): no band at all: every "
                 "weight of a row lies within a factor {ratio} of 1/N = {inv_n}, mean entropy {ent_large} nats "
                 "against log N = {log_n}, and the fit flattens to the mean. The colour bar of the big heatmap "
                 "runs to the largest weight drawn, so a flat matrix looks evenly bright there: read its top, "
                 "or compare bandwidths in the sweep below, which shares one colour scale.\n- Entropy follows "
                 "how many training points lie near the query: higher where they crowd, lower where they are "
                 "sparse, and it falls at the very ends of the x range, where a query has neighbours on one "
                 "side only.",
    # --- Softmax is a kernel page
    "sk.question": "**The question.** Is dot-product attention really Gaussian kernel regression in disguise? "
                   "Expand the square and see exactly when:",
    "sk.explain": "The **q factor** is the same for every key, so it cancels in the softmax over keys. The **k "
                  "factor** does not. Hence dot-product attention at temperature τ equals Gaussian-kernel "
                  "attention with **σ² = τ**, i.e. **σ = √τ** (σ = d^¼ at the usual τ = √d), **exactly when all "
                  "keys have the same norm**; otherwise the two differ by a per-key logit bias −‖kⱼ‖²/(2τ). Two "
                  "values often quoted are wrong, each in its own way: at τ = {tau} here the right width is σ = "
                  "{sigma}; σ = √(τ/2) = {half_tau} is too narrow (a kernel twice as sharp in σ²), and σ = "
                  "√(d/2) = {half_d} is {half_d_effect} (at τ = √d it exceeds d^¼ for every d > 4).",
    "sk.d": "Head dimension d",
    "sk.d_help": "1 to 256.",
    "sk.n_keys": "Number of keys N",
    "sk.n_keys_help": "2 to 128 (16 queries).",
    "sk.spread": "Key-norm spread",
    "sk.spread_help": "0 puts every key on the sphere of radius √d; larger values spread the norms log-normally "
                      "(norm = √d·exp(spread·z)).",
    "sk.tau_sqrt_d": "Use the usual τ = √d",
    "sk.tau": "Temperature τ (log scale)",
    "sk.side": "Side by side",
    "sk.side_title": "Attention weights of 16 random queries (rows) over the keys (columns)",
    "sk.dot_title": "dot-product, τ = {tau}",
    "sk.gauss_title": "Gaussian kernel, σ = √τ = {sigma}",
    "sk.key_j": "key index j",
    "sk.query_i": "query index i",
    "sk.max_diff": "max |dot − Gaussian|",
    "sk.max_diff_corrected": "max |dot + bias − Gaussian|",
    "sk.bias_help": "Adding −‖kⱼ‖²/(2τ) to the dot-product logits.",
    "sk.norms": "key norms (min – max)",
    "sk.equal": "All keys have norm √d = {r}: the two weight matrices agree to {diff}, i.e. to rounding.",
    "sk.unequal": "Key norms differ, so the weights differ by up to {diff}; with the per-key bias −‖kⱼ‖²/(2τ) added "
                  "to the logits they agree again to {fixed}.",
    "sk.gap_title": "The gap opens as soon as key norms differ",
    "sk.gap_x": "key-norm spread (0 = all keys on a sphere)",
    "sk.gap_y": "max absolute weight difference (log)",
    "sk.current": "current",
    "sk.temperature": "Temperature is a bandwidth",
    "sk.entropy_frac": "mean entropy ÷ log N",
    "sk.max_weight": "mean max weight",
    "sk.tau_title": "Dot-product attention as τ sweeps",
    "sk.tau_x": "temperature τ (log scale)",
    "sk.fraction": "fraction (0 to 1)",
    "sk.h_title": "NW weights on the data as h sweeps",
    "sk.temp_text": "Small τ (and small h): rows turn spiky, towards one key: at the left end of each sweep the "
                    "mean max weight is {mw_tau} (τ = {tau_lo}) and {mw_h} (h = {h_lo}). Large τ (large h): the "
                    "weights flatten to uniform, entropy → log N. The temperature plays the role of h² for the "
                    "Gaussian kernel: σ = √τ.",
    "sk.topk": "Top-k sparse attention",
    "sk.k_top": "Keys kept per query k_top",
    "sk.k_top_help": "1 to N = {n}. k_top = N is dense attention.",
    "sk.topk_out": "max |output − dense output| (value units)",
    "sk.topk_w": "mean L1 weight error (no unit)",
    "sk.topk_title": "Error of top-k vs dense attention",
    "sk.topk_x": "keys kept per query k_top",
    "sk.topk_y": "error (log scale)",
    "sk.topk_heat": "Top-{k} weights (zero off the kept keys)",
    "sk.topk_text": "Keeping {k} of {n} keys per query keeps **{kept}** of dense attention's weight before "
                    "renormalising. Top-k takes each query's largest logits, softmaxes them, and sums the values "
                    "**gathered at those keys**; at k_top = N it is dense attention exactly.",
    "sk.learned": "Learning the bandwidth",
    "sk.loo": "leave-one-out",
    "sk.sees_itself": "each point sees itself",
    "sk.h_gd_title": "Bandwidth during gradient descent on log h",
    "sk.adam_step": "Adam step",
    "sk.h_axis": "bandwidth h (units of x, log scale)",
    "sk.grid_optimum": "LOO-CV grid optimum {h}",
    "sk.train_loss": "Training loss",
    "sk.mse_axis": "mean squared error (y units², log scale)",
    "sk.learned_text": "With leave-one-out the learned h ends at **{h_loo}**, next to the LOO-CV optimum {h_opt}. "
                       "Without it h falls to **{h_self}** and keeps falling: the training loss rewards a point for "
                       "predicting itself, and as h → 0 its own weight → 1 and its error → 0. (Fitted on {n} "
                       "points.)",
    "sk.param": "A parametric attention layer",
    "sk.hidden": "Hidden units",
    "sk.hidden_help": "2 to 16. The Gaussian kernel's q·k form has rank 2, so 2 units can hold it exactly.",
    "sk.learned_layer": "learned attention layer",
    "sk.gauss_h": "Gaussian kernel, h = {h}",
    "sk.rows_title": "Weight rows of three queries",
    "sk.query": "query",
    "sk.nw_gauss": "NW, Gaussian, h = {h}",
    "sk.fits": "Fits",
    "sk.notice": "- At spread 0 the two heatmaps are identical to ~1e-16; raise the spread and they differ, but "
                 "adding the bias −‖kⱼ‖²/(2τ) restores equality.\n"
                 "- σ = √τ: doubling the temperature widens the equivalent Gaussian by √2.\n"
                 "- Dot-product attention prefers long keys (the k factor): that is the bias a Gaussian kernel "
                 "removes.\n"
                 "- A small h and a small τ do the same thing to the weights: spiky, low-entropy rows.",
    # --- Masking page
    "mk.question": "**The question.** A causal model must not let position i look at positions after i; a padded "
                   "batch must not attend to padding. Where exactly does the mask go? **Before the softmax**: set "
                   "the masked logits to −∞, so they get weight exactly 0 and take no part in the normaliser. "
                   "Below, that correct version (\"pre\") runs next to the mistakes people make.",
    "mk.length": "Sequence length L",
    "mk.length_help": "2 to 32 positions.",
    "mk.d": "Head dimension d",
    "mk.d_help": "1 to 256.",
    "mk.mask": "Mask",
    "mk.valid": "Valid length (padding: keys from here on are padding)",
    "mk.valid_help": "0 to L = {n}.",
    "mk.wrong": "Incorrect mode to compare",
    "mk.pre_correct": "pre (correct)",
    "mk.verdicts": "Verdicts",
    "mk.v_sdpa": "matches SDPA",
    "mk.v_sdpa_diff": "differs from SDPA by up to {diff}",
    "mk.v_rows": "rows sum to {mean} on average (lowest {low}) where the correct rows sum to {correct}",
    "mk.v_mass": "puts weight {mass} (summed over rows) on masked cells",
    "mk.v_leak": "**leaks through the masked {channel}**: perturbing it moves outputs that must not see it by {leak}",
    "mk.v_no_leak": "no leak",
    "mk.v_grad": "gradient reaches masked logits (up to {g})",
    "mk.rows_header": "Row sums and output size",
    "mk.rows_title": "Sum of each query's weights",
    "mk.rows_y": "row sum (1 = a proper average)",
    "mk.norm_title": "Size of each query's output",
    "mk.norm_y": "‖output‖ (value units)",
    "mk.rows_text": "\"post\" zeroes masked weights after normalising, so every row that has masked keys sums to "
                    "less than 1 and its output shrinks towards 0, most for early positions in a causal mask "
                    "(they lose the most keys). The masked keys still sat in the normaliser: change a future "
                    "key and the weights of the past change.",
    "mk.leak_header": "Leakage probe",
    "mk.leak_caption": "Each bar is how far the outputs that may not see the last position move when that "
                       "position's key (red) or value (purple) is perturbed; no bar means no leak (zero beyond "
                       "rounding). \"post\" leaks through the key (it still sits in the normaliser); "
                       "\"multiply_logits\" through the value (its weight is e⁰ relative to the rest).",
    "mk.grad_header": "Gradients",
    "mk.grad_text": "A fixed loss Σ output·G (G random) is backpropagated through each mode. The heatmap shows "
                    "∂loss/∂logits for the chosen incorrect mode; red × marks masked cells.",
    "mk.grad_title": "∂loss/∂logits, {mode}",
    "mk.grad_masked": "max |grad| on masked logits",
    "mk.grad_diff": "max |grad − grad of pre|",
    "mk.grad_notes": "- **pre**: masked logits are −∞ constants, so no gradient reaches them.\n"
                     "- **post**: gradient flows into masked logits through the normaliser: training would tune "
                     "the future.\n"
                     "- **post_renorm**: the masked terms cancel between the softmax and the renormalisation, so "
                     "the forward pass and the gradient equal \"pre\" up to rounding. It still computes the masked "
                     "exponentials and fails numerically when masked logits dominate: in float32, with masked "
                     "logits 120 above the allowed ones, \"pre\" rows sum to {pre} while \"post_renorm\" rows sum "
                     "to {renorm} (every allowed weight underflowed before renormalising).\n"
                     "- **multiply_logits**: masked logits become 0, not −∞: masked keys keep weight e⁰ relative "
                     "to the rest and their values flow straight into the output. Its gradient on the masked "
                     "logits is 0 (they were multiplied by 0), which hides the bug.",
    "mk.notice": "- \"pre\" and \"post_renorm\" both match torch's `scaled_dot_product_attention` (SDPA, PyTorch's "
                 "built-in attention) with the same mask in the forward pass, and their gradients agree too; "
                 "\"post_renorm\" differs only numerically: it computes the masked exponentials and fails when "
                 "masked logits dominate (see the gradients section).\n- A fully masked row (valid length 0) "
                 "gives zero weights and zero output in \"pre\", never NaN.\n- The causal mask's upper triangle is "
                 "exactly 0 in \"pre\"; \"multiply_logits\" fills it.\n- Errors in masking are silent: every mode "
                 "returns numbers of the right shape.",
    "masktype.causal": "causal",
    "masktype.padding": "padding",
    "masktype.causal + padding": "causal + padding",
    "mode.pre": "mask before softmax (−∞ on masked logits): correct",
    "mode.post": "softmax, then zero masked weights: rows sum to < 1, future keys leak",
    "mode.post_renorm": "softmax, zero masked weights, renormalise: equals 'pre' going forward",
    "mode.multiply_logits": "multiply logits by the 0/1 mask: masked logits become 0, not −∞",
    # --- Scaling page
    "sc.question": "**The question.** Why does attention compute softmax(q·k / √d) and not softmax(q·k)? For q "
                   "and k with independent N(0, 1) entries, q·k is a sum of d products of variance 1, so "
                   "**Var(q·k) = d**: unscaled logits grow like √d and the softmax sharpens towards one-hot as "
                   "the heads get wider.",
    "sc.d": "Head dimension d for the histogram",
    "sc.n": "Queries = keys per d (n)",
    "sc.n_help": "n × n logits per d; larger is smoother and slower (32 to 512).",
    "sc.metric": "Unscaled logit std at d = {d}",
    "sc.metric_help": "Theory: √d = {value}.",
    "sc.std_title": "Logit standard deviation",
    "sc.d_axis": "head dimension d (log scale)",
    "sc.std_axis": "std of logits (log scale)",
    "sc.theory_sqrt": "theory √d",
    "sc.theory_one": "theory 1",
    "sc.unscaled": "unscaled",
    "sc.scaled": "scaled",
    "sc.maxw_title": "Softmax saturation: the largest weight",
    "sc.maxw_axis": "mean max weight (1 = one-hot)",
    "sc.entropy_title": "Entropy of the weights",
    "sc.entropy_axis": "mean row entropy (nats)",
    "sc.log_n": "log n = {value} (uniform)",
    "sc.grad_title": "How much gradient passes through the softmax",
    "sc.grad_axis": "mean ‖diag(p) − ppᵀ‖_F over rows",
    "sc.grad_text": "**The measure.** For each row of weights p, ‖diag(p) − ppᵀ‖_F is the size of the softmax's "
                    "Jacobian: how much the weights move per unit change of the logits; the plots show its mean "
                    "over rows. It is small for near-uniform rows (about 1/√n = {inv_sqrt_n} here) and for "
                    "near-one-hot rows. Unscaled, it first **rises** as rows leave uniform (peak {peak} at d = "
                    "{d_peak}) and falls below the scaled value only from d = {d_cross}: at the usual head "
                    "sizes (64, 128) the unscaled softmax passes *more* gradient at initialisation, not less. "
                    "What √d buys is a regime that does not depend on d: scaled, the logit std is 1 at every d, "
                    "so entropy stays between {ent_lo} and {ent_hi} nats and the max weight between {mw_lo} and "
                    "{mw_hi}, while unscaled rows sharpen from entropy {ent_1} at d = 1 to {ent_big} at d = "
                    "{d_max}, into the saturated end of the curve on the right, where the Jacobian vanishes.",
    "sc.notice": "- Unscaled, the std follows √d: {std128} at d = 128 (√128 ≈ 11.3). Scaled, it stays at 1 "
                 "({lo} to {hi} over every d).\n- Unscaled, rows sharpen as d grows: from d = {d_half} on, the "
                 "typical row puts more than half its weight on one key (mean max weight {mw} there). Scaled, "
                 "the mean max weight stays between {mw_lo} and {mw_hi} at every d.\n- Dividing by √d is a "
                 "softmax temperature τ = √d. By the Softmax-is-a-kernel page that equals a Gaussian kernel of "
                 "width σ = d^¼ in q–k space **only when all keys have the same norm**. These keys have N(0, I) "
                 "entries, whose norms vary (from {kmin} to {kmax} at d = {d}, around √d ≈ {sqrt_d}), so here "
                 "the two differ by the per-key bias −‖kⱼ‖²/(2τ).",
    # --- Live training page
    "lt.question": "**The question.** What do attention heads do while a transformer learns? Train a small one on a "
                   "toy task and watch each head's entropy: high = spread out over many positions, near 0 = locked "
                   "onto one.",
    "lt.task": "Task",
    "lt.layers": "Layers",
    "lt.heads": "Heads",
    "lt.seq_len": "Sequence length T",
    "lt.mlp": "MLP after attention",
    "lt.lr": "Learning rate",
    "lt.lr_help": "1e-4 to 1e3; each task loads its own default. On reverse, up to about 0.03 trains well; at "
                  "0.1 to 0.3 the loss stalls near or falls back to chance; from 1 up it climbs above twice its "
                  "start and training stops with a message.",
    "lt.warmup": "Warmup steps",
    "lt.temp": "Temperature schedule",
    "lt.temp_help": "Attention logits are divided by √D × temperature, where D = d_model / heads is the size of "
                    "one head. Schedules run over the first 1,000 steps, then hold the end value.",
    "lt.start_temp": "start",
    "lt.end_temp": "end",
    "lt.rebuilt": "The task or architecture changed, so a new model was initialised (seed {seed}).",
    "lt.kept": "{error} The previous model is kept.",
    "lt.start": "Start",
    "lt.pause": "Pause",
    "lt.step": "Step ×10",
    "lt.step_help": "Ten training steps, then pause.",
    "lt.reset": "Reset",
    "lt.reset_help": "Re-initialise the model with the same seed.",
    "lt.collapsed": "Layer {layer}, head {head} attends to a single position (entropy below {nats} nats for "
                    "{steps} steps). On this task that is the right answer: it copies one position (reversing, "
                    "sorting, a previous-token or an induction head).",
    "lt.duplicate": "Layer {layer}: two heads have near-identical maps (cosine {sim}) and both have moved away "
                    "from uniform. Equal maps alone do not prove one is redundant: their value and output maps "
                    "may differ.",
    "lt.m_step": "step",
    "lt.m_loss": "loss",
    "lt.m_acc": "accuracy",
    "lt.m_lr": "learning rate",
    "lt.press_start": "Press **Start** to train, or **Step ×10** to take ten steps.",
    "lt.watch": "**What to watch ({task}).** {text}",
    "lt.kv": "Generation with a KV cache",
    "lt.kv_text": "A causal model generates one token at a time. Without a cache, the step that makes token S "
                  "recomputes keys, values and attention for all S positions: O(S²·d) attention work per token. "
                  "With one, it computes the newest token's key and value and attends over the S cached keys: "
                  "O(S·d), still linear in S, but no longer quadratic. The logits are the same.",
    "lt.kv_metric": "max |logit difference| over {n} generated tokens (current model)",
    "lt.kv_bidirectional": "The current task is bidirectional; the timing below uses a randomly initialised causal "
                           "model.",
    "lt.kv_caption": "Two layers, four heads, d_model = 64, batch of 1, best of 3 runs, on this server's CPU. "
                     "From S = {s0} to {s1} ({growth}× longer) a token with the cache took {cache_ratio}× as "
                     "long, one without {no_cache_ratio}×. Dotted: the fits a + b·S and a + c·S².",
    "task.reverse": "Output the input sequence backwards (bidirectional attention).",
    "task.induction": "Each sequence starts with 6 to T/2 distinct random tokens, then repeats them once, then "
                      "random filler; predict the next token (causal). Only the repeat is predictable, by "
                      "recalling what followed the current token the first time.",
    "task.sort": "Output the input tokens in ascending order (bidirectional attention).",
    "task.sine_icl": "In-context kernel regression: the sequence holds (xᵢ, yᵢ) pairs from the noisy sine of the "
                     "kernel pages, then query x's with y hidden; predict y at the queries.",
    "watch.reverse": "Position t must copy token T−1−t: within a few hundred steps the maps become an "
                     "anti-diagonal, every head learns the same one, and the near-duplicate notice appears.",
    "watch.induction": "Within a few hundred steps (a few seconds on a laptop CPU) the loss drops sharply as "
                       "two heads form together: in layer 0 a previous-token head (prevtok rises past 0.5: a "
                       "line just below the diagonal in the first copy) and in layer 1 an induction head "
                       "(induction rises past 0.5: inside the repeat, each position attends to the token after "
                       "its earlier copy).",
    "watch.sort": "Each output position must find the token of its rank: the maps depend on the content.",
    "watch.sine_icl": "The maps show each query (rows) against the context points (columns), both sorted by x: "
                      "as the model learns, the weight gathers near the diagonal, on the context points whose x "
                      "is near the query's, as in the Nadaraya-Watson heatmap, learned rather than chosen. "
                      "Compare its predictions with NW's on the same context.",
    # --- sentences from the explorer package that a user reads (errors and notes)
    "err.csv_not_utf8": "The file is not UTF-8 text: save it as a UTF-8 CSV and upload it again.",
    "err.csv_empty": "The file is empty: upload a CSV with a header row and at least 2 rows of numbers.",
    "err.csv_unreadable": "The file could not be read as CSV ({detail}): upload comma-separated columns with a "
                          "header row.",
    "err.csv_two_numeric": "The file needs two numeric columns (x and y); it has {n} among {total} column(s): "
                           "{columns}.",
    "err.csv_not_numeric": "Column {column} is not one of the numeric columns: {numeric}.",
    "err.csv_same_columns": "Pick two different columns for x and y.",
    "err.csv_bad_rows": "{bad} of {n} rows have a missing or non-finite x or y: tick “Drop rows with missing or "
                        "non-finite values” to use the other rows.",
    "err.csv_too_few": "Only {n} usable row(s): kernel regression needs at least 2.",
    "err.csv_too_many": "The file has {n} rows; the limit is {limit} (leave-one-out costs grow with the square of "
                        "the size). Upload a sample of the rows.",
    "err.csv_no_spread": "Every x is {x}: with no spread in x there is nothing to smooth. Pick another x column.",
    "err.csv_huge": "Values reach {size}; tick “Standardise huge values (above 1e6)” to standardise x and y "
                    "(mean 0, standard deviation 1).",
    "note.csv_dropped": "Dropped {n} rows with missing or non-finite values.",
    "note.csv_standardised": "Values above 1e6 in size were standardised: x and y now have mean 0 and standard "
                             "deviation 1, and bandwidths are in those units.",
    "data.upload_description": "uploaded: {n} rows, x = {x}, y = {y}",
    "train.stopped_loss": "Training stopped at step {step}: the loss became {value}. Lower the learning rate (now "
                          "{lr}) to go on from the last good step, or press Reset.",
    "train.stopped_grad": "Training stopped at step {step}: the gradients became non-finite. Lower the learning rate "
                          "(now {lr}) to go on from the last good step, or press Reset.",
    "nw.presets_fail": "Presets: {presets}, labelled for {dataset} at its defaults (n = {n}, noise {noise}). On "
                       "the data shown the {kernel} fit's errors do not bear the labels out: read the errors "
                       "under the plot.",
    "nw.presets_upload": "Presets: 0.05 · 0.5 · 10. Your data has no known true function, so no preset is "
                         "labelled: the leave-one-out curve below judges them.",
    "kr.same_width": "Same effective width",
    "kr.same_width_help": "Draw each compared kernel at the bandwidth that gives it the same effective width as "
                          "the chosen kernel (h × δ_K / δ of the chosen kernel; see “Kernel widths” below), so "
                          "the comparison is of shapes, not widths.",
    "fig.loo_x_same": "bandwidth h of the chosen kernel (others at equal effective width; log scale)",
    "kr.width_rule": "Kernel widths: one h is not one width",
    "kr.width_text": "One h is a different width for each kernel. As standard deviations of the normalised "
                     "kernel: Gaussian h, boxcar h/√3, Epanechnikov h/√5, triangular h/√6, Laplace √2·h. "
                     "Kernels are compared fairly at equal canonical bandwidth δ_K (Marron & Nolan 1988): a "
                     "bandwidth that suits the Gaussian carries over to kernel K as h·δ_K/δ_Gauss, and so does "
                     "Silverman's rule. With “Same effective width” on, the leave-one-out optima of the five "
                     "kernels on the data shown lie within {spread} of each other; at one raw h they differ up to "
                     "{raw}×.",
    "ah.no_support_caption": "{n} of {m} queries have no training point within h: the {kernel} kernel gives "
                             "them no estimate and no entropy (gaps in the entropy curve, not one-hot rows).",
    "ah.row_none_text": "Query x = {x} has no training point within h: the {kernel} kernel gives every point "
                        "weight 0, so this query has no estimate and no entropy.",
    "sk.too_wide": "too wide",
    "sk.too_narrow": "too narrow",
    "sk.same_width": "equal to it only here",
    "sk.nw_form": "NW form (values = y, no output map)",
    "sk.nw_form_help": "On: the head averages the targets with its weights, as Nadaraya-Watson does. Off: "
                       "learned values and an output map, as in a transformer.",
    "sk.param_text_nw": "**NW form.** The values are the targets yᵢ and there is no output map, so the output "
                        "is a weighted average of the y's, exactly as in NW. The layer embeds x as [x, x², 1] "
                        "(standardised); since −(x − xᵢ)²/(2h²) = x·xᵢ/h² − xᵢ²/(2h²) + (a term in x alone, "
                        "which the softmax drops), a rank-2 q·k over these features is the Gaussian kernel, so "
                        "2 hidden units suffice (more start at zero and stay there). Started at a wide Gaussian "
                        "and trained with leave-one-out, the learned rows stay local: each shown query's "
                        "largest weight lies within {dist} of it, and the fit's error against the true function "
                        "is {mse} (NW at the LOO optimum: {nw_mse}).",
    "sk.param_text_free": "**Free form.** The values are a learned affine map of yᵢ and an output map follows, "
                          "as in a transformer: the output is an affine function of a weighted sum, and nothing "
                          "keeps the weights local. Here the query x = {x} puts its largest weight on the point "
                          "at x = {x_top}, while the fit's error against the true function is {mse} (NW: "
                          "{nw_mse}). A learned head reduces to NW only with values = y, no output map and a "
                          "q·k of rank ≥ 2 over [x, x², 1]: switch on the NW form to see it.",
    "fig.leak_key": "through the masked key",
    "fig.leak_value": "through the masked value",
    "mk.channel_key": "key",
    "mk.channel_value": "value",
    "sc.regime_title": "The regime depends on the logit scale alone",
    "sc.regime_x": "logit standard deviation s (log scale)",
    "sc.regime_curve": "softmax of s·z, z ~ N(0, 1)",
    "train.stopped_diverged": "Training stopped at step {step}: the loss ({value}) has stayed above twice its "
                              "starting level ({start}) for 20 steps, so the run is diverging. Lower the "
                              "learning rate (now {lr}) and press Reset.",
    "fig.ceiling": "{value} nats: uniform over the keys each row may see",
    "fig.noise_floor": "noise floor σ² = {value}",
    "fig.context_by_x": "context point, sorted by x",
    "fig.nw_same_context": "NW on the same context (h = {h}, leave-one-out)",
    "fig.lr": "learning rate",
    "fig.temperature": "temperature multiplier",
    "fig.now": "now",
    "fig.schedule_title": "Learning rate and temperature over the schedule",
    "fig.theory_linear": "theory with cache: a + b·S",
    "fig.theory_quadratic": "theory without: a + c·S²",
    "taskname.reverse": "reverse",
    "taskname.induction": "induction",
    "taskname.sort": "sort",
    "taskname.sine_icl": "sine_icl (in-context regression)",
    "lt.d_model": "Model width d_model",
    "lt.m_none": "—",
    "lt.m_temp": "temperature",
    "lt.collapsed_problem": "Layer {layer}, head {head} attends to a single position (entropy below {nats} nats "
                            "for {steps} steps). This task needs an average over several context points, so a "
                            "one-position head is a problem here, often from too low a temperature.",
    "lt.scores_caption": "Over the last 10 steps. prevtok: mean weight on the position just before the query "
                         "(for induction, over the first copy of the repeated prefix, where an induction head "
                         "reads it). induction: mean weight on the positions right after earlier occurrences of "
                         "the query's own token (over the repeat).",
    "lt.col_head": "head",
    "lt.col_entropy": "entropy (nats)",
    "lt.col_prevtok": "prevtok",
    "lt.col_induction": "induction",
    "lt.icl_text": "On this held-out example the model's MSE at the queries is {mse}; Nadaraya-Watson on the "
                   "same context points, with h = {h} chosen by leave-one-out on them, gets {nw_mse}. Against "
                   "noisy targets no predictor can beat the noise floor σ² = {floor} on average (one example of "
                   "a few queries scatters around it).",
    "lt.schedules": "Schedules",
    "lt.schedule_text": "The learning rate rises linearly over the {warmup} warmup steps, then decays by a "
                        "cosine to {floor} of its value at step {total} and stays there; a temperature schedule "
                        "runs over the same {total} steps.",
    "lt.kv_run": "Time generation (a few seconds)",
    "lt.kv_run_help": "Times a randomly initialised causal model at several lengths; the result is kept for the "
                      "session.",
    "spin.learn": "Fitting the bandwidth by gradient descent…",
    "spin.param": "Training the attention layer…",
    "spin.kv": "Timing generation with and without the cache…",
    "tempkind.constant": "constant",
    "tempkind.linear": "linear",
    "tempkind.cosine": "cosine",
}

ZH: dict[str, str] = {
    # --- 应用与共享控件
    "app.title": "注意力探索器",
    "ui.choose": "选择一项或多项",
    "nav.kernels": "核回归",
    "nav.attention": "注意力",
    "nav.transformers": "Transformer",
    "page.kernel_regression": "核回归",
    "page.attention_heatmap": "注意力热力图",
    "page.softmax_kernel": "softmax 就是核",
    "page.masking": "掩码",
    "page.scaling": "除以 √d",
    "page.live_training": "实时训练",
    "ui.language": "语言",
    "ui.lecture": "授课模式",
    "ui.lecture_help": "所有图形使用更大的字号、更粗的线条和标记（导出的图形也是）；说明文字折叠进展开框。"
                       "也可在网址中加 ?lecture=1。",
    "ui.device": "计算设备：**{device}**",
    "ui.export": "导出",
    "ui.export_no_browser": "PNG 和 SVG 需要服务器上装有 Chrome 或 Chromium（可用 BROWSER_PATH 指定）。",
    "ui.url_ignored": "链接中的以下取值格式错误或超出范围，已忽略（{bad}）：这些控件使用默认值。",
    "ui.what_to_notice": "值得注意的地方",
    "ui.formula": "公式",
    "ui.seed": "随机种子",
    "ui.seed_help": "相同的种子得到相同的数据（0 到 9999）。",
    "data.header": "数据",
    "data.dataset": "数据集",
    "data.dataset_help": "带随机种子的示例数据集，或你自己的 CSV 文件。",
    "data.upload_option": "自己的 CSV",
    "data.n": "训练点数 n",
    "data.n_help": "10 到 2000 个点。",
    "data.noise": "噪声标准差 σ_ε",
    "data.noise_help": "加到 y 上的高斯噪声的标准差（0 到 2）。",
    "data.example": "下载示例 CSV",
    "data.file": "CSV 文件（带表头，数值列）",
    "data.file_help": "最多 {rows} 行；文件大小上限在 .streamlit/config.toml 中设置。",
    "data.x_col": "x 列",
    "data.y_col": "y 列",
    "data.drop": "删除含缺失值或非有限值的行",
    "data.standardise": "标准化过大的数值（超过 1e6）",
    "data.previous_upload": "仍在使用上一次上传的数据：{description}",
    "data.no_upload": "尚无可用的上传数据：各页面继续显示之前的数据集。",
    "data.your_data": "你的数据",
    "dataset.sine_mix": "正弦混合",
    "dataset.d2l": "D2L 第 11.2 节",
    "kernel.gaussian": "高斯核",
    "kernel.boxcar": "矩形核",
    "kernel.constant": "常数核",
    "kernel.epanechnikov": "Epanechnikov 核",
    "kernel.triangular": "三角核",
    "kernel.laplace": "拉普拉斯核",
    "nw.kernel": "核函数",
    "nw.bandwidth": "带宽 h（对数刻度，0.01 到 20）",
    "nw.bandwidth_help": "核的宽度，单位与 x 相同。",
    "nw.presets": "预设：{presets}。这些标签已在当前数据上核对过：{kernel}拟合与真实函数的误差在“合适”一档最小。",
    "nw.preset.over-fit": "过拟合",
    "nw.preset.good": "合适",
    "nw.preset.over-smooth": "过度平滑",
    "nw.typed": "……或直接输入带宽",
    "nw.typed_help": "{lo} 到 {hi} 之间的数，会对齐到滑块的刻度。",
    "nw.typed_error": "“{text}” 不是 {lo} 到 {hi} 之间的带宽：请输入该范围内的数。带宽保持原值不变。",
    # --- 图形
    "fig.x": "x（输入，任意单位）",
    "fig.y": "y（目标，任意单位）",
    "fig.training_points": "训练点",
    "fig.true_function": "真实函数",
    "fig.kernel_profiles": "核函数形状",
    "fig.u": "u = (x − xᵢ) / h（以带宽为单位）",
    "fig.loo_title": "留一交叉验证",
    "fig.loo_x": "带宽 h（x 的单位，对数刻度）",
    "fig.loo_y": "留一 MSE（y 单位²，对数）",
    "fig.current_h": "当前 h",
    "fig.loo_optimum": "留一交叉验证最优值",
    "fig.silverman": "Silverman 法则",
    "fig.weight": "权重",
    "fig.weights_of_query": "查询 x = {x} 的权重",
    "fig.undefined": "（h 范围内没有训练点：无定义）",
    "fig.points_by_weight": "训练点（大小、颜色 = 权重）",
    "fig.estimate": "估计值 = {value}",
    "fig.masked": "被屏蔽（不可关注）",
    "fig.mask_pair_title": "注意力权重（行：查询位置，列：键位置）",
    "fig.key_pos": "键位置 j",
    "fig.query_pos": "查询位置 i",
    "fig.gradient": "梯度",
    "fig.leak_title": "把最后一个位置的键或值加 5：不该看到它的输出会变化多少？",
    "fig.leak_x": "掩码方式",
    "fig.leak_y": "输出的最大 |变化|（值的单位）",
    "fig.hist_title": "d = {d} 时的 logits（{n} 个样本）",
    "fig.logit_value": "logit 值",
    "fig.density": "概率密度",
    "fig.unscaled": "未缩放 q·k",
    "fig.scaled": "缩放后 q·k/√d",
    "fig.loss_ce": "训练损失（交叉熵）与准确率",
    "fig.loss_mse": "训练损失（均方误差）",
    "fig.loss_ce_y": "损失（奈特）、准确率（比例）",
    "fig.loss_mse_y": "均方误差（y 单位²）",
    "fig.loss": "损失",
    "fig.accuracy": "准确率",
    "fig.step": "步数",
    "fig.entropy_title": "各注意力头的熵（对查询取平均）",
    "fig.entropy_nats": "熵（奈特）",
    "fig.layer_head": "层 {layer}，头 {head}",
    "fig.collapse_line": "0.1 奈特：坍缩阈值",
    "fig.maps_title": "固定的留出样例上的注意力图",
    "fig.key_position": "键位置",
    "fig.query_position": "查询位置",
    "fig.icl_title": "留出样例上的上下文回归",
    "fig.context": "上下文 (xᵢ, yᵢ)",
    "fig.prediction": "模型预测",
    "fig.kv_title": "每生成一个词元的耗时",
    "fig.kv_x": "序列长度（词元）",
    "fig.kv_y": "每个词元的毫秒数",
    "fig.with_cache": "使用 KV 缓存",
    "fig.no_cache": "每步全部重算",
    # --- 核回归页
    "kr.question": "**问题。** 注意力可以理解为一种核平滑器（这是一种解读，而不是它的来历：注意力最初是为机器翻译提出的，并非从平滑方法推导而来）。要在查询点 x 处预测 "
                   "y，就对训练目标取加权平均，输入离查询越近，权重越大。结果在多大程度上取决于核函数，尤其是它的宽度 h？",
    "kr.compare": "与其他核函数比较",
    "kr.overlay": "叠加多个带宽",
    "kr.overlay_h": "要叠加的带宽",
    "kr.fit_title": "{dataset} 上的 NW 拟合",
    "kr.readout": "**{label}**：相对真实函数的均方误差 = {mse}（y 单位²）",
    "kr.readout_upload": "**{label}**：上传的数据没有已知的真实函数；请看下面的留一误差",
    "kr.undefined": "；在 {m} 个查询点中有 {n} 个无定义：h 范围内没有训练点，{kernel}给每个点的权重都是 0，"
                    "平均值是 0/0",
    "kr.kernels": "核函数",
    "kr.loo_header": "用留一交叉验证选择 h",
    "kr.loo_text": "用其余所有点预测每个训练点，再对平方误差取平均。h 太小会追着噪声走；h 太大会把曲线压平。对紧支撑核，h 很小时有的点在 h 范围内一个邻居也没有：这些带宽没有得分。",
    "kr.optimum": "留一交叉验证最优值",
    "kr.use_optimum": "使用最优值（h ≈ {h}）",
    "kr.silverman": "Silverman 法则",
    "kr.use_silverman": "使用 Silverman 的 h ≈ {h}",
    "kr.snap": "按钮会对齐到滑块的刻度（每十倍 40 档，与精确值相差不超过 {pct}）。",
    "kr.notice_first": "- 在这份数据上，使用{kernel}时，相对真实函数的误差为 {errors}；留一法选出 h ≈ {h}。\n",
    "kr.notice_error": "h = {h} 时为 **{mse}**",
    "kr.notice_first_upload": "- 在你的数据上，留一法选出 h ≈ {h}。\n",
    "kr.notice": "- h 小时拟合会追着噪声走（偏差低、方差高）；h 大时几乎对所有点取平均，估计趋向 y 的均值（偏差高）。\n- 估计值是 y 的加权**平均**，所以永远不会超出 [min y, "
                 "max y]。\n- 紧支撑核（矩形核、Epanechnikov 核、三角核）在查询点的 h 范围内没有训练点时没有估计值；高斯核和拉普拉斯核总能给出估计。\n- Silverman "
                 "法则是为密度估计设计的，不是为回归：这里它给出 h ≈ {silverman}，而留一交叉验证给出 {h}。",
    "kr.formula_text": "使用高斯核时，权重就是对训练点做 softmax：查询 x，键 xᵢ，值 yᵢ。这就是注意力。",
    # --- 注意力热力图页
    "ah.question": "**问题。** 核回归就是注意力：查询 = 要预测的 x，键 = 训练输入，值 = 训练目标。"
                   "整个注意力矩阵是什么样子？带宽如何塑造它？",
    "ah.n_queries": "查询点数 M",
    "ah.n_queries_help": "在数据范围内均匀分布的查询点（10 到 1000）。",
    "ah.heat_title": "NW 权重 α(x, xᵢ)：{kernel}，h = {h}",
    "ah.key_axis": "键：训练输入 xᵢ（已排序）",
    "ah.query_axis": "查询 x（已排序）",
    "ah.size": "{m} 个查询 × {n} 个键 = {cells} 个权重。",
    "ah.downsampled": " 为了不超过 {limit} 个格子，图像在每个方向上按 {factor} 倍做了块平均；本页的所有数字都用完整矩阵计算。",
    "ah.one_query": "单个查询",
    "ah.query_pos": "查询位置（x 范围的比例，0 = 左端，1 = 右端）",
    "ah.entropy_title": "每个查询权重的熵",
    "ah.entropy_series": "行熵 H(x)",
    "ah.query_x": "查询 x（输入单位）",
    "ah.log_n": "log N = {value}（均匀）",
    "ah.one_hot": "0（独热）",
    "ah.picked": "所选查询",
    "ah.row_text": "查询 x = {x}：最大权重为 **{wmax}**，{n} 个训练点中有 {n_big} 个的权重超过 1%，"
                   "熵为 **{h}** 奈特（均匀分布时为 {log_n}）。",
    "ah.sweep": "带宽对比",
    "ah.sweep_pick": "要比较的带宽",
    "ah.sweep_title": "{kernel}：所有子图共用一个色标",
    "ah.key_short": "键 xᵢ",
    "ah.query_short": "查询 x",
    "ah.notice": "- 每一行是一个查询的注意力：非负且和为 1（若紧支撑核在 h 范围内找不到训练点，则整行为 0：该查询没有估计值，也没有熵）。\n- "
                 "键和查询都已排序，所以局部核会画出一条**对角带**：每个查询关注它附近的训练输入。带的宽度就是带宽。\n- h 小时（{kernel}，h = "
                 "{small}）：一条细带，每行接近独热，平均熵 {ent_small} 奈特；拟合追着噪声走。h 大时（h = {large}）：完全没有对角带：每行的每个权重都在 1/N = "
                 "{inv_n} 的 {ratio} 倍以内，平均熵 {ent_large} 奈特，而 log N = "
                 "{log_n}；拟合变平，趋向均值。大热力图的色标上限是图中最大的权重，所以平坦的矩阵在那里看起来同样亮：请看色标的上限，或者在下面共用同一色标的带宽扫描中比较。\n- "
                 "熵随查询附近训练点的多少而变：点密集处熵高，稀疏处熵低；在 x 范围的最两端熵会下降，因为那里的查询只有一侧有邻居。",
    # --- softmax 就是核
    "sk.question": "**问题。** 点积注意力真的是换了个样子的高斯核回归吗？把平方展开，看看到底在什么条件下成立：",
    "sk.explain": "**q 因子**对每个键都一样，所以在对键做 softmax 时被约去；**k 因子**则不会。因此温度为 τ 的点积注意力等于**σ² = τ**（即 **σ = √τ**；在常用的 "
                  "τ = √d 下 σ = d^¼）的高斯核注意力，**当且仅当所有键的范数相同**；否则两者相差一个逐键的 logit 偏置 "
                  "−‖kⱼ‖²/(2τ)。常被引用的两个取值都是错的，错法各不相同：这里 τ = {tau}，正确的宽度是 σ = {sigma}；σ = √(τ/2) = {half_tau} "
                  "太窄（σ² 小一半，核锐利一倍），而 σ = √(d/2) = {half_d} {half_d_effect}（在 τ = √d 时，只要 d > 4，它就大于 d^¼）。",
    "sk.d": "头维度 d",
    "sk.d_help": "1 到 256。",
    "sk.n_keys": "键的个数 N",
    "sk.n_keys_help": "2 到 128（16 个查询）。",
    "sk.spread": "键范数的离散程度",
    "sk.spread_help": "0 让所有键都落在半径为 √d 的球面上；数值越大，范数按对数正态分布越分散"
                      "（范数 = √d·exp(离散程度·z)）。",
    "sk.tau_sqrt_d": "使用常用的 τ = √d",
    "sk.tau": "温度 τ（对数刻度）",
    "sk.side": "并排比较",
    "sk.side_title": "16 个随机查询（行）对各个键（列）的注意力权重",
    "sk.dot_title": "点积，τ = {tau}",
    "sk.gauss_title": "高斯核，σ = √τ = {sigma}",
    "sk.key_j": "键序号 j",
    "sk.query_i": "查询序号 i",
    "sk.max_diff": "max |点积 − 高斯|",
    "sk.max_diff_corrected": "max |点积 + 偏置 − 高斯|",
    "sk.bias_help": "在点积 logits 上加 −‖kⱼ‖²/(2τ)。",
    "sk.norms": "键范数（最小 – 最大）",
    "sk.equal": "所有键的范数都是 √d = {r}：两个权重矩阵相差 {diff}，只是舍入误差。",
    "sk.unequal": "键的范数不同，所以权重最多相差 {diff}；在 logits 上加上逐键偏置 −‖kⱼ‖²/(2τ) 后，两者的差别又降到 {fixed}。",
    "sk.gap_title": "只要键的范数不同，差距就出现",
    "sk.gap_x": "键范数的离散程度（0 = 所有键在球面上）",
    "sk.gap_y": "权重的最大绝对差（对数）",
    "sk.current": "当前",
    "sk.temperature": "温度就是带宽",
    "sk.entropy_frac": "平均熵 ÷ log N",
    "sk.max_weight": "平均最大权重",
    "sk.tau_title": "τ 变化时的点积注意力",
    "sk.tau_x": "温度 τ（对数刻度）",
    "sk.fraction": "比例（0 到 1）",
    "sk.h_title": "h 变化时数据上的 NW 权重",
    "sk.temp_text": "τ 小（h 小）时：各行变得尖锐，趋向只关注一个键：在两条扫描曲线的左端，平均最大权重分别为 {mw_tau}（τ = {tau_lo}）和 {mw_h}（h = "
                    "{h_lo}）。τ 大（h 大）时：权重趋于均匀，熵 → log N。对高斯核而言，温度扮演 h² 的角色：σ = √τ。",
    "sk.topk": "Top-k 稀疏注意力",
    "sk.k_top": "每个查询保留的键数 k_top",
    "sk.k_top_help": "1 到 N = {n}。k_top = N 就是稠密注意力。",
    "sk.topk_out": "max |输出 − 稠密输出|（值的单位）",
    "sk.topk_w": "权重的平均 L1 误差（无单位）",
    "sk.topk_title": "Top-k 相对稠密注意力的误差",
    "sk.topk_x": "每个查询保留的键数 k_top",
    "sk.topk_y": "误差（对数刻度）",
    "sk.topk_heat": "Top-{k} 权重（未保留的键为 0）",
    "sk.topk_text": "每个查询在 {n} 个键中保留 {k} 个，重新归一化之前保留了稠密注意力 **{kept}** 的权重。"
                    "Top-k 取每个查询最大的几个 logits，对它们做 softmax，再对**在这些键处取出的值**加权求和；"
                    "k_top = N 时与稠密注意力完全相同。",
    "sk.learned": "学习带宽",
    "sk.loo": "留一",
    "sk.sees_itself": "每个点能看到自己",
    "sk.h_gd_title": "对 log h 做梯度下降时的带宽",
    "sk.adam_step": "Adam 步数",
    "sk.h_axis": "带宽 h（x 的单位，对数刻度）",
    "sk.grid_optimum": "留一网格最优值 {h}",
    "sk.train_loss": "训练损失",
    "sk.mse_axis": "均方误差（y 单位²，对数刻度）",
    "sk.learned_text": "使用留一时，学到的 h 停在 **{h_loo}**，紧挨留一交叉验证最优值 {h_opt}。不使用留一时，h 降到 "
                       "**{h_self}** 并且还在下降：训练损失会奖励一个点预测它自己，h → 0 时它自己的权重 → 1，"
                       "误差 → 0。（在 {n} 个点上拟合。）",
    "sk.param": "参数化注意力层",
    "sk.hidden": "隐藏单元数",
    "sk.hidden_help": "2 到 16。高斯核的 q·k 形式秩为 2，所以 2 个单元就能精确表示它。",
    "sk.learned_layer": "学到的注意力层",
    "sk.gauss_h": "高斯核，h = {h}",
    "sk.rows_title": "三个查询的权重行",
    "sk.query": "查询",
    "sk.nw_gauss": "NW，高斯核，h = {h}",
    "sk.fits": "拟合结果",
    "sk.notice": "- 离散程度为 0 时两张热力图只差约 1e-16（舍入误差）；增大离散程度后两者不同，但加上偏置 −‖kⱼ‖²/(2τ) 就恢复相等。\n"
                 "- σ = √τ：温度加倍，等价高斯核变宽 √2 倍。\n"
                 "- 点积注意力偏爱长的键（k 因子）：高斯核去掉的正是这个偏置。\n"
                 "- 小的 h 和小的 τ 对权重的作用相同：尖锐、低熵的行。",
    # --- 掩码页
    "mk.question": "**问题。** 因果模型不能让位置 i 看到 i 之后的位置；带填充的批次不能关注填充。掩码究竟该放在哪里？"
                   "**放在 softmax 之前**：把被屏蔽的 logits 设为 −∞，它们的权重恰好为 0，也不参与归一化。"
                   "下面把这种正确做法（\"pre\"）和常见错误放在一起比较。",
    "mk.length": "序列长度 L",
    "mk.length_help": "2 到 32 个位置。",
    "mk.d": "头维度 d",
    "mk.d_help": "1 到 256。",
    "mk.mask": "掩码",
    "mk.valid": "有效长度（填充：从这里开始的键都是填充）",
    "mk.valid_help": "0 到 L = {n}。",
    "mk.wrong": "用来比较的错误方式",
    "mk.pre_correct": "pre（正确）",
    "mk.verdicts": "结论",
    "mk.v_sdpa": "与 SDPA 一致",
    "mk.v_sdpa_diff": "与 SDPA 最多相差 {diff}",
    "mk.v_rows": "各行之和平均为 {mean}（最低 {low}），而正确的行和平均应为 {correct}",
    "mk.v_mass": "在被屏蔽的格子上放了 {mass} 的权重（各行相加）",
    "mk.v_leak": "**经由被屏蔽的{channel}泄漏**：扰动它会让不该看到它的输出变化 {leak}",
    "mk.v_no_leak": "没有泄漏",
    "mk.v_grad": "梯度会流到被屏蔽的 logits（最多 {g}）",
    "mk.rows_header": "行和与输出大小",
    "mk.rows_title": "每个查询的权重之和",
    "mk.rows_y": "行和（1 = 真正的平均）",
    "mk.norm_title": "每个查询输出的大小",
    "mk.norm_y": "‖输出‖（值的单位）",
    "mk.rows_text": "“post”在归一化之后才把被屏蔽的权重置零，所以凡是含有被屏蔽键的行，其和都小于 1，输出也向 0 "
                    "收缩；在因果掩码中，越靠前的位置收缩越多（它们失去的键最多）。被屏蔽的键仍留在归一化分母里：改变一个未来的键，过去位置的权重也会跟着变。",
    "mk.leak_header": "泄漏探测",
    "mk.leak_caption": "每根柱子表示：扰动最后一个位置的键（红）或值（紫）时，不该看到该位置的输出会变化多少；没有柱子就是没有泄漏（除舍入误差外为零）。“post”经由键泄漏（它仍在归一化分母中）；“multiply_logits”经由值泄漏（它相对其余位置的权重是 "
                       "e⁰）。",
    "mk.grad_header": "梯度",
    "mk.grad_text": "把固定的损失 Σ 输出·G（G 为随机矩阵）通过每种方式反向传播。热力图显示所选错误方式的 "
                    "∂损失/∂logits；红色 × 标出被屏蔽的格子。",
    "mk.grad_title": "∂损失/∂logits，{mode}",
    "mk.grad_masked": "被屏蔽 logits 上的最大 |梯度|",
    "mk.grad_diff": "max |梯度 − pre 的梯度|",
    "mk.grad_notes": "- **pre**：被屏蔽的 logits 是 −∞ 常数，没有梯度流到它们。\n"
                     "- **post**：梯度经由归一化分母流入被屏蔽的 logits：训练会去调整未来。\n"
                     "- **post_renorm**：被屏蔽的项在 softmax 与重新归一化之间相互抵消，所以前向结果和梯度都与 \"pre\" "
                     "相同（至舍入误差）。但它仍要计算被屏蔽位置的指数，当被屏蔽的 logits 占主导时会在数值上失败："
                     "在 float32 下，若被屏蔽的 logits 比允许的大 120，\"pre\" 的行和为 {pre}，而 \"post_renorm\" "
                     "的行和为 {renorm}（所有允许的权重在重新归一化之前就下溢了）。\n"
                     "- **multiply_logits**：被屏蔽的 logits 变成 0 而不是 −∞：被屏蔽的键相对其他键仍有 e⁰ 的权重，"
                     "它们的值直接流进输出。它在被屏蔽 logits 上的梯度为 0（它们乘了 0），这恰好掩盖了这个错误。",
    "mk.notice": "- “pre”和“post_renorm”在前向计算中都与 torch 的 `scaled_dot_product_attention`（SDPA，PyTorch "
                 "内置的注意力）在相同掩码下的结果一致，梯度也一致；“post_renorm”只在数值上不同：它仍要计算被屏蔽位置的指数，当被屏蔽的 logits 占主导时就会失效（见梯度一节）。\n- "
                 "完全被屏蔽的行（有效长度为 0）在“pre”中得到全零的权重和全零的输出，绝不会是 NaN。\n- 因果掩码的上三角在“pre”中严格为 "
                 "0；“multiply_logits”会把它填满。\n- 掩码的错误是无声的：每种方式都返回形状正确的数。",
    "masktype.causal": "因果",
    "masktype.padding": "填充",
    "masktype.causal + padding": "因果 + 填充",
    "mode.pre": "在 softmax 之前掩码（被屏蔽的 logits 设为 −∞）：正确",
    "mode.post": "先 softmax，再把被屏蔽的权重置零：行和 < 1，未来的键会泄漏",
    "mode.post_renorm": "softmax 后置零再重新归一化：前向结果等于 'pre'",
    "mode.multiply_logits": "把 logits 乘以 0/1 掩码：被屏蔽的 logits 变成 0 而不是 −∞",
    # --- 缩放页
    "sc.question": "**问题。** 注意力为什么计算 softmax(q·k / √d)，而不是 softmax(q·k)？当 q 和 k 的各分量独立服从 N(0, 1) 时，q·k 是 d 个方差为 "
                   "1 的乘积之和，所以 **Var(q·k) = d**：未缩放的 logits 随 √d 增长，头越宽，softmax 越接近独热。",
    "sc.d": "直方图使用的头维度 d",
    "sc.n": "每个 d 的查询数 = 键数（n）",
    "sc.n_help": "每个 d 有 n × n 个 logits；越大越平滑也越慢（32 到 512）。",
    "sc.metric": "d = {d} 时未缩放 logit 的标准差",
    "sc.metric_help": "理论值：√d = {value}。",
    "sc.std_title": "logit 的标准差",
    "sc.d_axis": "头维度 d（对数刻度）",
    "sc.std_axis": "logit 标准差（对数刻度）",
    "sc.theory_sqrt": "理论值 √d",
    "sc.theory_one": "理论值 1",
    "sc.unscaled": "未缩放",
    "sc.scaled": "缩放后",
    "sc.maxw_title": "softmax 饱和：最大权重",
    "sc.maxw_axis": "平均最大权重（1 = 独热）",
    "sc.entropy_title": "权重的熵",
    "sc.entropy_axis": "平均行熵（奈特）",
    "sc.log_n": "log n = {value}（均匀）",
    "sc.grad_title": "有多少梯度能穿过 softmax",
    "sc.grad_axis": "各行 ‖diag(p) − ppᵀ‖_F 的平均",
    "sc.grad_text": "**度量。** 对每一行权重 p，‖diag(p) − ppᵀ‖_F 是 softmax 雅可比矩阵的大小：logits "
                    "每变化一个单位，权重变化多少；图中画的是它在各行上的平均。对接近均匀的行（这里约为 1/√n = "
                    "{inv_sqrt_n}）和接近独热的行，它都很小。未缩放时，它先随着各行离开均匀而**上升**（在 d = {d_peak} 处达到峰值 {peak}），直到 d = "
                    "{d_cross} 才低于缩放后的值：在常用的头维度（64、128）下，初始化时未缩放的 softmax 传递的梯度反而*更多*。除以 √d 换来的是一个与 d 无关的状态：缩放后 "
                    "logit 的标准差在每个 d 下都是 1，熵保持在 {ent_lo} 到 {ent_hi} 奈特之间，最大权重在 {mw_lo} 到 {mw_hi} 之间；而未缩放的行从 d = "
                    "1 时的熵 {ent_1} 变尖锐到 d = {d_max} 时的 {ent_big}，落入右图曲线中饱和的一端，在那里雅可比矩阵趋于零。",
    "sc.notice": "- 未缩放时，标准差随 √d 增长：d = 128 时为 {std128}（√128 ≈ 11.3）。缩放后它保持为 1（在所有 d 上介于 {lo} 与 {hi} 之间）。\n- "
                 "未缩放时，d 越大各行越尖锐：从 d = {d_half} 起，典型的一行把一半以上的权重放在一个键上（那里平均最大权重为 {mw}）。缩放后，平均最大权重在每个 d 下都保持在 "
                 "{mw_lo} 与 {mw_hi} 之间。\n- 除以 √d 就是 softmax 温度 τ = √d。由“softmax 就是核”一页，它等于 q–k 空间中宽度为 σ = d^¼ "
                 "的高斯核，**仅当所有键的范数相同**。这里的键各分量服从 N(0, I)，范数各不相同（d = {d} 时从 {kmin} 到 {kmax}，在 √d ≈ {sqrt_d} "
                 "附近），所以两者相差逐键的偏置 −‖kⱼ‖²/(2τ)。",
    # --- 实时训练页
    "lt.question": "**问题。** Transformer 学习时，注意力头在做什么？在一个玩具任务上训练一个小模型，观察每个头的熵："
                   "高 = 分散在许多位置上，接近 0 = 锁定在一个位置上。",
    "lt.task": "任务",
    "lt.layers": "层数",
    "lt.heads": "头数",
    "lt.seq_len": "序列长度 T",
    "lt.mlp": "注意力之后加 MLP",
    "lt.lr": "学习率",
    "lt.lr_help": "1e-4 到 1e3；每个任务会载入自己的默认值。在“反转”任务上，约 0.03 以内训练良好；0.1 到 0.3 时损失停在或退回到随机水平附近；从 1 "
                  "开始损失升到起始值的两倍以上，训练会停下并给出提示。",
    "lt.warmup": "预热步数",
    "lt.temp": "温度调度",
    "lt.temp_help": "注意力 logits 除以 √D × 温度，其中 D = d_model / 头数，是一个头的维度。调度在前 1,000 步内进行，之后保持结束值。",
    "lt.start_temp": "起始",
    "lt.end_temp": "结束",
    "lt.rebuilt": "任务或结构已改变，因此重新初始化了一个模型（种子 {seed}）。",
    "lt.kept": "{error} 保留之前的模型。",
    "lt.start": "开始",
    "lt.pause": "暂停",
    "lt.step": "前进 10 步",
    "lt.step_help": "训练十步，然后暂停。",
    "lt.reset": "重置",
    "lt.reset_help": "用相同的种子重新初始化模型。",
    "lt.collapsed": "层 {layer}、头 {head} 只关注一个位置（熵连续 {steps} 步低于 {nats} 奈特）。在这个任务上这正是正确答案：它复制一个位置（反转、排序、前一词元头或归纳头）。",
    "lt.duplicate": "层 {layer}：两个头的注意力图几乎相同（余弦相似度 {sim}），而且都已偏离均匀分布。仅凭注意力图相同并不能证明其中一个是多余的：它们的值映射和输出映射可能不同。",
    "lt.m_step": "步数",
    "lt.m_loss": "损失",
    "lt.m_acc": "准确率",
    "lt.m_lr": "学习率",
    "lt.press_start": "按 **开始** 进行训练，或按 **前进 10 步** 训练十步。",
    "lt.watch": "**要观察什么（{task}）。** {text}",
    "lt.kv": "使用 KV 缓存生成",
    "lt.kv_text": "因果模型一次生成一个词元。没有缓存时，生成第 S 个词元的那一步要为全部 S 个位置重新计算键、值和注意力：每个词元 O(S²·d) "
                  "的注意力计算量。有缓存时，只计算最新词元的键和值，并在 S 个缓存的键上做注意力：O(S·d)，仍随 S 线性增长，但不再是二次的。两种方式的 logits 相同。",
    "lt.kv_metric": "生成 {n} 个词元的最大 |logit 差|（当前模型）",
    "lt.kv_bidirectional": "当前任务是双向的；下面的计时使用一个随机初始化的因果模型。",
    "lt.kv_caption": "两层、四个头、d_model = 64、批大小 1，取 3 次中最快的一次，在本服务器的 CPU 上。从 S = {s0} 到 {s1}（长 {growth} "
                     "倍），有缓存时每个词元的耗时变为 {cache_ratio} 倍，无缓存时为 {no_cache_ratio} 倍。虚线：拟合 a + b·S 与 a + c·S²。",
    "task.reverse": "把输入序列倒过来输出（双向注意力）。",
    "task.induction": "每个序列先是 6 到 T/2 个互不相同的随机词元，然后把它们重复一次，之后是随机填充；预测下一个词元（因果）。只有重复的部分可以预测：回想当前词元第一次出现时后面跟着什么。",
    "task.sort": "把输入词元按升序输出（双向注意力）。",
    "task.sine_icl": "上下文中的核回归：序列先给出来自核回归页含噪正弦的 (xᵢ, yᵢ) 对，再给出隐藏了 y 的查询 x；"
                     "预测查询处的 y。",
    "watch.reverse": "位置 t 必须复制词元 T−1−t：几百步之内注意力图变成反对角线，每个头都学到同一个，于是出现“近似重复”的提示。",
    "watch.induction": "几百步之内（在笔记本 CPU 上只需几秒），随着两个头一起形成，损失骤降：层 0 中出现一个前一词元头（prevtok 超过 0.5：在第一份中是一条紧贴对角线下方的线），层 "
                       "1 中出现一个归纳头（induction 超过 0.5：在重复部分里，每个位置关注它早先那份之后的词元）。",
    "watch.sort": "每个输出位置要找到对应名次的词元：注意力图取决于内容。",
    "watch.sine_icl": "注意力图以查询（行）对上下文点（列）展示，两者都按 x 排序：随着模型学习，权重集中到对角线附近，也就是 x 与查询相近的上下文点上，和 Nadaraya-Watson "
                      "热力图一样，只不过是学出来的，而不是选定的。把它的预测与同一上下文上的 NW 比较。",
    # --- sentences from the explorer package that a user reads (errors and notes)
    "err.csv_not_utf8": "文件不是 UTF-8 文本：请将其另存为 UTF-8 编码的 CSV 后重新上传。",
    "err.csv_empty": "文件是空的：请上传带表头、且至少有 2 行数字的 CSV。",
    "err.csv_unreadable": "无法按 CSV 读取该文件（{detail}）：请上传以逗号分隔、带表头的各列。",
    "err.csv_two_numeric": "文件需要两列数值（x 和 y）；它的 {total} 列中只有 {n} 列是数值：{columns}。",
    "err.csv_not_numeric": "列 {column} 不是数值列；可选的数值列：{numeric}。",
    "err.csv_same_columns": "请为 x 和 y 选择两个不同的列。",
    "err.csv_bad_rows": "{n} 行中有 {bad} 行的 x 或 y 缺失或不是有限值：勾选“删除含缺失值或非有限值的行”即可使用其余各行。",
    "err.csv_too_few": "只有 {n} 行可用：核回归至少需要 2 行。",
    "err.csv_too_many": "文件有 {n} 行，上限是 {limit} 行（留一交叉验证的开销随数据量的平方增长）。请上传其中一部分行。",
    "err.csv_no_spread": "所有 x 都等于 {x}：x 没有变化，就没有什么可平滑的。请换一个 x 列。",
    "err.csv_huge": "数值大到 {size}；勾选“标准化过大的数值（超过 1e6）”，把 x 和 y 缩放为均值 0、标准差 1。",
    "note.csv_dropped": "已删除 {n} 行含缺失值或非有限值的数据。",
    "note.csv_standardised": "绝对值超过 1e6 的数据已标准化：x 和 y 现在均值为 0、标准差为 1，带宽也以此为单位。",
    "data.upload_description": "已上传：{n} 行，x = {x}，y = {y}",
    "train.stopped_loss": "训练在第 {step} 步停止：损失变成了 {value}。请降低学习率（当前为 {lr}），从最后一个正常的步骤继续，"
                          "或按“重置”。",
    "train.stopped_grad": "训练在第 {step} 步停止：梯度变成了非有限值。请降低学习率（当前为 {lr}），从最后一个正常的步骤继续，"
                          "或按“重置”。",
    "nw.presets_fail": "预设：{presets}，这些标签针对{dataset}的默认设置（n = {n}，噪声 {noise}）。在当前数据上，{kernel}拟合的误差并不支持这些标签：请看图下方的误差。",
    "nw.presets_upload": "预设：0.05 · 0.5 · 10。你的数据没有已知的真实函数，因此预设不加标签：由下面的留一误差曲线来评判。",
    "kr.same_width": "相同的有效宽度",
    "kr.same_width_help": "让每个对比的核使用与所选核有效宽度相同的带宽（h × δ_K / 所选核的 δ；见下方“核的宽度”），这样比较的是形状，而不是宽度。",
    "fig.loo_x_same": "所选核的带宽 h（其他核取相同有效宽度；对数刻度）",
    "kr.width_rule": "核的宽度：同一个 h 并不是同一个宽度",
    "kr.width_text": "同一个 h 对每个核意味着不同的宽度。用归一化核的标准差表示：高斯核 h，矩形核 h/√3，Epanechnikov 核 h/√5，三角核 h/√6，拉普拉斯核 "
                     "√2·h。公平的比较应在相同的典型带宽 δ_K 下进行（Marron 与 Nolan，1988）：适合高斯核的带宽换到核 K 时为 h·δ_K/δ_Gauss，Silverman "
                     "法则也照此换算。打开“相同的有效宽度”后，在当前数据上五个核的留一最优带宽彼此相差不超过 {spread}；若用同一个原始 h，最多相差 {raw} 倍。",
    "ah.no_support_caption": "{m} 个查询中有 {n} 个在 h 范围内没有训练点：{kernel}对它们没有估计值，也没有熵（熵曲线上的空缺，而不是独热行）。",
    "ah.row_none_text": "查询 x = {x} 在 h 范围内没有训练点：{kernel}给每个点的权重都是 0，因此该查询没有估计值，也没有熵。",
    "sk.too_wide": "太宽",
    "sk.too_narrow": "太窄",
    "sk.same_width": "只在这里恰好相等",
    "sk.nw_form": "NW 形式（值 = y，无输出映射）",
    "sk.nw_form_help": "打开：该头用它的权重对目标取平均，与 Nadaraya-Watson 相同。关闭：值和输出映射都是学出来的，与 Transformer 中一样。",
    "sk.param_text_nw": "**NW 形式。** 值就是目标 yᵢ，且没有输出映射，所以输出是 y 的加权平均，与 NW 完全相同。该层把 x 嵌入为 [x, x², 1]（已标准化）；由于 −(x "
                        "− xᵢ)²/(2h²) = x·xᵢ/h² − xᵢ²/(2h²) + （只含 x 的项，softmax 会把它约去），在这些特征上秩为 2 的 q·k 就是高斯核，所以 "
                        "2 个隐藏单元就够了（多出的单元从 0 开始，也一直保持为 0）。从一个较宽的高斯核出发、用留一方式训练后，学到的权重行仍是局部的：图中每个查询的最大权重离它不超过 "
                        "{dist}，拟合与真实函数的误差为 {mse}（留一最优带宽下的 NW：{nw_mse}）。",
    "sk.param_text_free": "**自由形式。** 值是 yᵢ 的一个学出来的仿射映射，之后还有输出映射，与 Transformer "
                          "中一样：输出是加权和的仿射函数，没有任何东西让权重保持局部。这里查询 x = {x} 的最大权重落在 x = {x_top} 处的点上，而拟合与真实函数的误差为 "
                          "{mse}（NW：{nw_mse}）。只有当值 = y、没有输出映射、且 q·k 在 [x, x², 1] 上的秩 ≥ 2 时，学到的头才退化为 NW：打开 NW "
                          "形式即可看到。",
    "fig.leak_key": "经由被屏蔽的键",
    "fig.leak_value": "经由被屏蔽的值",
    "mk.channel_key": "键",
    "mk.channel_value": "值",
    "sc.regime_title": "softmax 的状态只取决于 logit 的尺度",
    "sc.regime_x": "logit 的标准差 s（对数刻度）",
    "sc.regime_curve": "s·z 的 softmax，z ~ N(0, 1)",
    "train.stopped_diverged": "训练在第 {step} 步停止：损失（{value}）已连续 20 步高于起始水平（{start}）的两倍，训练正在发散。请降低学习率（当前为 {lr}），然后按“重置”。",
    "fig.ceiling": "{value} 奈特：在每行可见的键上均匀分布",
    "fig.noise_floor": "噪声下限 σ² = {value}",
    "fig.context_by_x": "上下文点（按 x 排序）",
    "fig.nw_same_context": "同一上下文上的 NW（h = {h}，留一）",
    "fig.lr": "学习率",
    "fig.temperature": "温度系数",
    "fig.now": "当前",
    "fig.schedule_title": "学习率与温度的调度",
    "fig.theory_linear": "有缓存的理论：a + b·S",
    "fig.theory_quadratic": "无缓存的理论：a + c·S²",
    "taskname.reverse": "反转",
    "taskname.induction": "归纳",
    "taskname.sort": "排序",
    "taskname.sine_icl": "sine_icl（上下文内回归）",
    "lt.d_model": "模型宽度 d_model",
    "lt.m_none": "—",
    "lt.m_temp": "温度",
    "lt.collapsed_problem": "层 {layer}、头 {head} 只关注一个位置（熵连续 {steps} 步低于 {nats} "
                            "奈特）。这个任务需要对多个上下文点取平均，所以只看一个位置的头在这里是个问题，常见原因是温度太低。",
    "lt.scores_caption": "取最近 10 "
                         "步的平均。prevtok：查询放在它前一个位置上的平均权重（在“归纳”任务中，只计重复前缀的第一份，也就是归纳头读取它的地方）。induction：查询放在“自身词元早先出现处的下一个位置”上的平均权重（只计重复部分）。",
    "lt.col_head": "头",
    "lt.col_entropy": "熵（奈特）",
    "lt.col_prevtok": "prevtok（前一词元）",
    "lt.col_induction": "induction（归纳）",
    "lt.icl_text": "在这个留出样例上，模型在查询点的 MSE 为 {mse}；在同样的上下文点上用 Nadaraya-Watson（h = {h}，由这些点上的留一交叉验证选出）得到 "
                   "{nw_mse}。面对带噪声的目标，平均而言任何预测都无法低于噪声下限 σ² = {floor}（只有几个查询的单个样例会在它上下波动）。",
    "lt.schedules": "调度",
    "lt.schedule_text": "学习率在 {warmup} 步预热中线性上升，然后按余弦曲线衰减，到第 {total} 步降到原值的 {floor} 并保持；温度调度也在同样的 {total} 步内进行。",
    "lt.kv_run": "测量生成耗时（需要几秒）",
    "lt.kv_run_help": "在几个长度上为一个随机初始化的因果模型计时；结果在本次会话中保留。",
    "spin.learn": "正在用梯度下降拟合带宽……",
    "spin.param": "正在训练注意力层……",
    "spin.kv": "正在测量有缓存与无缓存时的生成耗时……",
    "tempkind.constant": "恒定",
    "tempkind.linear": "线性",
    "tempkind.cosine": "余弦",
}

STRINGS = {"en": EN, "zh": ZH}


def t(key: str, lang: str = "en", **values) -> str:
    """The text for ``key`` in ``lang`` with ``{placeholders}`` filled; English when a language lacks it."""
    table = STRINGS.get(lang, EN)
    text = table.get(key, EN.get(key))
    if text is None:
        raise KeyError(f"no UI text with key {key!r}")
    return text.format(**values) if values else text


class Message(str):
    """A sentence for the user that remembers its key: it reads as the English text wherever a string is
    expected (logs, exceptions, tests), and ``in_lang`` gives it in another UI language."""

    def __new__(cls, key: str, **values):
        obj = super().__new__(cls, t(key, "en", **values))
        obj.key, obj.values = key, values
        return obj

    def in_lang(self, lang: str) -> str:
        return t(self.key, lang, **self.values)

    def __reduce__(self):
        return _message, (self.key, self.values)


def _message(key: str, values: dict) -> Message:
    return Message(key, **values)


# Sentences that assert something about a figure or a number the page computes. Each is a claim, and a
# test in tests/lessons/ checks it on the data the figure draws (tests/lessons/test_coverage.py fails when
# no lesson test names a claim key). A key is a claim by its name: the patterns below, or listed in EXTRA.
CLAIM_PATTERNS = ("notice", "_text", "caption", "explain", "presets", "watch.", "mk.v_", "lt.collapsed",
                  "lt.duplicate", "lt.diverged", "sk.equal", "sk.unequal", "kr.undefined", "kr.snap",
                  "mk.grad_notes", "_help", "fig.log_t", "fig.ceiling", "fig.noise_floor")
NOT_CLAIMS = frozenset({            # help texts that only state a control's range or meaning
    "ui.lecture_help", "ui.seed_help", "data.dataset_help", "data.n_help", "data.noise_help", "data.file_help",
    "nw.bandwidth_help", "nw.typed_help", "ah.n_queries_help", "sk.d_help", "sk.n_keys_help", "sk.spread_help",
    "sk.k_top_help", "sk.hidden_help", "sk.bias_help", "mk.length_help", "mk.d_help", "mk.valid_help",
    "sc.n_help", "sc.metric_help", "lt.step_help", "lt.reset_help", "lt.temp_help", "lt.kv_run_help",
    "ui.what_to_notice",
})


def is_claim(key: str) -> bool:
    return key not in NOT_CLAIMS and any(p in key for p in CLAIM_PATTERNS)


CLAIMS = frozenset(k for k in EN if is_claim(k))
