"""The built-in similarity measures, registered by :mod:`harness_ext.plugins.registry` as
``harness_ext.plugins.similarity:MEASURES.<name>``.

The measures, their conventions (pairwise-complete rows, NaN where undefined, unit diagonal) and their
vectorised kernels live in :mod:`harness_ext.methods.similarity`.

References
----------
SimBA (Subramani, Gomez, Diab), §3.1 and Appendix A, eqs. 9-15; Ailem et al., §3.1 (Jaccard, Hamming).
"""

from __future__ import annotations

from types import SimpleNamespace

from harness_ext.methods.similarity.measures import _FUNCS

#: The registered function of each measure (``MEASURES.pearson``), imported when a measure is first used.
MEASURES = SimpleNamespace(**{name: func for name, (func, _, _) in _FUNCS.items()})
