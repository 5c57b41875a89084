"""Matcher registry: built-ins by name, plugins by entry point, callables as they are."""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

ENTRY_POINT_GROUP = "matchpart.matchers"


@dataclass(frozen=True)
class MatcherInfo:
    """What the registry knows of a matcher."""

    name: str
    func: Callable
    description: str = ""
    paper: str = ""
    weighted: bool = True
    backends: tuple = ("cpu", "gpu")
    serial: bool = False


_REGISTRY: dict[str, MatcherInfo] = {}
_plugins_loaded = False


def register(name, func=None, *, description="", paper="", weighted=True, backends=("cpu", "gpu"),
             serial=False, replace=False):
    """Register ``func`` under ``name``; usable as ``@register("name", ...)``.

    ``func(graph, *, rating, seed, backend) -> Matching``. ``backends`` lists the devices
    it runs on natively; a CPU-only matcher given a GPU graph is run on a host copy.
    """
    def deco(f):
        if name in _REGISTRY and not replace:
            raise ValueError(f"a matcher named {name!r} is already registered (pass replace=True)")
        doc = description or (inspect.getdoc(f) or "").split("\n")[0]
        _REGISTRY[name] = MatcherInfo(name, f, doc, paper, weighted, tuple(backends), serial)
        return f
    return deco(func) if func is not None else deco


def _load_plugins():
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _REGISTRY:
            continue
        obj = ep.load()
        if isinstance(obj, MatcherInfo):
            _REGISTRY[ep.name] = obj
        elif callable(obj):
            register(ep.name, obj)


def available():
    """Names of all registered matchers (built-ins and plugins), sorted."""
    _load_plugins()
    return sorted(_REGISTRY)


def describe(name):
    """The MatcherInfo of a registered matcher."""
    return resolve(name)


def resolve(matcher) -> MatcherInfo:
    """MatcherInfo for a name, a MatcherInfo, or any callable with the matcher signature."""
    if isinstance(matcher, MatcherInfo):
        return matcher
    if callable(matcher):
        return MatcherInfo(getattr(matcher, "__name__", "custom"), matcher, "user-supplied callable")
    _load_plugins()
    try:
        return _REGISTRY[matcher]
    except KeyError:
        raise ValueError(f"unknown matcher {matcher!r}; available: {', '.join(available())}") from None
