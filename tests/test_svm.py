"""Tests of mlnn.svm: optimality of the dual coordinate-descent solution, BR_B / BR_R selection."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from mlnn import metrics
from mlnn.errors import MLNNError
from mlnn.svm import ConvergenceWarning, LinearSVMBR, fit_br


def make_problem(seed=0, n=80, D=20, L=5, density=0.3):
    """Sparse documents and labels that depend (noisily) on a few features."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, D, density=density, format="csr", random_state=seed)
    X.data = rng.normal(size=X.data.size)
    V = rng.normal(size=(D, L))
    Y = ((X @ V + 0.5 * rng.normal(size=(n, L))) > 0.3).astype(np.int8)
    return X, Y


def augmented(X, bias):
    return np.column_stack([X.toarray(), np.full(X.shape[0], bias)]) if bias else X.toarray()


def weights(model):
    """w including the bias weight, (D[+1], L)."""
    if model.bias:
        return np.vstack([model.coef_, model.intercept_ / model.bias])
    return model.coef_


def independent_projected_gradient(model, X, Y):
    """PG of the dual, written out from the definitions (not via the model's methods)."""
    Z = augmented(X, model.bias)
    S = 2.0 * Y - 1.0
    alpha = model.dual_coef_
    if model.loss == "squared_hinge":
        Dii, U = 1.0 / (2 * model.C), np.inf
    else:
        Dii, U = 0.0, model.C
    G = S * (Z @ weights(model)) - 1.0 + Dii * alpha
    PG = G.copy()
    PG[alpha <= 0] = np.minimum(G[alpha <= 0], 0.0)
    PG[alpha >= U] = np.maximum(G[alpha >= U], 0.0)
    return PG, alpha, U


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize("bias", [1.0, 0.0])
@pytest.mark.parametrize("C", [0.05, 1.0, 5.0])
def test_dual_solution_satisfies_kkt_and_strong_duality(loss, bias, C):
    X, Y = make_problem(n=60)
    X = sp.vstack([X, sp.csr_matrix((1, X.shape[1]))], format="csr")   # an empty document
    Y = np.vstack([Y, np.eye(1, Y.shape[1], dtype=np.int8)])
    model = LinearSVMBR(C=C, loss=loss, bias=bias, tol=1e-8, max_iter=20000).fit(X, Y)
    assert model.converged_.all()
    PG, alpha, U = independent_projected_gradient(model, X, Y)
    assert np.abs(PG).max() < 1e-6
    assert alpha.min() >= 0 and alpha.max() <= U
    # w = Σ_i y_i α_i x_i
    np.testing.assert_allclose(weights(model), augmented(X, bias).T @ ((2.0 * Y - 1) * alpha),
                               atol=1e-10)
    primal, dual = model.primal_objective(X, Y), model.dual_objective()
    np.testing.assert_allclose(primal, dual, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(model.projected_gradient(X, Y), PG, atol=1e-12)


def test_weak_duality_before_convergence():
    X, Y = make_problem(seed=1)
    with pytest.warns(ConvergenceWarning):
        model = LinearSVMBR(C=10.0, tol=1e-12, max_iter=2).fit(X, Y)
    assert not model.converged_.all()
    primal, dual = model.primal_objective(X, Y), model.dual_objective()
    assert np.all(primal >= dual - 1e-12)
    assert np.any(primal - dual > 1e-6)


@pytest.mark.parametrize("bias", [1.0, 0.0])
def test_matches_a_generic_solver_of_the_primal(bias):
    # squared hinge is differentiable: L-BFGS on the primal is an independent oracle
    X, Y = make_problem(seed=2, n=50, D=8, L=3)
    C = 0.7
    model = LinearSVMBR(C=C, bias=bias, tol=1e-10, max_iter=20000).fit(X, Y)
    Z = augmented(X, bias)
    for l in range(Y.shape[1]):
        y = 2.0 * Y[:, l] - 1

        def objective(w):
            slack = np.maximum(0.0, 1.0 - y * (Z @ w))
            return 0.5 * w @ w + C * slack @ slack, w - 2 * C * Z.T @ (y * slack)

        reference = minimize(objective, np.zeros(Z.shape[1]), jac=True, method="L-BFGS-B",
                             options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000}).x
        np.testing.assert_allclose(weights(model)[:, l], reference, atol=1e-5)


def test_labels_are_independent_problems():
    X, Y = make_problem(seed=3)
    together = LinearSVMBR(C=1.0, tol=1e-8, max_iter=20000).fit(X, Y)
    for l in range(Y.shape[1]):
        alone = LinearSVMBR(C=1.0, tol=1e-8, max_iter=20000).fit(X, Y[:, [l]])
        np.testing.assert_allclose(alone.coef_[:, 0], together.coef_[:, l], atol=1e-6)
        assert alone.intercept_[0] == pytest.approx(together.intercept_[l], abs=1e-6)


def test_warm_start_reaches_the_same_solution():
    X, Y = make_problem(seed=4)
    cold = LinearSVMBR(C=2.0, tol=1e-8, max_iter=20000).fit(X, Y)
    start = LinearSVMBR(C=0.1, tol=1e-8, max_iter=20000).fit(X, Y).dual_coef_
    warm = LinearSVMBR(C=2.0, tol=1e-8, max_iter=20000).fit(X, Y, dual_coef=start)
    np.testing.assert_allclose(warm.coef_, cold.coef_, atol=1e-6)
    np.testing.assert_allclose(warm.intercept_, cold.intercept_, atol=1e-6)


