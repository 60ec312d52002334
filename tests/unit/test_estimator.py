"""``explorer.estimator.NadarayaWatson`` against scikit-learn's own estimator checks, a brute-force loop, the
functional API and scikit-learn's R²."""

import math
import pickle
import warnings

import numpy as np
import pytest
import torch

from explorer import bandwidth as bw
from explorer import regression as r
from explorer.estimator import RADIAL_GRID, NadarayaWatson
from explorer.kernels import KERNELS

sklearn = pytest.importorskip("sklearn")
from sklearn.metrics import r2_score  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402


@pytest.mark.parametrize("model", [NadarayaWatson(), NadarayaWatson(bandwidth="silverman"),
                                   NadarayaWatson(kernel="laplace", bandwidth=0.7)], ids=repr)
def test_scikit_learns_estimator_checks_pass(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # "does not inherit from BaseEstimator": by design
        results = check_estimator(model, on_fail=None)
    failed = {x["check_name"]: repr(x["exception"]) for x in results if x["status"] == "failed"}
    assert len(results) > 40 and failed == {}


def brute(kernel, h, Xq, Xt, yt):
    """NW by a plain loop over queries and training points, a radial kernel of the Euclidean distance."""
    K = KERNELS[kernel]
    out = []
    for q in Xq:
        k = np.array([float(K(torch.tensor(math.dist(q, x) / h, dtype=torch.float64))) for x in Xt])
        if k.sum() == 0 and not K.compact:         # every value underflows: the h -> 0 limit, the nearest points
            dist = np.array([math.dist(q, x) for x in Xt])
            k = (dist == dist.min()).astype(float)
        out.append(k @ yt / k.sum() if k.sum() > 0 else np.full(yt.shape[1:], np.nan))
    return np.array(out)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("seed", range(2))
def test_predictions_match_a_loop_with_one_and_three_features(kernel, seed):
    rng = np.random.default_rng(seed)
    for d in (1, 3):
        Xt, Xq = rng.uniform(-1, 1, (30, d)), rng.uniform(-1, 1, (7, d))
        yt = rng.normal(size=30)
        h = 0.9
        got = NadarayaWatson(kernel=kernel, bandwidth=h).fit(Xt, yt).predict(Xq)
        assert got.dtype == np.float64 and got.shape == (7,)
        np.testing.assert_allclose(got, brute(kernel, h, Xq, Xt, yt), rtol=1e-9, atol=1e-12, equal_nan=True)


def test_one_feature_agrees_with_the_functional_api_and_its_bandwidth_choice():
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(0, 5, 80))
    y = np.sin(x) + 0.3 * rng.normal(size=80)
    model = NadarayaWatson().fit(x[:, None], y)
    assert model.bandwidth_ == bw.select_bandwidth(x, y)
    assert NadarayaWatson(bandwidth="silverman").fit(x[:, None], y).bandwidth_ == bw.silverman_bandwidth(x)
    grid = np.linspace(0, 5, 11)
    np.testing.assert_allclose(model.predict(grid[:, None]), r.nadaraya_watson(grid, x, y, "gaussian",
                                                                                 model.bandwidth_).numpy())


def test_several_features_choose_the_grid_bandwidth_with_the_lowest_leave_one_out_error():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (25, 2))
    y = X[:, 0] ** 2 - X[:, 1] + 0.1 * rng.normal(size=25)
    chosen = NadarayaWatson().fit(X, y).bandwidth_
    diameter = np.linalg.norm(X.max(0) - X.min(0))
    errors = {}
    for h in np.geomspace(diameter * 1e-3, diameter * 2, RADIAL_GRID):
        loo = [brute("gaussian", h, X[i:i + 1], np.delete(X, i, 0), np.delete(y, i))[0] for i in range(25)]
        errors[h] = float(np.mean((np.array(loo) - y) ** 2))
    assert chosen == pytest.approx(min(errors, key=errors.get), rel=1e-12)


def test_several_outputs_are_smoothed_column_by_column():
    rng = np.random.default_rng(0)
    X, Y = rng.uniform(0, 1, (20, 1)), rng.normal(size=(20, 3))
    model = NadarayaWatson(bandwidth=0.2).fit(X, Y)
    got = model.predict(X)
    assert got.shape == (20, 3)
    for j in range(3):
        np.testing.assert_allclose(got[:, j], NadarayaWatson(bandwidth=0.2).fit(X, Y[:, j]).predict(X))


def test_score_is_scikit_learns_r2_with_and_without_weights():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 3, (40, 1))
    y = np.cos(X[:, 0]) + 0.2 * rng.normal(size=40)
    w = rng.uniform(0.1, 2, 40)
    model = NadarayaWatson(bandwidth=0.3).fit(X, y)
    assert model.score(X, y) == pytest.approx(r2_score(y, model.predict(X)))
    assert model.score(X, y, sample_weight=w) == pytest.approx(r2_score(y, model.predict(X), sample_weight=w))


