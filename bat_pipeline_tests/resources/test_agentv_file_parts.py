"""`type: file` content parts as AgentV 4.42.4 reads and sends them (issue 29 point 3): found
beside the eval file or in a folder above it up to the repository root, a cli target getting
them in {FILES} by its `files_format` and as `<file: path>` references in its prompt, an LLM
target getting their text embedded; a file not found is left out with a warning."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from bat_pipeline.engine.config.project import load_project, suite_tasks
from bat_pipeline.engine.conversation import plan_attempts
from bat_pipeline.engine.datasets.agentv_content import DEFAULT_SYSTEM_PROMPT
from bat_pipeline.engine.target_inputs import chat_messages
from bat_pipeline.resources.targets import collect_target_episodes

ECHO = "import json, sys\nprint(json.dumps(sys.argv[1:]))\n"


def layout(tmp_path: Path, target: dict) -> tuple[Path, Path]:
    """A repository: a guide at its root, an example two levels down with its own data."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "prompts").mkdir()
    (root / "prompts" / "guide.md").write_text("Be brief.\n", encoding="utf-8")
    folder = root / "examples" / "files"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "notes.txt").write_bytes(b"line one\r\nline two\r\n")
    (folder / "echo.py").write_text(ECHO, encoding="utf-8")
    (folder / ".agentv").mkdir()
    (folder / ".agentv" / "targets.yaml").write_text(
        yaml.safe_dump({"targets": [{"name": "default", **target}]}), encoding="utf-8"
    )
    tests = [
        {
            "id": "summary",
            "input": [
                {"role": "system", "content": [{"type": "file", "value": "/prompts/guide.md"}]},
                {
                    "role": "user",
                    "content": [
                        {"type": "file", "value": "data/notes.txt"},
                        {"type": "file", "value": "data/missing.txt"},
                        {"type": "text", "value": "Summarise the notes."},
                    ],
                },
            ],
            "criteria": "short",
            "assertions": [{"type": "contains", "value": "notes"}],
        },
        {
            "id": "short",
            "input_files": ["data/notes.txt"],
            "input": "Count the lines.",
            "assertions": [{"type": "contains", "value": "2"}],
        },
    ]
    path = folder / "files.eval.yaml"
    path.write_text(yaml.safe_dump({"tests": tests}, sort_keys=False), encoding="utf-8")
    return root, path


def test_a_cli_target_gets_the_files_in_files_and_references_in_its_prompt(tmp_path):
    root, path = layout(
        tmp_path,
        {
            "provider": "cli",
            "command": f"{sys.executable} echo.py {{FILES}} -- {{PROMPT}}",
            "files_format": "--file {path}",
        },
    )
    config = load_project(path)
    guide, notes = root / "prompts" / "guide.md", path.parent / "data" / "notes.txt"
    assert any("data/missing.txt' not found" in w for w in config.agentv.warnings)
    summary, short = config.agentv.tests
    assert summary.input_files == [str(guide), str(notes)] and short.input_files == [str(notes)]
    assert summary.prompt == (
        f'@[System]:\n<file: path="{guide}">\n\n@[User]:\n<file: path="{notes}">\nSummarise the notes.'
    )
    assert short.prompt == f'<file: path="{notes}">\n\nCount the lines.'
    tasks = suite_tasks(config.agentv)
    episodes = []
    collect_target_episodes(
        config.models[0].target,
        config.agentv,
        plan_attempts(tasks, 1, []),
        tmp_path,
        concurrency=2,
        on_episode=episodes.append,
        log=lambda _: None,
    )
    argv = {e.task_id: json.loads(e.final_output) for e in episodes}
    assert argv["summary"] == ["--file", str(guide), "--file", str(notes), "--", summary.prompt]
    assert argv["short"] == ["--file", str(notes), "--", short.prompt]


def test_an_llm_target_gets_the_files_text(tmp_path):
    _, path = layout(tmp_path, {"provider": "openai", "model": "m", "api_key": "${{ SOME_KEY }}"})
    summary, short = load_project(path).agentv.tests
    assert chat_messages(summary) == [
        {"role": "system", "content": '<file path="prompts/guide.md">\nBe brief.\n</file>'},
        {"role": "user", "content": '<file path="data/notes.txt">\nline one\nline two\n</file>\nSummarise the notes.'},
    ]
    assert chat_messages(short) == [
        {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
        {"role": "user", "content": '<file path="data/notes.txt">\nline one\nline two\n</file>\n\nCount the lines.'},
    ]
    # The parts keep what AgentV hands its graders: the path as written, the text, where it is.
    file_part = summary.input[1].content[0]
    assert file_part["path"] == "data/notes.txt" and file_part["text"] == "line one\nline two\n"
    assert file_part["resolvedPath"] == str(path.parent / "data" / "notes.txt")
