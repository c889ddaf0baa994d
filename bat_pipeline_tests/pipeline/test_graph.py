"""The asset graph of an agent folder: keys, dependencies, partitions, gate checks and
automation, as `build_definitions` assembles them (the engine's own guard against Dagster
is engine/test_no_dagster.py)."""

from __future__ import annotations

import pytest

from bat_pipeline_tests.support.example_agent import MODEL_KEYS

AGENT = "weather_agent"
"""The agent id of the example's copies (their folder's name): every asset key's prefix."""
CHAIN = ("agent_episodes", "span_trajectories", "episode_verdicts", "judge_scores", "eval_metrics")
DEPS = {
    "task_specs": set(),
    "agent_episodes": {"task_specs"},
    "span_trajectories": {"agent_episodes", "task_specs"},
    "episode_verdicts": {"span_trajectories", "task_specs"},
    "judge_scores": {"episode_verdicts", "task_specs"},
    "eval_metrics": {"judge_scores", "task_specs"},
    "eval_charts": {"eval_metrics"},
    "eval_report": {"eval_metrics"},
}


@pytest.fixture
def definitions(workspace_factory, monkeypatch, tmp_path):
    """`build(**copy options)` → the Definitions of a fresh trimmed copy."""
    from bat_pipeline.definitions import build_definitions

    def build(name: str, **copy_options):
        ws = workspace_factory(name, **copy_options)
        monkeypatch.setenv("BAT_DEMO_LLM_URL", ws.llm_url)
        return build_definitions(ws.agent, tmp_path / name)

    return build


def test_graph_of_an_agent_with_a_gate(definitions):
    import dagster as dg

    defs = definitions("graph_gate", evaluation={"gate": {"min_pass_rate": 0.9, "max_error_episodes": 0}})
    graph = defs.resolve_asset_graph()
    assert {tuple(key.path) for key in graph.get_all_asset_keys()} == {(AGENT, name) for name in DEPS}
    for name, parents in DEPS.items():
        node = graph.get(dg.AssetKey([AGENT, name]))
        assert {p.path[-1] for p in node.parent_keys} == parents, name
        assert {p.path[0] for p in node.parent_keys} <= {AGENT}, name
        if name in CHAIN:
            assert node.partitions_def.get_partition_keys() == list(MODEL_KEYS), name
        else:
            assert node.partitions_def is None, name

    checks = {spec.name: spec for spec in defs.resolve_assets_def(dg.AssetKey([AGENT, "eval_metrics"])).check_specs}
    assert set(checks) == {"min_pass_rate", "max_error_episodes", "warn_pass_rate"}
    # The gates block; the pass-rate warning (on by default) does not.
    assert {name for name, spec in checks.items() if spec.blocking} == {"min_pass_rate", "max_error_episodes"}

    evaluate = defs.resolve_job_def("evaluate")
    assert evaluate.partitions_def.get_partition_keys() == list(MODEL_KEYS)
    assert {k.path[-1] for k in evaluate.asset_layer.selected_asset_keys} == {"task_specs", *CHAIN}
    charts = defs.resolve_job_def("refresh_charts")
    assert {k.to_user_string() for k in charts.asset_layer.selected_asset_keys} == {
        f"{AGENT}/eval_charts",
        f"{AGENT}/eval_report",
    }
    assert defs.resolve_schedule_def("sweep_schedule").job_name == "evaluate"
    assert defs.resolve_sensor_def("dataset_changed") is not None
    assert defs.resolve_sensor_def("charts_after_evaluation") is not None


def test_no_gate_no_checks(definitions):
    import dagster as dg

    defs = definitions("graph_no_gate", models=("openai-sloppy",), evaluation={"gate": {"warn_pass_rate": None}})
    assert list(defs.resolve_assets_def(dg.AssetKey([AGENT, "eval_metrics"])).check_specs) == []
    # With no gate set, only the non-blocking pass-rate warning.
    warned = definitions("graph_warn_only", models=("openai-sloppy",), evaluation={"gate": {}})
    (spec,) = warned.resolve_assets_def(dg.AssetKey([AGENT, "eval_metrics"])).check_specs
    assert spec.name == "warn_pass_rate" and not spec.blocking
    episodes = defs.resolve_assets_def(dg.AssetKey([AGENT, "agent_episodes"]))
    assert episodes.partitions_def.get_partition_keys() == ["openai-sloppy"]


def test_the_agent_id_prefixes_every_asset_key(definitions):
    defs = definitions("graph_agent_id", evaluation={"agent_id": "weather-v2"})
    keys = {tuple(key.path) for key in defs.resolve_asset_graph().get_all_asset_keys()}
    assert keys == {("weather-v2", name) for name in DEPS}
