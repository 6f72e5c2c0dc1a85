"""Hook specifications: the seven kinds of harness-ext plugin.

Every hook takes no arguments and returns (or yields) registration objects
from :mod:`harness_ext.types`. Built-in plugins use exactly these hooks.
"""

from __future__ import annotations

from typing import Iterable

import pluggy

from .registrations import Adapter, ItemEstimator, ManifestWriter, Predictor, Selector, SimilarityMeasure, WeightingScheme

PROJECT_NAME = "harness_ext"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Decorator that marks a method of :class:`HarnessExtSpecs` as a hook specification."""

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Decorator that marks a plugin's function as an implementation of one of the hooks below (``@hookimpl``)."""


class HarnessExtSpecs:
    """The hook specifications of harness-ext."""

    @hookspec
    def harness_ext_similarity_measures(self) -> Iterable[SimilarityMeasure]:
        """Register similarity measures between datasets (columns of a performance matrix).

        Example
        -------
        .. code-block:: python

            @hookimpl
            def harness_ext_similarity_measures():
                # pairwise-complete, NaN for a constant column, as the contract asks (np.corrcoef is NaN
                # wherever a column has a missing cell)
                yield SimilarityMeasure(name="my-corr", func=lambda X: pd.DataFrame(X).corr(min_periods=2).to_numpy())

        Returns
        -------
        Iterable[SimilarityMeasure]
        """

    @hookspec
    def harness_ext_selectors(self) -> Iterable[Selector]:
        """Register dataset-subset selectors.

        Example
        -------
        .. code-block:: python

            @hookimpl
            def harness_ext_selectors():
                yield Selector(name="first-k", cls=FirstK)

        Returns
        -------
        Iterable[Selector]
        """

    @hookspec
    def harness_ext_predictors(self) -> Iterable[Predictor]:
        """Register predictors that complete a performance matrix.

        Example
        -------
        .. code-block:: python

            @hookimpl
            def harness_ext_predictors():
                yield Predictor(name="column-mean", cls=ColumnMean)

        Returns
        -------
        Iterable[Predictor]
        """

    @hookspec
    def harness_ext_weighting_schemes(self) -> Iterable[WeightingScheme]:
        """Register dataset or prompt weighting schemes.

        Example
        -------
        .. code-block:: python

            @hookimpl
            def harness_ext_weighting_schemes():
                yield WeightingScheme(name="my-uniform", cls=MyUniform)  # "uniform" is built in: a clash

        Returns
        -------
        Iterable[WeightingScheme]
        """

    @hookspec
    def harness_ext_adapters(self) -> Iterable[Adapter]:
        """Register result-file adapters.

        Example
        -------
        .. code-block:: python

            @hookimpl
            def harness_ext_adapters():
                yield Adapter(name="my-format", can_handle=sniff, read=read_records)

        Returns
        -------
        Iterable[Adapter]
        """

    @hookspec
    def harness_ext_manifest_writers(self) -> Iterable[ManifestWriter]:
        """Register writers that turn a reduced-benchmark manifest into harness files.

        Example
        -------
        .. code-block:: python

            @hookimpl
            def harness_ext_manifest_writers():
                yield ManifestWriter(name="names", write=write_names, suffix=".txt")  # "task-list" is built in

        Returns
        -------
        Iterable[ManifestWriter]
        """

    @hookspec
    def harness_ext_item_estimators(self) -> Iterable[ItemEstimator]:
        """Register item-level estimators: a full-task score and its interval from a few items.

        Example
        -------
        .. code-block:: python

            @hookimpl
            def harness_ext_item_estimators():
                yield ItemEstimator(name="my-mean", cls=MyMean)  # "sample_mean" is built in: a clash

        Returns
        -------
        Iterable[ItemEstimator]
        """
