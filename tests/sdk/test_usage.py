"""Token usage read from what each protocol sends: AG-UI 1.1's per-model entries (built with the
ag-ui SDK's own TokenUsage), an external agent's one object, the stored form; bounds and absences."""

from __future__ import annotations

from ag_ui.core import RunErrorEvent, RunFinishedEvent, TokenUsage

from agents_ui.display.usage import summed_lines, usage_lines
from agents_ui.sdk.usage import MAX_ENTRIES, MAX_LABEL, ModelUsage, merged, read_usage, stored


def test_agui_entries_are_read_one_per_provider_and_model_with_their_parts():
    event = RunFinishedEvent(
        thread_id="t",
        run_id="r",
        usage=[
            TokenUsage(
                provider="openai",
                model="gpt-5",
                input_tokens=1234,
                output_tokens=567,
                cached_input_tokens=200,
                reasoning_tokens=50,
                total_tokens=1801,
            ),
            TokenUsage(provider="anthropic", model="claude", input_tokens=10),
        ],
    )
    entries = read_usage(event.usage)
    assert entries == [
        ModelUsage("openai", "gpt-5", 1234, 567, 1801, 200, None, 50),
        ModelUsage("anthropic", "claude", input_tokens=10),
    ]
    lines = usage_lines(event.usage)
    assert lines[0].model == "gpt-5 (openai)"
    assert lines[0].text == "1,234 tokens in (200 cached) · 567 out (50 reasoning)"
    # An absent count is "not reported", never zero.
    assert lines[1].text == "10 tokens in · out: not reported"


def test_run_error_usage_is_read_too_and_the_stored_form_reads_back_the_same():
    event = RunErrorEvent(
        message="boom", usage=[TokenUsage(model="m", input_tokens=5, cache_write_input_tokens=3)]
    )
    kept = stored(event.usage)
    assert kept == [{"model": "m", "input_tokens": 5, "cache_write_input_tokens": 3}]
    assert read_usage(kept) == read_usage(event.usage)
    assert usage_lines(kept)[0].text == "5 tokens in (3 written to cache) · out: not reported"


def test_an_external_agents_one_object_and_older_stored_sums_are_read():
    assert read_usage({"inputTokens": 3, "outputTokens": 2, "model": "x"}) == [ModelUsage("", "x", 3, 2)]
    assert read_usage({"input_tokens": 150, "output_tokens": 20}) == [
        ModelUsage(input_tokens=150, output_tokens=20)
    ]
    assert usage_lines({"prompt_tokens": 1, "completion_tokens": 1})[0].text == "1 token in · 1 out"


def test_nothing_reported_is_no_entry_and_bad_numbers_are_not_counts():
    assert read_usage(None) == [] and stored(None) is None and usage_lines([]) == []
    assert stored([{"model": "m"}]) is None  # a model named, no count: nothing reported
    bad = read_usage(
        [
            {
                "model": "m",
                "inputTokens": -1,
                "outputTokens": True,
                "totalTokens": "9",
                "reasoningTokens": float("nan"),
                "cachedInputTokens": 2**60,
            }
        ]
    )
    assert bad == []


def test_entries_and_labels_are_bounded_and_the_same_model_is_summed():
    many = [{"model": f"m{i}", "inputTokens": 1} for i in range(MAX_ENTRIES * 3)]
    assert len(read_usage(many)) == MAX_ENTRIES
    assert len(read_usage([{"model": "x" * 500, "inputTokens": 1}])[0].model) == MAX_LABEL
    twice = read_usage(
        [{"model": "m", "inputTokens": 1}, {"model": "m", "inputTokens": 2, "outputTokens": 4}]
    )
    assert twice == [ModelUsage("", "m", 3, 4)]


def test_runs_are_summed_per_model_and_a_count_no_run_reported_stays_not_reported():
    runs = [
        [{"provider": "p", "model": "a", "input_tokens": 100, "output_tokens": 20}],
        [
            {"provider": "p", "model": "a", "input_tokens": 50},
            {"provider": "p", "model": "b", "input_tokens": 7},
        ],
        None,
    ]
    assert merged(runs) == [ModelUsage("p", "a", 150, 20), ModelUsage("p", "b", 7)]
    assert [line.text for line in summed_lines(runs)] == [
        "150 tokens in · 20 out",
        "7 tokens in · out: not reported",
    ]
