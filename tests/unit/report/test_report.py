"""`report`: markdown / HTML for bug reports, with home and user paths redacted by component.

Invariants over generated inputs (Hypothesis): after redaction no path component is the user's
name and no path starts with the home directory; text without a "/" is never changed ("root
cause" stays, whatever the user is called); redaction is idempotent; the HTML is well formed and
escapes whatever the findings say. End to end (the real CLI): tests/integration/report/test_report_cli.py.
"""

from __future__ import annotations

import html.parser
import re
from typing import List

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.model import Finding
from fixer.reporting.report import Redaction, build_report, redact
from fixer.render.report import html as render_html
from fixer.render.report import markdown
from tests.helpers.examples import examples


users = st.sampled_from(["alice", "root", "bob.smith", "user-1", "lib", "torch"])
words = st.sampled_from(
    [
        "root",
        "cause",
        "alice",
        "lib",
        "home",
        "Users",
        "usr",
        "opt",
        "site-packages",
        "x86_64-linux-gnu",
        "libcudnn.so.9",
        "torch",
        ".venv",
        "bob.smith",
        "user-1",
        "nvidia",
    ]
)


@st.composite
def machines(draw):
    user = draw(users)
    home = draw(
        st.sampled_from(
            [
                f"/home/{user}",
                f"/Users/{user}",
                "/root" if user == "root" else f"/home/{user}",
                f"/srv/homes/{user}",
            ]
        )
    )
    return Redaction(home=home, users=(user,))


@st.composite
def paths(draw, r: Redaction):
    parts = draw(st.lists(words | st.just(r.users[0]), min_size=1, max_size=6))
    prefix = draw(st.sampled_from(["/", r.home + "/", "/home/", "/Users/", "/root/", "", "~/"]))
    return prefix + "/".join(parts)


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_redaction_invariants(data) -> None:
    r = data.draw(machines())
    items = data.draw(
        st.lists(paths(r) | words.map(lambda w: w + " cause"), min_size=1, max_size=6)
    )
    sep = data.draw(st.sampled_from([" ", ":", ", ", " (", "\n"]))
    text = sep.join(items)
    out = r.text(text)
    assert r.text(out) == out  # idempotent
    for token in re.findall(r"[^\s:,()]+", out):
        if "/" not in token:
            continue
        comps = token.split("/")
        assert r.users[0] not in comps, (text, out)  # the user name never shows as a component
        assert not token.startswith(r.home + "/") and token != r.home  # nor the home directory
        assert not token.startswith("/root/") and token != "/root"
        if token.startswith(("/home/", "/Users/")):
            assert comps[2] == "<user>"
    # words outside paths are untouched: the same prose tokens in the same order
    prose = lambda s: [w for w in re.split(r"[\s:,()]+", s) if w and "/" not in w and w != "~"]  # noqa: E731
    assert prose(out) == prose(text)


@given(r=machines(), text=st.text(alphabet=st.characters(blacklist_characters="/"), max_size=80))
def test_text_without_a_slash_is_never_changed(r: Redaction, text: str) -> None:
    assert r.text(text) == text


def test_examples() -> None:
    r = Redaction(home="/root", users=("root",))
    assert (
        r.text("root cause: /root/.venv/lib/x.so and /usr/lib/rootfs")
        == "root cause: ~/.venv/lib/x.so and /usr/lib/rootfs"
    )
    r = Redaction(home="/home/alice", users=("alice",))
    assert (
        r.text("LD_LIBRARY_PATH=/home/alice/lib:/opt/alice/lib:/home/bob/x")
        == "LD_LIBRARY_PATH=~/lib:/opt/<user>/lib:/home/<user>/x"
    )
    assert (
        r.text("see https://example.com/alice/issues/1") == "see https://example.com/alice/issues/1"
    )
    assert redact({"/home/alice/k": ["/home/alice/v", 3]}, r) == {"~/k": ["~/v", 3]}


# ----------------------------------------------------------------------------- rendering

finding_st = st.builds(
    Finding,
    id=st.sampled_from(["cudnn-too-old", "gpu-arch-unsupported", "log-noise"]),
    severity=st.sampled_from(["error", "warning", "info"]),
    title=st.text(max_size=40),
    evidence=st.lists(st.text(max_size=30), max_size=3).map(tuple),
    fix=st.text(max_size=30),
)


class _Balance(html.parser.HTMLParser):
    VOID = {"br", "meta", "img", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: List[str] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts += 1
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)
        self.stack.pop()


@settings(max_examples=examples(100), deadline=None)
@given(findings=st.lists(finding_st, max_size=5))
def test_html_is_well_formed_and_escapes(findings) -> None:
    from fixer.planner.steps import load_environment

    env = load_environment("h200-pip-cudnn-hidden")[0]
    value = build_report(env, findings, healthy=not findings, exit_code=0 if not findings else 1)
    page = render_html(value)
    p = _Balance()
    p.feed(page)
    p.close()
    assert p.stack == [] and p.scripts == 0
    for f in findings:
        assert f.id in page
    md = markdown(value)
    assert md.count("\n- **") == len(findings)


def test_doctor_html_for_notebooks_is_the_report_unredacted() -> None:
    """The notebook rendering of a doctor result (fixer.reporting.report.doctor_html): the same
    renderer, the user's own paths kept."""
    from fixer.planner.steps import load_environment
    from fixer.reporting.report import doctor_html

    env = load_environment("h200-pip-cudnn-hidden")[0]
    f = Finding(
        id="cudnn-too-old", severity="error", title="PyTorch needs cuDNN >= 9.19 but loads 9.14.0"
    )
    page = doctor_html(env, [f], healthy=False, exit_code=1)
    p = _Balance()
    p.feed(page)
    p.close()
    assert p.stack == [] and "colab-cudnn-fix doctor" in page and "cudnn-too-old" in page
    assert "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib" in page
