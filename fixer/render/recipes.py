"""Rendering for `colab-cudnn-fix recipes`: summary, tables of records, validation results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Sequence, Tuple

from fixer.system.versions import version_key
from fixer.errors import RecipeError
from fixer.model import Build, Recipes, to_dict
from fixer.render import out, print_json, print_table, styled
from fixer.render.prose import say
from fixer.render import err

if TYPE_CHECKING:
    from rich.console import Console


def _framework_rows(recipes: Recipes) -> Dict[str, Dict[str, Any]]:
    rows: Dict[str, Dict[str, Any]] = {}
    for b in recipes.builds:
        r = rows.setdefault(b.framework, {"versions": set(), "variants": set(), "builds": 0})
        r["versions"].add(b.version)
        r["variants"].add(b.variant)
        r["builds"] += 1
    out_rows: Dict[str, Dict[str, Any]] = {}
    for name in sorted(rows):
        r = rows[name]
        versions = sorted(r["versions"], key=version_key)
        out_rows[name] = {
            "versions": len(versions),
            "oldest": versions[0],
            "newest": versions[-1],
            "variants": sorted(r["variants"]),
            "builds": r["builds"],
        }
    return out_rows


def _counts(recipes: Recipes) -> Dict[str, int]:
    return {
        "cudnn_releases": len(recipes.cudnn),
        "driver_floors": len(recipes.driver_floors),
        "gpus": len(recipes.gpus),
        "colab_images": len(recipes.colab_images),
    }


def summary_json(recipes: Recipes) -> Dict[str, Any]:
    """The `recipes list --json` object (before json_payload adds schema and command)."""
    return {
        "frameworks": _framework_rows(recipes),
        **_counts(recipes),
        "files": list(recipes.files),
    }


def summary(recipes: Recipes, as_json: bool = False) -> None:
    rows = _framework_rows(recipes)
    counts = _counts(recipes)
    if as_json:
        print_json(summary_json(recipes))
        return
    con = out()
    width = max((len(n) for n in rows), default=0)
    for name, r in rows.items():
        say(
            con,
            f"{name:<{width}}  {r['versions']:>3} versions ({r['oldest']} .. {r['newest']}), "
            f"{len(r['variants'])} variants ({', '.join(r['variants'])}), {r['builds']} builds",
            indent=" " * (width + 4),
        )
    con.print(f"{'cudnn':<{width}}  {counts['cudnn_releases']:>3} releases")
    con.print(f"{'drivers':<{width}}  {counts['driver_floors']:>3} CUDA driver floors")
    con.print(f"{'gpus':<{width}}  {counts['gpus']:>3} GPU models")
    con.print(f"{'colab':<{width}}  {counts['colab_images']:>3} Colab images")
    say(con, styled((f"from {len(recipes.files)} files: {', '.join(recipes.files)}", "dim")))


def _sm_range(b: Build) -> str:
    if b.compute_capabilities:
        ccs = b.compute_capabilities
        text = f"{ccs[0]}..{ccs[-1]}" if len(ccs) > 1 else ccs[0]
    elif b.min_compute_capability:
        text = f">={b.min_compute_capability}"
    else:
        text = "?" if b.cuda else ""
    return text + (f" +PTX {b.ptx}" if b.ptx else "")


def _cudnn_pin(b: Build) -> str:
    pins = [r for r in b.requires if r.lower().startswith("nvidia-cudnn")]
    return ", ".join(pins)


def show_json(selection: Tuple[str, Sequence[Any]]) -> Dict[str, Any]:
    """The `recipes show --json` object (before json_payload adds schema and command)."""
    kind, records = selection
    return {"kind": kind, "records": [to_dict(r) for r in records]}


def show(recipes: Recipes, selection: Tuple[str, Sequence[Any]], as_json: bool = False) -> None:
    """`recipes show`: the selected records as a table; one framework release's builds also
    with what each installs and where its facts come from."""
    kind, records = selection
    if as_json:
        print_json(show_json(selection))
        return
    con = out()
    if kind == "builds":
        print_table(con, _BUILD_HEADERS, [_build_row(b) for b in records])
        if len(records) == 1 or len({b.version for b in records}) == 1:
            for b in records:
                _build_details(con, b)
        return
    headers, rows = _TABLES.get(kind, _colab_table)(records)
    print_table(con, headers, rows)


_BUILD_HEADERS = (
    "version",
    "variant",
    "cuda",
    "cudnn",
    "python",
    "GPUs (SM)",
    "cuDNN pin",
    "index",
)


def _build_row(b: Build) -> Tuple[str, ...]:
    return (
        b.version,
        b.variant,
        b.cuda or "-",
        b.cudnn or "-",
        b.python,
        _sm_range(b),
        _cudnn_pin(b),
        (b.index_url or "PyPI").replace("https://download.pytorch.org/whl/", "pytorch/"),
    )


def _build_details(con: "Console", b: Build) -> None:
    """What the build installs, its requirements and sources: prose, wrapped at the console's
    width between words (render.prose)."""
    index = f" --index-url {b.index_url}" if b.index_url else ""
    head = f": install {' '.join(b.packages)}{index}"
    say(con, styled((f"{b.framework} {b.version} {b.variant}", "bold"), head), indent="  ")
    for label, value in (
        ("requires", ", ".join(b.requires)),
        ("companions", ", ".join(b.companions)),
        ("source", b.source),
        ("note", b.note),
    ):
        if value:
            say(con, styled("  ", (f"{label}:", "dim"), f" {value}"), indent="  ")


Table = Tuple[Tuple[str, ...], List[Tuple[str, ...]]]


def _cudnn_table(records: Sequence[Any]) -> Table:
    return ("version", "CUDA", "SM", "pip", "apt"), [
        (
            c.version,
            ", ".join(map(str, c.cuda_majors)),
            f"{c.min_compute_capability or '?'}..{c.max_compute_capability or ''}",
            ", ".join(f"{k}=={v}" for k, v in c.pip.items()),
            ", ".join(f"{k}={v}" for k, v in c.apt.items()),
        )
        for c in records
    ]


def _drivers_table(records: Sequence[Any]) -> Table:
    return ("CUDA", "min driver", "kind"), [
        (
            f.cuda,
            f.min_driver,
            "toolkit" if "." in f.cuda else "family (minor-version compatibility)",
        )
        for f in records
    ]


def _gpus_table(records: Sequence[Any]) -> Table:
    return ("name", "SM", "PCI ids"), [
        (g.name, g.compute_capability, " ".join(g.pci_device_ids)) for g in records
    ]


def _colab_table(records: Sequence[Any]) -> Table:
    headers = (
        "date",
        "commit",
        "release",
        "python",
        "torch",
        "tensorflow",
        "jax",
        "pip cuDNN",
        "apt cuDNN",
        "CUDA",
    )
    return headers, [
        (
            i.date,
            i.commit,
            i.release or "",
            i.python or "",
            i.torch or "",
            i.tensorflow or "",
            i.jax or "",
            i.pip_cudnn or "",
            i.apt_cudnn or "",
            i.cuda or "",
        )
        for i in records
    ]


_TABLES: Dict[str, Callable[[Sequence[Any]], Table]] = {
    "cudnn": _cudnn_table,
    "drivers": _drivers_table,
    "gpus": _gpus_table,
}


def validation_json(errors: Sequence[RecipeError], files: List[str]) -> Dict[str, Any]:
    """The `recipes validate --json` object (before json_payload adds schema and command)."""
    return {
        "ok": not errors,
        "files": files,
        "errors": [
            {"path": e.path, "line": e.line, "message": e.message, "hint": e.hint} for e in errors
        ],
    }


def validation(errors: Sequence[RecipeError], files: List[str], as_json: bool = False) -> None:
    if as_json:
        print_json(validation_json(errors, files))
        return
    if not errors:
        out().print(f"[green]ok[/]: {len(files)} recipe files, no problems")
        return

    con = err()
    for e in errors:
        con.print(styled((e.message, "red")), highlight=False, soft_wrap=True)
        if e.hint:
            con.print(
                styled("  ", ("hint:", "cyan"), f" {e.hint}"), highlight=False, soft_wrap=True
            )
    con.print(f"{len(errors)} problem(s) in the recipes")
