"""`fleet ... --ray ADDRESS`: one doctor task pinned to each alive GPU node of a Ray cluster.

Each task is scheduled with NodeAffinitySchedulingStrategy(node_id, soft=False), so it runs on
that node or fails (never elsewhere), asks for no CPU or GPU slot (it must not wait behind a
training job; doctor touches no GPU), and keeps the node's CUDA_VISIBLE_DEVICES as it is
(RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES: Ray would otherwise hide every GPU from a task that
asked for none). The task runs fixer.pipeline.examine in the node's worker interpreter: fixer
must be installed on the nodes (as with any Ray job's code). Only this module imports ray.
"""

from __future__ import annotations

import os
import socket
from typing import Any, Dict, List, Mapping, Optional, Tuple

from fixer.errors import UsageError
from fixer.system import fsgate
from fixer.cluster import NodeResult
from fixer.pipeline import examine
from fixer.render.doctor import doctor_json

WORKER_ENV = {"RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES": "1"}

# Ray's token authentication (Ray >= 2.52; docs.ray.io/en/latest/ray-security/token-auth.html:
# on by default for new local clusters from 2.59, for every cluster from 2.61). The client side,
# read in ray 2.60.0:
# - the mode comes from the environment only: RAY_AUTH_MODE=token (python/ray/_private/
#   authentication/authentication_token_setup.py, ensure_token_if_auth_enabled). ray.init with an
#   explicit address does NOT turn it on by itself (python/ray/_private/worker.py, ray.init: only a
#   local cluster found automatically does), so a client without RAY_AUTH_MODE=token sends no
#   token at all;
# - the token, first found wins (docs.ray.io/en/master/ray-core/internals/token-authentication.html,
#   "Token Sources and Precedence"): RAY_AUTH_TOKEN, the file RAY_AUTH_TOKEN_PATH names (unreadable
#   or empty: Ray aborts the process), ~/.ray/auth_token;
# - a missing or wrong token: the GCS answers gRPC UNAUTHENTICATED and ray._raylet.GcsClient raises
#   ray.exceptions.AuthenticationError("RPC error: InvalidAuthToken: Authentication token is missing
#   or incorrect"), at once; ray.init instead retries for its whole timeout and then raises a
#   ConnectionError that does not say why (recorded: tests/data/ray/auth_errors.json).
AUTH_MODE_VAR = "RAY_AUTH_MODE"
AUTH_TOKEN_VAR = "RAY_AUTH_TOKEN"
AUTH_TOKEN_PATH_VAR = "RAY_AUTH_TOKEN_PATH"
DEFAULT_TOKEN_FILE = os.path.join("~", ".ray", "auth_token")


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError("--ray needs Ray: pip install 'colab-cudnn-fix[fleet]'")
    return ray


def node_doctor(python: Optional[str], lock_text: Optional[str], lock_name: str) -> Dict[str, Any]:
    """What one node answers (runs inside the Ray worker): host, the doctor JSON payload."""
    lock_path = None
    try:
        if lock_text is not None:
            d = fsgate.temp_dir(prefix="ccf-fleet-")
            lock_path = os.path.join(d, os.path.basename(lock_name) or "lock.toml")
            fsgate.write_bytes(lock_path, lock_text.encode("utf-8"), 0o600, durable=False)
        r = examine(python, lock=lock_path)
        payload = doctor_json(r.env, r.findings, r.healthy, r.exit_code)
        if lock_path:  # the lock's temporary path means nothing to the reader: name the lock
            text = __import__("json").dumps(payload).replace(lock_path, lock_name)
            payload = __import__("json").loads(text)
        return {"host": socket.gethostname(), "doctor": payload}
    finally:
        if lock_path:
            try:
                fsgate.remove(os.path.dirname(lock_path))
            except OSError:
                pass


