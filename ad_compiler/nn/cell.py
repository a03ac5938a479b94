"""Cell: the base class of networks, a function (``construct``) with named state.

Invariants:

- Assigning an attribute registers it: a Parameter in ``_params``, a Cell in
  ``_cells``, both in assignment order; the value is also stored as a plain
  attribute, so ``getattr(cell, name)`` finds it with no special lookup.
  Re-assigning keeps the original position; assigning None keeps the slot empty.
- Names: an unnamed Parameter takes its attribute name (``weight``). When a Cell
  is assigned as an attribute of another (with ``auto_prefix``), the names of all
  its Parameters are rewritten to their attribute paths from the parent:
  ``fc1.weight``, then ``block.fc1.weight`` one level up. Children of containers
  are called ``'0'``, ``'1'`` ..., hence ``0.weight``.
- Traversal order (``cells_and_names``, ``parameters_and_names``,
  ``trainable_params``): the Cell itself, then its sub-cells depth first in
  registration order; each Cell and each Parameter object appears once.
- ``cell(*args)`` runs ``cell.construct(*args)`` as it is; the compiler reads the
  same ``construct`` source, with ``self``'s Parameters as explicit inputs.

>>> import numpy as np
>>> from ad_compiler.nn.parameter import Parameter
>>> class Inner(Cell):
...     def __init__(self):
...         super().__init__()
...         self.weight = Parameter(np.ones(2, np.float32))
>>> class Outer(Cell):
...     def __init__(self):
...         super().__init__()
...         self.scale = Parameter(np.ones(1, np.float32), name="s")
...         self.fc1 = Inner()
>>> [p.name for p in Outer().trainable_params()]
['s', 'fc1.weight']
"""
from __future__ import annotations

from collections import OrderedDict

from ..errors import UnresolvedAttributeError
from ..tensor import Tensor
from .parameter import PARAMETER_NAME_DEFAULT, Parameter, ParameterTuple

__all__ = ["Cell"]



#: Bumped whenever an existing attribute of any Cell is re-assigned or deleted
#: (a new Parameter object, another sub-cell, a changed setting). Compiled code
#: that read an attribute of a Cell reached by no recorded path (see
#: frontend/captured.py) records it and recompiles when it moved; every other
#: read of captured state is checked by itself at each call.
EPOCH = 0

def bump_epoch() -> None:
    """Make compiled code that depends on the Cell epoch compile again."""
    global EPOCH
    EPOCH += 1


