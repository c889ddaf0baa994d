"""engine.agent_folder: locating the agent, its layout and its config.yaml (SPEC §1)."""

from __future__ import annotations

import copy

import pytest
import yaml

from bat_pipeline.engine.agent_folder import detect_layout, resolve_agent_dir, spans_files
from bat_pipeline.engine.config.agent_yaml import check_telemetry_privacy, evaluation_config_copy, read_agent_config
from bat_pipeline.engine.errors import InputError


def standalone(path):
    path.mkdir(parents=True)
    for name in ("config.yaml", "agent.json", "pyproject.toml"):
        (path / name).write_text("{}")
    return path


def blueprint(root, *agents):
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname='bp'\n")
    (root / "__main__.py").write_text("")
    for name in agents:
        (root / name).mkdir()
        (root / name / "config.yaml").write_text("{}")
    return root


# --- layout ---------------------------------------------------------------------------


def test_layout_standalone(tmp_path):
    layout = detect_layout(standalone(tmp_path / "solo"))
    assert (layout.kind, layout.root, layout.name) == ("standalone", tmp_path / "solo", "solo")
    assert layout.config_file == tmp_path / "solo" / "config.yaml"
    assert layout.start_command() == ["uv", "run", "."]


def test_layout_blueprint(tmp_path):
    root = blueprint(tmp_path / "bp", "planner")
    layout = detect_layout(root / "planner")
    assert (layout.kind, layout.root, layout.name) == ("blueprint", root, "planner")
    assert layout.start_command() == ["uv", "run", ".", "planner"]


def test_parent_with_agent_json_is_not_a_blueprint(tmp_path):
    root = blueprint(tmp_path / "bp", "planner")
    (root / "agent.json").write_text("{}")
    assert detect_layout(root / "planner").kind == "custom"


def test_layout_custom(tmp_path):
    (tmp_path / "other" / "eval").mkdir(parents=True)
    layout = detect_layout(tmp_path / "other")
    assert (layout.kind, layout.config_file, layout.start_command()) == ("custom", None, None)


# --- resolve_agent_dir ----------------------------------------------------------------


def test_resolve_no_arg_in_agent_folder(tmp_path):
    assert resolve_agent_dir(None, standalone(tmp_path / "solo")) == tmp_path / "solo"


def test_resolve_path_argument(tmp_path):
    standalone(tmp_path / "solo")
    assert resolve_agent_dir("solo", tmp_path) == tmp_path / "solo"


def test_resolve_blueprint_name_from_root(tmp_path):
    root = blueprint(tmp_path / "bp", "a1", "a2")
    assert resolve_agent_dir("a2", root) == root / "a2"


def test_resolve_sibling_name_from_inside_an_agent(tmp_path):
    root = blueprint(tmp_path / "bp", "a1", "a2")
    assert resolve_agent_dir("a2", root / "a1") == root / "a2"


def test_resolve_single_blueprint_agent(tmp_path):
    root = blueprint(tmp_path / "bp", "only")
    assert resolve_agent_dir(None, root) == root / "only"


def test_resolve_ambiguous_lists_agents(tmp_path):
    root = blueprint(tmp_path / "bp", "a1", "a2")
    with pytest.raises(InputError, match="a1, a2"):
        resolve_agent_dir(None, root)


def test_resolve_unknown_name_lists_agents(tmp_path):
    root = blueprint(tmp_path / "bp", "a1", "a2")
    with pytest.raises(InputError, match="agents: a1, a2"):
        resolve_agent_dir("a3", root)


def test_resolve_not_an_agent_folder(tmp_path):
    with pytest.raises(InputError, match="not an agent folder"):
        resolve_agent_dir(None, tmp_path)


# --- config.yaml ----------------------------------------------------------------------


