"""Sampling weight vectors uniformly from the probability simplex (Ailem et al. §3.3)."""

from __future__ import annotations

import numpy as np

from ...errors import MethodError


def sample_simplex(n: int, d: int, rng) -> np.ndarray:
    """Draw ``n`` weight vectors uniformly from the ``(d-1)``-simplex.

    Normalised i.i.d. standard exponentials are Dirichlet(1, ..., 1), the uniform
    distribution on the simplex; this is the same distribution as Smith and
    Tromble's sorted-uniform-spacings construction (see
    :func:`sample_simplex_spacings`) but needs no sort, so it vectorises.

    Parameters
    ----------
    n, d : int
        Number of draws and of columns.
    rng : numpy.random.Generator or int
        Random source; an int seeds a new generator.

    Returns
    -------
    ndarray, (n, d)
        Non-negative rows summing to 1. Drawing ``(a, d)`` then ``(b, d)`` from one
        generator gives the same rows as one ``(a + b, d)`` draw, so chunked use
        does not change results.

    References
    ----------
    Ailem et al. §3.3 "Random distributions of weights" (Smith and Tromble 2004).
    """
    rng = np.random.default_rng(rng)
    if d < 1 or n < 0:
        raise MethodError(f"need d >= 1 and n >= 0 draws, got n={n}, d={d}")
    W = rng.standard_exponential((n, d))
    W /= W.sum(axis=1, keepdims=True)
    return W


def sample_simplex_spacings(d: int, rng) -> np.ndarray:
    """One uniform draw from the simplex by Smith and Tromble's method.

    Sort ``d - 1`` uniforms on (0, 1), add the end points 0 and 1 and take the
    ``d`` gaps. Used as the per-draw reference in tests and the benchmark.

    References
    ----------
    Ailem et al. §3.3; Smith and Tromble (2004), "Sampling uniformly from the unit simplex".
    """
    rng = np.random.default_rng(rng)
    u = np.sort(rng.random(d - 1))
    return np.diff(np.concatenate(([0.0], u, [1.0])))