def test_decision_function_and_predict():
    X, Y = make_problem(seed=5)
    model = LinearSVMBR(C=1.0).fit(X, sp.csr_matrix(Y))
    scores = model.decision_function(X)
    np.testing.assert_allclose(scores, X.toarray() @ model.coef_ + model.intercept_)
    np.testing.assert_allclose(model.decision_function(X.toarray()), scores)
    np.testing.assert_array_equal(model.predict(X).toarray(), (scores > 0).astype(np.int8))
    # the training labels are learnable: most are recovered
    assert metrics.bipartition_measures(Y, model.predict(X))["miF"] > 0.8


def test_a_label_without_positives_gets_negative_margins():
    X, Y = make_problem(seed=6)
    Y[:, 0] = 0
    model = LinearSVMBR(C=1.0).fit(X, Y)
    assert np.all(model.decision_function(X)[:, 0] < 0)


def test_fit_br_selects_the_best_c_on_the_validation_split():
    X, Y = make_problem(seed=7, n=200, D=30, L=6)
    grid = (0.01, 0.1, 1.0, 10.0)
    result = fit_br(X, Y, variant="B", C_grid=grid, validation_fraction=0.25, random_state=3)
    table = result.validation_scores
    assert [row["C"] for row in table] == list(grid)
    values = [(row["miF"] + row["maF"]) / 2 for row in table]
    assert [row["criterion"] for row in table] == pytest.approx(values)
    assert result.C == grid[int(np.argmax(values))]
    assert result.model.C == result.C
    assert result.model.dual_coef_.shape == (200, 6)          # refitted on all documents
    np.testing.assert_array_equal(result.predict(X).toarray(),
                                  result.model.decision_function(X) > 0)
    # the same seed gives the same split and choice; the split is what the table reports
    again = fit_br(X, Y, variant="B", C_grid=grid, validation_fraction=0.25, random_state=3)
    assert [row["miF"] for row in again.validation_scores] == [row["miF"] for row in table]


def test_fit_br_variant_r_uses_rank_loss_and_learned_thresholds():
    X, Y = make_problem(seed=8, n=200, D=30, L=6)
    fit_rows, val_rows = np.arange(150), np.arange(150, 200)
    grid = (0.01, 1.0, 100.0)
    result = fit_br(X, Y, variant="R", C_grid=grid, validation=(fit_rows, val_rows),
                    lams=(0.1, 10.0), refit=False)
    rank_losses = [row["rankloss"] for row in result.validation_scores]
    assert result.C == grid[int(np.argmin(rank_losses))]
    # the reported rank loss is that of the chosen model on the validation documents
    scores = result.model.decision_function(X[val_rows])
    assert metrics.rank_loss(Y[val_rows], scores) == pytest.approx(min(rank_losses))
    assert result.lam in (0.1, 10.0) and set(result.lambda_scores) == {0.1, 10.0}
    T = result.thresholds.predict_threshold(X[val_rows], scores)
    np.testing.assert_array_equal(result.predict(X[val_rows]).toarray(), scores > T[:, None])


@pytest.mark.parametrize("make, message", [
    (lambda: LinearSVMBR(C=0), "C"),
    (lambda: LinearSVMBR(C=float("inf")), "C"),
    (lambda: LinearSVMBR(loss="log"), "loss"),
    (lambda: LinearSVMBR(bias=-1), "bias"),
    (lambda: LinearSVMBR(max_iter=0), "max_iter"),
    (lambda: LinearSVMBR(tol=0), "tol"),
])
def test_bad_options_raise(make, message):
    with pytest.raises(MLNNError, match=message):
        make()


def test_bad_data_raises():
    X, Y = make_problem()
    with pytest.raises(MLNNError, match="rows"):
        LinearSVMBR().fit(X[:10], Y)
    with pytest.raises(MLNNError, match="0/1"):
        LinearSVMBR().fit(X, 2 * Y)
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(MLNNError, match="NaN"):
        LinearSVMBR().fit(bad, Y)
    with pytest.raises(MLNNError, match="not fitted"):
        LinearSVMBR().decision_function(X)
    with pytest.raises(MLNNError, match="dual_coef"):
        LinearSVMBR().fit(X, Y, dual_coef=np.zeros((3, 3)))
    model = LinearSVMBR().fit(X, Y)
    with pytest.raises(MLNNError, match="features"):
        model.decision_function(X[:, :5])
    with pytest.raises(MLNNError, match="variant"):
        fit_br(X, Y, variant="C")
    with pytest.raises(MLNNError, match="validation_fraction"):
        fit_br(X, Y, validation_fraction=1.5)
    with pytest.raises(MLNNError, match="overlap"):
        fit_br(X, Y, validation=(np.arange(50), np.arange(40, 80)))


@pytest.mark.data
@pytest.mark.slow
def test_reuters_micro_f1(data_dir):
    from mlnn import datasets

    data = datasets.load("reuters21578", data_dir=data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = LinearSVMBR(C=1.0).fit(data.X_train, data.Y_train)
    scores = model.decision_function(data.X_test)
    result = metrics.evaluate(data.Y_test, scores, model.predict(data.X_test))
    assert result["miF"] >= 0.85, result
    assert result["rankloss"] < 0.01, result


@pytest.mark.data
@pytest.mark.slow
def test_reuters_br_r_with_learned_thresholds(data_dir):
    from mlnn import datasets

    data = datasets.load("reuters21578", data_dir=data_dir)
    result = fit_br(data.X_train, data.Y_train, variant="R", C_grid=(0.1, 1.0),
                    lams=(0.1, 1.0, 10.0), random_state=0)
    scores = result.decision_function(data.X_test)
    measures = metrics.evaluate(data.Y_test, scores, result.predict(data.X_test, scores))
    assert measures["miF"] >= 0.85, measures