def test_read_agent_config_expands_braced_vars(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("llm: {key: '${K}', other: '${UNSET}', plain: $K}\n")
    assert read_agent_config(path, {"K": "v"}) == {"llm": {"key": "v", "other": "${UNSET}", "plain": "$K"}}
    assert read_agent_config(path) == {"llm": {"key": "${K}", "other": "${UNSET}", "plain": "$K"}}


def test_read_agent_config_bad_yaml_names_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("endpoint:\n  port: [9900\n")
    with pytest.raises(InputError, match="line"):
        read_agent_config(path)


@pytest.mark.parametrize("level", ["content", "names", "full"])
def test_privacy_above_none_refused(tmp_path, level):
    file = tmp_path / "config.yaml"
    with pytest.raises(InputError) as caught:
        check_telemetry_privacy({"telemetry": {"privacy": level}}, file)
    text = str(caught.value)
    assert str(file) in text and "field 'privacy'" in text and caught.value.entry == "telemetry"
    assert "telemetry.privacy: none" in text and "content" in text


@pytest.mark.parametrize(
    "config", [{}, {"telemetry": {}}, {"telemetry": {"privacy": "none"}}, {"telemetry": {"privacy": None}}]
)
def test_privacy_none_or_missing_accepted(config):
    check_telemetry_privacy(config, "config.yaml")


ORIGINAL = {
    "name": "weather",
    "endpoint": {"url": "https://0.0.0.0", "port": 9900, "path": "/a2a"},
    "telemetry": {"output": [{"type": "remote", "endpoint": "http://otel"}], "privacy": "none", "service": "w"},
    "llm": {"temperature": 0.2, "api_key": "${KEY}"},
}


def test_config_copy_sets_port_host_and_spans(tmp_path):
    result = evaluation_config_copy(ORIGINAL, port=12345, host="127.0.0.1", spans_file=tmp_path / "s.jsonl")
    assert result["endpoint"] == {"url": "https://127.0.0.1", "port": 12345, "path": "/a2a"}
    assert result["telemetry"]["output"] == [{"type": "local", "file_path": str(tmp_path / "s.jsonl")}]
    assert result["telemetry"]["privacy"] == "none"


def test_config_copy_of_an_agent_evaluated_over_otlp_exports_to_the_receiver(tmp_path):
    # agent.spans: otlp: the one output is a remote one at the partition's receiver.
    result = evaluation_config_copy(
        ORIGINAL, port=1, host="127.0.0.1", spans_file=tmp_path / "s.jsonl", otlp_endpoint="http://127.0.0.1:4318"
    )
    assert result["telemetry"]["output"] == [{"type": "remote", "endpoint": "http://127.0.0.1:4318"}]
    assert result["telemetry"]["privacy"] == "none" and result["telemetry"]["service"] == "w"


def test_config_copy_leaves_everything_else_equal(tmp_path):
    before = copy.deepcopy(ORIGINAL)
    result = evaluation_config_copy(ORIGINAL, port=1, host="h", spans_file=tmp_path / "s.jsonl")
    assert ORIGINAL == before
    assert {k: v for k, v in result.items() if k not in ("endpoint", "telemetry")} == {
        k: v for k, v in before.items() if k not in ("endpoint", "telemetry")
    }
    assert result["telemetry"]["service"] == "w"
    yaml.safe_dump(result)


def test_config_copy_without_endpoint_or_host(tmp_path):
    result = evaluation_config_copy({}, port=7, spans_file=tmp_path / "s.jsonl")
    assert result["endpoint"] == {"url": "http://localhost", "port": 7}


# --- spans files ----------------------------------------------------------------------


def test_spans_files_files_and_folders(tmp_path):
    (tmp_path / "called").mkdir()
    for name in ("b.jsonl", "a.json", "notes.txt"):
        (tmp_path / "called" / name).write_text("")
    (tmp_path / "one.jsonl").write_text("")
    (tmp_path / "main.jsonl").write_text("")
    found = spans_files(
        tmp_path, ["one.jsonl", "called", "missing.jsonl", "main.jsonl"], primary=tmp_path / "main.jsonl"
    )
    assert found == [tmp_path / "main.jsonl", tmp_path / "one.jsonl", tmp_path / "called" / "b.jsonl"]
