"""The Research Assistant: streamed reasoning, two tool calls in parallel, structured output.

Its answers come from a small library (library.py): the facts that best fit the question, with their
sources; a question outside the library is told so, with a way to research it.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote_plus

from ag_ui.core import (
    AgentCapabilities,
    BaseEvent,
    DataSource,
    ExecutionCapabilities,
    HumanInTheLoopCapabilities,
    MultimodalCapabilities,
    MultimodalInputCapabilities,
    OutputCapabilities,
    ReasoningCapabilities,
    StateCapabilities,
    StepFinishedEvent,
    StepStartedEvent,
    Tool,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolsCapabilities,
    TransportCapabilities,
    UserMessage,
)

from agents_ui.demo.agui.base import (
    AgUiDemoAgent,
    RunContext,
    args_fragments,
    last_user_message,
    new_id,
    reasoning,
    text_message,
    tool_result,
)
from agents_ui.demo.agui.library import LIBRARY, Source, Topic, facts_for, find_topic
from agents_ui.demo.gate import MAX_BODY_BYTES
from agents_ui.demo.replies import human_size, keywords, pause, topic_of

# Voice notes: a few minutes of compressed speech.
AUDIO_MAX_BYTES = 5 * 1024 * 1024
# Declared for the product's composer to honour (custom.rateLimit).
MAX_REQUESTS_PER_MINUTE = 10


class ResearchAssistant(AgUiDemoAgent):
    slug = "research-assistant"
    name = "Research Assistant"
    description = (
        "Researches a question: thinks out loud, searches and reads sources in parallel, and answers "
        "with a structured summary and its sources."
    )
    version = "2.4.0"
    # Room for one voice note at the limit, base64-encoded inline, beside the conversation.
    max_input_bytes = 4 * math.ceil(AUDIO_MAX_BYTES / 3) + MAX_BODY_BYTES
    tools = [
        Tool(
            name="web_search",
            description="Search the web and return the top results with titles, URLs and snippets.",
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to search for."},
                    "maxResults": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
                },
                "required": ["query"],
            },
        ),
        Tool(
            name="read_paper",
            description="Fetch a paper or article from a scholarly index and extract its abstract.",
            parameters={
                "type": "object",
                "properties": {
                    "topic": {"type": "string"},
                    "yearFrom": {"type": "integer", "minimum": 1900},
                },
                "required": ["topic"],
            },
        ),
    ]

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url, model="deterministic-demo"),
            transport=TransportCapabilities(streaming=True),
            tools=ToolsCapabilities(
                supported=True, items=self.tools, parallel_calls=True, client_provided=False
            ),
            output=OutputCapabilities(
                structured_output=True, supported_mime_types=["text/markdown", "application/json"]
            ),
            reasoning=ReasoningCapabilities(supported=True, streaming=True, encrypted=False),
            # Questions may come as voice notes; everything else it is shown is text.
            multimodal=MultimodalCapabilities(
                input=MultimodalInputCapabilities(audio=True, image=False, video=False, pdf=False, file=False)
            ),
            execution=ExecutionCapabilities(
                code_execution=True, sandboxed=True, max_iterations=6, max_execution_time=60_000
            ),
            state=StateCapabilities(memory=True),
            human_in_the_loop=HumanInTheLoopCapabilities(supported=True, feedback=True),
            # AG-UI has no field for these: the product reads custom.input (upload size) and
            # custom.rateLimit (how often the composer may send).
            custom={
                "input": {"maxBytes": AUDIO_MAX_BYTES},
                "rateLimit": {"maxRequestsPerMinute": MAX_REQUESTS_PER_MINUTE},
            },
        )

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        question = ctx.user_text
        topic = topic_of(question)
        terms = keywords(subject_of(topic))
        heard = attachments_note(last_user_message(ctx.input))
        if terms == ["overview"]:  # nothing to research yet, e.g. a greeting or a voice note alone
            async for event in self._introduce(heard):
                yield event
            return
        query = " ".join(terms)
        found = find_topic(question)
        if found is not None:
            thought = (
                f"This is a question about {found.subject}. I will search the web and a scholarly index at "
                f"the same time for “{query}”, compare what they say, and keep only claims two sources "
                "agree on."
            )
        else:
            thought = (
                f"My library has little on {subject_of(topic)}. I will search the web and a scholarly index "
                f"for “{query}” anyway, and keep only claims two sources agree on."
            )
        async for event in reasoning(thought, streaming=True):
            yield event

        # Two calls opened before either ends: the parallel calls the declaration promises.
        yield StepStartedEvent(step_name="gather sources")
        calls = [
            (new_id("call"), "web_search", {"query": query, "maxResults": 3}),
            (new_id("call"), "read_paper", {"topic": query, "yearFrom": 2020}),
        ]
        for call_id, tool_name, _ in calls:
            yield ToolCallStartEvent(tool_call_id=call_id, tool_call_name=tool_name)
        fragments = [args_fragments(args) for _, _, args in calls]
        for index in range(max(len(f) for f in fragments)):
            for (call_id, _, _), parts in zip(calls, fragments, strict=True):
                if index < len(parts):
                    yield ToolCallArgsEvent(tool_call_id=call_id, delta=parts[index])
            await pause()
        for call_id, _, _ in calls:
            yield ToolCallEndEvent(tool_call_id=call_id)
        sources = list(found.sources) if found is not None else search_pages(subject_of(topic))
        yield tool_result(calls[0][0], {"results": [source.as_result() for source in sources]})
        yield tool_result(calls[1][0], paper_for(found))
        yield StepFinishedEvent(step_name="gather sources")

        if found is not None:
            facts, _ = facts_for(found, question)
            findings = [fact.text for fact in facts]
            opening, closing, confidence = found.lead, found.bottom_line, 0.8
        else:
            subject = subject_of(topic)
            findings = research_plan(subject)
            opening = (
                f"I could not find sources I would rely on for {subject}: my library is small, and covers "
                f"{covered()}. Here is how I would research it:"
            )
            closing, confidence = "", 0.3
        answer = (f"{heard}\n\n" if heard else "") + opening + "\n\n"
        answer += "\n".join(f"- {finding}" for finding in findings)
        if closing:
            answer += f"\n\n{closing}"
        answer += "\n\nSources:\n" + "\n".join(
            f"{number}. {cited(source)}" for number, source in enumerate(sources, start=1)
        )
        async for event in text_message(answer):
            yield event
        # The structured output: a JSON document a program can consume, alongside the prose.
        ctx.result = {
            "topic": topic,
            "subject": found.subject if found is not None else None,
            "findings": findings,
            "sources": [source.as_result() for source in sources],
            "confidence": confidence,
        }

    async def _introduce(self, heard: str) -> AsyncIterator[BaseEvent]:
        async for event in reasoning("No question yet: say what I can research.", streaming=True):
            yield event
        text = (f"{heard}\n\n" if heard else "") + (
            "Hello! Ask me a question and I will search the web and a scholarly index, compare what they "
            f"say and answer with my sources. I know most about {covered()}."
        )
        async for event in text_message(text):
            yield event


# Words a question starts with that are not what it is about.
_ASKING = {
    "what", "whats", "is", "are", "was", "were", "how", "do", "does", "did", "can", "could", "should",
    "would", "will", "why", "when", "where", "who", "which", "tell", "me", "us", "about", "explain",
    "please", "i", "we", "know", "give", "an", "a",
}  # fmt: skip


def subject_of(topic: str) -> str:
    """What a question is about: "What is the history of the wall" -> "the history of the wall"."""
    words = topic.split()
    while len(words) > 1 and words[0].lower().replace("\u2019", "'").strip(",'") in _ASKING:
        words = words[1:]
    return " ".join(words)


def attachments_note(message: UserMessage | None) -> str:
    """What the person sent besides text, said back: this demo has no speech model to listen with."""
    parts = [] if message is None or isinstance(message.content, str) else message.content
    clips = []
    for part in parts:
        if part.type == "text":
            continue
        source = getattr(part, "source", None)
        mime_type = getattr(source, "mime_type", None) or "unknown type"
        if isinstance(source, DataSource):
            clips.append(f"{mime_type}, {human_size(len(source.value) * 3 // 4)}")
        else:
            clips.append(mime_type)
    if not clips:
        return ""
    listed, many = "; ".join(clips), len(clips) != 1
    if all(clip.startswith("audio/") for clip in clips):
        what, cannot = f"recording{'s' if many else ''}", "listen to audio"
    else:
        what, cannot = f"attachment{'s' if many else ''}", "open attachments"
    said = f"I received {len(clips)} {what} ({listed}), but I cannot {cannot} in this demo"
    return f"{said}, so I answered what you wrote."


def cited(source: Source) -> str:
    when = f", {source.year}" if source.year else ""
    return f"[{source.title}]({source.url}), {source.publisher}{when}"


def covered() -> str:
    subjects = [topic.subject for topic in LIBRARY]
    return ", ".join(subjects[:-1]) + f" and {subjects[-1]}"


def search_pages(subject: str) -> list[Source]:
    """Where a search for a subject outside the library starts: an encyclopedia and a scholarly index."""
    terms = quote_plus(subject)
    return [
        Source(
            f"Search results for “{subject}”",
            "Wikipedia",
            f"https://en.wikipedia.org/w/index.php?search={terms}",
            "Encyclopedia articles matching the question.",
        ),
        Source(
            f"Scholarly articles for “{subject}”",
            "Google Scholar",
            f"https://scholar.google.com/scholar?q={terms}",
            "Papers and reviews matching the question.",
        ),
    ]


def paper_for(found: Topic | None) -> dict[str, Any]:
    if found is None:
        return {"found": False, "note": "No paper in the index matches closely enough."}
    paper = next((source for source in found.sources if source.year), found.sources[0])
    return {"title": paper.title, "publisher": paper.publisher, "year": paper.year, "abstract": found.lead}


def research_plan(subject: str) -> list[str]:
    return [
        f"Start from a recent overview of {subject} by a public institution, a university or a review "
        "article, and note its date.",
        "Compare two or three independent sources; where they disagree, follow the one that shows its "
        "evidence.",
        "Prefer sources that give figures and methods, and treat a single study as a lead, not an answer.",
    ]
