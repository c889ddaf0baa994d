"""`bat-pipeline compare` over a real warehouse file: sides found by run id, prefix or
partition alone; provenance that makes a comparison not like for like is said, a dataset
change is refused unless allowed, an agent version change is reported as such."""

from __future__ import annotations

import json

import pytest

from bat_pipeline.compare_command import compare_command
from bat_pipeline.engine.contracts.provenance import Provenance
from bat_pipeline.engine.errors import InputError
from bat_pipeline.resources.warehouse import Warehouse
from bat_pipeline_tests.resources.test_warehouse import TASKS, episode, ref


def provenance(**over) -> Provenance:
    return Provenance(
        **{
            "agent_commit": "a" * 40,
            "agent_dirty": False,
            "dataset_hash": "d1",
            "config_hash": "c1",
            "judge_model": "openai:judge",
            "pipeline_version": "1.0",
            **over,
        }
    )


def write(
    wh: Warehouse, root, run_id: str, model_key: str, passing: dict[str, list[bool]], prov: Provenance, **ref_over
):
    r = ref(root, run_id, model_key).model_copy(update={"agent_id": "weather", "provenance": prov, **ref_over})
    episodes = [episode(task, i, ok) for task, outcomes in passing.items() for i, ok in enumerate(outcomes)]
    wh.write_partition(r, episodes, TASKS)


@pytest.fixture
def warehouse(tmp_path):
    wh = Warehouse(tmp_path / "warehouse.duckdb")
    good = {"t0": [True, True], "t1": [True, True]}
    write(wh, tmp_path, "20260101T000000Z-aaaa", "m", good, provenance())
    # A later run at another agent commit, same dataset and judge: t1 now fails.
    write(
        wh,
        tmp_path,
        "20260102T000000Z-bbbb",
        "m",
        {"t0": [True, True], "t1": [False, True]},
        provenance(agent_commit="b" * 40),
    )
    # Another dataset, and another judge.
    write(wh, tmp_path, "20260103T000000Z-cccc", "m", good, provenance(dataset_hash="d2"))
    write(wh, tmp_path, "20260104T000000Z-dddd", "m", good, provenance(judge_model="openai:other"))
    write(wh, tmp_path, "20260104T000000Z-eeee", "other", good, provenance(), agent_id="another-agent")
    return wh


def run(wh, base, candidate, capsys, **options):
    code = compare_command(wh, base, candidate, fmt="json", **options)
    return code, json.loads(capsys.readouterr().out)


def test_agent_versions_are_compared_and_the_change_is_named(warehouse, capsys):
    code, result = run(warehouse, "20260101T000000Z-aaaa/m", "20260102/m", capsys)
    assert code == 0  # 2 tasks: a drop of one attempt is no detectable difference
    assert result["candidate"]["run_id"] == "20260102T000000Z-bbbb"
    assert result["candidate"]["agent_commit"] == "b" * 40
    assert result["not_like_for_like"] == []
    assert result["changes"] == [f"agent_commit differs: {'a' * 40} (base) vs {'b' * 40} (candidate)"]
    assert result["pass_rate"]["difference"] == pytest.approx(-0.25)
    assert result["verdict"] == "no detectable difference"


def test_a_dataset_change_is_refused_unless_allowed(warehouse, capsys):
    with pytest.raises(InputError, match=r"the datasets differ .*--allow-dataset-change"):
        compare_command(warehouse, "20260101/m", "20260103/m")
    code, result = run(warehouse, "20260101/m", "20260103/m", capsys, allow_dataset_change=True)
    assert code == 0 and result["not_like_for_like"] == ["dataset_hash differs: d1 (base) vs d2 (candidate)"]


def test_another_judge_is_not_like_for_like_and_said_in_the_table(warehouse, capsys):
    assert compare_command(warehouse, "20260101/m", "20260104T000000Z-dddd/m") == 0
    text = capsys.readouterr().out
    assert "warning: not like for like: judge_model differs: openai:judge (base) vs openai:other (candidate)" in text


def test_sides_that_cannot_be_found_or_belong_to_other_agents_are_refused(warehouse):
    with pytest.raises(InputError, match="names several runs"):
        compare_command(warehouse, "202601/m", "m")
    with pytest.raises(InputError, match="no run starting with '2030' holds partition 'm'"):
        compare_command(warehouse, "2030/m", "m")
    with pytest.raises(InputError, match="different agents"):
        compare_command(warehouse, "m", "other")
