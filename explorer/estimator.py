"""``NadarayaWatson``: the kernel smoother as a scikit-learn-style estimator (numpy in, numpy out).

It follows scikit-learn's estimator conventions (``get_params`` / ``set_params``, ``fit`` returning the estimator,
learned attributes ending in ``_``, X of shape (n_samples, n_features), y of shape (n_samples,) or (n_samples,
n_outputs), ``score`` as R²), so it goes into a ``Pipeline``, ``GridSearchCV`` or ``cross_val_score``; scikit-learn
itself is not needed to use it. The tests run scikit-learn's own ``check_estimator`` on it.

With one feature the estimate is ``explorer.regression.nadaraya_watson`` and the bandwidth is chosen by
``explorer.bandwidth``. With several features the kernel is radial, K(‖x - x_i‖ / h), one bandwidth for every
feature: put the features on one scale first (e.g. ``StandardScaler``).
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings

import numpy as np
import torch

from ._checks import one_of, positive_number
from ._streaming import _dense_scores, _normalise
from .bandwidth import select_bandwidth, silverman_bandwidth
from .kernels import equivalent_bandwidth, get_kernel
from .regression import nadaraya_watson

__all__ = ["NadarayaWatson"]

RULES = ("loo", "silverman")
ROWS_CELLS = 4_000_000          # several features: query rows x training points computed at once (32 MB of float64)
RADIAL_GRID = 32                # several features, bandwidth="loo": log-spaced bandwidths scored


class NadarayaWatson:
    """Nadaraya-Watson kernel regression, f(x) = Σ_i K(‖x - x_i‖/h) y_i / Σ_j K(‖x - x_j‖/h).

    Parameters
    ----------
    kernel : str, default "gaussian"
        A name in ``explorer.kernels.KERNELS``: gaussian, boxcar, constant, epanechnikov, triangular, laplace.
    bandwidth : {"loo", "silverman"} or float, default "loo"
        ``"loo"``: the bandwidth with the lowest leave-one-out squared error (one feature:
        ``explorer.bandwidth.select_bandwidth`` over the whole range; several features: a log grid of
        ``RADIAL_GRID`` values from 1/1000 of the data's diameter to twice it). ``"silverman"``: Silverman's rule
        of thumb (several features: his multivariate rule, (4 / ((d + 2) n))^(1/(d + 4)) times the mean of the
        features' standard deviations). A float: that h > 0.

    Attributes
    ----------
    bandwidth_ : float
        The bandwidth used.
    n_features_in_ : int
        The number of features seen in ``fit``.
    X_train_, y_train_ : numpy.ndarray
        The training data (float64), which NW keeps: every prediction is a weighted mean of ``y_train_``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(0, 6, 60)[:, None]
    >>> y = np.sin(X[:, 0])
    >>> model = NadarayaWatson(kernel="gaussian", bandwidth=0.2).fit(X, y)
    >>> model.predict([[1.5]]).round(2)          # sin 1.5 = 0.997: smoothing lowers a peak by about h²/2 · |f''|
    array([0.98])
    >>> round(model.score(X, y), 3)
    0.998
    >>> NadarayaWatson().fit(X, y).bandwidth_ < 0.3       # the leave-one-out choice on a clean sine is small
    True
    """

    def __init__(self, kernel: str = "gaussian", bandwidth: str | float = "loo"):
        self.kernel = kernel
        self.bandwidth = bandwidth

    # -- scikit-learn's parameter protocol
    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters, as scikit-learn's ``clone`` and grid search read them.

        Parameters
        ----------
        deep : bool
            Unused (there are no nested estimators); accepted as scikit-learn passes it.

        Returns
        -------
        dict

        Examples
        --------
        >>> NadarayaWatson(bandwidth=0.5).get_params()
        {'bandwidth': 0.5, 'kernel': 'gaussian'}
        """
        return {"bandwidth": self.bandwidth, "kernel": self.kernel}

    def set_params(self, **params) -> NadarayaWatson:
        """Set constructor parameters by name (checked when ``fit`` runs).

        Parameters
        ----------
        **params
            ``kernel`` and/or ``bandwidth``.

        Returns
        -------
        NadarayaWatson
            This estimator.

        Examples
        --------
        >>> NadarayaWatson().set_params(kernel="laplace").kernel
        'laplace'
        """
        for name, value in params.items():
            if name not in self.get_params():
                raise ValueError(f"NadarayaWatson has no parameter {name!r}; it has kernel and bandwidth.")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        return f"NadarayaWatson(kernel={self.kernel!r}, bandwidth={self.bandwidth!r})"

    def __sklearn_tags__(self):
        """The tags scikit-learn reads: a regressor, with one or several outputs."""
        from sklearn.utils import RegressorTags, Tags, TargetTags  # only scikit-learn calls this: it is installed

        return Tags(estimator_type="regressor", target_tags=TargetTags(required=True, multi_output=True),
                    regressor_tags=RegressorTags())

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "X_train_")

    # -- learning and predicting
    def fit(self, X, y) -> NadarayaWatson:
        """Keep the training data and choose the bandwidth.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            One feature is a column: ``x.reshape(-1, 1)``.
        y : array_like, shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        NadarayaWatson
            This estimator, fitted.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.arange(10.0)[:, None]
        >>> NadarayaWatson(bandwidth="silverman").fit(X, X[:, 0] ** 2).bandwidth_ > 0
        True
        """
        get_kernel(self.kernel)
        if not (isinstance(self.bandwidth, str) and self.bandwidth in RULES):
            if isinstance(self.bandwidth, str) or not isinstance(self.bandwidth, numbers.Real):
                one_of(self.bandwidth, RULES, "bandwidth (a rule, or else a number > 0)")
            positive_number(self.bandwidth, "bandwidth")
        X = _features(X)
        y = _numbers(y, "y")
        if y.ndim not in (1, 2):
            raise ValueError(f"y must be 1- or 2-dimensional, got shape {y.shape}.")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X and y must have the same number of samples, got {X.shape[0]} and {y.shape[0]}.")
        self.bandwidth_ = self._choose_bandwidth(X, y)
        self.X_train_, self.y_train_, self.n_features_in_ = X, y, X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """The NW estimate at each row of X.

        Parameters
        ----------
        X : array_like, shape (n_queries, n_features)

        Returns
        -------
        numpy.ndarray, shape (n_queries,) or (n_queries, n_outputs)
            float64, shaped like ``y`` in ``fit``; NaN where a compact kernel has no training point within h.

        Examples
        --------
        >>> model = NadarayaWatson(kernel="boxcar", bandwidth=1.5).fit([[0.0], [1.0], [2.0]], [0.0, 3.0, 6.0])
        >>> model.predict([[1.0], [9.0]])             # the mean of y within 1.5; nobody within 1.5 of 9
        array([ 3., nan])
        """
        if not self.__sklearn_is_fitted__():
            raise _not_fitted()
        X = _features(X, fitted=self.n_features_in_)
        return _estimate(self.kernel, self.bandwidth_, X, self.X_train_, self.y_train_)

    def score(self, X, y, sample_weight=None) -> float:
        """R², the coefficient of determination, of ``predict(X)`` against ``y`` (averaged over outputs).

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
        y : array_like, shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array_like, shape (n_samples,), optional

        Returns
        -------
        float
            1 for a perfect fit, 0 for the constant mean of ``y``, below 0 for worse. NaN when a compact kernel
            has no training point within h of some query (``predict`` gives NaN there), with a ``RuntimeWarning``
            that counts those queries: in cross-validation on sorted X, a fold at the end of the range lies outside
            the other folds' support, so shuffle the folds (``KFold(shuffle=True)``).

        Examples
        --------
        >>> NadarayaWatson(bandwidth=1e-3).fit([[0.0], [1.0]], [0.0, 1.0]).score([[0.0], [1.0]], [0.0, 1.0])
        1.0
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     NadarayaWatson("boxcar", 0.5).fit([[0.0], [1.0]], [0.0, 1.0]).score([[0.0], [5.0]], [0.0, 1.0])
        nan
        >>> print(caught[0].message)      # doctest: +ELLIPSIS
        1 of 2 queries have no training point within h = 0.5 of the boxcar kernel...
        """
        pred = self.predict(X)
        empty = int(np.isnan(pred.reshape(len(pred), -1)).any(axis=1).sum())
        if empty:
            warnings.warn(f"{empty} of {len(pred)} queries have no training point within h = {self.bandwidth_:.3g} "
                          f"of the {self.kernel} kernel, so their prediction is NaN and so is the score. A wider "
                          "bandwidth, a kernel with unbounded support (gaussian, laplace) or, in cross-validation, "
                          "shuffled folds (KFold(shuffle=True)) give every query a neighbour.", RuntimeWarning,
                          stacklevel=2)
        y = _numbers(y, "y")
        if y.shape[0] != pred.shape[0]:
            raise ValueError(f"X and y must have the same number of samples, got {pred.shape[0]} and {y.shape[0]}.")
        y, pred = y.reshape(len(y), -1), pred.reshape(len(y), -1)
        w = np.ones(len(y)) if sample_weight is None else _numbers(sample_weight, "sample_weight").reshape(-1)
        mean = np.average(y, axis=0, weights=w)
        residual = (w[:, None] * (y - pred) ** 2).sum(axis=0)
        total = (w[:, None] * (y - mean) ** 2).sum(axis=0)
        r2 = np.where(total > 0, 1 - residual / np.where(total > 0, total, 1), np.where(residual == 0, 1.0, 0.0))
        return float(r2.mean())

    def _choose_bandwidth(self, X: np.ndarray, y: np.ndarray) -> float:
        if not isinstance(self.bandwidth, str):
            return float(self.bandwidth)
        if X.shape[0] < 2:
            raise ValueError(f"bandwidth={self.bandwidth!r} needs at least 2 samples, got n_samples=1.")
        if X.shape[1] == 1 and y.ndim == 1:
            if self.bandwidth == "silverman":
                return silverman_bandwidth(X[:, 0], self.kernel)
            return select_bandwidth(X[:, 0], y, self.kernel)
        if self.bandwidth == "silverman":
            n, d = X.shape
            spread = float(X.std(axis=0, ddof=1).mean())
            if spread == 0:
                raise ValueError("all rows of X are identical, so Silverman's rule gives h = 0: give X that vary.")
            return equivalent_bandwidth(spread * (4 / ((d + 2) * n)) ** (1 / (d + 4)), self.kernel)
        return _loo_radial(self.kernel, X, y)


class NotFittedError(ValueError, AttributeError):
    """``predict`` or ``score`` before ``fit`` (a ``ValueError`` and an ``AttributeError``, as scikit-learn's is)."""


def _not_fitted() -> Exception:
    """scikit-learn's ``NotFittedError`` when scikit-learn is in use (its tools catch that class), else ours."""
    known = sys.modules.get("sklearn.exceptions")
    kind = getattr(known, "NotFittedError", NotFittedError)
    return kind("This NadarayaWatson instance is not fitted yet: call fit(X, y) before predict or score.")


def _numbers(value, name: str) -> np.ndarray:
    if hasattr(value, "toarray") or hasattr(value, "tocsr"):
        raise TypeError(f"{name} is a sparse matrix; NadarayaWatson takes dense arrays: pass {name}.toarray().")
    if value is None:
        raise ValueError(f"NadarayaWatson requires {name} to be passed, but the target {name} is None.")
    arr = np.asarray(value)
    if np.iscomplexobj(arr):
        raise ValueError(f"Complex data not supported: {name} must hold real numbers.")
    try:
        arr = arr.astype(np.float64)
    except TypeError as exc:
        raise TypeError(f"{name} must hold numbers ({exc}).") from None
    except ValueError as exc:
        raise ValueError(f"{name} must hold numbers ({exc}).") from None
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}): give at least one sample.")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity: remove or replace those values.")
    return arr


