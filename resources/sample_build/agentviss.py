"""Builds the synthetic AgentViSS sample: two flat-share scenes, drawn faces, dialogue, judged role tasks.

Everything is invented here: the characters, the dialogue, the two models ("Lantern-VL 9B" and
"Quire Vision 2") and their scores. Faces are drawn with Pillow (a head, eyes, brows and a mouth shaped by
the expression), so the images are deterministic. `data.json` holds the scenes; `train.jsonl` holds the
same scenes one per line with nested values written as JSON text, as the release's viewer file does.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

GROUP_SIZE = (256, 192)
PORTRAIT_SIZE = (96, 96)
MODELS = ("Lantern-VL 9B", "Quire Vision 2")
TASKS = ("Expr", "Char", "Int-Reg", "Int-Out")

CHARACTERS = {
    "Odile": {"gender": "female", "age": 29, "occupation": "sound engineer", "skin": (224, 180, 140),
              "hair": (60, 40, 30)},
    "Benedikt": {"gender": "male", "age": 31, "occupation": "pastry chef", "skin": (240, 200, 170),
                 "hair": (200, 160, 60)},
    "Yusra": {"gender": "female", "age": 27, "occupation": "bicycle courier", "skin": (150, 105, 75),
              "hair": (25, 20, 20)},
    "Casimir": {"gender": "male", "age": 34, "occupation": "substitute teacher", "skin": (205, 150, 110),
                "hair": (90, 90, 95)},
}

SCENES = [
    {
        "scene_id": "flat-s01-e02-sc1",
        "source": "Flat 4B, episode 2 (invented)",
        "scene_description": "Saturday morning in the kitchen of Flat 4B. Odile has drawn up a new cleaning rota "
                             "and wants the others to sign it before the landlord's inspection; Benedikt has "
                             "flour all over the counter and would rather bake.",
        "dialogue_type": "persuasion",
        "conflict_intensity": "medium",
        "roles": [
            ("Odile", "honest", "collaborating", "determined", "smile", "holds up a sheet of paper"),
            ("Benedikt", "exaggeration", "avoiding", "defensive", "raised brows", "kneads dough"),
            ("Yusra", "strategic concealment", "compromising", "amused", "smile", "leans on the fridge"),
        ],
        "dialogue": [
            ("Odile", "smile", "Right, everyone, the rota. Two jobs each, swapped every Sunday."),
            ("Benedikt", "raised brows", "Two jobs? I clean this kitchen every single day with my baking."),
            ("Yusra", "smile", "You clean the bits of the kitchen you made dirty, Ben."),
            ("Benedikt", "frown", "That is still cleaning. It counts double, because of the flour."),
            ("Odile", "frown", "The inspection is on Tuesday. If the oven looks like that we lose the deposit."),
            ("Yusra", "neutral", "I'll take bins and the bathroom if I never have to touch the oven."),
            ("Benedikt", "neutral", "Fine. Oven and floors. But croissants on Sunday count as a job."),
            ("Odile", "smile", "Croissants count as a bribe. Sign here."),
        ],
    },
    {
        "scene_id": "flat-s01-e05-sc3",
        "source": "Flat 4B, episode 5 (invented)",
        "scene_description": "Late evening in the living room. Casimir has brought home a stray cat 'just for "
                             "tonight'; Yusra is allergic, Odile is tempted to keep it, and they must decide "
                             "before the cat shelter closes tomorrow.",
        "dialogue_type": "deliberation",
        "conflict_intensity": "high",
        "roles": [
            ("Casimir", "deception", "competing", "hopeful", "smile", "cradles a cat in a towel"),
            ("Yusra", "suppression", "accommodating", "uneasy", "frown", "stands by the open window"),
            ("Odile", "honest", "compromising", "torn", "raised brows", "sits on the arm of the sofa"),
        ],
        "dialogue": [
            ("Casimir", "smile", "It's only for one night. Look at him, he has nowhere to go."),
            ("Yusra", "frown", "I'm fine. Really. I'll just keep the window open."),
            ("Odile", "raised brows", "Yusra, your eyes are already red."),
            ("Casimir", "neutral", "The shelter said they were full anyway, so he might have to stay a bit."),
            ("Odile", "frown", "You didn't call the shelter, did you?"),
            ("Casimir", "raised brows", "I meant to call them. That is almost the same."),
            ("Yusra", "neutral", "Maybe he could stay in your room with the door shut?"),
            ("Odile", "neutral", "One night in Casimir's room, and he phones the shelter at nine."),
            ("Casimir", "smile", "Deal. I'll call him Nine."),
        ],
    },
]

_FONT = ImageFont.load_default()


def _face(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float, who: str, expression: str) -> None:
    """A stylised face: hair, head, eyes, brows and mouth shaped by `expression`."""
    look = CHARACTERS[who]
    draw.ellipse([cx - r * 1.05, cy - r * 1.15, cx + r * 1.05, cy + r * 0.5], fill=look["hair"])
    draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=look["skin"], outline=(40, 30, 30), width=1)
    eye_y, eye_dx, eye_r = cy - r * 0.2, r * 0.38, max(2.0, r * 0.09)
    for side in (-1, 1):
        ex = cx + side * eye_dx
        draw.ellipse([ex - eye_r, eye_y - eye_r, ex + eye_r, eye_y + eye_r], fill=(30, 30, 40))
        brow_y = eye_y - r * (0.34 if expression == "raised brows" else 0.22)
        inner, outer = ex - side * r * 0.18, ex + side * r * 0.18
        if expression == "frown":   # brows drawn down towards the nose
            draw.line([inner, brow_y + r * 0.08, outer, brow_y - r * 0.04], fill=(40, 30, 30), width=2)
        else:
            draw.line([inner, brow_y, outer, brow_y], fill=(40, 30, 30), width=2)
    mouth_y, half = cy + r * 0.42, r * 0.35
    box = [cx - half, mouth_y - r * 0.22, cx + half, mouth_y + r * 0.22]
    if expression == "smile":
        draw.arc(box, start=20, end=160, fill=(120, 30, 40), width=2)
    elif expression == "frown":
        draw.arc([box[0], mouth_y, box[2], mouth_y + r * 0.4], start=200, end=340, fill=(120, 30, 40), width=2)
    elif expression == "raised brows":
        draw.ellipse([cx - r * 0.1, mouth_y - r * 0.08, cx + r * 0.1, mouth_y + r * 0.12], outline=(120, 30, 40),
                     width=2)
    else:
        draw.line([cx - half * 0.8, mouth_y + r * 0.05, cx + half * 0.8, mouth_y + r * 0.05], fill=(120, 30, 40),
                  width=2)


def _label(draw: ImageDraw.ImageDraw, cx: float, y: float, text: str) -> None:
    width = draw.textlength(text, font=_FONT)
    draw.rectangle([cx - width / 2 - 2, y - 1, cx + width / 2 + 2, y + 11], fill=(255, 255, 255))
    draw.text((cx - width / 2, y), text, fill=(20, 20, 20), font=_FONT)


def portrait(who: str, expression: str) -> Image.Image:
    image = Image.new("RGB", PORTRAIT_SIZE, (214, 226, 236))
    draw = ImageDraw.Draw(image)
    _face(draw, 48, 42, 28, who, expression)
    _label(draw, 48, 80, who)
    return image


def group_image(scene: dict) -> Image.Image:
    image = Image.new("RGB", GROUP_SIZE, (236, 222, 196))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 130, 256, 192], fill=(150, 110, 80))          # floor
    draw.rectangle([180, 30, 240, 90], fill=(170, 205, 230), outline=(90, 70, 50), width=3)   # window
    draw.rounded_rectangle([14, 110, 242, 150], radius=10, fill=(90, 120, 110))                 # sofa or counter
    names = [role[0] for role in scene["roles"]]
    for i, (name, *_rest) in enumerate(scene["roles"]):
        cx = 256 * (i + 1) / (len(names) + 1)
        _face(draw, cx, 88, 24, name, scene["roles"][i][4])
        _label(draw, cx, 118, name)
    _label(draw, 128, 170, scene["scene_id"])
    return image


def _save_png(image: Image.Image, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG", optimize=True)


def _results(scene: dict, rng: random.Random) -> list[dict]:
    """Per role, model, vision mode and task: a score out of 10 with a one-line rationale."""
    rows = []
    for name, style, trait, emotion, *_ in scene["roles"]:
        for model_index, model in enumerate(MODELS):
            for mode in ("VV", "DV"):
                for task in TASKS:
                    # the first model is stronger; direct vision costs a little on expression reading
                    base = 7.5 if model_index == 0 else 5.5
                    base -= 0.8 if (mode == "DV" and task == "Expr") else 0.0
                    score = max(0, min(10, round(base + rng.uniform(-2.0, 2.0))))
                    rows.append({
                        "role": name, "task": task, "vision_mode": mode, "model": model, "score": score,
                        "response": f"As {name} ({emotion}), I keep my {style} manner and a {trait} stance.",
                        "rationale": (f"{task}: {'consistent with' if score >= 6 else 'drifts from'} {name}'s "
                                      f"{style} style and {trait} trait."),
                    })
    return rows


def _scene_record(scene: dict, rng: random.Random) -> dict:
    roles = [{"name": n, "gender": CHARACTERS[n]["gender"], "age": CHARACTERS[n]["age"],
              "occupation": CHARACTERS[n]["occupation"], "expression_style": style, "conflict_trait": trait,
              "initial_state": {"emotion": emotion, "facial_expression": face, "body_action": body}}
             for n, style, trait, emotion, face, body in scene["roles"]]
    dialogue = [{"turn": i, "speaker": who, "text": text,
                 "image": f"images/{scene['scene_id']}/turn{i:02d}_{who.lower()}.png"}
                for i, (who, _expression, text) in enumerate(scene["dialogue"])]
    return {"scene_id": scene["scene_id"], "source": scene["source"],
            "scene_description": scene["scene_description"], "dialogue_type": scene["dialogue_type"],
            "conflict_intensity": scene["conflict_intensity"],
            "group_image": f"images/{scene['scene_id']}/group.png", "roles": roles, "dialogue": dialogue,
            "results": _results(scene, rng)}


ANNOTATIONS = [
    # two annotators label each role's expression style and conflict trait; they disagree on a few
    ("flat-s01-e02-sc1", "ana", "AgentViSS expression style", "exaggeration", "Benedikt"),
    ("flat-s01-e02-sc1", "ben", "AgentViSS expression style", "exaggeration", "Benedikt"),
    ("flat-s01-e02-sc1", "ana", "AgentViSS expression style", "strategic concealment", "Yusra"),
    ("flat-s01-e02-sc1", "ben", "AgentViSS expression style", "honest", "Yusra"),
    ("flat-s01-e02-sc1", "ana", "AgentViSS conflict trait", "avoiding", "Benedikt"),
    ("flat-s01-e02-sc1", "ben", "AgentViSS conflict trait", "compromising", "Benedikt"),
    ("flat-s01-e05-sc3", "ana", "AgentViSS expression style", "deception", "Casimir"),
    ("flat-s01-e05-sc3", "ben", "AgentViSS expression style", "deception", "Casimir"),
    ("flat-s01-e05-sc3", "ana", "AgentViSS expression style", "suppression", "Yusra"),
    ("flat-s01-e05-sc3", "ben", "AgentViSS conflict trait", "accommodating", "Yusra"),
]

SYNTHETIC = """# Synthetic AgentViSS sample

