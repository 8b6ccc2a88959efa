"""Redaction: what makes a report safe to paste into a public tracker. The one home of it:
`report` (markdown, HTML, --json), `debug --json` and the notebook HTML of the API's results
(fixer.reporting.report.doctor_html) all go through `redact` with a `Redaction`.

What is hidden:

- environment variables outside REPORTABLE_ENV (an allowlist: the loader and CUDA variables
  detection reads, and the few COLAB_/KAGGLE_ names that say which runtime this is; Colab's
  and Kaggle's secrets and tokens never appear, whatever they are called);
- a URL's userinfo ("https://user:token@host/" -> "https://***@host/");
- private IP addresses where they are addresses (a URL's host, after "@", before ":port" or
  "/prefix"): IPv4 that is not global (RFC 1918 10/8, 172.16/12, 192.168/16; RFC 3927
  link-local 169.254/16; RFC 6598 CGNAT 100.64/10; loopback) and IPv6 ULA (RFC 4193
  fc00::/7) and link-local (fe80::/10) anywhere. A bare dotted version such as 10.3.5.147
  (nvidia-curand) is not an address and stays;
- host names: the machine's own (HOSTNAME, the names given to `Redaction`) and names under
  the special-use and internal suffixes (.local RFC 6762, .home.arpa RFC 8375, .internal,
  .lan, .corp);
- homes, by PATH COMPONENT, never by substring: in "/home/alice/x" the component "alice" is a
  user name and becomes "<user>", while the word "alice" in prose, "root cause" or
  "/usr/lib/rootfs" stay. The home directory (HOME, the user's and SUDO_USER's password entry,
  names with spaces included) at the start of a path becomes "~"; "/root" becomes "~"; the
  component after a /home or /Users becomes "<user>"; a component equal to a user name
  (USER, LOGNAME, USERNAME, SUDO_USER, the password entry's) becomes "<user>". Paths inside
  `file://` URLs and `//host/...` paths are paths too.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

HOME_HOLDERS = ("home", "Users")

#: Environment variables a report may show (an allowlist; the values are redacted too).
REPORTABLE_ENV = (
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "CUDA_DEVICE_ORDER",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_MODULE_LOADING",
    "CONDA_PREFIX",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "JAX_PLATFORMS",
    "XLA_FLAGS",
    "PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK",
    "JAX_SKIP_CUDA_CONSTRAINTS_CHECK",
    "TF_CPP_MIN_LOG_LEVEL",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    # the tool's own overrides of detection (fixer.detection.overrides): facts, not secrets
    "COLAB_CUDNN_FIX_GPU",
    "COLAB_CUDNN_FIX_DRIVER",
    "COLAB_CUDNN_FIX_CUDA",
    # which runtime this is (Colab: the image tag and the accelerator; Kaggle: the kernel type)
    "COLAB_GPU",
    "COLAB_RELEASE_TAG",
    "COLAB_TPU_1VM",
    "KAGGLE_KERNEL_RUN_TYPE",
    "KAGGLE_DOCKER_IMAGE",
    "KAGGLE_GPU_TYPE",
)
INTERNAL_SUFFIXES = (".local", ".home.arpa", ".internal", ".lan", ".corp", ".localdomain")

# A path-like token: starts at "/" or "~/" (or a relative path with a "/" inside), not preceded
# by a character that would make it part of a word.
_PATH_TOKEN = re.compile(
    r"(?<![\w.~<>-])(~?/[^\s'\"`,;()\[\]{}|]*|[\w.<>-]+/[^\s'\"`,;()\[\]{}|]*)"
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/@\s'\"<>]+)@")
_SCHEME_BEFORE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):\Z")
_IPV4_URLHOST = re.compile(r"(?<=//)((?:\d{1,3}\.){3}\d{1,3})(?![\w.])")
_IPV4_AT = re.compile(r"(?<=@)((?:\d{1,3}\.){3}\d{1,3})(?![\w.])")
_IPV6 = re.compile(r"(?i)(?<![\w:])((?:f[cd][0-9a-f]{2}|fe[89ab][0-9a-f]):[0-9a-f:]*)(?![\w:])")


def _private_v4(text: str) -> bool:
    try:
        ip = ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return not ip.is_global and not ip.is_unspecified


@dataclasses.dataclass(frozen=True)
class Redaction:
    """What to hide on this machine: the home directories, the user names and host names."""

    home: Optional[str] = None
    users: Tuple[str, ...] = ()
    homes: Tuple[str, ...] = ()  # more home directories (SUDO_USER's), besides `home`
    hosts: Tuple[str, ...] = ()

    @classmethod
    def for_machine(cls, environ: Mapping[str, str]) -> "Redaction":
        """The users, homes and host names of this machine and process (`environ`)."""
        users: List[str] = []
        homes: List[str] = []
        for key in ("USER", "LOGNAME", "USERNAME", "SUDO_USER"):
            v = environ.get(key)
            if v and v not in users:
                users.append(v)
        home = environ.get("HOME")
        try:
            import pwd

            entry = pwd.getpwuid(os.getuid())
            if entry.pw_name not in users:
                users.append(entry.pw_name)
            home = home or entry.pw_dir
            for u in users:
                try:
                    homes.append(pwd.getpwnam(u).pw_dir)
                except KeyError:
                    continue
        except (ImportError, KeyError, AttributeError):
            pass
        hosts = [environ.get("HOSTNAME", "")]
        try:
            hosts.append(os.uname().nodename)
        except AttributeError:
            pass
        return cls(
            home=_norm_home(home),
            users=tuple(u for u in users if u and "/" not in u),
            homes=tuple(h for h in (_norm_home(x) for x in homes) if h and h != _norm_home(home)),
            hosts=tuple(dict.fromkeys(h for h in hosts if h and h != "localhost")),
        )

    def _all_homes(self) -> List[str]:
        homes = [h for h in (self.home,) + self.homes if h]
        return sorted(dict.fromkeys(homes), key=len, reverse=True)

    def path(self, token: str) -> str:
        """One path-like token, redacted by component (each entry of a colon-separated list alone)."""
        if ":" in token and "://" not in token:
            return ":".join(self.path(p) for p in token.split(":"))
        if "/" not in token:
            return token
        parts = token.split("/")
        for home in self._all_homes():
            hp = home.split("/")
            for i in range(len(parts) - len(hp) + 1):
                if parts[i : i + len(hp)] == hp and (i == 0 or parts[i - 1] in ("", "~")):
                    parts = parts[:i] + ["~"] + parts[i + len(hp) :]
                    break
        out = []
        for i, p in enumerate(parts):
            after_holder = i >= 2 and parts[i - 1] in HOME_HOLDERS and parts[i - 2] == ""
            if p == "root" and i == 1 and parts[0] == "":
                out = ["~"]
                continue
            out.append("<user>" if p and (p in self.users or after_holder) else p)
        result = "/".join(out)
        return result.replace("~/~", "~") if result.startswith("~/~") else result

    def text(self, text: str) -> str:
        """Every secret-bearing part of `text` redacted; the words around them untouched."""
        text = self._homes_with_spaces(text)
        text = _USERINFO.sub(r"\1***@", text)
        text = self._hosts(text)
        text = _IPV6.sub(lambda m: "<ip>" if _ula_or_link_local(m.group(1)) else m.group(1), text)
        for rx in (_IPV4_URLHOST, _IPV4_AT):
            text = rx.sub(lambda m: "<ip>" if _private_v4(m.group(1)) else m.group(1), text)
        text = re.sub(
            r"(?<![\w.])((?:\d{1,3}\.){3}\d{1,3})(?=:\d|/\d)",
            lambda m: "<ip>" if _private_v4(m.group(1)) else m.group(1),
            text,
        )
        if "/" not in text:
            return text
        return _PATH_TOKEN.sub(self._token, text)

    def _token(self, m: "re.Match[str]") -> str:
        """A path token, unless it is the rest of a URL other than file:// (a web address's
        path names no local user; its userinfo and private host are already hidden)."""
        token = m.group(1)
        if token.startswith("//"):
            scheme = _SCHEME_BEFORE.search(m.string, 0, m.start())
            if scheme is not None and scheme.group(1).lower() != "file":
                return token
        return self.path(token)

    def _homes_with_spaces(self, text: str) -> str:
        """A home directory whose path holds spaces is a single token only here."""
        for home in self._all_homes():
            if " " in home and home in text:
                text = re.sub(re.escape(home) + r"(?=/|$|[\s'\"`,;)])", "~", text)
        for u in self.users:
            if " " in u:
                for holder in HOME_HOLDERS:
                    text = text.replace(f"/{holder}/{u}", f"/{holder}/<user>")
        return text

    def _hosts(self, text: str) -> str:
        for h in sorted(self.hosts, key=len, reverse=True):
            text = re.sub(r"(?<![\w.-])" + re.escape(h) + r"(?![\w-])", "<host>", text)
        suffixes = "|".join(re.escape(s) for s in INTERNAL_SUFFIXES)
        return re.sub(
            r"(?i)(?<![\w.-])[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*(?:" + suffixes + r")(?![\w.-])",
            "<host>",
            text,
        )


def _ula_or_link_local(text: str) -> bool:
    try:
        ip = ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return ip in ipaddress.IPv6Network("fc00::/7") or ip.is_link_local


def _norm_home(home: Optional[str]) -> Optional[str]:
    return os.path.normpath(home) if home and home not in ("/", "") else None


def reportable_env(environ: Mapping[str, str]) -> Dict[str, str]:
    """The environment variables a report may show (REPORTABLE_ENV), sorted."""
    return {k: environ[k] for k in sorted(environ) if k in REPORTABLE_ENV}


def redact(value: Any, r: Redaction) -> Any:
    """The same plain value with every string (keys included) redacted."""
    if isinstance(value, str):
        return r.text(value)
    if isinstance(value, dict):
        return {r.text(str(k)): redact(v, r) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, r) for v in value]
    return value


__all__ = ["HOME_HOLDERS", "REPORTABLE_ENV", "Redaction", "redact", "reportable_env"]
