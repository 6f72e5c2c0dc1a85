"""Weighting schemes and ranking-robustness analyses (``harness-ext weights``).

Everything here follows Ailem et al., "Examining the robustness of LLM evaluation
to the distributional assumptions of benchmarks":

* cluster-based weights (medoids only, distance-based, inverse-distance; Ailem et al. §3.3)
  on a spherical k-means clustering of the column performance vectors whose
  number of clusters maximises the cosine silhouette (Ailem et al. §5.1);
* weights drawn uniformly from the probability simplex (Ailem et al. §3.3, §5.2.3): each
  model's score range, the pairwise "row beats column" matrix (Ailem et al. Fig. 4), the
  top-two swap rate and the largest score shift;
* "increasing benchmark size" curves, most informative vs random (Ailem et al. §3.3, §5.2.2);
* permutation tests that column performance vectors are more similar than chance
  (mean, 75th, 95th percentile, KS test; Ailem et al. §3.2, Table 2) and the silhouette of
  observed vs permuted data (Ailem et al. Table 3).

Orientation. A matrix here is ``models x columns`` (the store's orientation), where
columns are datasets or prompts. The paper's ``Q`` is ``prompts x models``, i.e.
our ``X.T``: a "performance vector" of a column is ``X[:, j]``, the scores of all
models on that column.

The weighting plugins themselves are registered in :mod:`harness_ext.plugins.weighting` and
use the numerics defined here; the ``weights`` command is :mod:`harness_ext.cli.weights`.

Modules: :mod:`.common` (constants, unit vectors, weighted scores, ranks), :mod:`.complete` (missing
cells predicted by reduce's default predictor), :mod:`.sampling`
(uniform simplex draws), :mod:`.clustering` (spherical k-means, cluster weights),
:mod:`.schemes` (registered schemes, weights files, rank changes per scheme),
:mod:`.random_weights` (robustness under random weights), :mod:`.size` (increasing benchmark
size), :mod:`.similarity` and :mod:`.permutation` (permutation and silhouette tests) and
:mod:`.prompts` (prompt-level matrices). Each figure is drawn by the module of the result it shows
(matplotlib imported only then).
"""

from __future__ import annotations

from .clustering import ColumnClustering, cluster_columns, cluster_weights, spherical_kmeans
from .common import (
    ANALYSES,
    BINARY_MEASURES,
    CHUNK_FLOATS,
    SCHEME_NAMES_DEFAULT,
    SIMILARITY_MEASURES,
    ZERO_DISTANCE,
    ZERO_NORM,
    chance_ranking_rate,
    few_models_warning,
    is_binary,
    ranks_desc,
    unit_columns,
    weighted_scores,
)
from .complete import Completion, complete_matrix
from .permutation import (
    PermutationTestResult,
    SilhouetteTestResult,
    permutation_test,
    permute_within_models,
    silhouette_test,
)
from .prompts import read_prompt_matrix, samples_matrix
from .random_weights import (
    RandomWeightsResult,
    binary_beat_probability,
    default_chunk_size,
    expected_score_std,
    plot_pairwise,
    plot_score_distribution,
    random_weight_analysis,
    random_weight_analysis_loop,
)
from .sampling import sample_simplex, sample_simplex_spacings
from .schemes import SchemeComparison, compare_schemes, compute_weights, emit_weights, make_scheme, plot_rank_changes
from .similarity import (
    MAX_CODE_TABLE,
    STAT_NAMES,
    _binary_pair_codes,
    _pair_similarities,
    _stats,
    _stats_from_codes,
    column_similarities,
    column_similarity,
)
from .size import SizeCurves, cumulative_scores, most_informative_order, plot_size_curves, size_curves

__all__ = [
    "ANALYSES", "BINARY_MEASURES", "CHUNK_FLOATS", "MAX_CODE_TABLE", "SCHEME_NAMES_DEFAULT", "SIMILARITY_MEASURES",
    "STAT_NAMES", "ZERO_DISTANCE", "ZERO_NORM",
    "ColumnClustering", "Completion", "PermutationTestResult", "RandomWeightsResult", "SchemeComparison", "SilhouetteTestResult",
    "SizeCurves",
    "binary_beat_probability", "chance_ranking_rate", "cluster_columns", "cluster_weights", "column_similarities", "column_similarity",
    "compare_schemes", "complete_matrix", "compute_weights", "cumulative_scores", "default_chunk_size", "emit_weights",
    "expected_score_std", "few_models_warning", "is_binary", "make_scheme", "most_informative_order", "permutation_test",
    "permute_within_models", "plot_pairwise", "plot_rank_changes", "plot_score_distribution", "plot_size_curves",
    "random_weight_analysis", "random_weight_analysis_loop", "ranks_desc", "read_prompt_matrix", "sample_simplex",
    "sample_simplex_spacings", "samples_matrix", "silhouette_test", "size_curves", "spherical_kmeans",
    "unit_columns", "weighted_scores",
]
