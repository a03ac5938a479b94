"""Checkpoints: ``save_checkpoint``, ``load_checkpoint`` and ``load_param_into_net``
with MindSpore 2.x's signatures and return values.

The file is a plain NumPy ``.npz`` archive (``np.savez``; not MindSpore's protobuf
``.ckpt`` format, so files do not move between the two libraries): one array per
Parameter, stored under the Parameter's name, in its dtype and shape. Values of
``append_dict`` are stored as 0-d arrays (numbers, bools, strings) or arrays.
As in MindSpore, ``.ckpt`` is appended to a file name without that suffix. Files
are read with ``allow_pickle=False``: loading a checkpoint never runs code.

- ``save_checkpoint(save_obj, ckpt_file_name, ..., append_dict=None, choice_func=None)``:
  ``save_obj`` is a Cell (all its Parameters, trainable or not), a list of
  Parameters or of ``{"name": ..., "data": ...}`` dicts, or a dict
  ``name -> Parameter / Tensor`` (what ``load_checkpoint`` returns).
- ``load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
  ..., specify_prefix=None, choice_func=None)`` returns ``{name: Parameter}`` (a
  string entry stays a ``str``); with ``net`` it also loads them into ``net``.
- ``load_param_into_net(net, parameter_dict, strict_load=False)`` sets every
  Parameter of ``net`` whose name is in the dict and returns
  ``(param_not_load, ckpt_not_load)``: the names of ``net``'s Parameters that got
  no value and of the dict's entries that were not loaded by name. Unless
  ``strict_load``, a second pass loads the rest from entries named ``prefix +
  name`` (a checkpoint of a net wrapped in another Cell), as MindSpore does. A shape
  that differs is a RuntimeError; a dtype that differs is converted between
  floating types unless ``strict_load`` (then RuntimeError).

Encryption (``enc_key``/``dec_key``), asynchronous and distributed saving are not
supported: a key is a ValueError; ``async_save`` and ``integrated_save`` are accepted
and have no effect.
"""
from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np

from .nn.cell import Cell
from .nn.parameter import Parameter
from .tensor import Tensor, unwrap

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net"]

_SCALARS = (bool, int, float, str, np.number, np.bool_)


def _file_name(name, who: str) -> str:
    if not isinstance(name, (str, os.PathLike)):
        raise TypeError(f"For '{who}', the checkpoint file name must be a str, got "
                        f"{type(name).__name__}")
    name = os.fspath(name)
    if not name or name.endswith(os.sep):
        raise ValueError(f"For '{who}', the checkpoint file name must name a file, got {name!r}")
    return name if name.endswith(".ckpt") else name + ".ckpt"


def _refuse_key(key, who: str) -> None:
    if key is not None:
        raise ValueError(f"For '{who}', encrypted checkpoints are not supported: pass no key")


def _entries(save_obj) -> list:
    """``[(name, value)]`` of what ``save_checkpoint`` writes."""
    who = "save_checkpoint"
    if isinstance(save_obj, Cell):
        return [(p.name, p) for _, p in save_obj.parameters_and_names()]
    if isinstance(save_obj, dict):
        return list(save_obj.items())
    if isinstance(save_obj, (list, tuple)):
        out = []
        for item in save_obj:
            if isinstance(item, Parameter):
                out.append((item.name, item))
            elif isinstance(item, dict) and set(item) == {"name", "data"}:
                out.append((item["name"], item["data"]))
            else:
                raise TypeError(f"For '{who}', a list must hold Parameters or "
                                f"{{'name': ..., 'data': ...}} dicts, got {type(item).__name__}")
        return out
    raise TypeError(f"For '{who}', save_obj must be a Cell, a list or a dict, got "
                    f"{type(save_obj).__name__}")


def _array(name, value, who: str) -> np.ndarray:
    if not isinstance(name, str):
        raise TypeError(f"For '{who}', a name must be a str, got {type(name).__name__}")
    if isinstance(value, (Tensor, np.ndarray)):
        return np.asarray(unwrap(value))
    if isinstance(value, _SCALARS):
        return np.asarray(value)
    raise TypeError(f"For '{who}', the value of '{name}' must be a Parameter, a Tensor, an "
                    f"array, a number, a bool or a str, got {type(value).__name__}")


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False,
                    append_dict=None, enc_key=None, enc_mode="AES-GCM", choice_func=None,
                    **kwargs) -> None:
    """Write the Parameters of ``save_obj`` (and ``append_dict``) to an ``.npz`` file."""
    who = "save_checkpoint"
    _refuse_key(enc_key, who)
    path = _file_name(ckpt_file_name, who)
    entries = _entries(save_obj)
    if append_dict is not None:
        if not isinstance(append_dict, dict):
            raise TypeError(f"For '{who}', append_dict must be a dict, got "
                            f"{type(append_dict).__name__}")
        entries += list(append_dict.items())
    arrays: dict = OrderedDict()
    for name, value in entries:
        if choice_func is not None and not choice_func(name):
            continue
        arrays[name] = _array(name, value, who)
    with open(path, "wb") as f:   # a file object: NumPy adds no '.npz' to the name
        np.savez(f, **arrays)


