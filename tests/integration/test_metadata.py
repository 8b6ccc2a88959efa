"""The project's own address has one home: pyproject.toml's [project.urls]. No other file (the
README, the CHANGELOG, the package, its scripts and examples) names an address of the project
that is not declared there, so no link the package ships points nowhere; today none is declared
(the project has no public address yet: README "Project home"). `--version` names none either.

The JSON Schemas' `$id`s (https://colab-cudnn-fix.invalid/schemas/NAME.json) are identifiers,
not links: `.invalid` is reserved never to resolve (RFC 2606, RFC 6761), so they claim no
address; they are hierarchical so that the schemas' relative `$ref`s ("finding.json") resolve."""

from __future__ import annotations

import re

from fixer.system.compat import tomllib
from tests.integration.test_self_contained import REPO, _tracked

#: A URL that names the project itself (its distribution or import name).
OWN = re.compile(r"https?://[^\s)\"'<>`\]]*colab[-_]cudnn[-_]fix[^\s)\"'<>`\]]*", re.IGNORECASE)
#: A host under the reserved .invalid top-level domain: an identifier that names no address.
RESERVED = re.compile(r"^https?://[^/]+\.invalid(/|$)", re.IGNORECASE)


def declared() -> list:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return sorted(meta.get("urls", {}).values())


def test_no_file_names_a_project_address_pyproject_does_not_declare():
    ok = declared()
    offenders = []
    for path in _tracked():
        if not path.is_file() or path.suffix not in {
            ".py",
            ".md",
            ".toml",
            ".sh",
            ".txt",
            ".json",
            ".ipynb",
            ".cfg",
            "",
        }:
            continue
        if path.name == "test_metadata.py":
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for url in OWN.findall(line):
                if not RESERVED.match(url) and not any(url.startswith(d) for d in ok):
                    offenders.append(f"{path.relative_to(REPO)}:{n}: {url}")
    assert not offenders, "\n".join(offenders)


def test_version_names_no_undeclared_address(capsys):
    from fixer import __version__
    from fixer.cli import main

    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out == f"{__version__}\n"  # the version only (docs/commands.md)
    assert all(u in declared() for u in re.findall(r"https?://\S+", out))
