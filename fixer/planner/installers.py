"""The one place that builds installer command lines. Pure functions: they return argv
tuples and run nothing.

`plan` uses them for the steps it prints; `apply` uses them again to build the rollback
commands (reinstall what a step removed, put back the version it changed). Every command
targets an explicit interpreter (`python -m pip`, `uv pip --python PY`), never "whatever
pip is first on PATH". Index URLs go through `rewrite_index` so that `--index-mirror`
(corporate mirrors, air-gapped clusters, tests on 127.0.0.1) changes every command alike.
"""

from __future__ import annotations

from typing import Iterable, List, Mapping, Optional, Sequence, Tuple

from fixer.errors import UsageError
from fixer.model import PipOptions
from fixer.system import grammar
from fixer.system.versions import requirement_name

#: The default index pip and uv use when no --index-url is given.
PYPI_SIMPLE = "https://pypi.org/simple"

#: PyTorch's own index: one folder per build variant (cu128, cpu, rocm6.4, ...), each a PEP 503
#: index whose versions carry the variant as their local label (torch 2.11.0+cu128 lives in
#: .../whl/cu128). Source: pytorch.org "Get Started" install commands (--index-url
#: https://download.pytorch.org/whl/<variant>).
PYTORCH_INDEX = "https://download.pytorch.org/whl"

Argv = Tuple[str, ...]

#: The end-of-options marker every installer's own parser honours: after it each word is a name
#: (a requirement, a package), never an option, whatever it looks like. Defence in depth: names
#: are checked by their grammar before they get here (fixer.system.grammar). Sources:
#:   pip    optparse, OptionParser._process_args: `if arg == "--": del rargs[0]; return`
#:          (CPython Lib/optparse.py, 3.11); pip's ConfigOptionParser subclasses it
#:          (pip/_internal/cli/parser.py, pip 26.x)
#:   uv     clap: `--` ends option parsing, the rest are positional values (clap 4 "Positionals":
#:          docs.rs/clap, `last`/`--` handling), the requirements of `uv pip install`
#:   apt    apt-pkg/contrib/cmndline.cc, CommandLine::Parse: "Double dash signifies the end of
#:          option processing" (Debian/apt, unchanged since 1998; apt 2.6.1 here), shared by
#:          apt-get, apt-mark and apt-cache
#:   conda  argparse: a `--` ends the optionals and is dropped from a nargs="*" positional
#:          (CPython Lib/argparse.py, _get_values), conda's `package_spec` (conda/cli/helpers.py)
#: Checked on real installers by tests/integration/plan/test_end_of_options.py.
END_OF_OPTIONS = "--"


def _bad(what: str, exc: ValueError) -> UsageError:
    return UsageError(f"{what}: {exc}; nothing was run")


def _requirement(req: str) -> str:
    """An exact requirement a plan installs: NAME[extras]==VERSION, or a bare NAME. Checked by
    PEP 508 / PEP 440 before it reaches pip or uv."""
    import re

    m = re.fullmatch(r"([^\[=<>!~;@\s]+)(\[[A-Za-z0-9._,-]*\])?(?:==(\S+))?", req)
    if m is None:
        raise UsageError(f"pip requirement {req[:80]!r}: expected NAME==VERSION; nothing was run")
    try:
        grammar.pip_name(m.group(1))
        if m.group(3) is not None:
            grammar.pip_version(m.group(3))
    except ValueError as exc:
        raise _bad("pip requirement", exc)
    return req


def _apt_names(names: Iterable[str]) -> List[str]:
    out = []
    for n in names:
        try:
            out.append(grammar.apt_name(n))
        except ValueError as exc:
            raise _bad("apt package", exc)
    return out


def _pip_names(names: Iterable[str]) -> List[str]:
    out = []
    for n in names:
        try:
            grammar.pip_name(n)
        except ValueError as exc:
            raise _bad("pip distribution", exc)
        out.append(n)
    return out


def choose(requested: str, uv: Optional[str]) -> str:
    """The installer a plan is made for: "conda" and "pip" and "uv" as asked; "auto" is uv
    when a uv binary was found for the target (`uv`, its path: in the target's bin directory
    or on PATH, as detection reports it), else pip. The one rule: make_plan calls it (for a
    lock too), and the Plan records the answer (`Plan.installer`) for render, apply and
    rollback (the journal keeps it)."""
    if requested in ("pip", "uv", "conda"):
        return requested
    return "uv" if uv else "pip"


