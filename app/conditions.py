"""A prediction's condition in words a reader knows from the benchmark's paper, not its storage codes:
`conversation:target / enhance` reads "target voice, enhanced prompt"; AgentViSS's `VV / Yusra`
reads "as Yusra, verbalized vision (VV)". Each benchmark's profile spells its own codes
(`BenchmarkProfile.condition_words`)."""
from __future__ import annotations

from app.benchmarks import condition_words
from storage.records import Prediction


def condition_name(p: Prediction) -> str:
    """The condition of `p` spelled out (its parts in the order modality, voice, prompt, role, vision)."""
    parts = []
    if p.modality:
        task, _, voice = p.modality.partition(":")
        # a voice (target, alternative, neutral) is only ever a conversation's: it names the condition alone
        parts.append(f"{voice} voice" if voice else condition_words("modality").get(task, task))
    if p.prompt_setting:
        parts.append(condition_words("prompt_setting").get(p.prompt_setting, p.prompt_setting))
    if p.context:
        parts.append(f"as {p.context}")
    if p.vision_mode:
        parts.append(condition_words("vision_mode").get(p.vision_mode, p.vision_mode))
    return ", ".join(parts) if parts else "—"
