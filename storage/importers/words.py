"""How releases spell the values importers read: true/false flags, familiar/stranger labels, conditions.

One list of each: the readers normalise with them and the column sniffer recognises columns by them.
"""
from __future__ import annotations

TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1", "1.0", "correct"})
FALSE_WORDS = frozenset({"false", "f", "no", "n", "0", "0.0", "incorrect", "wrong"})
BOOLEAN_WORDS = TRUE_WORDS | FALSE_WORDS

FAMILIAR_WORDS = frozenset({"familiar", "friend", "friends", "1", "1.0", "acquainted", "acquaintances", "known"})
STRANGER_WORDS = frozenset({"stranger", "strangers", "0", "0.0", "unfamiliar", "not familiar", "not_familiar",
                            "unknown"})
FAMILIARITY_WORDS = FAMILIAR_WORDS | STRANGER_WORDS

# FriendBench's three conditions; video keeps the sound.
MODALITY_WORDS = {
    "text": frozenset({"text", "transcript", "text_only", "text-only", "written"}),
    "audio": frozenset({"audio", "audio_only", "audio-only", "speech", "voice", "sound"}),
    "video": frozenset({"video", "audiovisual", "audio-visual", "av", "video+audio", "audio+video", "video_audio",
                        "multimodal"}),
}
# Any benchmark's condition names, for recognising a condition column (AgentViSS adds vision and image).
CONDITION_WORDS = frozenset().union(*MODALITY_WORDS.values()) | {"vision", "image"}

# AgentViSS's four tasks, each judged on every role-play reply: expression, character, interaction regulation
# and interaction outcome. The reader, the dashboard's table and the scene view list them in this order.
AGENTVISS_TASKS: tuple[str, ...] = ("Expr", "Char", "Int-Reg", "Int-Out")

# The kinds of stimulus the ExploreToM reader writes: a task acted out step by step (NCP's form) and a question
# about a story. The belief engine, the NCP benchmark's profile and the store's detail query name them from here.
TASK_KIND = "ncp_task"
STORY_KIND = "story"
