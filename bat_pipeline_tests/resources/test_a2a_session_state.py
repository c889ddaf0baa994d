"""The session state an agent exposes over A2A (issue 37, ADK's `final_session_state`):
read from the real A2A protobuf events the client streams, as `aux.session_state`."""

from __future__ import annotations

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)
from google.protobuf import struct_pb2

from bat_pipeline.engine.contracts.tasks import Task as EvalTask
from bat_pipeline.engine.conversation import ConversationRecorder
from bat_pipeline.resources.a2a_conversations import record_event


def _data(value: dict) -> Part:
    found = struct_pb2.Value()
    found.struct_value.update(value)
    return Part(data=found)


def _recorder() -> ConversationRecorder:
    recorder = ConversationRecorder(EvalTask(id="t", turns=["hi"]), 0, "m")
    recorder.user_message("hi")
    return recorder


def test_a_session_state_data_part_and_artifact_are_kept_the_last_winning():
    recorder = _recorder()
    message = Message(message_id="1", role=Role.ROLE_AGENT, parts=[Part(text="ok"), _data({"session_state": {"n": 1}})])
    record_event(recorder, StreamResponse(message=message))
    assert recorder.session_state == {"n": 1}
    artifact = Artifact(artifact_id="a", name="session_state", parts=[_data({"lights": "off", "rooms": [1, 2.5]})])
    record_event(recorder, StreamResponse(artifact_update=TaskArtifactUpdateEvent(task_id="x", artifact=artifact)))
    episode = recorder.finish()
    assert episode.aux["session_state"] == {"lights": "off", "rooms": [1, 2.5]}


def test_other_data_parts_are_not_state():
    recorder = _recorder()
    task = Task(
        id="x",
        status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED),
        artifacts=[Artifact(artifact_id="a", name="report", parts=[_data({"rows": 3})])],
    )
    record_event(recorder, StreamResponse(task=task))
    assert "session_state" not in recorder.finish().aux
