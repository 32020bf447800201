"""How much the SDK's parse + validate + fold costs against a bare frame split + json.loads.

Feeds 100,000 AG-UI events (a realistic mix: streamed text, streamed tool arguments, tool results,
state snapshots and JSON Patch deltas, steps, reasoning) as SSE bytes in 64 KiB chunks, through:

- sdk:  SseParser.feed -> the AG-UI 1.1 consumer rules (AgUiAgent's admission: typed ag_ui.core
        events, unknown fields stripped, the lifecycle verified) -> TranscriptBuilder.apply
- bare: split on blank lines, strip "data: ", json.loads

Usage: python benchmarks/sdk_fold.py [--json] [--events N] [--repeat N]
Target: the SDK keeps at least 40% of the bare loop's rate.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents_ui.sdk.agui.client import AgUiAgent
from agents_ui.sdk.agui.rules import StreamRules
from agents_ui.sdk.folding import TranscriptBuilder
from agents_ui.sdk.sse import SseParser

CHUNK = 64 * 1024


def make_events(count: int) -> list[dict]:
    """One long run whose body repeats a turn: text, reasoning, a tool call, state updates."""
    events: list[dict] = [{"type": "RUN_STARTED", "threadId": "bench", "runId": "run-1"}]
    turn = 0
    while len(events) < count - 1:
        turn += 1
        mid, tid, rid = f"m{turn}", f"tc{turn}", f"r{turn}"
        body: list[dict] = [{"type": "STEP_STARTED", "stepName": f"step{turn}"}]
        body.append({"type": "REASONING_MESSAGE_START", "messageId": rid, "role": "reasoning"})
        body += [{"type": "REASONING_MESSAGE_CONTENT", "messageId": rid, "delta": "think "}] * 5
        body.append({"type": "REASONING_MESSAGE_END", "messageId": rid})
        body.append({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
        body += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": f"word{i} "} for i in range(30)]
        body.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
        body.append(
            {"type": "TOOL_CALL_START", "toolCallId": tid, "toolCallName": "search", "parentMessageId": mid}
        )
        body += [
            {"type": "TOOL_CALL_ARGS", "toolCallId": tid, "delta": '{"query": "'},
            *[{"type": "TOOL_CALL_ARGS", "toolCallId": tid, "delta": "abc "}] * 8,
            {"type": "TOOL_CALL_ARGS", "toolCallId": tid, "delta": '"}'},
        ]
        body.append({"type": "TOOL_CALL_END", "toolCallId": tid})
        body.append(
            {"type": "TOOL_CALL_RESULT", "messageId": f"t{turn}", "toolCallId": tid, "content": "3 hits"}
        )
        if turn % 10 == 1:
            body.append(
                {"type": "STATE_SNAPSHOT", "snapshot": {"turn": turn, "steps": [], "status": "working"}}
            )
        body += [
            {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/turn", "value": turn}]},
            {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/steps/-", "value": {"n": turn}}]},
        ]
        body.append({"type": "STEP_FINISHED", "stepName": f"step{turn}"})
        events += body
    del events[count - 1 :]
    closing = _closing(events)
    del events[count - 1 - len(closing) :]
    events += _closing(events)
    events.append({"type": "RUN_FINISHED", "threadId": "bench", "runId": "run-1"})
    return events


_PAIRS = {
    "TEXT_MESSAGE_START": ("TEXT_MESSAGE_END", "messageId"),
    "TOOL_CALL_START": ("TOOL_CALL_END", "toolCallId"),
    "STEP_STARTED": ("STEP_FINISHED", "stepName"),
    "REASONING_START": ("REASONING_END", "messageId"),
    "REASONING_MESSAGE_START": ("REASONING_MESSAGE_END", "messageId"),
}
_ENDS = {end: key for end, key in _PAIRS.values()}


def _closing(events: list[dict]) -> list[dict]:
    """The end events of whatever the cut left open, innermost first: AG-UI 1.1 refuses a run that
    finishes with a message, a call or a step still open."""
    open_: list[tuple[str, str, str]] = []
    for event in events:
        kind = event["type"]
        if kind in _PAIRS:
            end, key = _PAIRS[kind]
            open_.append((end, key, event[key]))
        elif kind in _ENDS:
            key = _ENDS[kind]
            open_ = [o for o in open_ if not (o[0] == kind and o[2] == event[key])]
    return [{"type": end, key: value} for end, key, value in reversed(open_)]


def encode(events: list[dict]) -> list[bytes]:
    # Compact JSON with "type" first: what ag_ui's EventEncoder (and both captured servers) write.
    body = "".join(f"data: {json.dumps(e, separators=(',', ':'))}\n\n" for e in events).encode()
    return [body[i : i + CHUNK] for i in range(0, len(body), CHUNK)]


def run_sdk(chunks: list[bytes]) -> int:
    parser = SseParser()
    builder = TranscriptBuilder()
    apply = builder.apply
    rules = StreamRules()
    admit = AgUiAgent("http://bench.invalid/agent")._admit
    count = 0
    for chunk in chunks:
        for frame in parser.feed(chunk):
            for event, _ in admit(rules, frame.data):
                apply(event)
            count += 1
    assert builder.transcript.outcome is not None and builder.transcript.errors == []
    assert rules.warnings == [], rules.warnings[:3]
    return count


def run_bare(chunks: list[bytes]) -> int:
    buffer = b""
    count = 0
    loads = json.loads
    for chunk in chunks:
        buffer += chunk
        *frames, buffer = buffer.split(b"\n\n")
        for frame in frames:
            loads(frame[6:])
            count += 1
    return count


def measure(chunks: list[bytes], repeat: int) -> dict[str, tuple[float, int]]:
    """Best time of ``repeat`` runs of each loop, interleaved so machine noise hits both alike."""
    best = {"sdk": (float("inf"), 0), "bare": (float("inf"), 0)}
    for _ in range(repeat):
        for name, fn in (("bare", run_bare), ("sdk", run_sdk)):
            start = time.perf_counter()
            count = fn(chunks)
            elapsed = time.perf_counter() - start
            if elapsed < best[name][0]:
                best[name] = (elapsed, count)
    return best


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    args.add_argument("--events", type=int, default=100_000)
    args.add_argument("--repeat", type=int, default=5, help="best of N runs for each loop")
    options = args.parse_args()

    chunks = encode(make_events(options.events))
    best = measure(chunks, options.repeat)
    sdk_time, sdk_count = best["sdk"]
    bare_time, bare_count = best["bare"]
    assert sdk_count == bare_count == options.events, (sdk_count, bare_count)

    sdk_rate = sdk_count / sdk_time
    bare_rate = bare_count / bare_time
    results = {
        "events": options.events,
        "sdk_fold_events_per_s": round(sdk_rate),
        "bare_json_events_per_s": round(bare_rate),
        "sdk_fold_ratio": round(sdk_rate / bare_rate, 3),
    }
    if options.json:
        print(json.dumps(results))
    else:
        print(f"events: {options.events} events")
        print(f"sdk_fold_events_per_s: {results['sdk_fold_events_per_s']} events/s")
        print(f"bare_json_events_per_s: {results['bare_json_events_per_s']} events/s")
        print(f"sdk_fold_ratio: {results['sdk_fold_ratio']} x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
