"""Reports are safe to paste: secrets generated into every string field of
what a report shows (the machine, frameworks, cuDNN copies and loads, findings, environment
variables) never come out, in markdown, HTML or JSON, nor in the notebook HTML. The secrets:
tokens in variables Colab and Kaggle set (any name outside the allowlist), `user:token@` in URLs,
private IPv4/IPv6 addresses in network positions, the machine's host name and internal host
names, home directories (HOME, SUDO_USER's; names with spaces) in plain, `file://` and `//` paths."""

from __future__ import annotations

import itertools
import json
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.model import (
    Driver,
    Environment,
    Finding,
    FrameworkBuild,
    Gpu,
    LibraryCopy,
    LoadResolution,
    PythonEnv,
    Runtime,
)
from fixer.render.report import html, markdown
from fixer.reporting.report import Redaction, build_report
from tests.helpers.examples import examples

NAME = st.from_regex(r"zq[a-z]{4,8}( [a-z]{3,6})?", fullmatch=True)
TOKEN = st.from_regex(r"tk[A-Za-z0-9]{16}", fullmatch=True)
PRIVATE4 = st.one_of(
    st.tuples(st.just(10), st.integers(0, 255), st.integers(0, 255), st.integers(1, 254)),
    st.tuples(st.just(172), st.integers(16, 31), st.integers(0, 255), st.integers(1, 254)),
    st.tuples(st.just(192), st.just(168), st.integers(0, 255), st.integers(1, 254)),
    st.tuples(st.just(169), st.just(254), st.integers(0, 255), st.integers(1, 254)),
    st.tuples(st.just(100), st.integers(64, 127), st.integers(0, 255), st.integers(1, 254)),
).map(lambda t: ".".join(map(str, t)))
PRIVATE6 = st.sampled_from(["fd12:3456:789a::1", "fe80::1ff:fe23:4567:890a", "fc00::42"])


@st.composite
def secrets(draw):
    user, sudo = draw(NAME), draw(NAME.filter(lambda n: True))
    return {
        "user": user,
        "sudo": sudo,
        "token": draw(TOKEN),
        "ip4": draw(PRIVATE4),
        "ip6": draw(PRIVATE6),
        "host": draw(st.from_regex(r"zqhost[a-z0-9]{3,6}", fullmatch=True)),
        "internal": draw(
            st.from_regex(r"zqbox[a-z]{2,5}\.(corp|internal|lan|local)", fullmatch=True)
        ),
    }


def _texts(s, draw_index: int):
    """Ways a secret shows up in a field: one of them per field, chosen by the test."""
    u, sudo, t = s["user"], s["sudo"], s["token"]
    forms = [
        f"/home/{u}/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib",
        f"file:///home/{sudo}/wheels/torch.whl",
        f"//home/{u}/x",
        f"https://{quote(u)}:{t}@pypi.example.com/simple",
        f"http://{s['ip4']}:8080/simple",
        f"ssh root@{s['ip4']}",
        f"http://[{s['ip6']}]:3128/",
        f"proxy at {s['ip6']}",
        f"built on {s['host']}",
        f"mirror https://{s['internal']}/simple",
        f"LD_LIBRARY_PATH=/home/{sudo}/lib:/usr/lib",
    ]
    return forms[draw_index % len(forms)]


@settings(max_examples=examples(100))
@given(s=secrets(), picks=st.lists(st.integers(0, 1000), min_size=20, max_size=20))
def test_no_secret_comes_out_of_any_rendering(s, picks) -> None:
    it = itertools.cycle(picks)
    x = lambda: _texts(s, next(it))  # noqa: E731
    token_free = x
    environ = {
        "HOME": f"/home/{s['user']}",
        "USER": s["user"],
        "SUDO_USER": s["sudo"],
        "HOSTNAME": s["host"],
    }
    r = Redaction.for_machine(environ)
    r = Redaction(home=r.home, users=r.users, homes=(f"/home/{s['sudo']}",), hosts=r.hosts)
    env = Environment(
        tool_version="0.1.0",
        gpus=(Gpu(0, token_free(), source=token_free()),),
        driver=Driver(version="580.159.04", error=token_free(), libcuda_path=token_free()),
        runtime=Runtime(kind="docker", image=token_free(), os_name=token_free()),
        python=PythonEnv(executable=token_free(), version="3.12.3"),
        frameworks=(
            FrameworkBuild(
                framework="torch",
                distribution="torch",
                version="2.11.0+cu130",
                location=token_free(),
                source=token_free(),
                arch_source=token_free(),
            ),
        ),
        libraries=(
            LibraryCopy(library="cudnn", major=9, version="9.19.0", directory=token_free()),
        ),
        loads=(
            LoadResolution(
                consumer="torch",
                library="cudnn",
                soname="libcudnn.so.9",
                path=token_free(),
                directory=token_free(),
                error=token_free(),
                shadowed=(token_free(),),
                intended=token_free(),
            ),
        ),
        env={
            "COLAB_SECRET_HF": s["token"],
            "KAGGLE_KEY": s["token"],
            "HF_TOKEN": s["token"],
            "COLAB_NOTEBOOK_ID": s["token"],
            "LD_LIBRARY_PATH": token_free(),
            "PYTHONPATH": token_free(),
        },
    )
    findings = [Finding(id="log-noise", severity="info", title=x(), evidence=(x(), x()), fix=x())]
    value = build_report(env, findings, healthy=False, exit_code=1, redaction=r)
    outputs = {"json": json.dumps(value), "markdown": markdown(value), "html": html(value)}
    secrets_out = [
        s["token"],
        s["ip4"],
        s["ip6"],
        s["host"],
        s["internal"],
        f"/{s['user']}",
        f"/{s['sudo']}",
    ]
    for kind, text in outputs.items():
        for secret in secrets_out:
            assert secret not in text, (kind, secret, text[:2000])


def test_the_notebook_html_is_redacted(monkeypatch) -> None:
    from fixer.planner.steps import load_environment
    from fixer.reporting.report import doctor_html

    monkeypatch.setenv("HOME", "/opt/torch")
    env = load_environment("h200-pip-cudnn-hidden")[0]
    page = doctor_html(env, [], healthy=False, exit_code=1)
    assert "/opt/torch/.venv" not in page and "~/.venv" in page


def test_a_dotted_version_is_not_an_address() -> None:
    r = Redaction(home="/home/alice", users=("alice",))
    text = "nvidia-curand-cu12 10.3.5.147 and cuFFT 11.0.2.54; http://10.1.2.3:8080/simple"
    assert (
        r.text(text) == "nvidia-curand-cu12 10.3.5.147 and cuFFT 11.0.2.54; http://<ip>:8080/simple"
    )
