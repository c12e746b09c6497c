"""Solutions to the exercises of notebook 02b (optimizers and dropout)."""

import numpy as np


def rmsprop_step(theta, G, g, eta, rho=0.9, eps=1e-8):
    """One RMSProp step: G ← ρ G + (1 − ρ) g²;  θ ← θ − η g / (√G + ε). Returns new arrays."""
    G = rho * G + (1 - rho) * g * g
    return theta - eta * g / (np.sqrt(G) + eps), G


def momentum_skip(theta, v, mu, skipped):
    """Δ = ``skipped`` classical momentum steps with zero gradient, in closed form:
    v ← μ^Δ v,  θ ← θ + (μ + μ² + … + μ^Δ) v = θ + μ (1 − μ^Δ) / (1 − μ) v."""
    return theta + mu * (1 - mu ** skipped) / (1 - mu) * v, mu ** skipped * v


def inverted_dropout(h, rate, rng):
    """Keep each unit with probability 1 − rate and scale the kept ones by 1 / (1 − rate)."""
    mask = (rng.random(h.shape) >= rate) / (1 - rate)
    return h * mask, mask

