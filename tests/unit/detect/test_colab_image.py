"""The Colab image is recognised from what is installed, against the real recipes/colab.toml."""

import dataclasses
import json

from fixer import model as m
from pathlib import Path

import fixer
from fixer.detection.colab_image import annotate, match
from fixer.recipebook import load


def _env(kind="colab", **dists):
    ds = tuple(m.Distribution(n, v) for n, v in dists.items())
    return m.Environment(
        runtime=m.Runtime(kind=kind),
        python=m.PythonEnv(executable="/usr/bin/python3", version="3.13.15", distributions=ds),
        libraries=(
            m.LibraryCopy(
                "cudnn",
                9,
                "9.8.0",
                "/usr/lib/x86_64-linux-gnu",
                origin="apt",
                package=m.Package("libcudnn9-cuda-12", "9.8.0.87-1"),
            ),
        ),
    )


def test_the_2026_08_image_is_recognised():
    env = _env(
        **{
            "torch": "2.11.0+cu128",
            "tensorflow": "2.20.0",
            "jax": "0.7.2",
            "nvidia-cudnn-cu12": "9.19.0.56",
        }
    )
    image, equal, compared = match(env, load().colab_images)
    assert (image.date, image.commit) == ("2026-08-19", "a724079")
    assert equal == compared == 6
    assert annotate(env, load().colab_images).runtime.image.startswith("2026-08-19 a724079")


def test_a_changed_torch_is_not_called_that_image_and_non_colab_is_untouched():
    env = _env(**{"torch": "2.99.0", "tensorflow": "2.20.0", "nvidia-cudnn-cu12": "9.19.0.56"})
    found = match(env, load().colab_images)
    assert found is None or found[0].torch in (None, "2.99.0")
    linux = _env(kind="linux", torch="2.11.0+cu128", tensorflow="2.20.0")
    assert annotate(linux, load().colab_images) is linux


def test_every_bundled_colab_environment_matches_its_image():
    for name, date in (("colab-2026-08", "2026-08"),):
        data = json.loads(
            (Path(fixer.__file__).parent / "environments" / f"{name}.json").read_text()
        )
        env = m.from_dict(m.Environment, data["environment"])
        env = dataclasses.replace(env, runtime=dataclasses.replace(env.runtime, kind="colab"))
        image, equal, compared = match(env, load().colab_images)
        assert image.date.startswith(date), (image, equal, compared)
