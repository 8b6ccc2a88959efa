from fixer.system.versions import canonical_name, public, version_key


def test_version_key_drops_local_labels_and_stops_at_pre_releases():
    assert version_key("9.19.0.56") == (9, 19, 0, 56)
    assert version_key("2.11.0+cu130") == (2, 11, 0)  # not (2, 11, 130)
    assert version_key("2.15.0rc1") == (2, 15, 0)
    assert version_key("8.9.7.29-1") == (8, 9, 7, 29, 1)
    assert version_key(None) == () and version_key("") == ()
    assert version_key("2.11.0+cu130") < version_key("2.11.1")
    assert public("2.11.0+cu130") == "2.11.0"


def test_canonical_name_is_pep503():
    assert (
        canonical_name("nvidia_cudnn_cu13")
        == canonical_name("Nvidia.CUDNN--cu13")
        == "nvidia-cudnn-cu13"
    )
