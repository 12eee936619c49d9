"""Prompt templates per benchmark, editable by the user.

A template is a pair of format strings (system and user) with named fields such as
``{transcript}``. ``render`` fills them and says which fields are missing; ``edited`` gives a
changed copy (the settings layer stores edited templates by name). Literal braces are
written doubled (``{{`` and ``}}``), as in ``str.format``.
"""
from __future__ import annotations

import string
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    benchmark: str
    description: str
    system: str
    user: str

    @property
    def fields(self) -> tuple[str, ...]:
        """The named fields the template needs, in order of first use."""
        seen: list[str] = []
        for text in (self.system, self.user):
            for _, name, _, _ in string.Formatter().parse(text):
                if name and name not in seen:
                    seen.append(name)
        return tuple(seen)

    def render(self, **values: Any) -> tuple[str, str]:
        """(system, user) with the fields filled; KeyError naming every missing field."""
        missing = [f for f in self.fields if f not in values]
        if missing:
            raise KeyError(f"prompt {self.name!r} needs: {', '.join(missing)}")
        return self.system.format(**values), self.user.format(**values)

    def edited(self, system: str | None = None, user: str | None = None) -> PromptTemplate:
        """A copy with new text; raises ValueError when a format string is broken."""
        changed = replace(
            self, system=self.system if system is None else system, user=self.user if user is None else user
        )
        for text in (changed.system, changed.user):
            try:
                list(string.Formatter().parse(text))
            except ValueError as error:
                raise ValueError(f"prompt {self.name!r}: {error} (write literal braces as {{{{ and }}}})") from error
        return changed


FRIENDBENCH_FORCED_CHOICE = PromptTemplate(
    name="friendbench.forced_choice",
    benchmark="FriendBench",
    description="Are the two people familiar with each other or strangers? ({modality} is text, audio or video)",
    system="You are an expert in human social interaction.",
    user=(
        "You will be given a 20-second excerpt ({modality}) of a conversation between two people playing an "
        "icebreaker game.\n{transcript_block}"
        "Do these two people already know each other (familiar) or did they just meet (strangers)?\n"
        "Answer with exactly one word: familiar or stranger."
    ),
)

ECHOMIND_MCQ = PromptTemplate(
    name="echomind.mcq",
    benchmark="EchoMind",
    description="Multiple-choice question about the speaker's voice, the speech or the sound environment.",
    system="You are a careful listener.",
    user="Listen to the audio and answer the question.\n\nQuestion: {question}\nOptions:\n{options}\n\n"
    "Answer with the letter of the correct option only.",
)

ECHOMIND_OPEN_RESPONSE = PromptTemplate(
    name="echomind.open_response",
    benchmark="EchoMind",
    description="Reply to speaker A as a conversation partner would (prompt settings: no, basic, enhance).",
    system="You are a helpful conversation partner.{setting_hint}",
    user="Respond naturally to what the speaker says in the audio, as you would in a spoken conversation.",
)

AGENTVISS_ROLE_PLAY = PromptTemplate(
    name="agentviss.role_play",
    benchmark="AgentViSS",
    description="Play one character in a Friends scene; the task says what to produce (Expr, Char, Int-Reg, Int-Out).",
    system=(
        "You are {character} in a scene from the TV show Friends. Stay in character.\n"
        "Your profile: {profile}\nYour emotional state: {emotional_state}"
    ),
    user="Scene: {scene}\n\nDialogue so far:\n{dialogue}\n\nTask: {task}",
)

NCP_TASK = PromptTemplate(
    name="ncp.task",
    benchmark="NCP-ExploreToM",
    description="Act in a small world (with the six tools) until the belief goal holds.",
    system=(
        "You control the people in a small world of rooms, containers and objects. People only see what "
        "happens in the room they are in. Use the tools to act, one action per call. When you believe the goal "
        "is reached, stop calling tools and say so."
    ),
    user="Current state:\n{state}\n\nGoal: {goal}",
)

DEFAULT_TEMPLATES: dict[str, PromptTemplate] = {
    t.name: t for t in (FRIENDBENCH_FORCED_CHOICE, ECHOMIND_MCQ, ECHOMIND_OPEN_RESPONSE, AGENTVISS_ROLE_PLAY, NCP_TASK)
}

ECHOMIND_SETTING_HINTS: dict[str, str] = {
    "no": "",
    "basic": " Pay attention to how the speaker sounds, not only to what they say.",
    "enhance": (
        " Pay close attention to the speaker's voice (emotion, age, gender, pace, non-verbal sounds such as "
        "sighs or coughs) and to background sounds, and let them shape the content and tone of your reply."
    ),
}
