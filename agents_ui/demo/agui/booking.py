"""Booking Desk: books a meeting room through an interface it builds with A2UI v0.9.

It answers as AG-UI's A2UI middleware delivers surfaces: `ACTIVITY_SNAPSHOT` events of type
`a2ui-surface` (first "building", then the painted surface under the same message id), and reads
the person's button presses from `forwardedProps.a2uiAction.userAction`. The form has a date picker,
a choice of rooms, a slider, a checkbox and a text field; the booking is checked against what the
person chose (a room too small for the guests brings the form back with a warning), and a booked
room is shown as a confirmation card whose status an `ACTIVITY_DELTA` then moves on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import date, timedelta
from typing import Any

from ag_ui.core import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    AgentCapabilities,
    BaseEvent,
    StateCapabilities,
    ToolsCapabilities,
    TransportCapabilities,
)

from agents_ui.demo.agui.base import AgUiDemoAgent, RunContext, new_id, text_message
from agents_ui.demo.replies import pause

VERSION = "v0.9"
CATALOG = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
ROOMS = {"focus": ("Focus room", 4), "garden": ("Garden room", 8), "atrium": ("Atrium", 20)}


def _op(kind: str, **body: Any) -> dict[str, Any]:
    return {"version": VERSION, kind: body}


def _text(component_id: str, text: Any, variant: str = "body") -> dict[str, Any]:
    return {"id": component_id, "component": "Text", "text": text, "variant": variant}


def form_operations(surface_id: str, booking: dict[str, Any], warning: str = "") -> list[dict[str, Any]]:
    """The booking form: a date, a room, how many people, a projector, a note, and a button."""
    today = date.today()
    header = ["title", "intro"] + (["warning"] if warning else [])
    components = [
        {"id": "root", "component": "Card", "child": "form"},
        {
            "id": "form",
            "component": "Column",
            "children": [*header, "when", "room", "guests", "projector", "notes", "divider", "actions"],
        },
        _text("title", "Book a meeting room", "h2"),
        _text("intro", "Pick a day and a room; I check that it fits before booking.", "caption"),
        {
            "id": "when",
            "component": "DateTimeInput",
            "label": "Day",
            "value": {"path": "/booking/date"},
            "enableDate": True,
            "min": today.isoformat(),
            "max": (today + timedelta(days=90)).isoformat(),
        },
        {
            "id": "room",
            "component": "ChoicePicker",
            "label": "Room",
            "variant": "mutuallyExclusive",
            "displayStyle": "chips",
            "options": [
                {"label": f"{name} · {seats} seats", "value": key} for key, (name, seats) in ROOMS.items()
            ],
            "value": {"path": "/booking/room"},
        },
        {
            "id": "guests",
            "component": "Slider",
            "label": "People",
            "min": 1,
            "max": 20,
            "value": {"path": "/booking/guests"},
        },
        {
            "id": "projector",
            "component": "CheckBox",
            "label": "Needs a projector",
            "value": {"path": "/booking/projector"},
        },
        {
            "id": "notes",
            "component": "TextField",
            "label": "Note for the front desk",
            "variant": "longText",
            "value": {"path": "/booking/notes"},
        },
        {"id": "divider", "component": "Divider"},
        {"id": "actions", "component": "Row", "children": ["book"], "justify": "end"},
        {
            "id": "book",
            "component": "Button",
            "variant": "primary",
            "child": "book-label",
            "action": {
                "event": {
                    "name": "book_room",
                    "context": {
                        "date": {"path": "/booking/date"},
                        "room": {"path": "/booking/room"},
                        "guests": {"path": "/booking/guests"},
                        "projector": {"path": "/booking/projector"},
                        "notes": {"path": "/booking/notes"},
                    },
                }
            },
            "checks": [
                {
                    "condition": {"call": "required", "args": {"value": {"path": "/booking/date"}}},
                    "message": "Pick a day.",
                },
                {
                    "condition": {"call": "required", "args": {"value": {"path": "/booking/room"}}},
                    "message": "Pick a room.",
                },
            ],
        },
        _text("book-label", "Check and book"),
    ]
    if warning:
        components.append(_text("warning", f"**{warning}**"))
    return [
        _op("createSurface", surfaceId=surface_id, catalogId=CATALOG, sendDataModel=True),
        _op("updateComponents", surfaceId=surface_id, components=components),
        _op("updateDataModel", surfaceId=surface_id, path="/", value={"booking": booking}),
    ]


def confirmation_operations(surface_id: str, booking: dict[str, Any]) -> list[dict[str, Any]]:
    """The confirmation card: what was booked, its status, and a way to change it."""
    name, seats = ROOMS[booking["room"]]
    components = [
        {"id": "root", "component": "Card", "child": "body"},
        {"id": "body", "component": "Column", "children": ["head", "details", "status", "tabs", "actions"]},
        {"id": "head", "component": "Row", "children": ["icon", "title"], "align": "center"},
        {"id": "icon", "component": "Icon", "name": "event"},
        _text("title", {"path": "/booking/title"}, "h3"),
        {
            "id": "details",
            "component": "List",
            "children": {"path": "/booking/lines", "componentId": "line"},
        },
        _text("line", {"path": "text"}),
        _text("status", {"call": "formatString", "args": {"value": "Status: ${/booking/status}"}}, "caption"),
        {
            "id": "tabs",
            "component": "Tabs",
            "tabs": [
                {"title": "Room", "child": "room-tab"},
                {"title": "Front desk", "child": "desk-tab"},
            ],
        },
        _text("room-tab", f"{name} seats {seats}; it has a screen and a whiteboard."),
        _text("desk-tab", {"path": "/booking/desk"}),
        {"id": "actions", "component": "Row", "children": ["change", "cancel"], "justify": "spaceBetween"},
        {
            "id": "change",
            "component": "Button",
            "child": "change-label",
            "action": {"event": {"name": "change_booking"}},
        },
        _text("change-label", "Change"),
        {
            "id": "cancel",
            "component": "Button",
            "variant": "borderless",
            "child": "cancel-label",
            "action": {"event": {"name": "cancel_booking", "context": {"room": booking["room"]}}},
        },
        _text("cancel-label", "Cancel the booking"),
    ]
    lines = [
        {"text": f"Day: {booking['date']}"},
        {"text": f"Room: {name}"},
        {"text": f"People: {booking['guests']}"},
        {"text": "Projector: yes" if booking.get("projector") else "Projector: no"},
    ]
    data = {
        "booking": {
            **booking,
            "title": f"{name}, {booking['date']}",
            "lines": lines,
            "status": "holding the room",
            "desk": booking.get("notes") or "No note for the front desk.",
        }
    }
    return [
        _op("createSurface", surfaceId=surface_id, catalogId=CATALOG),
        _op("updateComponents", surfaceId=surface_id, components=components),
        _op("updateDataModel", surfaceId=surface_id, path="/", value=data),
    ]


# A one-pixel image, so the gallery shows an image this page may load (other sites' images are links).
DOT = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR42mPwd3tKEmIY1TCqYfhqAABe7noQUGj3EgAAAABJRU5ErkJggg=="
)


def gallery_operations(surface_id: str) -> list[dict[str, Any]]:
    """Every component of the Basic Catalog on one surface, its inputs sent back by one button."""
    components = [
        {
            "id": "root",
            "component": "Column",
            "children": ["g-title", "g-row", "g-tabs", "g-inputs", "g-foot"],
        },
        _text("g-title", "Every component", "h2"),
        {
            "id": "g-row",
            "component": "Row",
            "children": ["g-media", "g-list-card"],
            "justify": "spaceBetween",
        },
        {
            "id": "g-media",
            "component": "Column",
            "children": ["g-icons", "g-image", "g-video", "g-audio"],
            "weight": 1,
        },
        {"id": "g-icons", "component": "Row", "children": ["g-i1", "g-i2", "g-i3"], "align": "center"},
        {"id": "g-i1", "component": "Icon", "name": "star"},
        {"id": "g-i2", "component": "Icon", "name": "mail"},
        {
            "id": "g-i3",
            "component": "Icon",
            "name": {"svgPath": "M12 2L15 9H22L16 14L18 21L12 17L6 21L8 14L2 9H9Z"},
        },
        {"id": "g-image", "component": "Image", "url": DOT, "description": "A blue dot", "variant": "icon"},
        {"id": "g-video", "component": "Video", "url": "https://example.org/tour.mp4"},
        {
            "id": "g-audio",
            "component": "AudioPlayer",
            "url": "https://example.org/chime.mp3",
            "description": "Door chime",
        },
        {"id": "g-list-card", "component": "Card", "child": "g-list", "weight": 1},
        {"id": "g-list", "component": "List", "children": {"path": "/rooms", "componentId": "g-room"}},
        _text("g-room", {"call": "formatString", "args": {"value": "${name}: ${seats} seats"}}),
        {
            "id": "g-tabs",
            "component": "Tabs",
            "tabs": [{"title": "About", "child": "g-about"}, {"title": "Rules", "child": "g-rules"}],
        },
        _text("g-about", "Rooms are open from *8 to 20*."),
        _text("g-rules", "Leave the room as you found it."),
        {
            "id": "g-inputs",
            "component": "Column",
            "children": ["g-name", "g-agree", "g-extras", "g-volume", "g-when"],
        },
        {"id": "g-name", "component": "TextField", "label": "Your name", "value": {"path": "/form/name"}},
        {
            "id": "g-agree",
            "component": "CheckBox",
            "label": "I agree to the rules",
            "value": {"path": "/form/agree"},
        },
        {
            "id": "g-extras",
            "component": "ChoicePicker",
            "label": "Extras",
            "variant": "multipleSelection",
            "options": [{"label": "Coffee", "value": "coffee"}, {"label": "Water", "value": "water"}],
            "value": {"path": "/form/extras"},
        },
        {
            "id": "g-volume",
            "component": "Slider",
            "label": "Music volume",
            "min": 0,
            "max": 10,
            "value": {"path": "/form/volume"},
        },
        {
            "id": "g-when",
            "component": "DateTimeInput",
            "label": "Arrival",
            "enableDate": True,
            "enableTime": True,
            "value": {"path": "/form/when"},
        },
        {
            "id": "g-foot",
            "component": "Row",
            "children": ["g-modal", "g-divider", "g-send"],
            "justify": "spaceBetween",
            "align": "center",
        },
        {"id": "g-modal", "component": "Modal", "trigger": "g-open", "content": "g-help"},
        {
            "id": "g-open",
            "component": "Button",
            "child": "g-open-label",
            "action": {"event": {"name": "help"}},
        },
        _text("g-open-label", "Help"),
        _text("g-help", "Press **Send** and I tell you what I received."),
        {"id": "g-divider", "component": "Divider", "axis": "vertical"},
        {
            "id": "g-send",
            "component": "Button",
            "variant": "primary",
            "child": "g-send-label",
            "action": {
                "event": {
                    "name": "gallery_sent",
                    "context": {
                        key: {"path": f"/form/{key}"} for key in ("name", "agree", "extras", "volume", "when")
                    },
                }
            },
        },
        _text("g-send-label", "Send"),
    ]
    data = {
        "rooms": [{"name": name, "seats": seats} for name, seats in ROOMS.values()],
        "form": {"name": "", "agree": False, "extras": [], "volume": 3, "when": ""},
    }
    return [
        _op("createSurface", surfaceId=surface_id, catalogId=CATALOG),
        _op("updateComponents", surfaceId=surface_id, components=components),
        _op("updateDataModel", surfaceId=surface_id, path="/", value=data),
    ]


def _booking(context: Any) -> dict[str, Any]:
    context = context if isinstance(context, dict) else {}
    room = context.get("room")
    room = room[0] if isinstance(room, list) and room else room
    guests = context.get("guests")
    return {
        "date": str(context.get("date") or ""),
        "room": room if room in ROOMS else "",
        "guests": int(guests) if isinstance(guests, int | float) and 1 <= guests <= 20 else 2,
        "projector": context.get("projector") is True,
        "notes": str(context.get("notes") or "")[:500],
    }


def user_action(ctx: RunContext) -> dict[str, Any] | None:
    forwarded = ctx.input.forwarded_props
    action = forwarded.get("a2uiAction") if isinstance(forwarded, dict) else None
    found = action.get("userAction") if isinstance(action, dict) else None
    return found if isinstance(found, dict) else None


class BookingDesk(AgUiDemoAgent):
    slug = "booking-desk"
    name = "Booking Desk"
    description = (
        "Books meeting rooms through a form it builds for you (A2UI): a date, a room, a confirmation."
    )
    version = "1.0.0"

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url),
            transport=TransportCapabilities(streaming=True),
            tools=ToolsCapabilities(supported=False),
            state=StateCapabilities(snapshots=False, deltas=False, memory=False),
            # AG-UI has no field for A2UI: A2UI's own server capabilities, as a custom capability.
            custom={"a2ui": {VERSION: {"supportedCatalogIds": [CATALOG], "acceptsInlineCatalogs": False}}},
        )

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        action = user_action(ctx)
        if action is None and "every component" in ctx.user_text.lower():
            async for event in text_message("Here is every component I can build."):
                yield event
            async for event in self._surface(gallery_operations("gallery")):
                yield event
            return
        if action is not None and action.get("name") == "gallery_sent":
            context = action.get("context") if isinstance(action.get("context"), dict) else {}
            said = ", ".join(
                f"{key} = {context.get(key)!r}" for key in ("name", "agree", "extras", "volume", "when")
            )
            async for event in text_message(f"I received: {said}."):
                yield event
            return
        if action is None:
            intro = "Here is a booking form: pick a day and a room."
            async for event in text_message(
                f"{intro} (Say “show me every component” to see all I can build.)"
            ):
                yield event
            async for event in self._surface(form_operations("booking", _booking({}))):
                yield event
            return
        name = action.get("name")
        booking = _booking(action.get("context"))
        if name == "cancel_booking":
            async for event in text_message("The booking is cancelled. Say hello to book again."):
                yield event
            # The card of the earlier turn, updated without being created again (as the A2UI
            # middleware tells agents to): its status, and no buttons left.
            async for event in self._surface(
                [
                    _op(
                        "updateDataModel",
                        surfaceId="booking-confirmed",
                        path="/booking/status",
                        value="cancelled",
                    ),
                    _op(
                        "updateComponents",
                        surfaceId="booking-confirmed",
                        components=[{"id": "actions", "component": "Row", "children": []}],
                    ),
                ]
            ):
                yield event
            return
        if name == "change_booking":
            async for event in text_message("Change what you need and book again."):
                yield event
            async for event in self._surface(form_operations("booking", booking)):
                yield event
            return
        problem = self._problem(booking)
        if problem:
            async for event in text_message(problem):
                yield event
            async for event in self._surface(form_operations("booking", booking, warning=problem)):
                yield event
            return
        room = ROOMS[booking["room"]][0]
        async for event in text_message(f"Booked: {room} on {booking['date']} for {booking['guests']}."):
            yield event
        message_id = ""
        async for event in self._surface(confirmation_operations("booking-confirmed", booking)):
            message_id = getattr(event, "message_id", message_id)
            yield event
        await pause(2)
        # The front desk confirmed: the status in the data model moves on, as a JSON Patch of the content.
        yield ActivityDeltaEvent(
            message_id=message_id,
            activity_type="a2ui-surface",
            patch=[
                {
                    "op": "replace",
                    "path": "/a2ui_operations/2/updateDataModel/value/booking/status",
                    "value": "confirmed",
                }
            ],
        )

    @staticmethod
    def _problem(booking: dict[str, Any]) -> str:
        if not booking["date"] or not booking["room"]:
            return "Pick a day and a room first."
        try:
            day = date.fromisoformat(booking["date"])
        except ValueError:
            return "That day is not a date I can read: pick it again."
        if day < date.today():
            return "That day has passed: pick a day from today on."
        name, seats = ROOMS[booking["room"]]
        if booking["guests"] > seats:
            return f"The {name} seats {seats}, not {booking['guests']}: pick a larger room or fewer people."
        return ""

    @staticmethod
    async def _surface(operations: list[dict[str, Any]]) -> AsyncIterator[BaseEvent]:
        """A surface as AG-UI's A2UI middleware delivers one: building first, then painted in place."""
        message_id = f"a2ui-surface-{new_id('call')}"
        yield ActivitySnapshotEvent(
            message_id=message_id, activity_type="a2ui-surface", content={"status": "building"}, replace=True
        )
        await pause()
        yield ActivitySnapshotEvent(
            message_id=message_id,
            activity_type="a2ui-surface",
            content={"a2ui_operations": operations},
            replace=True,
        )
