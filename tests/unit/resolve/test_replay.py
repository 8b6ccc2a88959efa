"""Replay: every distinct Colab GPU image of colab_images.csv (tests/data/replay/images.json,
written by scripts/make_environments.py) with a T4, an L4 and an A100, through doctor-JSON and
back, with the real recipes. An image as shipped worked: no plan, no error finding. The one
image the data shows could not work gets the finding and the plan that fixes it."""

from __future__ import annotations

import json

import pytest

from fixer import model as m
from fixer.planner.steps import bundled_environments, load_environment, make_plan
from fixer.resolver import resolve

from tests.helpers.scenarios import me

#: image -> why it could not work, and the plan's literal commands.
BROKEN = {
    "2022-09-13_39b6bf1": (
        # a new apt cuDNN is the newest release that fits (no twin of 8.0.5 for another CUDA
        # exists in the apt data), not the smallest step up: issue 22, item 4
        "TensorFlow 2.8 was built with cuDNN 8.1; the image's apt libcudnn8 is 8.0.5",
        [
            ("apt-get", "update"),
            (
                "apt-get",
                "install",
                "-y",
                "--no-install-recommends",
                "--allow-downgrades",
                "--allow-change-held-packages",
                "--",
                "libcudnn8=8.7.0.84-1+cuda11.8",
            ),
            ("apt-mark", "hold", "--", "libcudnn8"),
            ("colab-cudnn-fix", "verify", "--python", "/usr/bin/python3"),
        ],
    ),
}

IMAGES = me().load_images()


def test_replay_set_is_every_distinct_image_of_the_csv():
    assert len(IMAGES) >= 60
    assert len({i.name for i in IMAGES}) == len(IMAGES)
    assert IMAGES[0].date == "2022-09-13" and IMAGES[-1].date == "2026-08-19"


@pytest.mark.parametrize("gpu", sorted(me().GPUS))
def test_every_image_on_every_gpu(gpu, real_recipes, tmp_path):
    try:
        from fixer.diagnosis.findings import diagnose
    except ImportError:  # pragma: no cover - diagnose is another area
        diagnose = None
    for img in IMAGES:
        env = me().build_environment(img, me().GPUS[gpu], real_recipes)
        path = tmp_path / f"{img.name}.json"
        path.write_text(me().doctor_json(env, img.name))
        again, _findings, _ = load_environment(str(path))
        assert again == env
        plan = make_plan(again, resolve(again, m.Intent(), real_recipes))
        errors = (
            [f for f in diagnose(again, real_recipes) if f.severity == "error"] if diagnose else []
        )
        if img.name in BROKEN:
            why, commands = BROKEN[img.name]
            assert [s.argv for s in plan.steps] == commands, why
            if diagnose:
                assert [f.id for f in errors] == ["cudnn-too-old"], why
        else:
            assert plan.nothing_to_do, (img.name, gpu, [s.summary for s in plan.steps])
            assert plan.steps == ()
            assert not errors, (img.name, gpu, errors)


def test_bundled_environments_are_current_and_plan_as_described(real_recipes):
    assert set(bundled_environments()) >= {
        "colab-2026-08",
        "colab-2025-01-tf215",
        "h200-healthy",
        "h200-pip-cudnn-hidden",
    }
    for name, (env, _desc) in me().bundled(real_recipes).items():
        loaded, findings, where = load_environment(name)
        assert loaded == env, (
            f"fixer/environments/{name}.json is stale: run scripts/make_environments.py"
        )
        assert "bundled" in where
    plans = {
        n: make_plan(e, resolve(e, m.Intent(), real_recipes))
        for n, e in ((n, load_environment(n)[0]) for n in bundled_environments())
    }
    assert plans["colab-2026-08"].nothing_to_do and plans["h200-healthy"].nothing_to_do
    assert [s.argv for s in plans["colab-2025-01-tf215"].steps][:3] == [
        ("apt-get", "update"),
        (
            "apt-get",
            "install",
            "-y",
            "--no-install-recommends",
            "--allow-downgrades",
            "--allow-change-held-packages",
            "--",
            "libcudnn8=8.9.7.29-1+cuda12.2",
        ),
        ("apt-mark", "hold", "--", "libcudnn8"),
    ]
    hidden = plans["h200-pip-cudnn-hidden"]
    assert [s.argv for s in hidden.steps] == [
        (
            "/usr/local/bin/uv",
            "pip",
            "install",
            "--python",
            "/opt/torch/.venv/bin/python3",
            "--no-deps",
            "--reinstall-package",
            "nvidia-cudnn-cu13",
            "--",
            "nvidia-cudnn-cu13==9.19.0.56",
        ),
        ("colab-cudnn-fix", "verify", "--python", "/opt/torch/.venv/bin/python3"),
    ]
    assert {c.action for c in hidden.stack.choices} == {
        "keep"
    }  # torch, jax, cupy: never reinstalled


def test_the_bundled_files_are_doctor_json():
    for name in bundled_environments():
        from fixer.planner.steps import environments_dir
        import os

        data = json.load(open(os.path.join(environments_dir(), name + ".json")))
        assert data["schema"] == m.ENVIRONMENT_SCHEMA and set(data) >= {"environment", "findings"}
