"""Registration of the built-in methods: similarity measures, selectors, predictors, weighting schemes, manifest
writers, item estimators.

A plugin module like any third-party one (the hooks of :mod:`harness_ext.hookspecs`), registered by
:func:`harness_ext.plugin_manager.get_plugin_manager`. Each registration names its implementation by
reference (``"package.module:attribute"``, see :class:`harness_ext.types.Lazy`), imported when a
command first uses it: registering, and listing with ``harness-ext plugins``, import no numerics, and
a command imports only the methods it runs. The references name the plugin modules beside this one
(similarity measures in :mod:`harness_ext.plugins.similarity`, predictors in ``predictors_*``, ...), whose
classes take the methods' parameters and call the numerics in :mod:`harness_ext.methods`.

Nothing here may import numpy: tests/test_cli_speed.py checks what ``harness-ext plugins`` imports.
"""

from __future__ import annotations

from harness_ext.hookspecs import hookimpl
from harness_ext.plugin_manager import disabled_plugins, is_disabled
from harness_ext.types import ItemEstimator, ManifestWriter, Predictor, Selector, SimilarityMeasure, WeightingScheme

_P = "harness_ext.plugins."

#: name -> (description, binary_only); the functions are ``similarity.MEASURES.<name>``.
SIMILARITY_MEASURES = {
    "pearson": ("Pearson correlation (SimBA eq. 9)", False),
    "spearman": ("Spearman rank correlation, average ties (SimBA eq. 10)", False),
    "kendall_tau": ("Kendall tau-b (SimBA eq. 11)", False),
    "cosine": ("cosine similarity (SimBA eq. 12)", False),
    "manhattan": ("exp(-L1 distance) (SimBA eq. 13)", False),
    "euclidean": ("exp(-L2 distance) (SimBA eq. 13)", False),
    "minkowski": ("exp(-L3 distance), Minkowski p=3 (SimBA eq. 13)", False),
    "wasserstein": ("exp(-W1 / max W1) (SimBA eq. 14)", False),
    "jensen_shannon": ("1 - Jensen-Shannon distance, base 2 (SimBA eq. 15)", False),
    "jaccard": ("Jaccard similarity of 0/1 vectors (Ailem et al. §3.1)", True),
    "hamming": ("1 - Hamming distance of 0/1 vectors (Ailem et al. §3.1)", True),
}

#: name -> (implementation, description)
SELECTORS = {
    "greedy_coverage": ("selectors:GreedyCoverage", "SimBA Algorithm 1: greedy proxy coverage on a similarity matrix"),
    "beam_coverage": ("selectors:BeamCoverage", "SimBA Algorithm 1 with beam search (beam_width)"),
    "random": ("selectors:RandomOrder", "SimBA RANDOM baseline: one uniformly random order"),
    "greedy_minimum": ("selectors:GreedyMinimum", "SimBA GREEDY MINIMUM baseline: lowest mean score first"),
    "greedy_maximum": ("selectors:GreedyMaximum", "SimBA GREEDY MAXIMUM baseline: highest mean score first"),
    "random-subset": ("selectors_representation:RandomSubset", "uniform random k-subset drawn afresh for each k (Gusev & Zaytsev "
                                                    "§4 Random sampling; compare's baseline)"),
    "kmeans": ("selectors_representation:KMeansRepresentatives", "k-means on dataset representations, one representative per "
                                                      "cluster (Gusev & Zaytsev Alg. 1)"),
    "farthest-first-cosine": ("selectors_representation:CosineFarthestFirst", "greedy farthest-first traversal, cosine distance "
                                                                   "(Gusev & Zaytsev Alg. 2, C-FAFI)"),
    "farthest-first-euclidean": ("selectors_representation:FarthestFirst", "greedy farthest-first traversal, Euclidean distance "
                                                                "(Gusev & Zaytsev Alg. 2, E-FAFI)"),
    "a-optimal": ("selectors_design:AOptimal", "greedy A-optimal design with a swap pass (Gusev & Zaytsev §4, eq. 4)"),
    "d-optimal": ("selectors_design:DOptimal", "greedy D-optimal design with a swap pass (Gusev & Zaytsev §4, eq. 4)"),
    "prediction_greedy": ("selectors_predictive:PredictionGreedy",
                          "greedy forward on the cross-validated error of the profile and aggregate under a predictor, "
                          "shortlisted by A-optimal design on PPCA loadings; cost-aware"),
}

