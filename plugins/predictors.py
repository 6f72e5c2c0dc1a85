"""Performance predictors: complete a models x datasets matrix (pounce).

Every predictor follows :class:`harness_ext.base.BasePredictor`: ``fit(X)``
takes an ``(n_models, n_datasets)`` matrix with NaN for unobserved cells and
sets ``mean_`` (every cell filled, observed cells passed through unchanged)
and ``std_`` (predictive standard deviation, 0 on observed cells, or ``None``
when the method has no uncertainty of its own).

Two families live here:

* **Regression from S to D \\ S** (SimBA §4): ridge, KNN, MLP (12) and
  MLP (12, 12). They are *inductive*: complete rows of ``X`` are the training
  models, and every incomplete row (a new model with only its subset observed)
  is predicted from its own observed columns. Rows are grouped by missingness
  pattern, so all new models that ran the same subset share one fit. This is
  the shape of the ``predict`` use case: training models' full rows plus the
  new model's row with only the subset observed.
* **Matrix completion** (Zhao et al.): global mean and mean of means
  baselines, PMF (MAP), Bayesian PMF by Gibbs sampling with predictive standard
  deviations, and their constrained variants with model and dataset profiles.
  They are *transductive*: every observed cell informs every prediction.
  The multi-metric tensor variant (PTF) takes a 3-D tensor and is therefore a
  separate, unregistered class,
  :class:`harness_ext.methods.engine.pmf.ProbabilisticTensorFactorization`
  (the registration interface is 2-D).

Row-aligned parameters
----------------------
``model_profiles`` is aligned with the rows of ``X``. Predictors list such
parameters in the class attribute ``row_params`` so evaluation code that
reorders or subsets rows (train/test splits, cross-validation) can reindex
them (see :func:`harness_ext.methods.pounce.reindex_rows`).

References
----------
SimBA (Subramani, Gomez and Diab 2025) §4 and §6.3; Zhao et al.
§3.1-3.5 and §4.2; Salakhutdinov & Mnih, "Bayesian Probabilistic Matrix
Factorization using MCMC", ICML 2008; Mnih & Salakhutdinov, "Probabilistic
Matrix Factorization", NIPS 2007 (constrained PMF).
"""

from __future__ import annotations

from .predictors_baselines import GlobalMean, MeanOfMeans  # noqa: F401  (the public names of the predictors live here)
from .predictors_pmf import PMF, BayesianPMF  # noqa: F401
from .predictors_regression import KNNPredictor, MLP2Predictor, MLPPredictor, RidgePredictor  # noqa: F401
