"""Similarity between the columns of a performance matrix: the SimBA measures and their vectorised kernels.

* :mod:`~harness_ext.methods.similarity.measures`: the measures as functions ``func(X) -> C``, their
  shared conventions, display labels, and :func:`~harness_ext.methods.similarity.measures.similarity_matrix`
  (a registered measure by name, checked);
* :mod:`~harness_ext.methods.similarity.kernels`: input checks, ranks, Pearson, Spearman and cosine;
* :mod:`~harness_ext.methods.similarity.distances`: Lp, Wasserstein and Jensen-Shannon;
* :mod:`~harness_ext.methods.similarity.kendall`: Kendall's tau-b;
* :mod:`~harness_ext.methods.similarity.threads`: the worker thread, BLAS thread control and scratch arrays.

The built-in plugin :mod:`harness_ext.plugins.similarity` registers the measures. Nothing is imported here,
so that importing one kernel does not import the others.
"""