def pip_tool(installer: str) -> str:
    """The tool that runs the pip steps of a plan made for `installer` (Plan.installer): uv for
    uv, else pip (a conda plan's pip steps, condacolab's own install, use pip)."""
    return "uv" if installer == "uv" else "pip"


def pytorch_variant_index(version: str) -> Optional[str]:
    """The PyTorch index folder of a version whose local label is a build variant
    ("2.5.1+cu124" -> .../whl/cu124), else None."""
    import re

    label = version.partition("+")[2]
    if re.fullmatch(r"cu\d+|cpu|rocm\d+(\.\d+)*|xpu", label):
        return f"{PYTORCH_INDEX}/{label}"
    return None


def rewrite_index(url: Optional[str], mirrors: Iterable[Tuple[str, str]] = ()) -> Optional[str]:
    """`url` with the first matching mirror prefix replaced (`--index-mirror FROM=TO`).
    None (PyPI) is looked up as PYPI_SIMPLE; it stays None when no mirror names PyPI."""
    probe = url or PYPI_SIMPLE
    for src, dst in mirrors:
        src_n = src.rstrip("/")
        if probe == src_n or probe.startswith(src_n + "/") or probe.rstrip("/") == src_n:
            return dst.rstrip("/") + probe[len(src_n) :]
    return url


def pip_options(
    *,
    index_url: Optional[str] = None,
    extra_index_urls: Sequence[str] = (),
    find_links: Sequence[str] = (),
    no_index: bool = False,
    no_deps: bool = False,
    force_reinstall: bool = False,
    break_system_packages: bool = False,
    mirrors: Iterable[Tuple[str, str]] = (),
    requirement_files: Sequence[str] = (),
    require_hashes: bool = False,
) -> PipOptions:
    """A pip/uv step's options as data, index URLs as the command uses them: index_url None
    means PyPI (or its mirror when `mirrors` names PYPI_SIMPLE); `no_index` drops every index
    and keeps only `find_links` (offline apply from a wheelhouse)."""
    mirrors = tuple(mirrors)
    url = None if no_index else rewrite_index(index_url, mirrors)
    extras = () if no_index else tuple(rewrite_index(e, mirrors) or e for e in extra_index_urls)
    return PipOptions(
        index_url=url,
        extra_index_urls=extras,
        find_links=tuple(find_links),
        no_index=no_index,
        no_deps=no_deps,
        reinstall=force_reinstall,
        break_system_packages=break_system_packages,
        requirement_files=tuple(requirement_files),
        require_hashes=require_hashes,
    )


def _reinstall_flags(requirements: Sequence[str], installer: str) -> List[str]:
    """pip's --force-reinstall; uv's --reinstall-package NAME for each requirement: only the named
    packages (uv's --reinstall would reinstall every package of the resolution:
    docs.astral.sh/uv/reference/cli, `uv pip install --reinstall-package`)."""
    if installer != "uv":
        return ["--force-reinstall"]
    return [x for r in requirements for x in ("--reinstall-package", requirement_name(r))]


def pip_argv(
    python: str,
    requirements: Sequence[str],
    options: PipOptions = PipOptions(),
    *,
    installer: str = "pip",
    uv: str = "uv",
) -> Argv:
    """`PY -m pip install --no-input ...` (installer "pip") or `uv pip install --python PY ...`
    ("uv") of `requirements` (exact strings like "torch==2.5.1+cu124") with `options`. `uv` is
    the uv binary to run (a path when the target has its own)."""
    if installer == "uv":
        argv = [uv, "pip", "install", "--python", python]
    else:
        argv = [python, "-m", "pip", "install", "--no-input"]
    if options.no_deps:
        argv.append("--no-deps")
    if options.reinstall:
        argv += _reinstall_flags(requirements, installer)
    if options.break_system_packages:
        argv.append("--break-system-packages")
    if options.require_hashes:
        argv.append("--require-hashes")
    argv += _pip_sources(options)
    for f in options.requirement_files:
        argv += ["-r", f]
    reqs = [_requirement(r) for r in requirements]
    return tuple(argv + ([END_OF_OPTIONS] + reqs if reqs else []))


def _pip_sources(options: PipOptions) -> List[str]:
    """The options that say where pip/uv finds packages: indexes, or none, and find-links."""
    argv: List[str] = []
    if options.no_index:
        argv.append("--no-index")
    else:
        if options.index_url:
            argv += ["--index-url", options.index_url]
        for extra in options.extra_index_urls:
            argv += ["--extra-index-url", extra]
    for d in options.find_links:
        argv += ["--find-links", d]
    return argv