def _prefixes(value, who: str, what: str) -> tuple:
    if value is None:
        return ()
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(p, str) and p for p in items):
        raise TypeError(f"For '{who}', {what} must be a non-empty str or a list of them, "
                        f"got {value!r}")
    return tuple(items)


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
                    dec_key=None, dec_mode="AES-GCM", specify_prefix=None, choice_func=None,
                    **kwargs) -> dict:
    """``{name: Parameter}`` read from a file ``save_checkpoint`` wrote."""
    who = "load_checkpoint"
    _refuse_key(dec_key, who)
    path = os.fspath(ckpt_file_name) if isinstance(ckpt_file_name, (str, os.PathLike)) else None
    if path is None:
        raise TypeError(f"For '{who}', ckpt_file_name must be a str, got "
                        f"{type(ckpt_file_name).__name__}")
    if not os.path.isfile(path):
        raise ValueError(f"For '{who}', the checkpoint file {path!r} does not exist")
    drop = _prefixes(filter_prefix, who, "filter_prefix")
    keep = _prefixes(specify_prefix, who, "specify_prefix")
    try:
        with np.load(path, allow_pickle=False) as data:
            loaded = {name: data[name] for name in data.files}
    except (OSError, ValueError) as exc:
        raise ValueError(f"For '{who}', {path!r} is not a checkpoint written by "
                         f"save_checkpoint (an .npz archive): {exc}") from None
    out: dict = OrderedDict()
    for name, arr in loaded.items():
        if drop and name.startswith(drop) or keep and not name.startswith(keep):
            continue
        if choice_func is not None and not choice_func(name):
            continue
        out[name] = str(arr) if arr.dtype.kind == "U" else Parameter(arr, name=name)
    if net is not None:
        load_param_into_net(net, out, strict_load)
    return out


def load_param_into_net(net, parameter_dict, strict_load=False) -> tuple:
    """Set ``net``'s Parameters from ``parameter_dict``; ``(param_not_load, ckpt_not_load)``."""
    who = "load_param_into_net"
    if not isinstance(net, Cell):
        raise TypeError(f"For '{who}', the argument 'net' should be a Cell, got "
                        f"{type(net).__name__}")
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"For '{who}', the argument 'parameter_dict' should be a dict, got "
                        f"{type(parameter_dict).__name__}")
    for key, value in parameter_dict.items():
        if not isinstance(key, str) or not isinstance(value, (Tensor, str)):
            raise TypeError(f"For '{who}', parameter_dict must map str names to Parameters, "
                            f"got {type(key).__name__} -> {type(value).__name__}")
    if not isinstance(strict_load, bool):
        raise TypeError(f"For '{who}', strict_load must be a bool, got "
                        f"{type(strict_load).__name__}")
    param_not_load, ckpt_not_load = [], list(parameter_dict)
    for _, param in net.parameters_and_names():
        if param.name not in parameter_dict or isinstance(parameter_dict[param.name], str):
            param_not_load.append(param.name)
            continue
        _update(param, np.asarray(unwrap(parameter_dict[param.name])), strict_load, who)
        ckpt_not_load.remove(param.name)
    if param_not_load and not strict_load:
        _load_with_prefix(net, parameter_dict, param_not_load, who)
    return param_not_load, ckpt_not_load


def _load_with_prefix(net, parameter_dict, param_not_load, who) -> None:
    """MindSpore's second pass (not with ``strict_load``): while some entry of the dict is
    ``prefix + name`` of a Parameter not loaded yet, load every such Parameter from
    ``prefix + its name`` (they leave ``param_not_load``; ``ckpt_not_load`` keeps them)."""
    while param_not_load:
        prefix = next((key[:-len(name)] for name in param_not_load for key in parameter_dict
                       if key.endswith(name) and key != name
                       and not isinstance(parameter_dict[key], str)), None)
        if prefix is None:
            return
        for _, param in net.parameters_and_names():
            key = prefix + param.name
            if param.name in param_not_load and key in parameter_dict \
                    and not isinstance(parameter_dict[key], str):
                _update(param, np.asarray(unwrap(parameter_dict[key])), False, who)
                param_not_load.remove(param.name)


def _update(param, arr, strict: bool, who: str) -> None:
    old = unwrap(param)
    if arr.shape != old.shape:
        raise RuntimeError(f"For '{who}', '{param.name}' has shape {old.shape} in the net and "
                           f"{arr.shape} in parameter_dict: check that the checkpoint belongs "
                           f"to this network")
    if arr.dtype != old.dtype:
        if strict or not (arr.dtype.kind == "f" and old.dtype.kind == "f"):
            raise RuntimeError(f"For '{who}', '{param.name}' is {old.dtype} in the net and "
                               f"{arr.dtype} in parameter_dict")
        arr = arr.astype(old.dtype)
    param.set_data(arr.copy())
