"""A2A tool use as Google ADK's A2A exposure sends it: function calls and responses as DataParts in
"working" status updates, folded into the transcript's ordinary tool calls, bounded.

The stream is hand-built from ADK 2.13.0's converters (ADK's interop environment has no a2a-sdk, so
its converter cannot be called here): `google/adk/a2a/converters/part_converter.py`,
`convert_genai_part_to_a2a_part` (a DataPart of `FunctionCall`/`FunctionResponse.model_dump(
by_alias=True, exclude_none=True)`, metadata `{"adk_type": "function_call" | "function_response"}`)
and `event_converter.py`, `_create_status_update_event` (state working, final false, the message's
role agent, the event's context in the update's metadata)."""

from __future__ import annotations

from google.protobuf.json_format import ParseDict

from agents_ui.sdk.a2a import fold as a2a_fold
from agents_ui.sdk.a2a.client import pb
from agents_ui.sdk.folding import fold


def adk_part(kind: str, data: dict) -> dict:
    return {"data": data, "metadata": {"adk_type": kind}}


def working(message_id: str, *parts: dict) -> pb.StreamResponse:
    return ParseDict(
        {
            "statusUpdate": {
                "taskId": "t1",
                "contextId": "c1",
                "status": {
                    "state": "TASK_STATE_WORKING",
                    "message": {"messageId": message_id, "role": "ROLE_AGENT", "parts": list(parts)},
                },
                "metadata": {"adk_app_name": "weather", "adk_author": "weather_agent"},
            }
        },
        pb.StreamResponse(),
    )


def completed() -> pb.StreamResponse:
    return ParseDict(
        {
            "statusUpdate": {
                "taskId": "t1",
                "contextId": "c1",
                "status": {
                    "state": "TASK_STATE_COMPLETED",
                    "message": {"messageId": "m9", "role": "ROLE_AGENT", "parts": [{"text": "It is 21 °C."}]},
                },
            }
        },
        pb.StreamResponse(),
    )


CALL = {"id": "adk-1", "name": "get_weather", "args": {"city": "Paris", "days": 2}}
RESPONSE = {"id": "adk-1", "name": "get_weather", "response": {"temperature": 21, "sky": "<b>clear</b>"}}


def test_adk_function_calls_and_responses_in_working_updates_become_tool_calls():
    transcript = fold(
        [
            working("m1", {"text": "Looking it up."}, adk_part("function_call", CALL)),
            working("m2", adk_part("function_response", RESPONSE)),
            completed(),
        ]
    )
    call = transcript.tool_calls["adk-1"]
    assert call.name == "get_weather" and call.complete
    assert call.args == {"city": "Paris", "days": 2}
    assert call.has_result and '"temperature": 21' in call.result_display
    assert "<b>clear</b>" in call.result_display  # kept as text: the templates escape it
    assert transcript.observed.tool_calls
    assert not transcript.artifacts  # a tool step is not an artifact
    assert transcript.task.progress == ["Looking it up."]


def test_a_call_without_an_id_is_paired_with_its_response_by_name():
    call, response = dict(CALL), dict(RESPONSE)
    del call["id"], response["id"]
    transcript = fold(
        [
            working("m1", adk_part("function_call", call)),
            working("m2", adk_part("function_response", response)),
        ]
    )
    (only,) = transcript.tool_calls.values()
    assert only.name == "get_weather" and only.has_result


def test_tool_steps_are_bounded_in_number_and_size():
    big = {"id": "big", "name": "n" * 500, "args": {"text": "x" * (a2a_fold.MAX_TOOL_TEXT * 2)}}
    events = [working("m0", adk_part("function_call", big))]
    events += [
        working(f"m{n}", adk_part("function_call", {"id": f"c{n}", "name": "step", "args": {}}))
        for n in range(1, a2a_fold.MAX_TOOL_CALLS + 10)
    ]
    events.append(working("r", adk_part("function_response", {"id": "big", "response": {"t": "y" * 10**6}})))
    transcript = fold(events)
    assert len(transcript.tool_calls) == a2a_fold.MAX_TOOL_CALLS
    record = transcript.tool_calls["big"]
    assert len(record.name) <= 200
    assert record.args_length <= a2a_fold.MAX_TOOL_TEXT and record.args_error
    assert len(record.result) <= a2a_fold.MAX_TOOL_TEXT
    assert any("tool calls" in error for error in transcript.errors)