def pip_install(
    python: str,
    requirements: Sequence[str],
    *,
    index_url: Optional[str] = None,
    extra_index_urls: Sequence[str] = (),
    find_links: Sequence[str] = (),
    no_index: bool = False,
    installer: str = "pip",
    no_deps: bool = False,
    force_reinstall: bool = False,
    break_system_packages: bool = False,
    mirrors: Iterable[Tuple[str, str]] = (),
    uv: str = "uv",
) -> Argv:
    """pip_argv of pip_options: install `requirements` into the interpreter `python`."""
    return pip_argv(
        python,
        requirements,
        pip_options(
            index_url=index_url,
            extra_index_urls=extra_index_urls,
            find_links=find_links,
            no_index=no_index,
            no_deps=no_deps,
            force_reinstall=force_reinstall,
            break_system_packages=break_system_packages,
            mirrors=mirrors,
        ),
        installer=installer,
        uv=uv,
    )


def pip_uninstall(
    python: str,
    names: Sequence[str],
    installer: str = "pip",
    break_system_packages: bool = False,
    uv: str = "uv",
) -> Argv:
    """Remove distributions `names` from the interpreter `python`."""
    if installer == "uv":
        argv = [uv, "pip", "uninstall", "--python", python]
    else:
        argv = [python, "-m", "pip", "uninstall", "-y"]
    if break_system_packages:
        argv.append("--break-system-packages")
    return tuple(argv + [END_OF_OPTIONS] + _pip_names(names))


def apt_install(pkgs: Mapping[str, str]) -> Argv:
    """`apt-get install` of exact versions ({"libcudnn8": "8.9.7.29-1+cuda12.2"}); downgrades
    allowed, since putting back an older cuDNN is a normal fix. Names and versions are checked
    by Debian Policy's grammar (fixer.system.grammar) before anything reaches apt-get."""
    for version in pkgs.values():
        try:
            grammar.apt_version(version)
        except ValueError as exc:
            raise _bad("apt version", exc)
    names = _apt_names(pkgs)
    return (
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "--allow-downgrades",
        "--allow-change-held-packages",
        END_OF_OPTIONS,
        *[f"{k}={pkgs[k]}" for k in names],
    )


def apt_update() -> Argv:
    """Refresh apt's package lists (apply runs it only when `apt-cache policy` lacks a version)."""
    return ("apt-get", "update")


def apt_policy(name: str) -> Argv:
    """The versions apt knows for `name` (its candidate and version table)."""
    return ("apt-cache", "policy", END_OF_OPTIONS, *_apt_names([name]))


def apt_hold(names: Sequence[str]) -> Argv:
    """Keep apt from moving the packages (`apt-get upgrade` would replace the cuDNN)."""
    return ("apt-mark", "hold", END_OF_OPTIONS, *_apt_names(names))


def apt_unhold(names: Sequence[str]) -> Argv:
    """Undo apt_hold (rollback)."""
    return ("apt-mark", "unhold", END_OF_OPTIONS, *_apt_names(names))


def apt_remove(names: Sequence[str]) -> Argv:
    """Remove apt packages (rollback of an apt_install of a package that was not there)."""
    return (
        "apt-get",
        "remove",
        "-y",
        "--allow-change-held-packages",
        END_OF_OPTIONS,
        *_apt_names(names),
    )


def conda_install(
    specs: Sequence[str],
    *,
    conda: str = "conda",
    prefix: Optional[str] = None,
    channel: str = "conda-forge",
) -> Argv:
    """`conda install` (or mamba, given as `conda`) of exact specs like "cudnn==9.3.0.75", each
    checked by conda's naming grammar (fixer.system.grammar.conda_spec) before it reaches argv."""
    for spec in specs:
        try:
            grammar.conda_spec(spec)
        except ValueError as exc:
            raise _bad("conda spec", exc)
    argv = [conda, "install", "-y", "-c", channel, "--override-channels"]
    if prefix:
        argv += ["-p", prefix]
    return tuple(argv + [END_OF_OPTIONS] + list(specs))


def condacolab_install(python: str) -> Argv:
    """Install conda into a Colab runtime (condacolab restarts the kernel when done)."""
    return (python, "-c", "import condacolab; condacolab.install()")


__all__ = [
    "PYPI_SIMPLE",
    "apt_hold",
    "apt_install",
    "apt_policy",
    "apt_remove",
    "apt_unhold",
    "apt_update",
    "conda_install",
    "condacolab_install",
    "pip_argv",
    "pip_install",
    "pip_options",
    "pip_tool",
    "pip_uninstall",
    "rewrite_index",
]
