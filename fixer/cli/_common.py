"""What every command shares: common options, the error boundary, intent options."""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable, Dict, List, Optional, TypeVar

import typer

from ..errors import FixerError, UsageError
from ..model import Intent

F = TypeVar("F", bound=Callable[..., Any])

JSON_OPTION = typer.Option(False, "--json", help="Write machine-readable JSON (versioned schema) to stdout.")
PYTHON_OPTION = typer.Option(
    None, "--python", metavar="PATH",
    help="Target interpreter to inspect/repair (default: the one running this tool).",
)
RECIPES_OPTION = typer.Option(
    None, "--recipes", metavar="DIR",
    help="Extra recipe directory; its files override the shipped recipes of the same name.",
)


def handle_errors(json_flag: str = "json") -> Callable[[F], F]:
    """Turn a FixerError raised by the library into a rendered message and its exit code.
    Anything else is a bug: it propagates (with a traceback) so it gets reported."""

    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except FixerError as exc:
                from .. import render

                render.error(exc, as_json=bool(kwargs.get(json_flag)))
                raise typer.Exit(exc.exit_code)
            except KeyboardInterrupt:
                from .. import render

                render.error(FixerError("interrupted"), as_json=bool(kwargs.get(json_flag)))
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


FRAMEWORK_OPTION = typer.Option(None, "--framework", help="Framework to make work (repeatable; default: those installed).")
TORCH_OPTION = typer.Option(None, "--torch", metavar="VERSION", help="Wanted PyTorch version.")
TENSORFLOW_OPTION = typer.Option(None, "--tensorflow", metavar="VERSION", help="Wanted TensorFlow version.")
JAX_OPTION = typer.Option(None, "--jax", metavar="VERSION", help="Wanted JAX version.")
CUDA_OPTION = typer.Option(None, "--cuda", metavar="X.Y", help="Wanted CUDA version of the builds.")
CUDNN_FROM_OPTION = typer.Option(None, "--cudnn-from", help="Where cuDNN should come from: pip, apt or conda.")
KEEP_OPTION = typer.Option(None, "--keep", metavar="NAME", help="Never change this distribution (repeatable).")


def stdout_is_tty() -> bool:
    return sys.stdout.isatty()