def test_it_works_inside_a_pipeline_and_a_grid_search_and_survives_pickling():
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 6, (60, 1))
    y = np.sin(X[:, 0]) + 0.2 * rng.normal(size=60)
    search = GridSearchCV(NadarayaWatson(), {"bandwidth": [0.05, 0.3, 3.0]}, cv=3).fit(X, y)
    assert search.best_params_ == {"bandwidth": 0.3}               # too rough, right, too smooth
    pipe = make_pipeline(StandardScaler(), NadarayaWatson(bandwidth="silverman")).fit(X, y)
    assert pipe.score(X, y) > 0.7
    copy = pickle.loads(pickle.dumps(search.best_estimator_))
    np.testing.assert_array_equal(copy.predict(X), search.best_estimator_.predict(X))


@pytest.mark.parametrize(("params", "match"), [({"bandwidth": 0}, "bandwidth must be a finite number > 0"),
                                               ({"bandwidth": "wide"}, "bandwidth .* must be one of loo, silverman"),
                                               ({"kernel": "cosine"}, "gaussian")])
def test_a_bad_parameter_is_named_when_fitting(params, match):
    model = NadarayaWatson(**params)                 # scikit-learn's rule: __init__ and set_params never check
    with pytest.raises(ValueError, match=match):
        model.fit([[0.0], [1.0]], [0.0, 1.0])


def test_one_dimensional_x_is_refused_with_the_reshape_to_use():
    with pytest.raises(ValueError, match=r"reshape\(-1, 1\)"):
        NadarayaWatson().fit(np.arange(5.0), np.arange(5.0))
    model = NadarayaWatson(bandwidth=1.0).fit(np.arange(5.0)[:, None], np.arange(5.0))
    with pytest.raises(ValueError, match="same number of samples, got 5 and 4"):
        model.score(np.arange(5.0)[:, None], np.arange(4.0))


# ------------------------------------------------------------------ compact kernels in cross-validation
SORTED_X = np.sort(np.random.default_rng(0).uniform(0, 6, 100))
SORTED_Y = np.sin(SORTED_X)


@pytest.mark.parametrize("kernel", ["boxcar", "epanechnikov", "triangular"])
def test_unshuffled_folds_on_sorted_x_leave_queries_without_a_neighbour_and_score_says_how_many(kernel):
    """scikit-learn's default KFold cuts sorted x into stretches: the end folds lie outside the other folds' support,
    so a compact kernel has no estimate there. ``score`` returns NaN and warns with the count, which a brute-force
    count of the test points with no training point within h confirms."""
    from sklearn.model_selection import KFold

    folds_with_lonely_queries = 0
    for train, test in KFold(5).split(SORTED_X[:, None]):
        model = NadarayaWatson(kernel=kernel).fit(SORTED_X[train, None], SORTED_Y[train])
        lonely = sum(np.abs(SORTED_X[train] - x).min() > model.bandwidth_ for x in SORTED_X[test])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            score = model.score(SORTED_X[test, None], SORTED_Y[test])
        said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        if lonely:
            assert math.isnan(score)
            assert len(said) == 1 and said[0].startswith(f"{lonely} of {len(test)} queries have no training point")
            assert "KFold(shuffle=True)" in said[0]
            folds_with_lonely_queries += 1
        else:
            assert math.isfinite(score) and not said
    assert folds_with_lonely_queries >= 2                     # at least the two end folds


def test_shuffled_folds_score_every_fold_and_grid_search_picks_a_real_score():
    from sklearn.model_selection import KFold, cross_val_score

    folds = KFold(5, shuffle=True, random_state=0)
    model = NadarayaWatson(kernel="epanechnikov")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)              # no fold leaves a query without a neighbour
        scores = cross_val_score(model, SORTED_X[:, None], SORTED_Y, cv=folds)
        search = GridSearchCV(model, {"bandwidth": [0.3, 0.6, 1.2]}, cv=folds).fit(SORTED_X[:, None], SORTED_Y)
    assert np.isfinite(scores).all() and scores.min() > 0.9
    assert search.best_score_ > 0.9


def test_a_bandwidth_given_as_text_is_refused_everywhere_it_is_taken():
    for call in (lambda: r.nadaraya_watson([0.0], [0.0, 1.0], [0.0, 1.0], "gaussian", "0.2"),
                 lambda: bw.select_bandwidth([0.0, 1.0, 2.0], [0.0, 1.0, 0.0], "gaussian", ["0.2", 1.0]),
                 lambda: NadarayaWatson(bandwidth="0.2").fit([[0.0], [1.0]], [0.0, 1.0])):
        with pytest.raises(ValueError, match=r"'0\.2'"):
            call()


def test_select_bandwidth_names_its_own_arguments_and_a_single_point():
    with pytest.raises(ValueError, match=r"^x and y must have the same length, got 3 and 2\.$"):
        bw.select_bandwidth([0.0, 1.0, 2.0], [0.0, 1.0])
    with pytest.raises(ValueError, match=r"^y must be 1-dimensional"):
        bw.select_bandwidth([0.0, 1.0, 2.0], [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match=r"^x holds 1 point: choosing a bandwidth needs at least 2 points"):
        bw.select_bandwidth([1.0], [2.0])
    with pytest.raises(ValueError, match=r"^x holds 1 point"):
        bw.loo_cv_scores([1.0], [2.0])
    with pytest.raises(ValueError, match="all x values are identical"):       # two points at one x: a different case
        bw.select_bandwidth([1.0, 1.0], [2.0, 3.0])
