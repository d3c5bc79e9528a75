"""The formal statements of the papers: one module per statement.

Each module defines its statement (``define_statement``: id, title, confidence tag, hypotheses,
the explicit bound, a link to its derivation) and its checks (``@STATEMENT.check(name,
policy=...)``), each returning a ``verify.registry.Outcome``. ``verify.registry.load_all()``
imports every public module here. Shared bounds live in ``verify.theory``, shared measurement
code in ``verify.checks``.
"""
