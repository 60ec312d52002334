"""A tiny transformer whose attention you can watch, in one readable file: the model and nothing else.

Token (or feature) embedding + positions (learned by default; none, sinusoidal, RoPE or ALiBi: ``POSITIONS``),
then n_layers blocks of pre-norm multi-head
self-attention (+ an optional MLP), a final LayerNorm and a linear head. The attention is written out
with the masked softmax of ``explorer.attention`` (mask before the softmax, as the Masking page teaches;
a fully masked row gives zeros, never NaN), and every layer returns its weights, shape (B, H, T, S).
The attention temperature is an argument of ``forward``, not state: the same weights give the same
output for the same inputs and temperature.

Shapes in comments: B batch, T sequence length (queries), S keys (T, or more with a KV cache),
C = d_model, H heads, D = C // H per head.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .._checks import integer_in, one_of
from ..attention import masked_weights
from ..positional import alibi_slopes, rope, sinusoidal

# "none": no position at all (attention sees a set); "learned": a trained vector per position, added to the input,
# up to seq_len; "sinusoidal": Vaswani et al.'s fixed vectors, added; "rope": q and k rotated by their positions in
# every layer; "alibi": -m_h·(i - j) added to head h's logits. The last three work at any length.
POSITIONS = ("none", "learned", "sinusoidal", "rope", "alibi")


@dataclass(frozen=True)
class ModelConfig:
    """The shape of a ``TinyTransformer``; every field is checked when the config is made (``ValueError`` with a
    sentence for a value out of range).

    Parameters
    ----------
    vocab : int, default 16
        Number of token ids, 2 to 4096 (ignored when ``input_dim`` > 0).
    seq_len : int, default 16
        The longest sequence, 2 to 1024: the learned position table has this many rows (the other schemes work at
        any length).
    n_layers : int, default 1
        Transformer blocks, 1 to 4.
    n_heads : int, default 2
        Attention heads per layer, 1 to 8; must divide ``d_model``.
    d_model : int, default 64
        Width of the residual stream, 16 to 256; each head works in ``d_model // n_heads`` dimensions.
    with_mlp : bool, default False
        Whether each block has an MLP after its attention (attention-only models are easier to read).
    causal : bool, default False
        True: position t attends to positions 0..t only.
    input_dim : int, default 0
        > 0: the inputs are feature vectors (B, T, input_dim), embedded by a linear map, instead of token ids.
    n_outputs : int, default 0
        Size of the output head; 0 means ``vocab`` (next-token logits).
    position : str, default "learned"
        How positions enter, one of ``POSITIONS``: "none", "learned", "sinusoidal", "rope", "alibi"
        (``explorer.positional``); RoPE needs an even ``d_model // n_heads``.

    Examples
    --------
    >>> cfg = ModelConfig(n_layers=2, n_heads=4, d_model=64, causal=True, position="rope")
    >>> cfg.d_model // cfg.n_heads                # each head's dimension
    16
    >>> ModelConfig(d_model=64, n_heads=3)
    Traceback (most recent call last):
    ...
    ValueError: d_model (64) must be a multiple of n_heads (3).
    """

    vocab: int = 16              # number of token ids (ignored when input_dim > 0)
    seq_len: int = 16            # longest sequence the position table covers
    n_layers: int = 1            # 1 to 4
    n_heads: int = 2             # 1 to 8, must divide d_model
    d_model: int = 64            # 16 to 256
    with_mlp: bool = False
    causal: bool = False         # True: position t attends to 0..t only
    input_dim: int = 0           # > 0: inputs are feature vectors (B, T, input_dim), not token ids
    n_outputs: int = 0           # size of the output head; 0 means vocab (next-token logits)
    position: str = "learned"    # how positions enter: one of POSITIONS (explorer.positional)

    def __post_init__(self):
        one_of(self.position, POSITIONS, "position")
        integer_in(self.n_layers, "n_layers", 1, 4)
        integer_in(self.n_heads, "n_heads", 1, 8)
        integer_in(self.d_model, "d_model", 16, 256)
        integer_in(self.seq_len, "seq_len", 2, 1024)
        integer_in(self.vocab, "vocab", 2, 4096)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of n_heads ({self.n_heads}).")
        if self.position == "rope" and (self.d_model // self.n_heads) % 2:
            raise ValueError(f"RoPE rotates pairs of dimensions: d_model / n_heads = {self.d_model // self.n_heads} "
                             "must be even.")

    @property
    def out_size(self) -> int:
        """The output head's size: ``n_outputs``, or ``vocab`` when that is 0.

        Returns
        -------
        int

        Examples
        --------
        >>> ModelConfig(vocab=20).out_size, ModelConfig(input_dim=3, n_outputs=1).out_size
        (20, 1)
        """
        return self.n_outputs or self.vocab


class SelfAttention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_heads, self.causal, self.position = cfg.n_heads, cfg.causal, cfg.position
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        if cfg.position == "alibi":
            self.register_buffer("slopes", alibi_slopes(cfg.n_heads).float(), persistent=False)

    def forward(self, x, temperature: float, attn_mask=None, kv_cache=None, ablate=None, positions=None):
        """x (B, T, C); ``attn_mask`` bool, True = may attend, broadcasting to (B, H, T, S); ``kv_cache`` a dict
        that keeps this layer's keys and values between decoding steps; ``ablate`` = (heads, how): those heads'
        outputs replaced by 0 ("zero") or by their mean over the batch at each position ("mean"); ``positions``
        (T,): the queries' positions (RoPE rotates q and k by them, ALiBi measures i - j from them)."""
        B, T, C = x.shape
        H, D = self.n_heads, C // self.n_heads
        q, k, v = self.qkv(x).split(C, dim=2)                      # each (B, T, C)
        q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in (q, k, v))  # (B, H, T, D)
        if positions is None:
            positions = torch.arange(T, device=x.device)
        if self.position == "rope":                               # keys are rotated before they are cached
            q, k = rope(q, positions), rope(k, positions)
        if kv_cache is not None:                                  # decoding: prepend cached keys/values
            if kv_cache.get("k") is not None:
                k = torch.cat([kv_cache["k"], k], dim=2)
                v = torch.cat([kv_cache["v"], v], dim=2)
            kv_cache["k"], kv_cache["v"] = k, v
        S = k.shape[2]                                            # number of keys (= T without a cache)
        logits = q @ k.transpose(-2, -1) / math.sqrt(D)            # (B, H, T, S)
        if self.position == "alibi":                              # -m_h·(i - j) (|i - j| when not causal)
            distance = positions[:, None].to(logits.dtype) - torch.arange(S, device=x.device, dtype=logits.dtype)
            logits = logits - self.slopes[:, None, None].to(logits.dtype) * \
                (distance if self.causal else distance.abs())
        logits = logits / temperature
        if self.causal:
            # query t (at absolute position S - T + t) may see keys 0..S - T + t
            allowed = torch.ones(T, S, dtype=torch.bool, device=x.device).tril(S - T)
            attn_mask = allowed if attn_mask is None else attn_mask & allowed
        att = masked_weights(logits, attn_mask, "pre")           # (B, H, T, S), rows of masked keys are 0
        heads_out = att @ v                                       # (B, H, T, D): each head's output
        if ablate:
            heads, how = ablate
            off = torch.zeros(H, dtype=torch.bool, device=x.device)
            off[list(heads)] = True
            off = off[None, :, None, None]
            stand_in = heads_out.mean(0, keepdim=True).expand_as(heads_out) if how == "mean" \
                else torch.zeros_like(heads_out)
            heads_out = torch.where(off, stand_in, heads_out)
        y = heads_out.transpose(1, 2).reshape(B, T, C)            # (B, T, C)
        return self.proj(y), att


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg)
        self.mlp = None
        if cfg.with_mlp:
            self.ln2 = nn.LayerNorm(cfg.d_model)
            self.mlp = nn.Sequential(nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(),
                                     nn.Linear(4 * cfg.d_model, cfg.d_model))

    def forward(self, x, temperature, attn_mask=None, kv_cache=None, ablate=None, positions=None):
        a, att = self.attn(self.ln1(x), temperature, attn_mask, kv_cache, ablate, positions)
        x = x + a
        if self.mlp is not None:
            x = x + self.mlp(self.ln2(x))
        return x, att


