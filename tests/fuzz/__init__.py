"""A differential fuzzer: seeded random NumPy programs checked against plain Python.

Each seed gives one program (``generator.generate``), written to a real ``.py``
file and imported (the compiler reads source through ``inspect``). ``oracle.check``
runs it through ``value_and_grad`` and ``grad`` and compares against calling the
function (value, type, dtype), central finite differences in float64 with two
step sizes (gradient), float32 inputs (dtype), and a second input through the
cached gradient function. ``python -m tests.fuzz --seeds 0:2000 --jobs 2`` is the long
mode (docs/fuzzing.md); ``tests/fuzz/test_fuzz.py`` runs a fixed seed set.

Modules: ``recipes`` (one expression recipe per registered lowering, method and
builtin), ``statements`` (statement and control-flow recipes), ``generator``
(programs by feature), ``program`` (source, inputs, loading and running),
``oracle`` (the checks and their outcomes), ``shrink`` (smaller failing
programs), ``features`` (PENDING and STABLE), ``runner`` (the command line).
"""
