"""EvalBench scenarios as a dataset (SPEC §10, §12): evalsets, scenario fields on bat-cli
tasks, `${VAR}`, the simulated user's settings, key handling and turn limits."""

from __future__ import annotations

import json

import pytest

from bat_pipeline.engine.config import load_eval_config, load_tasks
from bat_pipeline.engine.config.project import Overrides, load_project, project_kind
from bat_pipeline.engine.contracts.scenario import ConversationTurn
from bat_pipeline.engine.conversation import scenarios_needing_user, turn_limit
from bat_pipeline.engine.environment import agent_environment, require_simulated_user_key
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.simulated_user import is_terminate, reply_text, user_messages

SCENARIO = {
    "id": "list-instances-01",
    "starting_prompt": "List all instances in ${PROJECT_ID}",
    "conversation_plan": "Ensure the agent calls list_instances.",
    "expected_trajectory": ["cloud-sql__list_instances"],
    "env": {"GOOGLE_CLOUD_PROJECT": "p", "N": 3},
    "max_turns": 4,
    "kind": "agent",
    "expected_skills": ["sql"],
    "prompt_timeout_seconds": 30,
}


def write(tmp_path, data, name="data.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_an_evalset_becomes_tasks_with_their_scenario(tmp_path):
    warnings: list[str] = []
    [task] = load_tasks(write(tmp_path, {"scenarios": [SCENARIO]}), warnings, environ={"PROJECT_ID": "my-proj"})
    assert task.id == "list-instances-01" and task.turns == ["List all instances in my-proj"]
    assert task.expected.status is None  # EvalBench scores trajectory and goal, not the A2A status
    assert task.expected.expected_outcome == SCENARIO["conversation_plan"]
    scenario = task.scenario
    assert scenario is not None and scenario.max_turns == 4 and scenario.kind == "agent"
    assert scenario.expected_trajectory == ["cloud-sql__list_instances"]
    assert scenario.env == {"GOOGLE_CLOUD_PROJECT": "p", "N": "3"}
    assert warnings == []


def test_an_unset_variable_in_an_evalset_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"scenarios\[0\].*'PROJECT_ID' is not set"):
        load_tasks(write(tmp_path, {"scenarios": [SCENARIO]}), environ={})


def test_bat_cli_tasks_and_scenarios_mix_in_one_file(tmp_path):
    data = [
        {"id": "plain", "turns": ["hi"]},
        {
            "id": "with_plan",
            "turns": ["hi", "more"],
            "conversation_plan": "say 'x'",
            "max_turns": 4,
            "expected": {"status": "completed"},
        },
        {"id": "scenario", "starting_prompt": "go", "expected_trajectory": ["t"]},
    ]
    plain, with_plan, scenario = load_tasks(write(tmp_path, data))
    assert plain.scenario is None and plain.expected.status == "completed"
    assert with_plan.turns == ["hi", "more"] and with_plan.scenario.conversation_plan == "say 'x'"
    assert with_plan.expected.status == "completed"
    assert scenario.turns == ["go"] and scenario.expected.status is None
    # And the other way round: a bat-cli task inside an evalset.
    tasks = load_tasks(write(tmp_path, {"scenarios": data}, "set.json"), environ={})
    assert [t.id for t in tasks] == ["plain", "with_plan", "scenario"]


def test_turn_limits_come_from_the_scenario_then_the_simulated_user_then_one(tmp_path):
    tasks = load_tasks(
        write(
            tmp_path,
            [
                {"id": "a", "starting_prompt": "x", "max_turns": 3},
                {"id": "b", "starting_prompt": "x"},
                {"id": "c", "turns": ["1", "2"]},
            ],
        )
    )
    assert [turn_limit(t) for t in tasks] == [3, 1, 2]
    assert [turn_limit(t, 5) for t in tasks] == [3, 5, 2]


EVAL = """
models: ["openai:m"]
simulated_user: {provider: openai, model: user, api_key_env: USER_KEY, max_turns: 6}
"""


def make_agent(tmp_path, text=EVAL):
    folder = tmp_path / "agent"
    (folder / "eval" / "input").mkdir(parents=True)
    (folder / "eval" / "eval.yaml").write_text(text)
    (folder / "eval" / "input" / "tasks.json").write_text(json.dumps([{"id": "t", "turns": ["hi"]}]))
    return folder


def test_the_simulated_users_key_never_reaches_the_agent(tmp_path):
    config = load_eval_config(make_agent(tmp_path))
    assert config.simulated_user is not None and config.simulated_user.max_turns == 6
    env = agent_environment(config, config.models[0], base_env={"USER_KEY": "k", "PATH": "/bin"}, dotenv={})
    assert "USER_KEY" not in env and env["PATH"] == "/bin"


