"""The rig's modes and run dir, without starting a rig: which mode a host gets, what a
booted board is given from the recipes, the run dir `rig up` may delete, where the panel
token goes, and what `rig up` prints when a process of the rig exits."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from foosball.rig import booted, rig
from foosball.rig.booted import recipe_agents, recipe_dropins
from foosball.rig.cli import _exits, _stopped
from foosball.rig.rig import RUN_DIR_MARK, Rig, RigOptions, choose_mode, clean_run_dir

REPO = Path(__file__).resolve().parents[2]


def test_auto_takes_the_first_mode_the_host_can_run(monkeypatch):
    monkeypatch.setattr(rig, "booted_unavailable", lambda: "no nspawn")
    monkeypatch.setattr(rig, "netns_unavailable", lambda: None)
    assert choose_mode("auto") == "processes"
    monkeypatch.setattr(rig, "booted_unavailable", lambda: None)
    assert choose_mode("auto") == "booted"
    monkeypatch.setattr(rig, "netns_unavailable", lambda: "not root")
    monkeypatch.setattr(rig, "booted_unavailable", lambda: "not root")
    assert choose_mode("auto") == "single-host"


def test_the_library_default_stays_namespaced_processes_as_root(monkeypatch):
    monkeypatch.setattr(rig, "booted_unavailable", lambda: None)
    monkeypatch.setattr(rig, "netns_unavailable", lambda: None)
    assert choose_mode(None) == "processes"
    assert choose_mode(None, use_namespaces=False) == "single-host"


def test_a_mode_the_host_cannot_run_is_refused_with_the_reason(monkeypatch):
    monkeypatch.setattr(rig, "booted_unavailable", lambda: "not root: containers need root")
    with pytest.raises(RuntimeError, match="cannot run booted boards here: not root"):
        choose_mode("booted")
    with pytest.raises(ValueError, match="no rig mode 'bootd'"):
        choose_mode("bootd")


def test_a_board_gets_one_unit_per_agent_section_and_the_recipes_drop_ins():
    board_toml = (REPO / "image-config/pole/board.toml").read_text()
    agents = recipe_agents(board_toml)
    assert agents == ["motor_driver", "pole_driver", "supervisory_panel", "update_agent"]
    dropins = recipe_dropins(agents)
    assert {a: [p.name for p in files] for a, files in dropins.items()} == {
        "motor_driver": ["realtime.conf"], "update_agent": ["update-agent.conf"]}
    assert all(p.is_file() for files in dropins.values() for p in files)


def test_the_rig_dropin_only_sends_output_to_the_rigs_logs():
    lines = [line for line in booted.RIG_DROPIN.splitlines()
             if line and not line.startswith(("#", "["))]
    assert sorted(line.split("=", 1)[0] for line in lines) == [
        "Environment", "StandardError", "StandardOutput"]


def test_a_run_dir_of_a_rig_is_deleted_whatever_it_holds(tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / "boards" / "pole").mkdir(parents=True)
    (run_dir / RUN_DIR_MARK).write_text("")
    (run_dir / "boards" / "pole" / "left-over").write_text("x")
    clean_run_dir(run_dir)
    assert not run_dir.exists()


def test_a_non_empty_directory_that_is_not_a_rigs_is_refused(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("years of work")
    with pytest.raises(RuntimeError, match="not a rig's run dir"):
        clean_run_dir(home)
    assert (home / "thesis.tex").read_text() == "years of work"


def test_an_empty_directory_or_none_is_fine(tmp_path):
    (tmp_path / "empty").mkdir()
    clean_run_dir(tmp_path / "empty")
    clean_run_dir(tmp_path / "absent")
    assert not (tmp_path / "empty").exists()


def test_the_panel_token_stays_in_the_run_dir_off_the_boards(tmp_path):
    the_rig = Rig(RigOptions(run_dir=tmp_path, agents=("game_panel",), mode="single-host"))
    the_rig.write_board_files()
    assert f'token_file = "{tmp_path / "panel.token"}"' in the_rig.board_file(
        "strategy").read_text()


def test_rig_up_names_the_process_whose_exit_stopped_it():
    class Exited:
        def __init__(self, code: int) -> None:
            self.returncode = code

    said = _exits(["strategy", "camera"], {"strategy": Exited(-signal.SIGKILL),
                                            "camera": Exited(3)})
    assert said == "strategy exited with signal SIGKILL, camera exited with status 3"
    assert _stopped({"strategy": -signal.SIGTERM, "camera": 0, "emulator": 1}) == (
        "  strategy: stopped\n  camera: stopped\n  emulator: status 1")


def test_the_trackers_board_file_names_the_marker_layout_for_the_camera_tab(tmp_path):
    """The game panel's Camera tab asks the tracker, which calibrates with its own
    [ball_tracker] markers_file and focal_px: the rig gives the simulated camera's."""
    import tomllib

    from foosball.vision.config import parse_settings

    the_rig = Rig(RigOptions(run_dir=tmp_path, agents=("ball_tracker",), mode="single-host"))
    the_rig.write_board_files()
    text = the_rig.board_file("vision").read_text()
    assert f'markers_file = "{tmp_path / "markers.json"}"' in text
    settings = parse_settings(tomllib.loads(text)["ball_tracker"], "[ball_tracker]")
    assert settings.markers_file == str(tmp_path / "markers.json")
    assert settings.focal_px == 470.0
