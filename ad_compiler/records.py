"""Base classes of the compiler's records: plain classes with fields.

A record class lists its fields in ``_fields`` and sets them in a hand-written
``__init__``; these bases give it what ``@dataclass`` would generate from the same
list: ``Record`` the ``repr``, ``Equal`` the ``==`` and hash over the fields (a
mutable record sets ``__hash__ = None``), ``Frozen`` fields that cannot be
assigned or deleted after ``__init__`` (which sets them with ``object.__setattr__``).
They are not dataclasses because ``@dataclass`` compiles each generated method
with ``exec`` when its module is imported: that was a quarter of
``import ad_compiler``.
"""
from __future__ import annotations


class Record:
    """``repr`` ``Name(field=value, ...)`` over ``_fields``."""

    __slots__ = ()
    _fields: tuple = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"


class Equal(Record):
    """Equal to a record of the same class whose fields are equal; hashed by them."""

    __slots__ = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())


class Frozen(Record):
    """Fields that cannot be assigned or deleted after ``__init__``."""

    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to {name!r}: a {type(self).__name__} is immutable")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete {name!r}: a {type(self).__name__} is immutable")
