"""Which recorded Colab runtime image a machine is: its installed versions matched against the
images in recipes/colab.toml (googlecolab/backend-info). Colab exposes no variable naming the
image version, so the match is by content: torch, TensorFlow, JAX, pip and apt cuDNN, Python."""

from __future__ import annotations

import dataclasses
from typing import Dict, Optional, Sequence, Tuple

from fixer.model import ColabImage, Environment


def machine_facts(env: Environment) -> Dict[str, str]:
    """The facts an image records, as this machine has them (only those it has)."""
    facts: Dict[str, str] = {}
    for field, dist in (("torch", "torch"), ("tensorflow", "tensorflow"), ("jax", "jax")):
        d = env.distribution(dist)
        if d is not None:
            facts[field] = d.version
    for name in ("nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn-cu11"):
        d = env.distribution(name)
        if d is not None:
            facts["pip_cudnn"] = f"{name}=={d.version}"
            break
    apt = sorted(
        {
            f"{c.package.name}={c.package.version}" if c.package.version else c.package.name
            for c in env.libraries
            if c.library == "cudnn" and c.origin == "apt" and c.package
        }
    )
    if apt:  # "libcudnn9-cuda-12=9.8.0.87-1", apt's spelling
        facts["apt_cudnn"] = ";".join(apt)
    if env.python is not None:
        facts["python"] = env.python.version
    return facts


def _same(field: str, image_value: str, machine_value: str) -> bool:
    if field == "python":  # images before 2023-08 record only major.minor
        return machine_value == image_value or machine_value.startswith(image_value + ".")
    if field == "apt_cudnn":
        return set(image_value.split(";")) == set(machine_value.split(";"))
    return image_value == machine_value


def match(env: Environment, images: Sequence[ColabImage]) -> Optional[Tuple[ColabImage, int, int]]:
    """The best-matching image, with (fields equal, fields compared); None when no image agrees
    on at least two facts or every candidate contradicts the machine's torch."""
    facts = machine_facts(env)
    best: Optional[Tuple[Tuple[int, int, str], ColabImage, int, int]] = None
    for image in images:
        equal = compared = 0
        for field, mine in facts.items():
            theirs = getattr(image, field, None)
            if not theirs:
                continue
            compared += 1
            if _same(field, theirs, mine):
                equal += 1
            elif field == "torch":
                compared = -1
                break
        if compared <= 0 or equal < 2:
            continue
        key = (equal, equal - compared, image.date)
        if best is None or key > best[0]:
            best = (key, image, equal, compared)
    return None if best is None else (best[1], best[2], best[3])


def annotate(env: Environment, images: Sequence[ColabImage]) -> Environment:
    """On Colab, name the matched image in env.runtime.image (keeping a COLAB_RELEASE_TAG)."""
    if env.runtime.kind != "colab":
        return env
    found = match(env, images)
    if found is None:
        return env
    image, equal, compared = found
    label = f"{image.date} {image.commit}" + (
        f" (release {image.release})" if image.release else ""
    )
    label += f", {equal}/{compared} facts agree"
    if env.runtime.image:
        label = f"{env.runtime.image}; matches {label}"
    return dataclasses.replace(env, runtime=dataclasses.replace(env.runtime, image=label))