Everything in this folder is invented for Thinslice and generated by `resources/sample_build/agentviss.py`
(run `resources/make_sample.py`): the flat-share characters (Odile, Benedikt, Yusra, Casimir), their scenes
and dialogue, the drawn faces, the two models ("Lantern-VL 9B", "Quire Vision 2") and every score. Nothing is
taken from the AgentViSS release or from any television series.

The files follow the shape Thinslice's AgentViSS preset expects (`resources/presets/agentviss_mapping.json`):
`data.json` ({"scenes": [...]}) and `train.jsonl` (the same scenes, one per line, nested values as JSON text),
and `images/<scene>/group.png` plus one portrait per dialogue turn. Scores are out of 10, four tasks
(Expr, Char, Int-Reg, Int-Out) per role, model and vision mode (VV, DV).
`annotations/thinslice_annotations.jsonl` holds two annotators' whole-scene labels (value = character).
"""


def build(out_dir: Path, seed: int = 7) -> None:
    """Write the AgentViSS sample into `out_dir` (same seed, same bytes)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    records = []
    for scene in SCENES:
        record = _scene_record(scene, rng)
        records.append(record)
        _save_png(group_image(scene), out_dir / record["group_image"])
        for turn, (who, expression, _text) in zip(record["dialogue"], scene["dialogue"]):
            _save_png(portrait(who, expression), out_dir / turn["image"])
    (out_dir / "data.json").write_text(json.dumps({"scenes": records}, ensure_ascii=False, indent=1) + "\n",
                                       encoding="utf-8")
    with (out_dir / "train.jsonl").open("w", encoding="utf-8") as fh:
        for record in records:
            flat = {k: (json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v)
                    for k, v in record.items()}
            fh.write(json.dumps(flat, ensure_ascii=False) + "\n")
    annotations = out_dir / "annotations" / "thinslice_annotations.jsonl"
    annotations.parent.mkdir(parents=True, exist_ok=True)
    with annotations.open("w", encoding="utf-8") as fh:
        for stimulus, annotator, label_set, label, character in ANNOTATIONS:
            fh.write(json.dumps({"stimulus": stimulus, "annotator": annotator, "label_set": label_set,
                                 "label": label, "start_s": None, "end_s": None, "value": character,
                                 "note": None, "media_role": None}) + "\n")
    (out_dir / "SYNTHETIC.md").write_text(SYNTHETIC, encoding="utf-8")


if __name__ == "__main__":
    import sys

    build(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "sample" / "agentviss")
