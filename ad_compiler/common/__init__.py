"""``ad_compiler.common``: MindSpore's ``mindspore.common`` (here: ``initializer``)."""
from . import initializer  # noqa: F401

__all__ = ["initializer"]