def _check_reachable(address: str, timeout: float) -> None:
    """A HOST:PORT (or ray://HOST:PORT) address must accept a TCP connection: ray.init would
    otherwise retry a dead address for minutes."""
    target = address[len("ray://") :] if address.startswith("ray://") else address
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return  # "auto", or an address Ray resolves itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise UsageError(
            f"--ray {address}: cannot connect to the Ray cluster: {exc.strerror or exc}"
        )


def _gcs_address(address: str) -> Optional[str]:
    """The GCS HOST:PORT that `address` names, or None (Ray Client's ray://, "auto")."""
    host, sep, port = address.rpartition(":")
    return address if sep and host and port.isdigit() and "://" not in address else None


def token_source(environ: Mapping[str, str], home: str) -> Optional[str]:
    """Where Ray would take this client's token from (its own order), or None when nowhere.
    A RAY_AUTH_TOKEN_PATH that cannot be read is bad input: Ray would abort the process."""
    if environ.get(AUTH_TOKEN_VAR, "").strip():
        return AUTH_TOKEN_VAR
    named = environ.get(AUTH_TOKEN_PATH_VAR)
    if named:
        try:
            with open(named, encoding="utf-8") as fh:
                if not fh.read().strip():
                    raise UsageError(f"{AUTH_TOKEN_PATH_VAR} {named}: the file is empty")
        except OSError as exc:
            raise UsageError(
                f"{AUTH_TOKEN_PATH_VAR} {named}: cannot read it: {exc.strerror or exc}"
            )
        return named
    default = os.path.join(home, ".ray", "auth_token")
    return DEFAULT_TOKEN_FILE if os.path.isfile(default) else None


def token_fix(mode_is_token: bool, source: Optional[str]) -> str:
    """What to set so that Ray sends the cluster's token (the variables Ray documents)."""
    if not mode_is_token and source is None:
        fix = f"set {AUTH_MODE_VAR}=token and {AUTH_TOKEN_VAR} to the cluster's token"
    elif not mode_is_token:
        fix = f"set {AUTH_MODE_VAR}=token, so that Ray sends the token from {source}"
    elif source is None:
        fix = f"set {AUTH_TOKEN_VAR} to the cluster's token"
    else:
        fix = f"the token from {source} is not the cluster's: set {AUTH_TOKEN_VAR} to it"
    return fix + " (`ray get-auth-token` on the head node prints it)"


def _mode_is_token(ray: Any, environ: Mapping[str, str]) -> bool:
    """Ray's own reading of the mode where it has one, else RAY_AUTH_MODE."""
    raylet = getattr(ray, "_raylet", None)
    get_mode = getattr(raylet, "get_authentication_mode", None)
    modes = getattr(raylet, "AuthenticationMode", None)
    if get_mode is not None and modes is not None and hasattr(modes, "TOKEN"):
        return bool(get_mode() == modes.TOKEN)
    return environ.get(AUTH_MODE_VAR, "").lower() == "token"


def check_token(ray: Any, address: str, environ: Mapping[str, str], home: str) -> None:
    """Before ray.init: a cluster that refuses this client's token is named at once, with the
    fix, instead of after ray.init's retries with a ConnectionError that does not say why."""
    gcs = _gcs_address(address)
    client = getattr(getattr(ray, "_raylet", None), "GcsClient", None)
    auth_error = getattr(getattr(ray, "exceptions", None), "AuthenticationError", None)
    if gcs is None or client is None or auth_error is None:
        return  # Ray Client, "auto", or a Ray without token authentication (< 2.52)
    mode_is_token = _mode_is_token(ray, environ)
    source = token_source(environ, home)
    if mode_is_token and source is None:  # Ray's GcsClient aborts the process in this state
        raise UsageError(
            f"--ray {address}: {AUTH_MODE_VAR}=token but no Ray token is set: "
            + token_fix(True, None)
        )
    try:
        client(address=gcs)
    except auth_error as exc:
        said = str(getattr(exc, "message", "") or exc).split(". ")[0].strip().rstrip(".")
        raise UsageError(
            f"--ray {address}: the Ray cluster refused this client ({said}): "
            + token_fix(mode_is_token, source)
        )
    except Exception:  # noqa: BLE001 - any other failure is ray.init's to report, as before
        return


