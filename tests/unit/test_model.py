import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer import model as m
from tests.helpers.examples import examples


def test_environment_round_trips_through_json():
    env = m.Environment(
        gpus=(
            m.Gpu(
                0, "NVIDIA H200", pci_device_id="0x2335", compute_capability="9.0", source="nvml"
            ),
        ),
        driver=m.Driver(version="580.159.04", cuda_version="13.0", source="nvml"),
        python=m.PythonEnv(
            executable="/x/python",
            version="3.12.3",
            distributions=(m.Distribution("torch", "2.11.0", requires=("a==1",)),),
        ),
        env={"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64"},
    )
    again = m.from_dict(m.Environment, json.loads(json.dumps(m.to_dict(env))))
    assert again == env
    assert again.distribution("Torch").version == "2.11.0"


def test_from_dict_names_the_bad_path():
    with pytest.raises(ValueError, match=r"\$\.gpus\[0\]\.index: expected int"):
        m.from_dict(m.Environment, {"gpus": [{"index": "zero", "name": "x"}]})
    with pytest.raises(ValueError, match="unknown key"):
        m.from_dict(m.Gpu, {"index": 0, "name": "x", "colour": "green"})
    with pytest.raises(ValueError, match="not one of"):
        m.from_dict(m.Finding, {"id": "no-such-id", "severity": "error", "title": "t"})


def test_recipes_queries():
    r = m.Recipes(
        builds=(
            m.Build("torch", "2.5.1", "cu121", "12.1", "9.1.0"),
            m.Build("torch", "2.11.0", "cu130", "13.0", "9.19.0"),
        ),
        driver_floors=(
            m.CudaDriverFloor("13", "580.65.06"),
            m.CudaDriverFloor("12.6", "560.28.03"),
            m.CudaDriverFloor("12", "525.60.13"),
        ),
        gpus=(m.GpuModel("Tesla T4", "7.5", ("0x1eb8",)),),
        cudnn=(m.CudnnRelease("9.19.0", (12, 13)),),
    )
    assert [b.version for b in r.builds_for("torch")] == ["2.11.0", "2.5.1"]
    assert [b.version for b in r.builds_for("torch", "2.5")] == ["2.5.1"]
    assert r.min_driver("13.0") == "580.65.06"
    assert r.min_driver("12.6") == "525.60.13"
    assert r.gpu_by_pci("0x1EB810DE").name == "Tesla T4"
    assert r.gpu_by_name("NVIDIA Tesla T4").compute_capability == "7.5"
    assert r.cudnn_release("9.19.0.56").version == "9.19.0"


@settings(max_examples=examples(200))
@given(
    root=st.sampled_from(["$", "$.environment", "lock", "$.findings[3]"]),
    steps=st.lists(
        st.one_of(
            st.integers(0, 10**6),
            st.from_regex(r"\.[a-z_]{1,12}", fullmatch=True),
            st.text(max_size=8).map(lambda k: "." + m._short(k)),
        ),
        max_size=8,
    ),
)
def test_a_place_renders_as_the_path_built_one_step_at_a_time(root, steps):
    """from_dict passes each value's place as (parent, step) and renders it only for a message
    (model._path): the text is the one an f-string per step gave ("$.gpus[0].index")."""
    where, eager = root, root
    for step in steps:
        where = (where, step)
        eager += f"[{step}]" if isinstance(step, int) else step
    assert m._path(where) == eager
