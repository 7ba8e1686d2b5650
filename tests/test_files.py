import os

import pytest

from foosball.files import load_file, write_atomically


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "calibration.json"
    target.write_text("old")

    def power_cut(*_args):
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(OSError, match="power cut"):
        write_atomically(target, b"new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["calibration.json"]


def test_write_sets_the_mode(tmp_path):
    target = tmp_path / "wire.key"
    write_atomically(target, b"secret", mode=0o600)
    assert target.read_bytes() == b"secret"
    assert target.stat().st_mode & 0o777 == 0o600


def test_load_file_names_the_file_for_every_kind_of_error(tmp_path):
    bad_toml = tmp_path / "x.toml"
    bad_toml.write_text("a = ")
    with pytest.raises(ValueError, match=r"x\.toml: not TOML"):
        load_file(bad_toml, dict, ValueError)
    with pytest.raises(ValueError, match=r"missing\.json: cannot read"):
        load_file(tmp_path / "missing.json", dict, ValueError)

    def refuse(_data):
        raise ValueError("field.width: missing")

    good = tmp_path / "t.json"
    good.write_text("{}")
    with pytest.raises(ValueError, match=r"t\.json: field\.width: missing"):
        load_file(good, refuse, ValueError)
