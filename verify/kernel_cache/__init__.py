"""The Numba kernel cache, warmed before timed work: :func:`warmup.compile_kernels` imports
every kernel module of ``verify.boolean`` and ``verify.model`` (loading from the cache, or
compiling what it lacks in parallel processes, ``compile_pool``) and reports what it did.
Below both of its users, the report (``verify.report``) and the sweeps (``verify.sweep``).
"""
