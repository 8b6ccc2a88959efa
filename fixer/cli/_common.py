"""What every command shares: common options, the error boundary, intent options."""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Optional, TypeVar

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
                return fn(*args, **kwargs)
            except FixerError as exc:
                from .. import render

                render.error(exc, as_json=bool(kwargs.get(json_flag)), command=command)
                raise typer.Exit(exc.exit_code)
            except KeyboardInterrupt:
                from .. import render

                interrupted = FixerError("interrupted")
                interrupted.exit_code = 130
                render.error(interrupted, as_json=bool(kwargs.get(json_flag)), command=command)
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
        if value:
            from packaging.version import InvalidVersion, Version

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


