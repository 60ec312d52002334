"""Learning the kernel: a learned NW bandwidth, and a small parametric attention layer.

Both are fitted by gradient descent on the squared error of predicting the training targets.
Predicting point i from a set that includes point i lets the model cheat (the point predicts
itself), so both default to leave-one-out training: the diagonal of the weight matrix is masked.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import nn

from ._adam import Adam
from ._checks import as_tensor, integer_in, positive_number

if TYPE_CHECKING:   # pandas (~0.5 s to import) loads where it is used, not at start-up
    import pandas as pd  # pandas: kept off the first page's imports (cold start)


def _xy(x, y):
    xt = as_tensor(x, "x", ndim=1, dtype=torch.float64)
    yt = as_tensor(y, "y", ndim=1, device=xt.device, dtype=xt.dtype)
    if xt.shape != yt.shape:
        raise ValueError(f"x and y must have the same length, got {xt.shape[0]} and {yt.shape[0]}.")
    if xt.shape[0] < 3:
        raise ValueError("fitting needs at least 3 points.")
    return xt, yt


def _self_excluded(logits: torch.Tensor) -> torch.Tensor:
    eye = torch.eye(logits.shape[-1], dtype=torch.bool, device=logits.device)
    return logits.masked_fill(eye, -math.inf)


def learn_bandwidth(x, y, *, leave_one_out: bool = True, h0: float = 1.0, steps: int = 300,
                    lr: float = 0.05) -> pd.DataFrame:
    """Fit log h of a Gaussian-kernel NW smoother by Adam on the training MSE.

    Returns one row per step: ``step``, ``h``, ``loss``. With ``leave_one_out=False`` the loss can
    always be lowered by shrinking h (each point's own weight tends to 1), so h collapses to 0.

    Adam keeps a short memory of squared gradients (β₂ = 0.9): with the usual 0.999 it remembers the large gradients
    of the first steps, and its steps shrink as the gradient fades towards a small optimum (noise-free data: it
    stopped at 3-10× the leave-one-out optimum after 300 steps, where β₂ = 0.9 lands within 1 %).

    Parameters
    ----------
    x, y : array_like, shape (N,)
        At least 3 points.
    leave_one_out : bool
        Leave each point's own weight out of its prediction.
    h0 : float
        The starting bandwidth.
    steps : int
    lr : float
        Adam's step size on log h.

    Returns
    -------
    pandas.DataFrame
        One row per step: ``step``, ``h``, ``loss``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(-3, 3, 60); y = np.sin(x)
    >>> free = learn_bandwidth(x, y, leave_one_out=False, steps=200)
    >>> loo = learn_bandwidth(x, y, steps=200)
    >>> bool(free["h"].iloc[-1] < loo["h"].iloc[-1])       # without leaving out, h only shrinks
    True
    """
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    xt, yt = _xy(x, y)
    h0 = positive_number(h0, "h0")
    steps = integer_in(steps, "steps", 1, 100_000)
    lr = positive_number(lr, "lr", upper=10.0)
    sq = (xt[:, None] - xt[None, :]) ** 2
    if leave_one_out:
        sq.fill_diagonal_(0.0)
    log_h, m, v = math.log(h0), 0.0, 0.0
    rows = []
    for step in range(steps + 1):
        h2 = math.exp(2 * log_h)
        loss, grad = _loss_and_gradient(sq, yt, h2, leave_one_out)
        rows.append((step, math.sqrt(h2), loss))
        if step == steps:
            break
        # Adam on log h with β = (0.9, 0.9) and ε = 1e-8, as torch.optim.Adam computes it
        m, v = _BETA * m + (1 - _BETA) * grad, _BETA * v + (1 - _BETA) * grad * grad
        t = step + 1
        log_h -= lr / (1 - _BETA ** t) * m / (math.sqrt(v) / math.sqrt(1 - _BETA ** t) + 1e-8)
    return pd.DataFrame(rows, columns=["step", "h", "loss"])


_BETA = 0.9          # Adam's β₁ and β₂ for the bandwidth (learn_bandwidth's docstring says why β₂ is not 0.999)
# the weights' logits, shifted so that each row's largest is 0, are cut off here: exp of a number below about -708
# (float64) is a subnormal number or 0, and computing it took torch 20-150x as long per element as exp(-700)
# (measured on a Xeon with AVX-512); the weights cut off are below e^-700 x the largest, where the sums cannot see them
_LOGIT_FLOOR = -700.0   # (float64: ``_xy`` makes every input float64)


def _loss_and_gradient(sq: torch.Tensor, y: torch.Tensor, h2: float, leave_one_out: bool) -> tuple[float, float]:
    """The NW smoother's training MSE at bandwidth √h2 and its derivative in log h (by hand: a one-parameter model,
    where autograd's graph took half the time; ``tests/unit/test_learned.py`` checks it against autograd).

    With logits s_ij = -sq_ij / (2h²), weights w = softmax(s) by row, predictions p = w y and residuals r = p - y:
    ∂s_ij/∂log h = sq_ij / h², so ∂p_i/∂log h = Σ_j w_ij (y_j - p_i) sq_ij / h², and the loss mean(r²) has
    derivative 2 mean(r · ∂p/∂log h). Leave-one-out: the diagonal's weight is 0 (``sq`` has a 0 there, unused)."""
    logits = sq * (-0.5 / h2)
    if leave_one_out:
        logits.fill_diagonal_(-math.inf)
    logits -= logits.amax(dim=1, keepdim=True)
    w = logits.clamp_(min=_LOGIT_FLOOR).exp_()
    if leave_one_out:
        w.fill_diagonal_(0.0)
    w /= w.sum(dim=1, keepdim=True)
    pred = w @ y
    r = pred - y
    wsq = w.mul_(sq)
    dpred = (wsq @ y - pred * wsq.sum(dim=1)) / h2
    return float((r * r).mean()), float(2 * (r * dpred).mean())


class ParametricAttention(nn.Module):
    """One attention head on 1-D data: query x, keys x_i, values y_i, learned projections.

    Inputs are embedded as features phi(x) = [x, x², 1], so that q·k can express the Gaussian kernel
    exactly: -(x - x_i)²/(2h²) = x·x_i/h² - x_i²/(2h²) + (a term in x alone, which the softmax drops).
    That bilinear form phi(x)ᵀ A phi(x_i) has rank 2, so ``hidden`` >= 2 can hold it.

    ``nw_form=True`` keeps the head an NW smoother: the values are the targets y_i themselves and there
    is no output map, so the output is a weighted average of the y_i. Otherwise values are a learned
    affine map of y_i and an output map follows: the output is an affine function of a weighted sum,
    and nothing makes the weights local.

    Parameters
    ----------
    hidden : int
        The query and key dimension.
    x_center, x_scale : float
        Inputs are standardised as (x - x_center) / x_scale first.
    nw_form : bool

    Examples
    --------
    >>> import torch
    >>> from explorer.regression import nw_weights
    >>> x = torch.linspace(-2, 2, 9, dtype=torch.float64)
    >>> head = ParametricAttention(hidden=2, nw_form=True).to(torch.float64).set_gaussian(0.5)
    >>> _, weights = head(x, x, torch.sin(x))
    >>> bool(torch.allclose(weights, nw_weights(x, x, "gaussian", 0.5)))      # the Gaussian kernel, exactly
    True
    """

    def __init__(self, hidden: int = 4, x_center: float = 0.0, x_scale: float = 1.0, nw_form: bool = False):
        super().__init__()
        self.hidden, self.nw_form = hidden, nw_form
        self.x_center, self.x_scale = x_center, x_scale   # inputs are standardised first
        self.W_q = nn.Linear(3, hidden, bias=False)
        self.W_k = nn.Linear(3, hidden, bias=False)
        self.W_v = None if nw_form else nn.Linear(1, hidden)
        self.W_o = None if nw_form else nn.Linear(hidden, 1)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The embedding phi(z) = [z, z², 1] of the standardised inputs z = (x - x_center) / x_scale.

        Parameters
        ----------
        x : torch.Tensor
            (N,) inputs.

        Returns
        -------
        torch.Tensor
            (N, 3).

        Examples
        --------
        >>> ParametricAttention(x_center=1.0, x_scale=2.0).features(torch.tensor([3.0])).tolist()
        [[1.0, 1.0, 1.0]]
        """
        z = (x - self.x_center) / self.x_scale
        return torch.stack([z, z * z, torch.ones_like(z)], dim=-1)

    def forward(self, x_query, x_train, y_train, exclude_self: bool = False):
        """The head's estimate at each query and its attention weights; call it as ``head(x_query, x_train,
        y_train)``.

        Parameters
        ----------
        x_query : torch.Tensor
            (M,) queries.
        x_train, y_train : torch.Tensor
            (N,) keys and their targets.
        exclude_self : bool
            Leave-one-out: query i may not attend to key i (queries and keys are the same points).

        Returns
        -------
        (estimate, weights) : (torch.Tensor (M,), torch.Tensor (M, N))
            Rows of ``weights`` sum to 1.

        Examples
        --------
        >>> x = torch.linspace(0, 1, 5, dtype=torch.float64)
        >>> head = ParametricAttention(hidden=2, nw_form=True).to(torch.float64).set_gaussian(0.2)
        >>> estimate, weights = head(x, x, 2 * x, exclude_self=True)
        >>> float(weights.detach().diagonal().abs().max()), tuple(estimate.shape)
        (0.0, (5,))
        """
        q = self.W_q(self.features(x_query))                   # (M, H)
        k = self.W_k(self.features(x_train))                   # (N, H)
        logits = q @ k.T                                       # (M, N)
        if exclude_self:
            logits = _self_excluded(logits)
        weights = torch.softmax(logits, dim=-1)
        if self.nw_form:
            return weights @ y_train, weights                  # an average of the targets: NW
        v = self.W_v(y_train[:, None])                         # (N, H)
        return self.W_o(weights @ v).squeeze(-1), weights

    def set_gaussian(self, h: float) -> ParametricAttention:
        """Set W_q, W_k to the exact Gaussian kernel of bandwidth ``h`` (in the units of x): then the
        weights equal ``explorer.regression.nw_weights(..., "gaussian", h)``.

        Parameters
        ----------
        h : float
            The bandwidth; needs ``hidden`` >= 2 (the kernel's bilinear form has rank 2).

        Returns
        -------
        ParametricAttention
            This head.

        Examples
        --------
        >>> ParametricAttention(hidden=1).set_gaussian(0.5)
        Traceback (most recent call last):
        ...
        ValueError: the Gaussian kernel's bilinear form has rank 2: it needs hidden >= 2.
        """
        if self.hidden < 2:
            raise ValueError("the Gaussian kernel's bilinear form has rank 2: it needs hidden >= 2.")
        hz = h / self.x_scale                                  # bandwidth in standardised units
        with torch.no_grad():
            self.W_q.weight.zero_()
            self.W_k.weight.zero_()
            self.W_q.weight[0, 0], self.W_k.weight[0, 0] = 1 / hz, 1 / hz          # z z_i / h²
            self.W_q.weight[1, 2], self.W_k.weight[1, 1] = 1.0, -1 / (2 * hz ** 2)  # -z_i² / (2h²)
        return self


def fit_parametric_attention(x, y, *, hidden: int = 4, steps: int = 400, lr: float = 0.03,
                             seed: int = 0, nw_form: bool = False) -> tuple[ParametricAttention, pd.DataFrame]:
    """Train ``ParametricAttention`` with leave-one-out MSE (Adam, full batch, float64, seeded).

    Parameters
    ----------
    x, y : array_like, shape (N,)
    hidden : int
    steps : int
    lr : float
    seed : int
    nw_form : bool
        Keep the head an NW smoother (values are the targets, no output map).

    Returns
    -------
    (ParametricAttention, pandas.DataFrame)
        The trained head and its loss per step (``step``, ``loss``).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(-3, 3, 40)
    >>> head, losses = fit_parametric_attention(x, np.sin(x), steps=50, nw_form=True)
    >>> len(losses), bool(losses["loss"].iloc[-1] < losses["loss"].iloc[0])
    (50, True)
    """
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    xt, yt = _xy(x, y)
    hidden = integer_in(hidden, "hidden", 1, 64)
    steps = integer_in(steps, "steps", 1, 100_000)
    lr = positive_number(lr, "lr", upper=10.0)
    gen = torch.Generator().manual_seed(integer_in(seed, "seed", 0, 2**31 - 1))
    model = ParametricAttention(hidden, float(xt.mean()), float(xt.std()), nw_form=nw_form).to(dtype=xt.dtype)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.5)
    if nw_form and hidden >= 2:        # start from a wide Gaussian kernel: training sharpens and reshapes it
        model.set_gaussian(float(xt.std()))
    model = model.to(xt.device)
    opt = Adam(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        pred, _ = model(xt, xt, yt, exclude_self=True)
        loss = ((pred - yt) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append((step, float(loss.detach())))
    return model, pd.DataFrame(losses, columns=["step", "loss"])