def gpu_nodes(ray: Any) -> List[Dict[str, Any]]:
    return [
        n
        for n in ray.nodes()
        if n.get("Alive") and float((n.get("Resources") or {}).get("GPU", 0)) > 0
    ]


def _read_lock_text(lock: Optional[str]) -> Optional[str]:
    if not lock:
        return None
    try:
        with open(lock, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise UsageError(f"--lock {lock}: cannot read it: {exc.strerror or exc}")


def _connect(ray: Any, address: str, timeout: float) -> bool:
    """Connect to the cluster unless this process already is; True when connected here."""
    if ray.is_initialized():
        return False
    _check_reachable(address, min(timeout, 10.0))
    check_token(ray, address, os.environ, os.path.expanduser("~"))
    try:
        ray.init(
            address=address,
            logging_level="ERROR",
            log_to_driver=False,
            runtime_env={"env_vars": dict(WORKER_ENV)},
        )
    except Exception as exc:  # noqa: BLE001 - ConnectionError, ValueError, RuntimeError from Ray
        raise UsageError(
            f"--ray {address}: cannot connect to the Ray cluster: {type(exc).__name__}: {exc}"
        )
    return True


def _node_name(n: Dict[str, Any], host: Optional[str] = None) -> str:
    return f"{host or n.get('NodeManagerHostname', '?')} ({n['NodeID'][:8]})"


def _answer(ray: Any, ref: Any, n: Dict[str, Any]) -> NodeResult:
    """One node's result from its finished task (the task's failure is that node's error)."""
    try:
        got = ray.get(ref)
        return NodeResult(
            node=_node_name(n, got["host"]),
            node_id=n["NodeID"],
            address=n.get("NodeManagerAddress", ""),
            doctor=got["doctor"],
        )
    except Exception as exc:  # noqa: BLE001 - the task's failure is that node's result
        text = str(exc).strip()
        return NodeResult(
            node=_node_name(n),
            node_id=n["NodeID"],
            address=n.get("NodeManagerAddress", ""),
            error=f"{type(exc).__name__}: {text.splitlines()[-1] if text else ''}",
        )


def run(
    address: str,
    *,
    python: Optional[str] = None,
    lock: Optional[str] = None,
    timeout: float = 300.0,
    all_nodes: bool = False,
) -> Tuple[List[NodeResult], int]:
    """(one NodeResult per GPU node, number of alive nodes seen). `lock` is a local file whose
    text is shipped to the nodes. Raises UsageError when the cluster cannot be reached."""
    ray = _import_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    lock_text = _read_lock_text(lock)
    connected_here = _connect(ray, address, timeout)
    try:
        alive = [n for n in ray.nodes() if n.get("Alive")]
        nodes = alive if all_nodes else gpu_nodes(ray)
        task = ray.remote(num_cpus=0, num_gpus=0, max_retries=0)(node_doctor)
        pending = {}
        for n in nodes:
            ref = task.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False),
                runtime_env={"env_vars": dict(WORKER_ENV)},
            ).remote(python, lock_text, os.path.basename(lock) if lock else "")
            pending[ref] = n
        ready, not_ready = ray.wait(list(pending), num_returns=len(pending), timeout=timeout)
        out = [_answer(ray, ref, pending[ref]) for ref in ready]
        for ref in not_ready:
            n = pending[ref]
            ray.cancel(ref, force=True)
            out.append(
                NodeResult(
                    node=_node_name(n),
                    node_id=n["NodeID"],
                    address=n.get("NodeManagerAddress", ""),
                    error=f"no answer within {timeout:g} s",
                )
            )
        return out, len(alive)
    finally:
        if connected_here:
            ray.shutdown()
