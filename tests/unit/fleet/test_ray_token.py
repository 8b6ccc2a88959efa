"""`fleet ... --ray ADDRESS` against a cluster with Ray's token authentication on: one line that
says the cluster refused this client, in Ray's own words, and what to set (RAY_AUTH_MODE=token,
RAY_AUTH_TOKEN), before ray.init would retry for its whole timeout and end with a ConnectionError
that does not say why.

Ray is the edge: a stand-in module whose GcsClient raises what a real token-authenticated head
node answered (tests/data/ray/auth_errors.json, recorded by scripts/record_ray_auth.py with Ray
2.60.0). The token sources are real files in a temporary HOME."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.cluster import ray_runner
from fixer.errors import UsageError
from tests.helpers.examples import examples
from tests.helpers.paths import DATA

RECORDED = json.loads((DATA / "ray" / "auth_errors.json").read_text(encoding="utf-8"))
REFUSED = [c for c in RECORDED["cases"] if c["exception"] == "AuthenticationError"]


class AuthenticationError(Exception):
    """ray.exceptions.AuthenticationError as Ray 2.60 builds it: `.message`, a long str()."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(text)
        self.message = message


def stand_in_ray(refusal: Optional[Dict[str, str]], calls: List[str], mode_token: bool):
    """A `ray` module at its edge: GcsClient answers as the recorded head node did."""

    def gcs_client(address: str) -> object:
        calls.append(address)
        if refusal is not None:
            raise AuthenticationError(refusal["message"], refusal["str"])
        return object()

    modes = types.SimpleNamespace(TOKEN="token", DISABLED="disabled")
    raylet = types.SimpleNamespace(
        GcsClient=gcs_client,
        AuthenticationMode=modes,
        get_authentication_mode=lambda: modes.TOKEN if mode_token else modes.DISABLED,
    )
    return types.SimpleNamespace(
        _raylet=raylet, exceptions=types.SimpleNamespace(AuthenticationError=AuthenticationError)
    )


def environ(home: Path, token_var: bool, token_file: bool, default_file: bool) -> Dict[str, str]:
    env = {"HOME": str(home)}
    if token_var:
        env["RAY_AUTH_TOKEN"] = "f" * 64
    if token_file:
        (home / "named_token").write_text("e" * 64)
        env["RAY_AUTH_TOKEN_PATH"] = str(home / "named_token")
    if default_file:
        (home / ".ray").mkdir(exist_ok=True)
        (home / ".ray" / "auth_token").write_text("d" * 64)
    return env


@settings(max_examples=examples(200))
@given(
    refusal=st.sampled_from(REFUSED + [None]),
    mode_token=st.booleans(),
    token_var=st.booleans(),
    token_file=st.booleans(),
    default_file=st.booleans(),
    address=st.sampled_from(["127.0.0.1:6379", "head.example:6380", "[::1]:6379"]),
)
def test_a_refused_token_is_one_line_naming_the_variables_to_set(
    tmp_path_factory, refusal, mode_token, token_var, token_file, default_file, address
):
    home = tmp_path_factory.mktemp("home")
    env = environ(home, token_var, token_file, default_file)
    has_token = token_var or token_file or default_file
    calls: List[str] = []
    ray = stand_in_ray(refusal, calls, mode_token)
    try:
        ray_runner.check_token(ray, address, env, str(home))
    except UsageError as exc:
        line = str(exc)
        assert exc.exit_code == 2 and "\n" not in line and line.startswith(f"--ray {address}: ")
        assert "ray get-auth-token" in line
        if mode_token and not has_token:
            # Ray's GcsClient aborts the process in this state: never asked
            assert calls == [] and "no Ray token is set" in line
            assert "set RAY_AUTH_TOKEN to the cluster's token" in line
            return
        assert calls == [address] and refusal is not None
        assert "(RPC error: InvalidAuthToken: Authentication token is missing or incorrect)" in line
        # the fix names exactly what is missing on this client
        assert ("RAY_AUTH_MODE=token" in line) == (not mode_token)
        assert ("RAY_AUTH_TOKEN to" in line) == (mode_token or not has_token)
        assert "Note:" not in line and "docs.ray.io" not in line  # Ray's paragraph left out
        return
    assert refusal is None and calls == [address]


@pytest.mark.parametrize("address", ["ray://head:10001", "auto", "head"])
def test_addresses_that_name_no_gcs_are_not_probed(tmp_path, address):
    calls: List[str] = []
    ray_runner.check_token(stand_in_ray(REFUSED[0], calls, False), address, {}, str(tmp_path))
    assert calls == []


def test_a_ray_without_token_authentication_is_not_probed(tmp_path):
    calls: List[str] = []
    ray = stand_in_ray(REFUSED[0], calls, False)
    del ray.exceptions.AuthenticationError  # Ray < 2.52
    ray_runner.check_token(ray, "127.0.0.1:6379", {}, str(tmp_path))
    assert calls == []


@pytest.mark.parametrize("content", [None, ""])
def test_an_unreadable_or_empty_token_path_is_named(tmp_path, content):
    named = tmp_path / "token"
    if content is not None:
        named.write_text(content)
    calls: List[str] = []
    with pytest.raises(UsageError) as exc:
        ray_runner.check_token(
            stand_in_ray(None, calls, True),
            "127.0.0.1:6379",
            {"RAY_AUTH_TOKEN_PATH": str(named)},
            str(tmp_path),
        )
    assert str(exc.value).startswith(f"RAY_AUTH_TOKEN_PATH {named}: ") and calls == []


def test_other_failures_stay_ray_inits_to_report(tmp_path):
    def gcs_client(address: str) -> object:
        raise RuntimeError("Timed out while waiting for GCS to become available.")

    ray = stand_in_ray(None, [], False)
    ray._raylet.GcsClient = gcs_client
    ray_runner.check_token(ray, "127.0.0.1:6379", {}, str(tmp_path))  # no error here
