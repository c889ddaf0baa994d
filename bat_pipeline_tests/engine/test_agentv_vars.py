"""A 4.x test's `vars:` fill the `{{ name }}` placeholders of its fields, as AgentV 4.42.4
fills them (engine.datasets.agentv_vars; AgentV's own examples/features/test-vars-templating
in bat_pipeline_tests/agentv_corpus shows it end to end)."""

from __future__ import annotations

from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.datasets.agentv_vars import fill, filled

TARGETS = "targets:\n  - name: default\n    provider: cli\n    command: python3 agent.py {PROMPT}\n"


def test_placeholders_are_filled_as_agentv_fills_them():
    variables = {"who": "Ada", "n": 3, "flag": True, "nested": {"deep": {"name": "Paris"}}, "obj": {"a": [1, "é"]}}
    assert fill("Hello {{who}}, {{ nested.deep.name }}!", variables) == "Hello Ada, Paris!"
    # one placeholder and nothing else: the value as it is; inside text: compact JSON
    assert fill("{{ obj }}", variables) == {"a": [1, "é"]}
    assert fill("{{n}}", variables) == 3
    assert fill("n={{n}} flag={{flag}} obj={{obj}}", variables) == 'n=3 flag=true obj={"a":[1,"é"]}'
    # a name vars does not hold, or a path through a non-mapping, is left as written
    assert fill("{{ missing }} and {{ who.name }}", variables) == "{{ missing }} and {{ who.name }}"
    assert fill([{"role": "user", "content": "Hi {{who}}"}], variables) == [{"role": "user", "content": "Hi Ada"}]


def test_only_the_fields_agentv_fills_are_touched():
    raw = {
        "id": "{{who}}",
        "vars": {"who": "Ada"},
        "criteria": "Greets {{who}}",
        "input": "Say hello to {{who}}.",
        "expected_output": "Hello, {{who}}!",
        "turns": [{"input": "again {{who}}", "assertions": ["{{who}}"]}],
        "assertions": ["Mentions {{who}}"],
    }
    out = filled(raw)
    assert out["criteria"] == "Greets Ada" and out["input"] == "Say hello to Ada."
    assert out["expected_output"] == "Hello, Ada!" and out["turns"][0]["input"] == "again Ada"
    assert out["id"] == "{{who}}" and out["assertions"] == ["Mentions {{who}}"]
    assert out["turns"][0]["assertions"] == ["{{who}}"]
    assert raw["criteria"] == "Greets {{who}}"  # the test as read is left alone
    assert filled({"id": "t", "input": "{{who}}"}) == {"id": "t", "input": "{{who}}"}


def test_a_4x_file_with_vars_is_read_as_4x_and_filled(tmp_path):
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    path = tmp_path / "eval.yaml"
    path.write_text(
        "tests:\n"
        "  - id: capital\n"
        "    vars:\n      question: What is the capital of France?\n      expected: {answer: Paris}\n"
        '    criteria: "Answers {{question}} correctly"\n'
        '    input: "Question: {{question}}"\n'
        '    expected_output: "{{expected.answer}}"\n'
        "    assertions: [{type: contains, value: '{{expected.answer}}'}]\n",
        encoding="utf-8",
    )
    suite = load_suite(path)
    [case] = suite.tests
    assert suite.format == "v4" and case.format == "v4"
    assert case.criteria == "Answers What is the capital of France? correctly"
    assert case.prompt.endswith("Question: What is the capital of France?")
    assert [m.content for m in case.expected_output] == ["Paris"]
    assert case.assertions[0].value == "{{expected.answer}}"  # graders are not filled, as in AgentV


def test_a_seed_file_with_vars_stays_a_seed_file(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text(
        "providers:\n  local:\n    provider: cli\n    command: python3 agent.py {PROMPT}\n"
        "tests:\n  - id: t\n    vars: {input: Decide case 7}\n    assert: [{type: contains, value: CLEAR}]\n",
        encoding="utf-8",
    )
    assert load_suite(path).format == "seed"
    path.write_text(
        "prompts: ['{{input}}']\nproviders:\n  local:\n    provider: cli\n    command: python3 agent.py {PROMPT}\n"
        "tests:\n  - id: t\n    vars: {input: Decide case 7}\n    assert: [{type: contains, value: CLEAR}]\n",
        encoding="utf-8",
    )
    suite = load_suite(path, None)
    assert suite.format == "seed" and suite.tests[0].prompt == "Decide case 7"
