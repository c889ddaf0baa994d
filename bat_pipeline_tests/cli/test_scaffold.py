"""`bat-pipeline init` and `show`, through the command tree."""

from __future__ import annotations

import json

from bat_pipeline.cli import main
from bat_pipeline.engine.config import load_eval_config, load_tasks


def agent_folder(tmp_path):
    folder = tmp_path / "my_agent"
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text("endpoint: {url: http://localhost, port: 9900}\n")
    (folder / "agent.json").write_text(json.dumps({"name": "TravelAgent"}))
    return folder


def test_init_writes_an_eval_folder_that_loads(tmp_path, capsys):
    folder = agent_folder(tmp_path)
    assert main(["init", str(folder)]) == 0
    config = load_eval_config(folder)
    tasks = load_tasks(config.resolve(config.evaluation.dataset))
    assert [m.name for m in config.models] == ["openai:gpt-4o-mini"]
    assert "TravelAgent" in tasks[0].expected.expected_outcome
    assert "eval.yaml" in capsys.readouterr().out


def test_init_refuses_to_overwrite_without_force(tmp_path, capsys):
    folder = agent_folder(tmp_path)
    (folder / "eval").mkdir()
    (folder / "eval" / "eval.yaml").write_text("mine")
    assert main(["init", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "eval.yaml" in err and "--force" in err
    assert (folder / "eval" / "eval.yaml").read_text() == "mine"
    assert not (folder / "eval" / "input" / "tasks.json").exists()


def test_init_force_overwrites(tmp_path):
    folder = agent_folder(tmp_path)
    (folder / "eval").mkdir()
    (folder / "eval" / "eval.yaml").write_text("mine")
    assert main(["init", str(folder), "--force"]) == 0
    assert load_eval_config(folder).models


def test_show_prints_partitions_and_masks_variable_values(tmp_path, capsys, monkeypatch):
    folder = agent_folder(tmp_path)
    main(["init", str(folder)])
    eval_file = folder / "eval" / "eval.yaml"
    eval_file.write_text(
        eval_file.read_text().replace(
            "    model: gpt-4o-mini", "    model: gpt-4o-mini\n    env: {OPENAI_API_KEY: $SHOW_CANARY}"
        )
    )
    monkeypatch.setenv("SHOW_CANARY", "sk-show-canary")
    capsys.readouterr()
    assert main(["show", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "openai-gpt-4o-mini = openai:gpt-4o-mini" in out
    assert "OPENAI_API_KEY: <set>" in out and "sk-show-canary" not in out


def test_show_lists_what_the_files_hold_that_is_ignored(tmp_path, capsys):
    folder = agent_folder(tmp_path)
    main(["init", str(folder)])
    eval_file = folder / "eval" / "eval.yaml"
    eval_file.write_text(eval_file.read_text() + "\nowner: qa-team\n")
    tasks_file = folder / "eval" / "input" / "tasks.json"
    tasks = json.loads(tasks_file.read_text())
    tasks[0]["reviewer"] = "ana"
    tasks_file.write_text(json.dumps(tasks))
    capsys.readouterr()
    assert main(["show", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "top level, field 'owner': unknown key, ignored" in out
    assert "tasks[0] (id 'hello'), field 'reviewer': unknown key, ignored" in out


def test_init_names_the_agent_after_its_folder_when_its_card_does_not_read(tmp_path):
    """An agent card nested past the recursion limit, or not UTF-8, is read as no card."""
    for n, card in enumerate((b"[" * 20_000 + b"]" * 20_000, b'{"name": "caf\xe9"}')):
        folder = agent_folder(tmp_path / str(n))
        (folder / "agent.json").write_bytes(card)
        assert main(["init", str(folder)]) == 0
        config = load_eval_config(folder)
        assert "my_agent" in load_tasks(config.resolve(config.evaluation.dataset))[0].expected.expected_outcome
