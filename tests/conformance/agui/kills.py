# ruff: noqa: E501 (the SDK's source lines are quoted whole)
"""Each fixture's ``kill``, as the change to the product it names, verified: applied, the fixture
replayed (it must fail), then undone. ``python -m tests.conformance.agui.kills`` (docs/conformance.md).

A kill is a list of (file, text, replacement); the text must occur exactly once in the file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
R = "agents_ui/sdk/agui/rules.py"
S = "agents_ui/sdk/agui/schema_strip.py"
F = "agents_ui/sdk/agui/fold.py"
C = "agents_ui/sdk/agui/client.py"
B = "agents_ui/sdk/folding.py"
K = "agents_ui/sdk/state.py"

_FIRST = 'if kind not in ("RUN_STARTED", "RUN_ERROR"):'
_AFTER_FINISHED = 'if self.closed_with == "RUN_FINISHED" and kind not in ("RUN_STARTED", "RUN_ERROR"):'
_NEWER = "elif parsed[:2] > _CLIENT:"
_SNAPSHOT = "t.state = self.builder.state_keeper.snapshot(t.state, event.snapshot, t.errors)"
_NOTE = 'notes.append(f"{why} Showing the last good {self.subject}.")'
_TEXT_CONTENT = "message.append_text(event.delta)\n        merge_metadata(message, event.metadata)"
_TOOL_ARGS = "record.append_args(event.delta)\n        merge_metadata(record, event.metadata)"
_RAW_ASIDE = "if isinstance(event, ag.RawEvent):"

KILLS: dict[str, list[tuple[str, str, str]]] = {
    "activity-delta-missing-target-tolerated": [
        (F, "if event.message_id not in self.transcript.activities:", "if False:")
    ],
    "activity-delta-unappliable-keeps-content": [(K, _NOTE, "pass")],
    "activity-replace-false-preserves": [(F, "if known and event.replace is False:", "if False:")],
    "activity-snapshot-then-delta": [
        (F, 'record.content, _ = self._apply_patch(record.content, event.patch, "ACTIVITY_DELTA")', "return")
    ],
    "chunk-conflicting-role-fatal": [
        (R, 'self._agree("TEXT_MESSAGE_CHUNK", "role", event.role, lane["role"])', "pass")
    ],
    "chunk-conflicting-tool-name-fatal": [
        (R, 'self._agree("TOOL_CALL_CHUNK", "toolCallName", event.tool_call_name, lane["name"])', "pass")
    ],
    "chunk-expansion-assembles": [
        (R, 'return [*self._close("text", "tool", "reasoning"), (event, data)]', "return [(event, data)]")
    ],
    "chunk-repeat-identical-accepted": [
        (
            R,
            'if given is not None and opened is not None and given != opened:\n            raise RuleViolation(\n                f"{kind}',
            'if given is not None and opened is not None:\n            raise RuleViolation(\n                f"{kind}',
        )
    ],
    "conformant-run-is-quiet": [(R, _NEWER, "elif parsed[:2] >= _CLIENT:")],
    "content-without-start-fatal": [
        (
            R,
            '        self._owner(self.messages, "text message", e.message_id, e, "events/text-messages")\n\n    def _text_message_end',
            "        pass\n\n    def _text_message_end",
        )
    ],
    "current-peer-declares-protocol-version": [
        (C, 'input = input.model_copy(update={"protocol_version": CLIENT_PROTOCOL_VERSION})', "pass")
    ],
    "custom-closes-chunk-stream-fatal": [
        (R, _RAW_ASIDE, "if isinstance(event, (ag.RawEvent, ag.CustomEvent)):")
    ],
    "encrypted-value-kept-on-its-message": [
        (F, "        entry.encrypted_value = value\n        observed", "        observed")
    ],
    "encrypted-value-unknown-entity-tolerated": [
        (F, "                self.builder.waiting_values[entity] = value\n                return\n", "")
    ],
    "era-0-0-39-flattens-content": [(R, "flatten = older_than(peer, (0, 0, 40))", "flatten = False")],
    "era-0-0-45-thinking-translated": [(R, "mapped = THINKING_TO_REASONING.get(type_name)", "mapped = None")],
    "era-0-0-47-upgrades-binary-content": [
        (R, '{**m, "content": [_upgrade_binary(p) for p in m["content"]]}', "{**m}")
    ],
    "era-0-0-57-subagent-dropped-with-warning": [
        (R, "if self._old_peer and type_name in _SUBAGENT_LIFECYCLE:", "if False:")
    ],
    "era-current-peer-keeps-modern-content": [
        (R, "flatten = older_than(peer, (0, 0, 40))", "flatten = True")
    ],
    "era-pinned-peer-omits-protocol-version": [(R, "if older_than(peer, (1, 0)):", "if False:")],
    "event-after-run-finished-fatal": [(R, _AFTER_FINISHED, "if False:")],
    "first-chunk-missing-id-fatal": [
        (
            R,
            'elif lane is None:\n            raise RuleViolation(\n                "First TEXT_MESSAGE_CHUNK must have a messageId", spec="basic/patterns/streaming"\n            )',
            'elif lane is None:\n            lane = self.text = {"id": "invented", "role": "assistant", "subagent": None}',
        )
    ],
    "first-event-not-run-started-fatal": [(R, _FIRST, "if False:")],
    "first-tool-chunk-missing-name-fatal": [
        (R, "if not event.tool_call_name:", "if False:"),
        (
            R,
            "tool_call_id=event.tool_call_id, tool_call_name=event.tool_call_name,",
            'tool_call_id=event.tool_call_id, tool_call_name=event.tool_call_name or "",',
        ),
    ],
    "late-run-error-after-finished-run-continues": [
        (R, _AFTER_FINISHED, 'if self.closed_with == "RUN_FINISHED" and kind not in ("RUN_STARTED",):')
    ],
    "malformed-known-field-fatal": [
        (
            R,
            "noted = len(self.warnings)",
            'noted = len(self.warnings)\n        obj = {k: (str(v) if k == "delta" else v) for k, v in obj.items()}',
        )
    ],
    "messages-snapshot-reconciles-by-id": [
        (
            F,
            "        self.transcript.messages = messages\n",
            "        self.transcript.messages = [m for m in self.transcript.messages if m.id not in index] + messages\n",
        )
    ],
    "metadata-merges-last-write-wins": [(F, _TEXT_CONTENT, "message.append_text(event.delta)")],
    "nested-run-started-fatal": [(R, "        if self.active:\n", "        if False:\n")],
    "open-message-at-run-finished-fatal": [(R, '("text messages", self.messages), ', "")],
    "open-metadata-preserved": [
        (
            S,
            '    if schema.get("type") == "array" and isinstance(value, list):',
            '    if schema.get("type") == "object" and isinstance(value, dict):\n        return {}\n'
            '    if schema.get("type") == "array" and isinstance(value, list):',
        )
    ],
    "open-object-patch-op-extras": [(S, "if open_object or key in names:", "if key in names:")],
    "open-step-at-run-finished-fatal": [(R, ' ("steps", self.steps),', "")],
    "open-tool-call-at-run-finished-fatal": [(R, ' ("tool calls", self.tools),', "")],
    "optional-field-null-fatal": [(S, "if nullable and others:", "if False:")],
    "producer-declares-newer-version-warns": [(R, _NEWER, "elif False:")],
    "producer-declares-older-version-quiet": [(R, _NEWER, "elif parsed[:2] != _CLIENT:")],
    "producer-declares-same-version-quiet": [(R, _NEWER, "elif parsed[:2] >= _CLIENT:")],
    "producer-declares-uninterpretable-version-warns": [
        (
            R,
            "        if parsed is None:\n",
            "        if parsed is None:\n            return\n        if False:\n",
        )
    ],
    "raw-and-custom-pass-through": [
        (
            R,
            "model = EVENT_CLASSES.get(type_name)",
            'model = None if type_name in ("RAW", "CUSTOM") else EVENT_CLASSES.get(type_name)',
        )
    ],
    "raw-does-not-close-chunk-stream": [
        (R, f"        {_RAW_ASIDE}\n            return [(event, data)]\n", "")
    ],
    "reasoning-discipline-verified": [
        (
            R,
            '        self._owner(self.reasoning, "reasoning message", e.message_id, e, "events/reasoning")\n\n    def _reasoning_message_end',
            "        pass\n\n    def _reasoning_message_end",
        )
    ],
    "reasoning-end-without-start-fatal": [(R, "if e.message_id not in self.spans:", "if False:")],
    "reasoning-message-wrong-role-fatal": [
        (
            S,
            'if value != schema["const"]:',
            'if value != schema["const"]:\n            return DROP\n        if False:',
        )
    ],
    "reasoning-span-and-message": [
        (
            F,
            "        self.builder.reasoning_entry(event.message_id, event.subagent_run_id).append_text(event.delta)\n",
            "        pass\n",
        )
    ],
    "reopen-closed-message-appends": [
        (B, "        message = self.messages.get(message_id)\n", "        message = None\n")
    ],
    "run-error-first-run-continues": [(R, _FIRST, 'if kind != "RUN_STARTED":')],
    "run-error-then-new-run-continues": [
        (
            R,
            'if self.closed_with == "RUN_ERROR" and kind != "RUN_STARTED":',
            'if self.closed_with == "RUN_ERROR":',
        )
    ],
    "run-finished-cancelled-outcome-accepted": [
        (
            F,
            't.outcome = Outcome("cancelled", result=event.result)',
            't.outcome = Outcome("success", result=event.result)',
        )
    ],
    "run-finished-interrupt-outcome-accepted": [
        (
            F,
            't.outcome = Outcome("interrupt", result=event.result)',
            't.outcome = Outcome("success", result=event.result)',
        )
    ],
    "run-finished-success-pending-tool-calls": [(F, "pending_tool_call_ids=pending)", ")")],
    "run-finished-with-active-subagent-fatal": [
        (R, '            ("subagent invocations", self.subagents),\n', "")
    ],
    "run-finished-wrong-run-id-fatal": [
        (R, "if self.run_id is not None and event.run_id != self.run_id:", "if False:")
    ],
    "state-delta-applies": [
        (F, "t.state = self.builder.state_keeper.patch(t.state, event.delta, t.errors)", "return")
    ],
    "state-delta-before-snapshot-applies-to-empty": [
        (
            F,
            "        t.observed.state_deltas = True\n",
            "        t.observed.state_deltas = True\n        if t.state is None:\n            return\n",
        )
    ],
    "state-delta-unappliable-warns-and-keeps": [(K, _NOTE, "pass")],
    "state-delta-unknown-op-dropped": [
        (
            S,
            'warnings.append(f"stripped {path}/{index}: an element AG-UI 1.1 does not describe")',
            'raise Malformed(f"{path}/{index}", "an element AG-UI 1.1 does not describe")',
        )
    ],
    "state-false-snapshot-applies": [(F, _SNAPSHOT, f"{_SNAPSHOT} if event.snapshot else t.state")],
    "state-falsy-snapshot-applies": [(F, _SNAPSHOT, f"{_SNAPSHOT} if event.snapshot else t.state")],
    "state-null-snapshot-applies": [
        (
            F,
            _SNAPSHOT,
            "t.state = self.builder.state_keeper.snapshot(t.state, event.snapshot or {}, t.errors)",
        )
    ],
    "state-snapshot-replaces": [
        (
            F,
            _SNAPSHOT,
            "merged = {**t.state, **(dict(enumerate(event.snapshot)) if isinstance(event.snapshot, list) else "
            "event.snapshot)} if isinstance(t.state, dict) else event.snapshot\n"
            "        t.state = self.builder.state_keeper.snapshot(t.state, merged, t.errors)",
        )
    ],
    "step-finished-without-start-fatal": [
        (
            R,
            "        if event.step_name not in self.steps:\n",
            "        if event.step_name not in self.steps:\n            return\n",
        )
    ],
    "step-started-twice-fatal": [(R, "if event.step_name in self.steps:", "if False:")],
    "subagent-attribution-mismatch-fatal": [
        (
            R,
            'opened, given = table[ident], getattr(event, "subagent_run_id", None)',
            "opened, given = table[ident], None",
        )
    ],
    "subagent-error-closes-invocation": [
        (
            R,
            "    _subagent_error = _subagent_finished",
            "    def _subagent_error(self, e: Any) -> None:\n        pass",
        )
    ],
    "subagent-finished-unstarted-fatal": [(R, "if e.subagent_run_id not in self.subagents:", "if False:")],
    "subagent-started-missing-name-fatal": [
        (
            R,
            "noted = len(self.warnings)",
            'noted = len(self.warnings)\n        if type_name == "SUBAGENT_STARTED":\n            obj.setdefault("name", "unnamed")',
        )
    ],
    "subagent-started-twice-fatal": [(R, "if e.subagent_run_id in self.subagents:", "if False:")],
    "subagent-terminal-closes-open-chunk-stream": [
        (
            R,
            _RAW_ASIDE,
            "if isinstance(event, (ag.RawEvent, ag.SubagentFinishedEvent, ag.SubagentErrorEvent)):",
        )
    ],
    "subagent-unannounced-attribution-accepted": [
        (
            R,
            "        table[ident] = event.subagent_run_id\n",
            "        if event.subagent_run_id is not None and event.subagent_run_id not in self.subagents:\n"
            '            raise RuleViolation("an unannounced invocation", spec=spec)\n'
            "        table[ident] = event.subagent_run_id\n",
        )
    ],
    "text-end-without-start-fatal": [
        (
            R,
            '        self._owner(self.messages, "text message", e.message_id, e, "events/text-messages")\n        del self.messages[e.message_id]',
            "        self.messages.pop(e.message_id, None)",
        )
    ],
    "text-started-twice-fatal": [
        (
            R,
            'self._open(self.messages, "text message", e.message_id, e, "events/text-messages")',
            "self.messages[e.message_id] = e.subagent_run_id",
        )
    ],
    "tool-args-without-start-fatal": [
        (
            R,
            '        self._owner(self.tools, "tool call", e.tool_call_id, e, "events/tool-calls")\n\n    def _tool_call_end',
            "        pass\n\n    def _tool_call_end",
        )
    ],
    "tool-call-metadata-lands-on-the-call": [(F, _TOOL_ARGS, "record.append_args(event.delta)")],
    "tool-call-started-twice-fatal": [
        (
            R,
            'self._open(self.tools, "tool call", e.tool_call_id, e, "events/tool-calls")',
            "self.tools[e.tool_call_id] = e.subagent_run_id",
        )
    ],
    "tool-call-triad-assembles": [
        (F, _TOOL_ARGS, "record.set_args(event.delta)\n        merge_metadata(record, event.metadata)")
    ],
    "tool-result-file-source-passes-through": [
        (
            S,
            "    fallback = None\n    for member in members:",
            '    if value.get("type") == "file":\n        return None\n    fallback = None\n    for member in members:',
        )
    ],
    "tool-result-parts-mint-tool-message": [
        (
            F,
            "message.content = event.content if isinstance(event.content, list) else None",
            "message.content = None",
        )
    ],
    "triad-assembles-message": [
        (F, _TEXT_CONTENT, "message.set_text(event.delta)\n        merge_metadata(message, event.metadata)")
    ],
    "truncated-stream-fails-the-run": [
        (C, "if rules.seen_terminal and not rules.run_open and not cut:", "if True:")
    ],
    "two-sequential-runs-accumulate": [
        (
            C,
            "                        yield event, data\n                return",
            "                        yield event, data\n                        if event.type in _TERMINAL_TYPES:\n"
            "                            return\n                return",
        )
    ],
    "unknown-enum-value-role-stripped": [
        (S, 'return value if value in schema["enum"] else DROP', "return value")
    ],
    "unknown-event-dropped": [
        (
            R,
            "        if model is None:\n            self.warnings",
            '        if model is None:\n            model, obj = ag.RawEvent, {"type": "RAW", "event": obj}\n'
            "        if False:\n            self.warnings",
        )
    ],
    "unknown-outcome-array-fatal": [
        (
            S,
            '            raise Malformed(path, f"expected object, received {_json_type(value)}")',
            "            return DROP",
        )
    ],
    "unknown-outcome-stripped": [
        (
            S,
            "        if member is None:\n            return DROP",
            "        if member is None:\n            return value",
        )
    ],
    "unknown-part-in-message-list": [
        (
            S,
            "                kept.append(walked)\n        return kept",
            "                kept.append(walked)\n        return kept if len(kept) == len(value) else DROP",
        )
    ],
    "unknown-property-stripped": [
        (
            S,
            'warnings.append(f"stripped {path}/{key}: a property AG-UI 1.1 does not describe")',
            "out[key] = item",
        )
    ],
}


def verify(names: list[str]) -> int:
    """Each kill applied in turn: its fixture must fail. Returns how many did not."""
    survivors = 0
    for name in names:
        originals: dict[str, str] = {}
        try:
            for path, text, replacement in KILLS[name]:
                file = ROOT / path
                source = originals.setdefault(path, file.read_text())
                current = file.read_text()
                assert current.count(text) == 1, f"{name}: {text!r} is not once in {path}"
                file.write_text(current.replace(text, replacement))
                del source
            done = subprocess.run(
                [sys.executable, "-m", "tests.conformance.agui.replay_one", name],
                cwd=ROOT, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
        finally:
            for path, source in originals.items():
                (ROOT / path).write_text(source)
        killed = done.returncode != 0
        survivors += not killed
        print(f"{'killed ' if killed else 'SURVIVED'} {name}", flush=True)
    return survivors


if __name__ == "__main__":
    from .corpus import load

    every = sorted(load())
    missing = sorted(set(every) - set(KILLS))
    assert not missing, f"fixtures without a kill: {missing}"
    left = verify(sys.argv[1:] or every)
    print(f"{len(sys.argv[1:] or every) - left} killed, {left} survived")
    sys.exit(1 if left else 0)
