import pytest

from agents_ui.endpoints.errors import describe, duration
from agents_ui.sdk import RateLimitedError, SpendLimitExceededError, UnsupportedCapabilityError


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(1, "1 second"), (45, "45 seconds"), (60, "1 minute"), (90, "90 seconds"), (150, "2 minutes"),
     (3600, "1 hour"), (86400, "24 hours")],
)  # fmt: skip
def test_durations_read_like_a_person_would_say_them(seconds, text):
    assert duration(seconds) == text


def test_each_error_becomes_a_sentence():
    assert (
        describe(UnsupportedCapabilityError(capability="artifacts")) == "The agent does not offer artifacts."
    )
    limited = describe(SpendLimitExceededError(retry_after=86400))
    assert limited == "The agent's spending limit is reached. Try again in 24 hours."
    assert "Try again in 30 seconds." in describe(RateLimitedError(retry_after=30))


def test_a_run_cut_at_a_bound_says_which_bound_and_where():
    from agents_ui.sdk.errors import EventIdleTimeoutError, RunTimeLimitError, RunTooLargeError

    big = RunTooLargeError("The agent sent more than 32 MB in one run; the answer was cut there.")
    assert describe(big) == "The agent sent more than 32 MB in one run; the answer was cut there."
    assert "no complete event" in describe(EventIdleTimeoutError())
    assert "time limit" in describe(RunTimeLimitError())


def test_an_unknown_error_code_is_logged_not_put_in_the_sentence(caplog):
    from agents_ui.sdk.errors import AgentError

    with caplog.at_level("INFO", logger="agents_ui.endpoints.errors"):
        said = describe(AgentError(code="quota_frobnicated"))
    assert said == "The agent reported an error this product does not know."
    assert "quota_frobnicated" in caplog.text
