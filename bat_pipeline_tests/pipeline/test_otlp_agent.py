"""An agent that only exports OTLP (issue 35), end to end: `bat-pipeline run` starts an OTLP
receiver per partition, points the test agent (bat_pipeline_tests/otlp_agent: a2a-sdk, the
OpenTelemetry SDK and its stock OTLP/HTTP exporter with a BatchSpanProcessor, GenAI spans)
at it, and its tool, agent-call and limit checks come out as the bundled agent's do on the
same tasks and scripted models. And a BAT agent that exports OpenInference spans: the
bundled agent itself with `agent.spans: otlp`, its config copy's telemetry a `remote`
output (the stock OTLP/HTTP exporter) pointed at the receiver instead of a file."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bat_pipeline.example.loopback import LoopbackServer
from bat_pipeline.resources.ports import free_port, release
from bat_pipeline_tests.support.example_agent import edit_eval, run
from bat_pipeline_tests.support.paths import BAT_PIPELINE
from bat_pipeline_tests.support.polling import wait_for
from bat_pipeline_tests.support.processes import leftover_agents

pytestmark = pytest.mark.slow(seconds=35)

MODELS = ("openai-competent", "openai-sloppy")
TASKS = ("weather_paris", "add_numbers", "forecast_from_subagent", "compare_two_cities", "madrid_token_budget")
CHECKED = ("tool_call", "agent_call", "model_calls", "tokens", "no_errors")
"""The checks that read the trajectory (their names start so)."""
OTLP_AGENT = {
    # It exits without flushing: the last turns' spans arrive only through the wait for
    # exported spans after the conversations (the batch processor sends them a delay later).
    "command": ["{python}", "-m", "bat_pipeline_tests.otlp_agent", "--port", "{port}", "--no-flush-at-exit"],
    "spans": "otlp",
    # The stock batch processor, with its delay cut from 5 s to 1 s (a standard variable).
    "env": {"OTEL_BSP_SCHEDULE_DELAY": "1000"},
}


def verdict_checks(run_dir: Path) -> dict[tuple[str, str], list[tuple[str, bool]]]:
    """(model key, task) → the trajectory checks of its episode's verdict."""
    out = {}
    for model in MODELS:
        for path in (run_dir / model / "episodes").glob("*.json"):
            episode = json.loads(path.read_text())
            checks = [(c["check"], c["passed"]) for c in episode["verdict"]["checks"] if c["check"].startswith(CHECKED)]
            out[(model, episode["task_id"])] = checks
    return out


class LogsCollector:
    """The team's own OTLP/HTTP endpoint: keeps every log record it is sent."""

    def __init__(self) -> None:
        self.records: list = []

        async def logs(request: Request) -> Response:
            message = ExportLogsServiceRequest.FromString(await request.body())
            for resource in message.resource_logs:
                for scope in resource.scope_logs:
                    self.records.extend(scope.log_records)
            return Response(b"", media_type="application/x-protobuf")

        self.server = LoopbackServer(Starlette(routes=[Route("/v1/logs", logs, methods=["POST"])]), name="logs")


@pytest.fixture(scope="module")
def collector():
    logs = LogsCollector()
    logs.server.start()
    try:
        yield logs
    finally:
        logs.server.stop()