def _features(X, fitted: int | None = None) -> np.ndarray:
    arr = _numbers(X, "X")
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (n_samples, n_features), got shape {arr.shape}. Reshape your "
                         "data: one feature with X.reshape(-1, 1), one sample with X.reshape(1, -1).")
    if fitted is not None and arr.shape[1] != fitted:
        raise ValueError(f"X has {arr.shape[1]} features, but NadarayaWatson is expecting {fitted} features as input.")
    return arr


def _estimate(kernel: str, h: float, Xq: np.ndarray, Xt: np.ndarray, yt: np.ndarray) -> np.ndarray:
    if Xt.shape[1] == 1 and yt.ndim == 1:
        return nadaraya_watson(Xq[:, 0], Xt[:, 0], yt, kernel, h).numpy()
    kern = get_kernel(kernel)
    xt, ys = torch.from_numpy(Xt), torch.from_numpy(yt.reshape(len(yt), -1))
    rows = max(1, ROWS_CELLS // len(xt))
    out = []
    for start in range(0, len(Xq), rows):
        w = _normalise(*_dense_scores(kern, torch.cdist(torch.from_numpy(Xq[start:start + rows]), xt), h))
        out.append(torch.where((w.sum(1) > 0)[:, None], w @ ys, math.nan))
    return torch.cat(out).numpy().reshape((len(Xq), *yt.shape[1:]))


def _loo_radial(kernel: str, X: np.ndarray, y: np.ndarray) -> float:
    """Several features or outputs: the grid bandwidth with the lowest leave-one-out squared error."""
    kern = get_kernel(kernel)
    xt, ys = torch.from_numpy(X), torch.from_numpy(y.reshape(len(y), -1))
    diameter = float(np.linalg.norm(X.max(axis=0) - X.min(axis=0)))
    if diameter == 0:
        raise ValueError("all rows of X are identical, so no bandwidth can be chosen: give X that vary.")
    best = (math.inf, diameter)
    rows = max(1, ROWS_CELLS // len(xt))
    for h in np.geomspace(diameter * 1e-3, diameter * 2, RADIAL_GRID).tolist():
        error = 0.0
        for start in range(0, len(xt), rows):
            block = torch.arange(start, min(start + rows, len(xt)))
            self_mask = torch.zeros(len(block), len(xt), dtype=torch.bool)
            self_mask[torch.arange(len(block)), block] = True
            w = _normalise(*_dense_scores(kern, torch.cdist(xt[block], xt), h, self_mask))
            if bool((w.sum(1) == 0).any()):       # some sample has no neighbour within h
                error = math.inf
                break
            error += float(((w @ ys - ys[block]) ** 2).sum())
        best = min(best, (error, h))
    if not math.isfinite(best[0]):
        raise ValueError(f"no bandwidth up to twice the data's diameter gives every sample a neighbour with the "
                         f"{kernel} kernel.")
    return best[1]

