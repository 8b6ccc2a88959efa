"""What every command shares: common options, the error boundary, intent options."""
from __future__ import annotations

import functools
import os
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

import typer

from ..errors import FixerError, UsageError
from ..model import Intent

F = TypeVar("F", bound=Callable[..., Any])

def handle_errors(json_flag: str = "json") -> Callable[[F], F]:
    """Turn a FixerError raised by the library into a rendered message and its exit code.
    Anything else is a bug: it propagates (with a traceback) so it gets reported."""

    def deco(fn: F) -> F:
        command = fn.__module__.rsplit(".", 1)[-1]
        if command == "recipes":
            command = "recipes " + fn.__name__.replace("_command", "")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                from ..render import set_command

                set_command(command)
                return fn(*args, **kwargs)
            except FixerError as exc:
                from .. import render

                render.error(exc, as_json=bool(kwargs.get(json_flag)), command=command)
                raise typer.Exit(exc.exit_code)
            except KeyboardInterrupt:
                from .._entry import report_interrupt

                report_interrupt([*command.split(), *(["--json"] if kwargs.get(json_flag) else [])])
                raise typer.Exit(130)

        return wrapper  # type: ignore[return-value]

    return deco


def make_intent(
    framework: Optional[List[str]] = None,
    torch: Optional[str] = None,
    tensorflow: Optional[str] = None,
    jax: Optional[str] = None,
    cuda: Optional[str] = None,
    cudnn_from: Optional[str] = None,
    keep: Optional[List[str]] = None,
) -> Intent:
    """Intent options -> Intent, checking their form (not yet against recipes)."""
    from ..model import FRAMEWORKS

    frameworks = tuple(framework or ())
    for f in frameworks:
        if f not in FRAMEWORKS:
            raise UsageError(f"unknown framework {f!r} (--framework): choose from {', '.join(FRAMEWORKS)}")
    versions: Dict[str, str] = {}
    for name, value in (("torch", torch), ("tensorflow", tensorflow), ("jax", jax)):
        if value is not None:
            from packaging.version import InvalidVersion, Version

            if not value.strip():
                raise UsageError(f"--{name} is empty: give a version like 2.5.1, or leave the option out")

            try:
                Version(value)
            except InvalidVersion:
                raise UsageError(f"--{name} {value!r} is not a version number")
            versions[name] = value
            if name not in frameworks and frameworks:
                frameworks = frameworks + (name,)
    if cuda is not None:
        parts = cuda.split(".")
        if not (1 <= len(parts) <= 2 and all(p.isdigit() for p in parts)):
            raise UsageError(f"--cuda {cuda!r} is not a CUDA version like 12.6")
    if cudnn_from is not None and cudnn_from not in ("pip", "apt", "conda"):
        raise UsageError(f"--cudnn-from {cudnn_from!r}: choose pip, apt or conda")
    return Intent(
        frameworks=frameworks,
        versions=versions,
        cuda=cuda,
        cudnn_from=cudnn_from,  # type: ignore[arg-type]
        keep=tuple(keep or ()),
    )


def parse_mirrors(values: Optional[List[str]]) -> Tuple[Tuple[str, str], ...]:
    out = []
    for v in values or ():
        src, sep, dst = v.partition("=")
        if not sep or not src or not dst:
            raise UsageError(f"--index-mirror {v!r}: expected FROM=TO, e.g. "
                             "https://download.pytorch.org/whl=http://127.0.0.1:8080/whl")
        out.append((src, dst))
    return tuple(out)


def make_options(installer: str, find_links: Optional[List[str]], no_index: bool,
                 index_mirror: Optional[List[str]], root: Optional[str], restart: bool,
                 local_paths: bool = True) -> Any:
    """The source and installer options as PlanOptions. `local_paths`: the --find-links
    directories are on this machine (not so for `plan --environment`, a plan for another one)."""
    from ..model import PlanOptions

    if installer not in ("auto", "pip", "uv", "conda"):
        raise UsageError(f"--installer {installer!r}: choose auto, pip, uv or conda")
    for d in find_links or ():
        if local_paths and not os.path.isdir(d) and "://" not in d:
            raise UsageError(f"--find-links {d}: no such directory")
    if root is not None and not os.path.isdir(root):
        raise UsageError(f"--root {root}: no such directory")
    return PlanOptions(installer=installer, find_links=tuple(os.path.abspath(d) if "://" not in d else d  # type: ignore[arg-type]
                                                             for d in find_links or ()),
                       no_index=no_index, index_mirrors=parse_mirrors(index_mirror),
                       root=os.path.abspath(root) if root else None, restart=restart)
