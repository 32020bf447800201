"""What every interop peer shares: its command line and the scenario a user's message asks for.

Standard library only: each peer runs in its own virtual environment and loads this file by path.
"""

from __future__ import annotations

import argparse

# Keyword in the user's message -> scenario. The first keyword found wins, in this order.
SCENARIOS: tuple[tuple[str, str], ...] = (
    ("fail", "fail"),
    ("refund", "refund"),
    ("weather", "weather"),
    ("think", "think"),
    ("state", "state"),
    ("steps", "steps"),
    ("research", "subagent"),
    ("hello", "hello"),
)

# The data every peer's tools answer with, so that captures from different frameworks compare.
WEATHER = {"city": "Paris", "temperature_c": 21, "sky": "sunny"}
REFUND_ARGS = {"order_id": "A-1001", "amount": 42.5}
PLAN_STATE = {
    "plan": {"title": "Launch", "steps": [{"name": "Draft", "done": True}, {"name": "Ship", "done": False}]}
}
FAILURE = "The order service is unavailable."
CLIENT_TOOL = "generate_task_steps"
# Offered a client's generic "ask the user" tool instead (as Agents UI offers it), a peer asks this.
ASK_TOOL = "ask_user"
ASK_ARGS = {"question": "Which steps should I plan?", "suggestions": ["Draft", "Review"]}
ASK_CALL_ID = "call_ask"


def scenario_of(text: str) -> str:
    lowered = text.lower()
    for keyword, scenario in SCENARIOS:
        if keyword in lowered:
            return scenario
    return "hello"


def refund_text(order_id: str, amount: float) -> str:
    return f"Refunded {amount:g} EUR on order {order_id}."


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port", type=int, required=True)
    return parser.parse_args()


def serve(app: object, port: int) -> None:
    """Serve an ASGI app on loopback only, quietly."""
    import uvicorn  # each peer's environment has its own

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
