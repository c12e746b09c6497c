"""Solutions to the exercises of notebook 02b (optimizers and dropout)."""

import numpy as np


def rmsprop_step(theta, G, g, eta, rho=0.9, eps=1e-8):
    """One RMSProp step: G ← ρ G + (1 − ρ) g²;  θ ← θ − η g / (√G + ε). Returns new arrays."""
    G = rho * G + (1 - rho) * g * g
    return theta - eta * g / (np.sqrt(G) + eps), G


def momentum_skip(theta, v, mu, eta, gamma, skipped):
    """Δ = ``skipped`` classical momentum steps with zero ∂J/∂θ and weight decay γ.

    Such a step has the gradient g = γ θ: v' = μ v − η γ θ and θ' = θ + v' = (1 − η γ) θ + μ v,
    a linear map of the pair, (θ', v') = A (θ, v) with A = [[1 − η γ, μ], [−η γ, μ]]. Δ steps
    are A^Δ; with γ = 0, A^Δ = [[1, μ (1 − μ^Δ) / (1 − μ)], [0, μ^Δ]], section 3's closed form.
    """
    A = np.array([[1 - eta * gamma, mu], [-eta * gamma, mu]])
    P = np.linalg.matrix_power(A, skipped)
    return P[0, 0] * theta + P[0, 1] * v, P[1, 0] * theta + P[1, 1] * v


def inverted_dropout(h, rate, rng):
    """Keep each unit with probability 1 − rate and scale the kept ones by 1 / (1 − rate); the
    mask in h's dtype."""
    mask = ((rng.random(h.shape) >= rate) / (1 - rate)).astype(h.dtype)
    return h * mask, mask


class RMSProp:
    """RMSProp as an mlnn optimizer: G ← ρ G + (1 − ρ) g²;  θ ← θ − η g / (√G + ε).

    Why it cannot skip rows the way AdaGrad does: a row with zero gradient keeps its θ, but its G
    still shrinks, G ← ρ G, at every step. Updating only the touched rows (what ``step`` does
    with a row-sparse gradient: ``update`` on the gathered rows) therefore leaves G too large on
    rows that were skipped, and their next steps too small. A lazy version would record each
    row's last step, as momentum does, and multiply G by ρ^Δ before the row's next update
    (``catch_up``): Δ zero-gradient steps of RMSProp have that closed form.
    """

    def __init__(self, learning_rate, rho=0.9, epsilon=1e-8):
        self.learning_rate, self.rho, self.epsilon = learning_rate, rho, epsilon

    def new_state(self, theta):
        return {"mean_square": np.zeros_like(theta)}

    def update(self, theta, g, state):
        G = state["mean_square"]
        G[...] = self.rho * G + (1 - self.rho) * g * g
        theta -= self.learning_rate * g / (np.sqrt(G) + self.epsilon)