PREDICTORS = {
    "ridge": ("predictors_regression:RidgePredictor", "ridge regression of the other datasets on the subset (SimBA §4)"),
    "knn": ("predictors_regression:KNNPredictor", "k-nearest-neighbour regression, k = 5 or the training size (SimBA §4)"),
    "mlp_12": ("predictors_regression:MLPPredictor", "MLP regression, one hidden layer of 12 (SimBA §4)"),
    "mlp_12_12": ("predictors_regression:MLP2Predictor", "MLP regression, two hidden layers of 12 (SimBA §4)"),
    "global_mean": ("predictors_baselines:GlobalMean", "global mean of the dataset-standardised matrix (Zhao et al. baseline)"),
    "mean_of_means": ("predictors_baselines:MeanOfMeans", "average of model, dataset and global means (Zhao et al. baseline)"),
    "pmf": ("predictors_pmf:PMF", "probabilistic matrix factorisation, MAP; profiles give constrained PMF "
                                  "(Zhao et al. §3.1, §3.5)"),
    "bpmf": ("predictors_pmf:BayesianPMF", "Bayesian PMF by Gibbs sampling with predictive std (Zhao et al. §3.4; S&M 2008)"),
    "lowrank": ("predictors_lowrank:LowRankCompleter",
                "biased low-rank model in per-dataset logit/standardised space, ALS (MAP), rank and penalty by CV, "
                "fold-in of new models, adaptive conformal intervals"),
    "lowrank_bayes": ("predictors_lowrank:LowRankBayes",
                      "the lowrank model by Gibbs sampling (Bayesian), adaptive conformal intervals"),
    "benchpress": ("predictors_lowrank:BenchPress",
                   "BenchPress as published (Zeng & Papailiopoulos 2026): logit bias ALS, rank 2, lambda 0.1, "
                   "10 starts x 40 sweeps; hybrid risk model, leave-fold-out conformal 90% intervals"),
}

WEIGHTING_SCHEMES = {
    "uniform": ("weighting:Uniform", "equal weight per column (Ailem et al. §3.3)"),
    "medoids": ("weighting:Medoids", "cluster medoids only, spherical k-means with k by silhouette (Ailem et al. §3.3-1)"),
    "distance": ("weighting:DistanceWeights", "weight grows with cosine distance to the cluster medoid (Ailem et al. §3.3-2i)"),
    "inverse_distance": ("weighting:InverseDistanceWeights",
                         "weight grows with closeness to the cluster medoid (Ailem et al. §3.3-2ii)"),
    "random_simplex": ("weighting:RandomSimplex", "one draw uniform on the simplex, seeded (Ailem et al. §3.3)"),
    "user": ("weighting_user:UserWeights", "weights from a JSON/CSV file (path=...), renormalised"),
}

#: name -> (implementation, suffix, description)
MANIFEST_WRITERS = {
    "json": ("manifest_writers:write_json", ".json", "the full manifest as JSON"),
    "lm_eval_yaml": ("manifest_writers:write_lm_eval_yaml", ".yaml",
                     "lm-evaluation-harness group YAML (--include_path DIR --tasks GROUP)"),
    "helm_conf": ("manifest_writers:write_helm_conf", ".conf", "HELM run-entries conf (helm-run --conf-paths)"),
    "task_list": ("manifest_writers:write_task_list", ".txt", "plain list of the selected tasks, in selection order"),
}


