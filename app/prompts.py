"""Prompt templates, editable by the user: every registered benchmark's own (kept in its module in
`app.benchmarks`, beside the parser that reads the replies), by name, and the built-ins under the names the
live code uses."""
from __future__ import annotations

from app.benchmarks import profiles
from app.benchmarks.agentviss import ROLE_PLAY_PROMPT as AGENTVISS_ROLE_PLAY
from app.benchmarks.echomind import MCQ_PROMPT as ECHOMIND_MCQ
from app.benchmarks.echomind import OPEN_RESPONSE_PROMPT as ECHOMIND_OPEN_RESPONSE
from app.benchmarks.echomind import SETTING_HINTS as ECHOMIND_SETTING_HINTS
from app.benchmarks.friendbench import FORCED_CHOICE_PROMPT as FRIENDBENCH_FORCED_CHOICE
from app.benchmarks.ncp import STORY_PROMPT as EXPLORETOM_QUESTION
from app.benchmarks.ncp import TASK_PROMPT as NCP_TASK
from app.prompt_template import PromptTemplate

__all__ = ["AGENTVISS_ROLE_PLAY", "ECHOMIND_MCQ", "ECHOMIND_OPEN_RESPONSE", "ECHOMIND_SETTING_HINTS",
           "EXPLORETOM_QUESTION", "FRIENDBENCH_FORCED_CHOICE", "NCP_TASK", "PromptTemplate", "default_templates"]


def default_templates() -> dict[str, PromptTemplate]:
    """Every registered benchmark's templates by name, in the registry's order."""
    return {t.name: t for profile in profiles().values() for t in profile.templates()}