@pytest.fixture(scope="module")
def evaluated(workspace_factory, collector):
    common = {"tasks": TASKS, "models": MODELS, "evaluation": {"qualitative": False}}
    bundled = workspace_factory("otlp_bundled", **common)
    otlp = workspace_factory(
        "otlp_agent",
        tasks=TASKS,
        models=MODELS,
        evaluation={"qualitative": False, "extra_spans": []},
        agent=OTLP_AGENT,
    )
    edit_eval(otlp.agent, export={"otlp_endpoint": collector.server.base_url})
    # The OTLP agent has no config.yaml and no other span file: its spans come only over OTLP.
    (otlp.agent / "config.yaml").unlink()
    # The bundled agent over OTLP: OpenInference spans, the Forecaster's too (no extra file).
    openinference = workspace_factory(
        "otlp_openinference",
        tasks=TASKS,
        models=MODELS,
        evaluation={"qualitative": False, "extra_spans": []},
        agent={"spans": "otlp"},
    )

    def start(ws):
        return subprocess.Popen(
            [str(BAT_PIPELINE), "run", str(ws.agent)],
            env=ws.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    with start(bundled) as reference, start(openinference) as oi_run:
        result = run([str(BAT_PIPELINE), "run", str(otlp.agent)], otlp.env)
        reference_out, _ = reference.communicate(timeout=240)
        oi_out, _ = oi_run.communicate(timeout=240)
    assert reference.returncode == 0, reference_out[-4000:]
    assert oi_run.returncode == 0, oi_out[-4000:]
    return bundled, otlp, result, openinference


def test_the_otlp_agent_gets_the_bundled_agents_verdicts(evaluated):
    bundled, otlp, result, _ = evaluated
    assert result.returncode == 0, result.stdout[-4000:]
    expected = verdict_checks(bundled.only_run_dir())
    got = verdict_checks(otlp.only_run_dir())
    assert sorted(got) == sorted(expected) and len(got) == len(MODELS) * len(TASKS)
    assert got == expected
    # Both ways of every kind of check occur: the comparison is not vacuous.
    outcomes = {(check.split(":")[0], passed) for checks in got.values() for check, passed in checks}
    assert {("tool_call", True), ("tool_call", False), ("agent_call", True), ("agent_call", False)} <= outcomes
    assert {("model_calls", True), ("tokens", True)} <= outcomes


def test_a_bat_agent_exporting_openinference_over_otlp_gets_its_file_verdicts(evaluated):
    bundled, _, _, openinference = evaluated
    run_dir = openinference.only_run_dir()
    assert verdict_checks(run_dir) == verdict_checks(bundled.only_run_dir())
    for model in MODELS:
        lines = [json.loads(line) for line in (run_dir / model / "spans" / "agent.jsonl").read_text().splitlines()]
        kinds = {line["attributes"].get("openinference.span.kind") for line in lines}
        assert {"LLM", "TOOL"} <= kinds, kinds  # OpenInference's, received over OTLP
    # Every span of the partitions' files came through their receivers (their step logs say
    # how many each wrote), none through a file exporter of the agent's own.
    logs = "".join(p.read_text(errors="replace") for p in (openinference.root / "logs").glob("*.log"))
    written = [int(n) for n in re.findall(r"OTLP receiver http://127\.0\.0\.1:\d+: (\d+) spans written", logs)]
    in_files = sum(len((run_dir / model / "spans" / "agent.jsonl").read_text().splitlines()) for model in MODELS)
    assert len(written) == len(MODELS) and sum(written) == in_files, logs[-3000:]
    competent = (run_dir / "openai-competent" / "spans" / "agent.jsonl").read_text()
    assert "forecast_table" in competent  # the Forecaster child exported there too


def test_spans_came_over_otlp_into_the_partition_span_file(evaluated):
    _, otlp, _, _ = evaluated
    run_dir = otlp.only_run_dir()
    for model in MODELS:
        lines = (run_dir / model / "spans" / "agent.jsonl").read_text().splitlines()
        names = {json.loads(line)["name"] for line in lines}
        assert {"invoke_agent OtelWeather", f"chat {model.split('-')[1]}", "execute_tool get_weather"} <= names
        partition = json.loads((run_dir / model / "partition.json").read_text())
        assert partition["span_files"] == ["spans/agent.jsonl"]
    # The Forecaster, a process of its own, exported to the same receiver.
    competent = (run_dir / "openai-competent" / "spans" / "agent.jsonl").read_text()
    assert "execute_tool forecast_table" in competent
    assert leftover_agents(otlp.agent, str(otlp.dagster_home)) == []


def test_every_score_row_reached_the_teams_endpoint_on_the_graded_turns_span(evaluated, collector):
    _, otlp, _, _ = evaluated
    run_dir = otlp.only_run_dir()
    events = {}
    for record in collector.records:
        attrs = {kv.key: kv.value for kv in record.attributes}
        if attrs["bat.run_id"].string_value != run_dir.name:
            continue  # another test's run
        assert record.event_name == "gen_ai.evaluation.result"
        key = (attrs["bat.model"].string_value, attrs["gen_ai.conversation.id"].string_value)
        events.setdefault(key, []).append((record, attrs))
    graded = set()
    for model in MODELS:
        roots = {}
        for line in (run_dir / model / "spans" / "agent.jsonl").read_text().splitlines():
            span = json.loads(line)
            if span["name"] == "invoke_agent OtelWeather":
                roots[span["attributes"]["gen_ai.conversation.id"]] = (span["trace_id"], span["span_id"])
        for path in (run_dir / model / "episodes").glob("*.json"):
            episode = json.loads(path.read_text())
            conversation = episode["aux"].get("conversation_id") or f"{episode['task_id']}__try0"
            graded.add((episode["model_name"], conversation))
            sent = events[(episode["model_name"], conversation)]
            checks = [c["check"] for c in episode["verdict"]["checks"]]
            assert [a["gen_ai.evaluation.name"].string_value for _, a in sent][: len(checks)] == checks
            labels = [a["gen_ai.evaluation.score.label"].string_value for _, a in sent][: len(checks)]
            assert labels == ["pass" if c["passed"] else "fail" for c in episode["verdict"]["checks"]]
            assert {(r.trace_id.hex(), r.span_id.hex()) for r, _ in sent} == {roots[conversation]}
    assert set(events) == graded and len(graded) == len(MODELS) * len(TASKS)


@pytest.fixture
def agent_at_url(scripted_llm):
    """The OTLP test agent already running, exporting to a port nobody listens on yet."""
    agent_port, otlp_port = free_port(), free_port()
    release(otlp_port)  # for `bat-pipeline run --otlp-port` to bind
    env = {
        **os.environ,
        "MODEL_PROVIDER": "openai",
        "MODEL": "competent",
        "BASE_URL": scripted_llm.url + "/v1",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{otlp_port}",
        "OTEL_BSP_SCHEDULE_DELAY": "1000",
    }
    command = [sys.executable, "-m", "bat_pipeline_tests.otlp_agent", "--port", str(agent_port)]
    with subprocess.Popen(command, env=env, start_new_session=True) as process:
        url = f"http://127.0.0.1:{agent_port}"

        def ready() -> bool:
            try:
                return httpx.get(url + "/.well-known/agent-card.json", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        try:
            wait_for(ready, 30, what="the OTLP test agent's card")
            yield url, otlp_port
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)


def test_an_agent_at_a_url_exporting_to_the_runs_otlp_port_gets_its_trajectories(
    workspace_factory, agent_at_url, collector
):
    url, otlp_port = agent_at_url
    tasks = ("weather_paris", "add_numbers", "forecast_from_subagent")
    ws = workspace_factory(
        "otlp_url",
        tasks=tasks,
        models=("competent",),
        evaluation={"qualitative": False, "extra_spans": []},
        agent={"command": None, "url": url},
    )
    result = ws.bat_pipeline_run("--otlp-port", str(otlp_port), "--export-otlp", collector.server.base_url)
    assert result.returncode == 0, result.stdout[-4000:]
    assert f"OTLP receiver for the run: http://127.0.0.1:{otlp_port}/v1/traces" in result.stdout
    run_dir = ws.only_run_dir()
    assert (run_dir / "otlp-spans.jsonl").stat().st_size > 0
    checks = {}
    for path in (run_dir / "openai-competent" / "episodes").glob("*.json"):
        episode = json.loads(path.read_text())
        checks[episode["task_id"]] = [(c["check"], c["passed"]) for c in episode["verdict"]["checks"]]
    assert sorted(checks) == sorted(tasks)
    assert ("tool_call:get_weather", True) in checks["weather_paris"]
    assert ("tool_call:add", True) in checks["add_numbers"]
    assert ("agent_call:Forecaster", True) in checks["forecast_from_subagent"]
    assert all(passed for task_checks in checks.values() for _, passed in task_checks), checks
    # --export-otlp: the scores went to the endpoint, on spans that came in over --otlp-port.
    spans = {json.loads(line)["span_id"] for line in (run_dir / "otlp-spans.jsonl").read_text().splitlines()}
    exported = [
        r
        for r in collector.records
        if any(kv.key == "bat.run_id" and kv.value.string_value == run_dir.name for kv in r.attributes)
    ]
    assert len(exported) >= sum(len(c) for c in checks.values())
    assert {r.span_id.hex() for r in exported} <= spans and len({r.span_id for r in exported}) == len(tasks)


def test_a_taken_otlp_port_is_refused_before_anything_starts(workspace_factory):
    ws = workspace_factory("otlp_port_taken", tasks=("add_numbers",), models=("competent",))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = ws.bat_pipeline_run("--otlp-port", str(taken.getsockname()[1]))
    assert result.returncode == 2, result.stdout[-4000:]
    assert "--otlp-port" in result.stdout and "choose a free port" in result.stdout
    assert "Traceback" not in result.stdout
    assert not (ws.root / "runs").exists() or not any((ws.root / "runs").iterdir())