_IE, _IRT = "item_estimators:", "item_irt_estimators:"
#: name -> (implementation in harness_ext.methods.engine, description); the ESTIMATORS of those two modules
ITEM_ESTIMATORS = {
    "sample_mean": (_IE + "SampleMean", "mean of a simple random sample of items, finite-population interval (Cochran 1977)"),
    "random_learn": (_IE + "RandomLearn", "random sampling + learn: ridge from sampled to full scores, conformal interval "
                                          "(Zhang, Dorner and Hardt 2025)"),
    "aipw_paper": (_IE + "AIPWPaper", "AIPW as the authors' code computes it, ridge penalty 10 (Zhang, Dorner and Hardt 2025)"),
    "aipw": (_IE + "AIPW", "AIPW with a cross-fitted working model and its design variance (Zhang, Dorner and Hardt 2025)"),
    "anchor_weighted": (_IE + "AnchorWeighted", "anchor points: k-medoids items weighted by their clusters (Vivek et al. 2024)"),
    "composite": (_IE + "Composite", "Fay-Herriot-type combination of random_learn and aipw (Fay and Herriot 1979)"),
    "irt": (_IRT + "IRT", "IRT: mean of the 2PL model's predictions, ability from the sampled items (Polo et al. 2024)"),
    "pirt": (_IRT + "PIRT", "p-IRT: sampled answers plus 2PL predictions for the rest (Polo et al. 2024)"),
    "gpirt": (_IRT + "GPIRT", "gp-IRT: p-IRT combined with the sample mean by the tinyBenchmarks lambda (Polo et al. 2024)"),
    "aipw_irt": (_IRT + "AIPWIRT", "AIPW with the 2PL prediction as working model, design-based interval (Polo et al. 2024)"),
    "aipw_crosstask": (_IRT + "CrossTaskAIPW", "AIPW with one 2PL model across a benchmark's tasks (Kipnis et al. 2025)"),
}
_ENGINE = "harness_ext.methods.engine."


def _enabled(table: dict, ref=lambda v: v[0], package: str = _P) -> dict:
    """``table`` without the entries whose implementation module is switched off.

    All built-in methods are registered by this one module, so ``--disable-plugin NAME`` (or
    ``HARNESS_EXT_DISABLE_PLUGINS``) also takes an implementation module, full
    (``harness_ext.plugins.predictors_lowrank``) or its last part (``similarity``), and leaves out
    just the built-ins implemented there: the way to make room for a third-party plugin that
    registers the same names. ``package`` is where the implementation modules live.
    """
    off = disabled_plugins()
    if not off:
        return table
    return {k: v for k, v in table.items() if not is_disabled(off, package + ref(v).split(":")[0])}


@hookimpl
def harness_ext_similarity_measures():
    for name, (description, binary) in _enabled(SIMILARITY_MEASURES, lambda v: "similarity:").items():
        yield SimilarityMeasure(name=name, description=description, func=f"{_P}similarity:MEASURES.{name}",
                                binary_only=binary, unit_diagonal=True)


@hookimpl
def harness_ext_selectors():
    for name, (ref, description) in _enabled(SELECTORS).items():
        yield Selector(name=name, cls=_P + ref, description=description)


@hookimpl
def harness_ext_predictors():
    for name, (ref, description) in _enabled(PREDICTORS).items():
        yield Predictor(name=name, cls=_P + ref, description=description)


@hookimpl
def harness_ext_weighting_schemes():
    for name, (ref, description) in _enabled(WEIGHTING_SCHEMES).items():
        yield WeightingScheme(name=name, cls=_P + ref, description=description)


@hookimpl
def harness_ext_manifest_writers():
    for name, (ref, suffix, description) in _enabled(MANIFEST_WRITERS).items():
        yield ManifestWriter(name=name, write=_P + ref, suffix=suffix, description=description)


@hookimpl
def harness_ext_item_estimators():
    for name, (ref, text) in _enabled(ITEM_ESTIMATORS, package=_ENGINE).items():
        yield ItemEstimator(name=name, cls=_ENGINE + ref, description=text, interval=name != "anchor_weighted")
