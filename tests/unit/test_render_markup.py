"""Text that comes from the machine or from the user (an error log, a file path, a journal
directory, a package name) is printed as it is: never read as rich markup. A log line holding
"[/x]" made `explain` end in rich's MarkupError traceback; a path holding "[bold]" lost its
brackets. The renderers are checked here over generated text, not chosen strings."""

from __future__ import annotations

import string

from hypothesis import given, settings, strategies as st

import fixer

from fixer.applier.results import ApplyResult, DistChange, RollbackResult
from fixer.render import new_console, recording
from fixer.render.apply import show_applied, show_rollback
from tests.helpers.examples import examples
from tests.helpers.output import units_whole

# text that rich would read as markup: opening and closing tags, styles, links, escapes
_MARKUP = st.sampled_from(
    [
        "[/]",
        "[/x]",
        "[bold]",
        "[red]",
        "[link=http://a]",
        "\\[",
        "[",
        "]",
        "[/bold red]",
        "[dim]x[/dim]",
        "[[",
        "]]",
        ":cd:",
        ":smile:",
    ]
)
_PLAIN = st.text(alphabet=string.ascii_letters + string.digits + "/._- ", min_size=0, max_size=12)
MACHINE_TEXT = (
    st.lists(st.one_of(_MARKUP, _PLAIN), min_size=1, max_size=6)
    .map("".join)
    .filter(lambda s: s.strip() != "")
)

# a line every explain rule set recognises (the PyTorch cuDNN version check's own message)
KNOWN = (
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) "
    "but found runtime version (9, 14, 0)."
)


def _render(fn) -> str:  # type: ignore[no-untyped-def]
    console = new_console(
        record=True, width=100, soft_wrap=True, color_system=None, file=open("/dev/null", "w")
    )
    with recording(console):
        fn()
    return console.export_text()


@settings(max_examples=examples(40), deadline=None)
@given(junk=MACHINE_TEXT)
def test_explain_prints_log_text_verbatim(junk: str) -> None:
    text = f"{KNOWN} {junk}\nCould not load library libcudnn_cnn_infer.so.8. Error: {junk}"
    result = fixer.explain(text, detect=False)
    shown = _render(result.show)
    assert result.explanation.findings and result.explanation.findings[0].id in shown
    for f in result.explanation.findings:  # prose wraps between units (render.prose), verbatim
        assert units_whole(shown, f.title)
        for e in f.evidence[:6]:
            assert units_whole(shown, e)


@settings(max_examples=examples(40), deadline=None)
@given(path=MACHINE_TEXT, name=MACHINE_TEXT)
def test_apply_and_rollback_print_paths_verbatim(path: str, name: str) -> None:
    applied = ApplyResult(
        changed=True,
        distributions=(DistChange(name, "1.0", "2.0"),),
        files=(f"/etc/{path}",),
        repaired=(f"/venv/{path}",),
        journal=f"/state/{path}",
        log=f"/state/{path}.log",
        notes=(path,),
    )
    text = _render(lambda: show_applied(applied, verified_by=path, restart={}))
    for expected in (
        f"wrote /etc/{path}",
        f"rewrote /venv/{path}",
        f"journal /state/{path};",
        f"{name}: 1.0 -> 2.0",
    ):
        assert expected in text
    rolled = RollbackResult(
        status="rolled-back",
        journal=f"/state/{path}",
        files=(f"/etc/{path}",),
        exact=False,
        unverified=(name,),
        notes=(path,),
    )
    text = _render(lambda: show_rollback(rolled, as_json=False))
    for expected in (
        f"restored /etc/{path}",
        f"journal /state/{path}",
        f"{name}.",
        f"note: {path}",
    ):
        assert expected in text
    incomplete = RollbackResult(status="rollback-incomplete", remaining=(path,))
    assert f"  {path}" in _render(lambda: show_rollback(incomplete, as_json=False))
