"""Which step of a plan runs ldconfig (and so has the loader cache backed up before apply) is read
from the step's structured fields, never from its argv's words (fixer.applier.transaction._ldconfig_of).

Invariants, over generated steps:
- only an env-fix step that writes an ld.so.conf file runs ldconfig; any other step, whatever its argv
  says (a "ldconfig" first word included), does not;
- such a step runs the plan's own command when the plan carried one, else envfix.ldconfig_argv
  (none in a --root sandbox or when not root).
"""

from __future__ import annotations

import typing

from hypothesis import given
from hypothesis import strategies as st

from fixer.applier import envfix
from fixer.applier.transaction import _ldconfig_of
from fixer.model import Step, StepKind

ROOT = "/nonexistent/sandbox"
FILES = (
    envfix.LD_SO_CONF,
    "/etc/ld.so.conf",
    envfix.ENV_FILE,
    "/root/.ipython/profile_default/startup/00-x.py",
)
ARGVS = ((), ("ldconfig",), ("/sbin/ldconfig", "-X"), ("pip", "install", "x==1"))


@given(
    kind=st.sampled_from(typing.get_args(StepKind)),
    files=st.lists(st.sampled_from(FILES), max_size=3, unique=True),
    argv=st.sampled_from(ARGVS),
    sandboxed=st.booleans(),
)
def test_the_step_kind_and_its_files_decide(
    kind: str, files: list, argv: tuple, sandboxed: bool
) -> None:
    root = ROOT if sandboxed else None
    named = [
        f"{ROOT}{f}" if sandboxed else f for f in files
    ]  # plans made under --root name sandbox paths
    step = Step(kind=kind, summary="s", argv=argv, files=tuple(named))  # type: ignore[arg-type]
    got = _ldconfig_of(step, root)
    writes_conf = any(f in (envfix.LD_SO_CONF, "/etc/ld.so.conf") for f in files)
    if kind != "env-fix" or not writes_conf:
        assert got is None
    else:
        assert got == (list(argv) if argv else envfix.ldconfig_argv(root))
    if sandboxed and not argv:
        assert got is None  # never ldconfig of its own in a sandbox