class TinyTransformer(nn.Module):
    """A small pre-norm transformer whose attention weights are returned with its output.

    ``model(inputs, attn_mask=None, temperature=1.0)`` returns ``(out, weights)``: ``out`` (B, T, vocab) logits, or
    (B, T, n_outputs) for a regression, and ``weights`` one (B, H, T, T) tensor per layer, masked before the softmax
    (``explorer.attention.masked_weights``). ``init_weights(generator)`` gives seeded weights without touching
    torch's global random state.

    Parameters
    ----------
    cfg : ModelConfig

    Examples
    --------
    >>> import torch
    >>> model = TinyTransformer(ModelConfig(n_layers=2, n_heads=2, causal=True)).init_weights(
    ...     torch.Generator().manual_seed(0))
    >>> out, weights = model(torch.zeros(3, 10, dtype=torch.long))
    >>> tuple(out.shape), [tuple(w.shape) for w in weights]
    ((3, 10, 16), [(3, 2, 10, 10), (3, 2, 10, 10)])
    >>> bool(weights[0][0, 0, 0, 1:].eq(0).all())       # causal: the first position sees only itself
    True
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Linear(cfg.input_dim, cfg.d_model) if cfg.input_dim else nn.Embedding(cfg.vocab, cfg.d_model)
        if cfg.position == "learned":            # (created where it always was: seeded weights stay the same)
            self.pos = nn.Embedding(cfg.seq_len, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.out_size)

    def init_weights(self, gen: torch.Generator) -> TinyTransformer:
        """Seeded initialisation from a private generator (no global RNG: safe with many sessions): weight matrices
        and embeddings N(0, 0.02²), biases 0, LayerNorm gains 1.

        Parameters
        ----------
        gen : torch.Generator
            A CPU generator; the same seed gives the same weights.

        Returns
        -------
        TinyTransformer
            This model, initialised (so that ``TinyTransformer(cfg).init_weights(gen)`` reads as one line).

        Examples
        --------
        >>> a = TinyTransformer(ModelConfig()).init_weights(torch.Generator().manual_seed(3))
        >>> b = TinyTransformer(ModelConfig()).init_weights(torch.Generator().manual_seed(3))
        >>> all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
        True
        """
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("bias"):
                    p.zero_()
                elif p.ndim == 1:                                 # LayerNorm gains
                    p.fill_(1.0)
                else:
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.02)
        return self

    def forward(self, inputs, attn_mask=None, *, temperature: float = 1.0, kv_caches=None, start_pos: int = 0,
                ablations=None):
        """Run the model; call it as ``model(inputs, attn_mask, temperature=...)``.

        Parameters
        ----------
        inputs : torch.Tensor
            Token ids (B, T), or features (B, T, input_dim) when ``cfg.input_dim`` > 0.
        attn_mask : torch.Tensor, optional
            Bool, True = may attend, broadcasting to (B, H, T, S); combined with the causal mask when ``cfg.causal``.
        temperature : float, default 1.0
            The attention logits are divided by sqrt(D) · temperature (D = d_model // n_heads).
        kv_caches : list of dict, optional
            One dict per layer that keeps its keys and values between decoding steps (``generate`` uses them).
        start_pos : int, default 0
            Position of the first input (decoding with a cache feeds one token at position ``start_pos``).
        ablations : dict, optional
            {layer: (heads, "zero" | "mean")}: those heads' outputs replaced by 0 or by their batch mean
            (``explorer.training.ablate``).

        Returns
        -------
        (out, weights) : (torch.Tensor, list of torch.Tensor)
            ``out`` (B, T, out_size): logits, or the regression's outputs; ``weights`` one (B, H, T, S) tensor per
            layer, each row summing to 1 over the keys it may see (S = T without a cache).

        Examples
        --------
        >>> model = TinyTransformer(ModelConfig(vocab=10, seq_len=8, causal=True)).init_weights(
        ...     torch.Generator().manual_seed(0))
        >>> out, weights = model(torch.tensor([[1, 2, 3, 4]]), temperature=2.0)
        >>> tuple(out.shape), tuple(weights[0].shape), torch.allclose(weights[0].sum(-1), torch.ones(1, 2, 4))
        ((1, 4, 10), (1, 2, 4, 4), True)
        """
        T, scheme = inputs.shape[1], self.cfg.position
        if scheme == "learned" and start_pos + T > self.cfg.seq_len:
            raise ValueError(f"sequence of {start_pos + T} positions is longer than seq_len = {self.cfg.seq_len}: "
                             "learned positions exist only up to it.")
        pos = torch.arange(start_pos, start_pos + T, device=inputs.device)
        x = self.embed(inputs)                                    # (B, T, C)
        if scheme == "learned":
            x = x + self.pos(pos)
        elif scheme == "sinusoidal":
            x = x + sinusoidal(start_pos + T, self.cfg.d_model)[start_pos:].to(x.device, x.dtype)
        weights = []
        for i, block in enumerate(self.blocks):
            x, att = block(x, temperature, attn_mask, None if kv_caches is None else kv_caches[i],
                           (ablations or {}).get(i), pos)
            weights.append(att)
        return self.head(self.ln_f(x)), weights


@torch.inference_mode()
def generate(model: TinyTransformer, prompt: torch.Tensor, n_new: int, use_cache: bool = True,
             temperature: float = 1.0):
    """Greedy decoding of ``n_new`` tokens after ``prompt`` with a causal model, under ``torch.inference_mode()``.

    With ``use_cache`` each step feeds only the newest token and reuses the keys and values of earlier positions;
    without it each step recomputes the whole sequence. Both give the same logits up to rounding.

    Parameters
    ----------
    model : TinyTransformer
        A causal one (``ModelConfig(causal=True)``).
    prompt : torch.Tensor, shape (B, T0)
        Token ids.
    n_new : int
        Tokens to add; T0 + n_new may not exceed ``model.cfg.seq_len``.
    use_cache : bool
    temperature : float
        Divides the attention logits, as in training.

    Returns
    -------
    (tokens, step_logits) : (torch.Tensor (B, T0 + n_new), torch.Tensor (B, n_new, vocab))
        The prompt with the new tokens, and the logits that chose each new token.

    Examples
    --------
    >>> import torch
    >>> model = TinyTransformer(ModelConfig(causal=True, seq_len=12)).init_weights(torch.Generator().manual_seed(0))
    >>> tokens, logits = generate(model, torch.tensor([[1, 2, 3]]), 4)
    >>> tuple(tokens.shape), tuple(logits.shape), bool(tokens[0, :3].eq(torch.tensor([1, 2, 3])).all())
    ((1, 7), (1, 4, 16), True)
    """
    if not model.cfg.causal:
        raise ValueError("generate needs a causal model (ModelConfig(causal=True)).")
    n_new = integer_in(n_new, "n_new", 1, model.cfg.seq_len)
    if prompt.shape[1] + n_new > model.cfg.seq_len:
        raise ValueError(f"prompt + n_new = {prompt.shape[1] + n_new} exceeds seq_len = {model.cfg.seq_len}.")
    tokens = prompt
    caches = [{} for _ in model.blocks] if use_cache else None
    step_logits = []
    for i in range(n_new):
        if use_cache:
            fresh = tokens if i == 0 else tokens[:, -1:]
            out, _ = model(fresh, temperature=temperature, kv_caches=caches,
                           start_pos=tokens.shape[1] - fresh.shape[1])
        else:
            out, _ = model(tokens, temperature=temperature)
        logits = out[:, -1]                                       # (B, vocab)
        step_logits.append(logits)
        tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)
    return tokens, torch.stack(step_logits, dim=1)
