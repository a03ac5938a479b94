"""Primitive declarations, one module per family.

Importing this package registers every primitive, its lowerings and methods.
"""
from . import elementwise, reduction, shape  # noqa: F401  (registration side effects)