def test_a_simulated_user_in_shorthand_and_its_missing_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = load_eval_config(make_agent(tmp_path, 'models: ["openai:m"]\nsimulated_user: "openai:scripted-user"\n'))
    assert (config.simulated_user.provider, config.simulated_user.model) == ("openai", "scripted-user")
    with pytest.raises(InputError, match=r"the simulated user \(openai:scripted-user\).*OPENAI_API_KEY"):
        require_simulated_user_key(config, shell={})
    require_simulated_user_key(config, shell={"OPENAI_API_KEY": "k"})


def test_a_plan_with_turns_left_needs_a_simulated_user(tmp_path):
    folder = make_agent(tmp_path, 'models: ["openai:m"]\n')
    config = load_eval_config(folder)
    tasks = load_tasks(
        write(
            tmp_path,
            [
                {"id": "a", "starting_prompt": "x", "conversation_plan": "p", "max_turns": 2},
                {"id": "b", "starting_prompt": "x", "conversation_plan": "p"},
            ],
        )
    )
    with pytest.raises(InputError, match=r"simulated_user.*scenario 'a' has a conversation plan"):
        scenarios_needing_user(config, tasks)
    assert scenarios_needing_user(config, tasks[1:]) == []  # one turn: nobody to ask


def test_dataset_override_and_an_evalset_alone(tmp_path):
    folder = make_agent(tmp_path)
    evalset = write(tmp_path, {"scenarios": [{"id": "s", "starting_prompt": "x"}]}, "set.json")
    config = load_project(folder, Overrides(dataset=evalset))
    assert config.resolve(config.evaluation.dataset) == evalset
    with pytest.raises(InputError, match="needs an agent to run against"):
        project_kind(evalset)


def test_the_simulated_users_prompt_and_reply():
    history = [ConversationTurn(user="weather?", agent="NEED_INPUT: Which city?")]
    system, user = user_messages("Say 'Berlin'.", history)
    assert "TERMINATE" in system["content"]
    assert "## Conversation Plan\nSay 'Berlin'." in user["content"]
    assert "User: weather?\nAgent: NEED_INPUT: Which city?" in user["content"]
    assert "## Last Agent Reply\nNEED_INPUT: Which city?" in user["content"]
    assert reply_text(' User: "Berlin" ') == "Berlin"
    assert is_terminate("Thanks, all done. TERMINATE") and not is_terminate("terminate later")
    with pytest.raises(ValueError):
        reply_text("  ")


def test_a_scenarios_env_cannot_reach_a_shared_a2a_agent(tmp_path):
    from bat_pipeline.engine.config.project import project_tasks

    evalset = write(tmp_path, {"scenarios": [{"id": "s", "starting_prompt": "x", "env": {"A": "1"}}]}, "set.json")
    config = load_project(make_agent(tmp_path), Overrides(dataset=evalset))
    warnings: list[str] = []
    project_tasks(config, warnings)
    assert len(warnings) == 1 and "scenario 's', field 'env'" in warnings[0] and "cannot take" in warnings[0]


@pytest.mark.parametrize(
    "name", ["PYTHONWARNINGS", "BROWSER", "PYTHONSTARTUP", "LD_PRELOAD", "NODE_OPTIONS", "BASH_ENV"]
)
def test_a_scenarios_variables_that_load_code_are_refused_unless_trusted(tmp_path, name):
    """An evalset could make a CLI agent run a command (PYTHONWARNINGS naming a module's
    class + BROWSER, PYTHONSTARTUP, LD_PRELOAD, ...): refused unless --trust-datasets."""
    from bat_pipeline.engine.config.project import project_tasks

    scenario = {"id": "s", "starting_prompt": "x", "env": {"LANG": "C.UTF-8", name: "whatever"}}
    evalset = write(tmp_path, {"scenarios": [scenario]}, "set.json")
    config = load_project(make_agent(tmp_path), Overrides(dataset=evalset))
    with pytest.raises(InputError, match=f"the variable {name} makes programs load code") as caught:
        project_tasks(config)
    assert caught.value.file == str(evalset) and caught.value.entry == "scenario 's'"
    assert caught.value.field == f"env.{name}" and "--trust-datasets" in str(caught.value)
    trusted = load_project(make_agent(tmp_path / "again"), Overrides(dataset=evalset, trust_datasets=True))
    assert project_tasks(trusted)[0].scenario.env[name] == "whatever"