class Cell:
    """Base class for networks and layers: subclasses define ``construct``.

    Args:
        auto_prefix: whether sub-cells assigned to this Cell get their Parameters
            renamed with the attribute path (``fc1.weight``).
        flags: accepted for MindSpore compatibility; unused.
    """

    #: set by :meth:`recompute`; compiled code that called this Cell read it (and
    #: checks it at each call)
    _recompute = False

    def __init__(self, auto_prefix=True, flags=None):
        state = self.__dict__
        state["_params"] = OrderedDict()
        state["_cells"] = OrderedDict()
        state["_params_list"] = {}      # attribute -> keys of a registered Parameter sequence
        state["_auto_prefix"] = auto_prefix
        state["training"] = False
        state["requires_grad"] = False

    # ----------------------------------------------------------- calling
    def construct(self, *args, **kwargs):
        raise missing_construct(self)

    def __call__(self, *args, **kwargs):
        return self.construct(*args, **kwargs)

    # ----------------------------------------------------------- attributes
    def __setattr__(self, name, value):
        global EPOCH
        params = self.__dict__.get("_params", ())
        if name in params and isinstance(value, Tensor) and not isinstance(value, Parameter):
            pass  # set_data semantics: Parameters are read at call time, nothing to recompile
        elif name in self.__dict__ or name in params or name in self.__dict__.get("_cells", ()):
            EPOCH += 1  # a compiled gradient may have read the old value: recompile
        if isinstance(value, Parameter):
            self._set_parameter(name, value)
        elif _is_parameter_sequence(value):
            self._set_parameter_sequence(name, value)
        elif isinstance(value, Cell):
            self._set_cell(name, value)
        elif name in self.__dict__.get("_params", ()):
            self._reset_parameter(name, value)
        elif name in self.__dict__.get("_cells", ()):
            self._reset_cell(name, value)
        else:
            self._forget_sequence(name)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # Only reached when ``name`` is not a plain attribute: entries added with
        # insert_param_to_cell / insert_child_to_cell.
        state = self.__dict__
        for registry in ("_params", "_cells"):
            entries = state.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        global EPOCH
        EPOCH += 1
        self._params.pop(name, None)
        self._cells.pop(name, None)
        self._forget_sequence(name)
        if name in self.__dict__:
            object.__delattr__(self, name)

    def _registry(self, key: str) -> dict:
        entries = self.__dict__.get(key)
        if entries is None:
            raise AttributeError(f"{type(self).__name__}: call super().__init__() before "
                                 f"assigning Parameters or Cells")
        return entries

    def _set_parameter(self, name: str, value: Parameter) -> None:
        if name in self._registry("_cells"):
            raise TypeError(f"{type(self).__name__}.{name} holds a Cell; cannot assign a Parameter")
        self._forget_sequence(name)
        self.insert_param_to_cell(name, value)
        object.__setattr__(self, name, value)

    def _set_parameter_sequence(self, name: str, value) -> None:
        params = self._registry("_params")
        self._forget_sequence(name)
        keys = []
        for i, param in enumerate(value):
            if any(param is p for p in params.values()):
                continue
            key = param.name if param.name != PARAMETER_NAME_DEFAULT else f"{name}.{i}"
            if key in params:
                raise ValueError(f"{type(self).__name__}.{name}: a Parameter named '{key}' "
                                 f"is already registered; give each Parameter a unique name")
            self.insert_param_to_cell(key, param, check_name_contain_dot=False)
            keys.append(key)
        self._params_list[name] = keys
        object.__setattr__(self, name, value)

    def _forget_sequence(self, name: str) -> None:
        keys = self.__dict__.get("_params_list", {}).pop(name, ())
        for key in keys:
            self._params.pop(key, None)

    def _set_cell(self, name: str, value: "Cell") -> None:
        cells = self._registry("_cells")
        if name in self._params:
            raise TypeError(f"{type(self).__name__}.{name} holds a Parameter; cannot assign a Cell")
        self._forget_sequence(name)
        if self._auto_prefix:
            value.update_parameters_name(name + ".")
        cells[name] = value
        object.__setattr__(self, name, value)

    def _reset_parameter(self, name: str, value) -> None:
        current = self._params[name]
        if isinstance(value, Tensor) and current is not None:
            # MindSpore: assigning a Tensor to a Parameter attribute sets its data.
            current.set_data(value)
        elif value is None:
            self._params[name] = None
            object.__setattr__(self, name, None)
        else:
            raise TypeError(f"{type(self).__name__}.{name} is a Parameter; assign a Parameter, "
                            f"a Tensor or None, not {type(value).__name__}")

    def _reset_cell(self, name: str, value) -> None:
        if value is not None:
            raise TypeError(f"{type(self).__name__}.{name} is a Cell; assign a Cell or None, "
                            f"not {type(value).__name__}")
        self._cells[name] = None
        object.__setattr__(self, name, None)

    # ----------------------------------------------------------- registration
    def insert_param_to_cell(self, param_name: str, param, check_name_contain_dot=True) -> None:
        """Register ``param`` under ``param_name``; an unnamed Parameter takes that name."""
        if not isinstance(param_name, str) or not param_name:
            raise KeyError(f"a Parameter's key must be a non-empty str, got {param_name!r}")
        if check_name_contain_dot and "." in param_name:
            raise KeyError(f"a Parameter's key must not contain '.': {param_name!r}")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"expected a Parameter, got {type(param).__name__}")
        if param is not None and param.name == PARAMETER_NAME_DEFAULT:
            param.name = param_name
        self._registry("_params")[param_name] = param

    def insert_child_to_cell(self, child_name: str, child_cell) -> None:
        """Register ``child_cell`` under ``child_name`` (names are not prefixed here)."""
        if not isinstance(child_name, str) or not child_name or "." in child_name:
            raise KeyError(f"a child cell's name must be a non-empty str without '.', "
                           f"got {child_name!r}")
        if child_cell is not None and not isinstance(child_cell, Cell):
            raise TypeError(f"expected a Cell, got {type(child_cell).__name__}")
        bump_epoch()  # a container Cell (CellList) may have been iterated by compiled code
        self._registry("_cells")[child_name] = child_cell

    def update_parameters_name(self, prefix: str = "", recurse: bool = True) -> None:
        """Rename every Parameter to ``prefix`` + its attribute path inside this Cell."""
        for path, param in self.parameters_and_names(expand=recurse):
            param.name = prefix + path

    # ----------------------------------------------------------- traversal
    def cells_and_names(self, cells=None, name_prefix: str = ""):
        """``(path, cell)`` for this Cell and every sub-cell, each Cell once."""
        seen = cells if cells is not None else set()
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self._cells.items():
            if cell is not None:
                path = f"{name_prefix}.{name}" if name_prefix else name
                yield from cell.cells_and_names(seen, path)

    def parameters_and_names(self, name_prefix: str = "", expand: bool = True):
        """``(path, parameter)`` pairs, own Parameters first, each Parameter object once."""
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        seen = set()
        for cell_path, cell in cells:
            for key, param in cell._params.items():
                if param is None or id(param) in seen:
                    continue
                seen.add(id(param))
                yield (f"{cell_path}.{key}" if cell_path else key), param

    def get_parameters(self, expand: bool = True):
        """All Parameters (trainable or not), as a generator."""
        for _, param in self.parameters_and_names(expand=expand):
            yield param

    def trainable_params(self, recurse: bool = True) -> list:
        """The Parameters with ``requires_grad=True``, in traversal order."""
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse: bool = True) -> list:
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse: bool = True) -> OrderedDict:
        """``{parameter.name: parameter}`` in traversal order."""
        return OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse))

    def name_cells(self) -> OrderedDict:
        """The direct sub-cells by attribute name (empty slots and repeats left out)."""
        out, seen = OrderedDict(), set()
        for name, cell in self._cells.items():
            if cell is not None and id(cell) not in seen:
                seen.add(id(cell))
                out[name] = cell
        return out

    def cells(self):
        """The direct sub-cells."""
        return self.name_cells().values()

    # ----------------------------------------------------------- modes
    def set_train(self, mode: bool = True) -> "Cell":
        """Set ``training`` on this Cell and all sub-cells; returns self."""
        for _, cell in self.cells_and_names():
            cell.training = mode
        return self

    def set_grad(self, requires_grad: bool = True) -> "Cell":
        self.requires_grad = requires_grad
        return self

    def recompute(self, mode: bool = True, **kwargs) -> None:
        """Recompute this Cell's forward values in the backward sweep instead of storing
        them (``ms.checkpoint`` for every call of the Cell); ``mode=False`` undoes it.
        A gradient compiled before compiles again at its next call."""
        self._recompute = bool(mode)
        bump_epoch()  # for code that reached this Cell by no recorded path

    # ----------------------------------------------------------- printing
    def extend_repr(self) -> str:
        """Extra text inside ``Name<...>``; layers override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extend_repr()
        children = [(k, c) for k, c in self._cells.items() if c is not None]
        if not children:
            return f"{type(self).__name__}<{extra}>"
        lines = ([extra] if extra else []) + [f"({k}): {c!r}" for k, c in children]
        body = "\n".join(lines).replace("\n", "\n  ")
        return f"{type(self).__name__}<\n  {body}\n  >"


def _is_parameter_sequence(value) -> bool:
    if isinstance(value, ParameterTuple):
        return True
    return (isinstance(value, (list, tuple)) and len(value) > 0
            and all(isinstance(v, Parameter) for v in value))


def construct_of(cell):
    """The ``construct`` of ``cell``'s class; an error when the class defines none."""
    construct = type(cell).construct
    if construct is Cell.construct:
        raise missing_construct(cell)
    return construct


def missing_construct(cell) -> UnresolvedAttributeError:
    """The AttributeError MindSpore raises for a Cell without ``construct``, with a hint."""
    name = type(cell).__name__
    return UnresolvedAttributeError(
        f"For '{name}', the method 'construct' is not defined",
        hint=f"define construct(self, ...) in class {name}: it is the computation the Cell "
             "performs, and what is differentiated")
