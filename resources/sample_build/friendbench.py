"""Builds the synthetic FriendBench sample: 8 dyad clips of 20 s in the release's layout.

Everything here is made up. Each clip is two people playing an Either-Or icebreaker ("Would you rather fly
or be invisible?"):
- speech: espeak-ng reading each word apart from the others (one call per speaker with long SSML breaks,
  cut at the breaks), so every word's start and end are known exactly from how the track was assembled;
  a different voice, pitch and speed per participant; band-limited to 5.5 kHz and resampled to 16 kHz with
  PyAV; familiar pairs overlap, banter and laugh more, strangers leave longer gaps and hedge;
- laughter: bursts of voiced "ha" pulses (harmonics with a formant-like tilt plus breath noise);
- each participant's microphone hears the other faintly (cross-talk), as in a real two-microphone recording;
- video: a drawn avatar per participant (160x120, 10 fps) whose mouth opens with its own voice's envelope,
  with the participant letter and clip id drawn in; H.264 with the participant's audio as AAC;
- per-participant FLAC (16 kHz mono; smaller than WAV), a transcript JSON with word times, human ratings
  from 30 raters per condition simulated with signal detection (d' rising text < audio < video, a bias
  towards "stranger"), four fictional models' raw outputs and parsed answers in three conditions,
  per-model aggregates, and two annotators' labels.

Layout written under `out_dir`:
  validation/data/metadata.csv, validation/ratings/{human_ratings,model_predictions}.csv,
  validation/baselines/results.csv, validation/media/<clip>/{A.mp4,B.mp4,A.flac,B.flac,transcript.json},
  annotations/thinslice_annotations.jsonl, SYNTHETIC.md
"""
from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import av
import numpy as np
import polars as pl
import soundfile as sf
from PIL import Image, ImageDraw, ImageFont

from app.metrics.signal import signal_detection_table
from resources.sample_build import espeak_env

RATE = 16_000
CLIP_S = 20.0
FPS = 10
WIDTH, HEIGHT = 160, 120
BLEED = 0.06            # how loud the partner is in one's own microphone
SKIN_TONES = [(241, 194, 160), (224, 172, 105), (198, 134, 66), (141, 85, 36), (255, 219, 172), (176, 120, 80)]

# clip id, truth, recording site, (gender A, gender B), relationship detail, early/late part of the session
CLIPS = [
    ("fb_001", "familiar", "V00", ("f", "f"), "friends", "early"),
    ("fb_002", "stranger", "V00", ("m", "f"), "stranger", "late"),
    ("fb_003", "familiar", "V00", ("f", "m"), "dating/spouse/romantic_partner", "late"),
    ("fb_004", "stranger", "V01", ("m", "m"), "stranger", "early"),
    ("fb_005", "familiar", "V01", ("m", "m"), "coworkers", "late"),
    ("fb_006", "stranger", "V01", ("f", "m"), "stranger", "early"),
    ("fb_007", "familiar", "V02", ("m", "f"), "siblings", "early"),
    ("fb_008", "stranger", "V02", ("f", "f"), "stranger", "late"),
]
VOICES = {"f": ["en-us+f2", "en-gb+f3", "en-us+f4", "en+f5", "en-us+f1"],
          "m": ["en-us+m3", "en-gb+m1", "en-us+m7", "en+m2", "en-gb+m4"]}

# (question, short topic, two answers)
QUESTIONS = [
    ("Would you rather fly or be invisible?", "flying or invisibility",
     ["Fly, for sure. I would never sit in traffic again.", "Invisible. I want to hear what people really say."]),
    ("Coffee or tea in the morning?", "coffee or tea",
     ["Coffee, black, two cups.", "Tea, with a lot of honey."]),
    ("Beach holiday or a cabin in the mountains?", "beach or mountains",
     ["The mountains. I like cold air and a fire.", "Beach, I just want to lie in the sun."]),
    ("Would you rather read the book or watch the movie?", "book or movie",
     ["The book, the movie always cuts the best parts.", "Movie, I fall asleep when I read."]),
    ("Cats or dogs?", "cats or dogs", ["Dogs, they are always happy to see you.", "Cats. They leave you alone."]),
    ("Sunrise or sunset?", "sunrise or sunset", ["Sunset, I am not a morning person.", "Sunrise, it is so quiet."]),
    ("Would you rather cook dinner or wash the dishes?", "cooking or dishes",
     ["Cook, washing up is the worst.", "Dishes. Nobody wants to eat what I cook."]),
    ("City life or the countryside?", "city or countryside",
     ["City, I need noise around me.", "Countryside, with chickens and a big garden."]),
    ("Would you rather travel to the past or the future?", "past or future",
     ["The future, I want to see flying cars.", "The past, to meet my grandparents young."]),
    ("Summer or winter?", "summer or winter", ["Winter, because of the snow.", "Summer, long evenings outside."]),
]
FAMILIAR_TAGS = ["You always say that!", "Of course you would.", "I knew you would pick that.",
                 "Remember our trip last year?", "That is so you."]
STRANGER_TAGS = ["Hmm, good question.", "Oh, interesting.", "That makes sense.", "I guess I see that.",
                 "Okay, fair enough."]
BACKCHANNELS = ["yeah", "mm hmm", "right", "oh nice", "totally"]

MODELS = [  # name, fictional organisation, per condition (d', criterion c > 0 = leans stranger)
    ("atlas-7b", "Atlasworks", {"text": (0.2, 0.6), "audio": (0.3, 0.5), "video": (0.4, 0.5)}),
    ("corvid-pro", "Corvid Systems", {"text": (0.6, 0.2), "audio": (0.9, 0.1), "video": (1.3, 0.0)}),
    ("mistle-mini", "Mistle Lab", {"text": (0.1, -0.4), "audio": (0.2, -0.3), "video": (0.2, -0.2)}),
    ("nimbus-omni", "Nimbus Works", {"text": (0.5, 0.3), "audio": (1.2, 0.2), "video": (1.0, 0.1)}),
]
HUMAN_DPRIME = {"text": 0.45, "audio": 0.6, "video": 0.75}
RATERS_PER_CONDITION = 30


@dataclass
class Word:
    word: str
    start: float
    end: float


@dataclass
class Utterance:
    speaker: str
    start: float
    end: float
    words: list[Word]


@dataclass
class Track:
    """One participant's voice (without cross-talk) and what it said."""

    voice: np.ndarray = field(default_factory=lambda: np.zeros(int(CLIP_S * RATE), dtype=np.float32))
    utterances: list[Utterance] = field(default_factory=list)
    laughs: list[tuple[float, float]] = field(default_factory=list)


# -- speech -----------------------------------------------------------------------------------------------

class Speaker:
    """espeak-ng with one voice, pitch and speed; each word is synthesised once and cached.

    Words are read in one espeak-ng call with long SSML breaks between them and cut apart at those
    silences; if the cut does not give one piece per word, each word is synthesised on its own.
    """

    BREAK_S = 0.7

    def __init__(self, voice: str, pitch: int, speed: int) -> None:
        self.args = ["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "--stdout"]
        self.cache: dict[str, np.ndarray] = {}

    def prepare(self, words: set[str]) -> None:
        todo = sorted(w for w in words if w not in self.cache)
        if not todo:
            return
        ssml = "<speak>" + f' <break time="{int(self.BREAK_S * 1000)}ms"/> '.join(todo) + "</speak>"
        pieces = self._split(self._run(["-m", ssml]), len(todo))
        if pieces is None:
            pieces = [self._trim(self._run([word])) for word in todo]
        self.cache.update(zip(todo, pieces))

    def word(self, word: str) -> np.ndarray:
        return self.cache[_spoken(word)]

    def _run(self, extra: list[str]) -> np.ndarray:
        wav = subprocess.run([*self.args, *extra], check=True, capture_output=True, env=espeak_env()).stdout
        samples, rate = sf.read(io.BytesIO(wav), dtype="float32")
        # through 11.025 kHz first: a 5.5 kHz band keeps speech clear and the FLAC files small
        return _resample(_resample(samples, rate, 11_025), 11_025)

    @staticmethod
    def _loud(samples: np.ndarray) -> np.ndarray:
        return np.flatnonzero(np.abs(samples) > 0.02 * max(1e-6, float(np.abs(samples).max())))

    def _trim(self, samples: np.ndarray) -> np.ndarray:
        loud = self._loud(samples)
        return samples[max(0, loud[0] - 80): loud[-1] + 160] if loud.size else samples

    def _split(self, samples: np.ndarray, count: int) -> list[np.ndarray] | None:
        loud = self._loud(samples)
        if not loud.size:
            return None
        cuts = np.flatnonzero(np.diff(loud) > int(0.5 * self.BREAK_S * RATE))
        if len(cuts) + 1 != count:
            return None
        starts = np.concatenate([[loud[0]], loud[cuts + 1]])
        ends = np.concatenate([loud[cuts], [loud[-1]]])
        return [samples[max(0, a - 80): b + 160].copy() for a, b in zip(starts, ends)]


def _spoken(word: str) -> str:
    return "".join(ch for ch in word.lower() if ch.isalnum() or ch == "'") or word


def _resample(samples: np.ndarray, rate: int, target: int = RATE) -> np.ndarray:
    resampler = av.AudioResampler(format="flt", layout="mono", rate=target)
    frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="flt", layout="mono")
    frame.sample_rate = rate
    out = [f.to_ndarray().reshape(-1) for f in resampler.resample(frame)]
    out += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]
    return np.concatenate(out).astype(np.float32) if out else np.zeros(0, np.float32)


def laugh(rng: np.random.Generator, f0: float) -> np.ndarray:
    """A burst of 3-6 voiced 'ha' pulses with breath noise, falling in pitch."""
    pulses = int(rng.integers(3, 7))
    pieces = []
    for i in range(pulses):
        length = int(RATE * rng.uniform(0.09, 0.13))
        t = np.arange(length) / RATE
        pitch = f0 * (1.25 - 0.06 * i)
        voiced = sum(np.sin(2 * np.pi * k * pitch * t) / k * (1.6 if 500 < k * pitch < 1400 else 1.0)
                     for k in range(1, 12))
        breath = rng.normal(0, 0.35, length)
        envelope = np.sin(np.pi * np.arange(length) / length) ** 2
        pieces.append(((0.12 * voiced + 0.05 * breath) * envelope).astype(np.float32))
        pieces.append(np.zeros(int(RATE * rng.uniform(0.07, 0.11)), np.float32))
    return np.concatenate(pieces)


def _place(track: np.ndarray, samples: np.ndarray, at: float) -> float:
    """Add `samples` at time `at` (clipped to the clip); returns the end time."""
    start = int(round(at * RATE))
    end = min(len(track), start + len(samples))
    if end > start:
        track[start:end] += samples[: end - start]
    return at + len(samples) / RATE


def say(track: Track, speaker: Speaker, name: str, text: str, at: float, gap: float) -> float:
    """Speak `text` word by word from `at`, recording each word's time; returns the end time."""
    words, t = [], at
    for word in text.split():
        samples = speaker.word(word)
        end = _place(track.voice, samples, t)
        words.append(Word(word, round(t, 3), round(end, 3)))
        t = end + gap
    track.utterances.append(Utterance(name, words[0].start, words[-1].end, words))
    return words[-1].end


# -- one conversation -----------------------------------------------------------------------------------

@dataclass
class Conversation:
    tracks: dict[str, Track]
    topic: str
    overlaps: list[tuple[float, float]]
    backchannels: list[tuple[str, float, float]]
    hesitations: list[tuple[str, float, float]]


def script(rng: np.random.Generator, familiar: bool) -> list[tuple[str, str, str]]:
    """Turns as (kind, speaker, text): questions, answers, tags, alternating askers."""
    order = rng.permutation(len(QUESTIONS))
    turns, asker = [], "A"
    for qi in order[:6]:
        question, _topic, answers = QUESTIONS[qi]
        other = "B" if asker == "A" else "A"
        answer = answers[int(rng.integers(0, 2))]
        if not familiar and rng.random() < 0.5:
            answer = "Hmm, " + answer[0].lower() + answer[1:]
        turns += [("question", asker, question), ("answer", other, answer)]
        if rng.random() < 0.6:
            turns.append(("tag", asker, str(rng.choice(FAMILIAR_TAGS if familiar else STRANGER_TAGS))))
        asker = other
    return turns


def converse(rng: np.random.Generator, familiar: bool, speakers: dict[str, Speaker],
             f0: dict[str, float]) -> Conversation:
    turns = script(rng, familiar)
    for name, speaker in speakers.items():
        needed = {_spoken(w) for kind, who, text in turns if who == name for w in text.split()}
        speaker.prepare(needed | {_spoken(w) for b in BACKCHANNELS for w in b.split()})
    tracks = {"A": Track(), "B": Track()}
    overlaps, backchannels, hesitations = [], [], []
    t = float(rng.uniform(0.2, 0.6))
    topic = next(q[1] for q in QUESTIONS if q[0] == turns[0][2])
    previous_end = 0.0
    for kind, who, text in turns:
        other = "B" if who == "A" else "A"
        gap = rng.uniform(-0.45, 0.1) if familiar else rng.uniform(0.25, 0.8)
        start = max(0.05, previous_end + gap) if previous_end else t
        words = text.split()
        length = sum(len(speakers[who].word(w)) / RATE + 0.05 for w in words)
        if start + length > CLIP_S - 0.3:
            break
        if start < previous_end:
            overlaps.append((round(start, 3), round(previous_end, 3)))
        end = say(tracks[who], speakers[who], who, text, start, gap=float(rng.uniform(0.03, 0.07)))
        if text.startswith("Hmm"):
            first = tracks[who].utterances[-1].words[0]
            hesitations.append((who, first.start, first.end))
        # the listener backchannels during an answer, familiar pairs more often
        if kind == "answer" and rng.random() < (0.6 if familiar else 0.3) and end - start > 1.2:
            at = start + (end - start) * float(rng.uniform(0.4, 0.7))
            bc_end = say(tracks[other], speakers[other], other, str(rng.choice(BACKCHANNELS)), at, gap=0.03)
            backchannels.append((other, round(at, 3), round(bc_end, 3)))
        # laughter after an answer: both (shared laughter) for familiar pairs, sometimes one for strangers
        if kind in ("answer", "tag") and rng.random() < (0.55 if familiar else 0.2):
            laughers = ["A", "B"] if familiar and rng.random() < 0.6 else [str(rng.choice(["A", "B"]))]
            for person in laughers:
                at = end + float(rng.uniform(-0.2, 0.25))
                burst = laugh(rng, f0[person])
                laugh_end = min(CLIP_S, _place(tracks[person].voice, burst, at))
                tracks[person].laughs.append((round(at, 3), round(laugh_end, 3)))
                # the next turn starts as the laughter fades
                end = max(end, laugh_end - 0.2)
        previous_end = end
    return Conversation(tracks, topic, overlaps, backchannels, hesitations)


# -- video ------------------------------------------------------------------------------------------------

def envelope(voice: np.ndarray) -> np.ndarray:
    """Mouth opening 0..1 per video frame from the voice's loudness around the frame time."""
    frames = int(CLIP_S * FPS)
    hop = RATE // FPS
    levels = np.array([np.sqrt(np.mean(voice[max(0, i * hop - hop // 2): i * hop + hop // 2] ** 2) + 1e-12)
                       for i in range(frames)])
    top = max(1e-6, float(np.quantile(levels, 0.95)))
    return np.clip(levels / top, 0.0, 1.0)


@lru_cache(maxsize=1)
def _font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=11)


def draw_frame(index: int, letter: str, clip: str, look: dict, mouth: float, laughing: bool) -> np.ndarray:
    image = Image.new("RGB", (WIDTH, HEIGHT), look["background"])
    d = ImageDraw.Draw(image)
    bob = int(round(2 * np.sin(index / FPS * 2 * np.pi * 0.4 + look["phase"])))
    cx, cy = WIDTH // 2, HEIGHT // 2 + 6 + bob
    d.rectangle([cx - 34, cy + 28, cx + 34, HEIGHT], fill=look["shirt"])
    d.ellipse([cx - 28, cy - 36, cx + 28, cy + 30], fill=look["skin"])
    d.chord([cx - 30, cy - 42, cx + 30, cy + 6], 180, 360, fill=look["hair"])
    blink = (index + look["blink_offset"]) % look["blink_every"] == 0
    for ex in (cx - 11, cx + 11):
        if blink or laughing:
            d.line([ex - 5, cy - 4, ex + 5, cy - 4], fill=(30, 30, 30), width=2)
        else:
            d.ellipse([ex - 4, cy - 8, ex + 4, cy], fill=(255, 255, 255))
            d.ellipse([ex - 2, cy - 6, ex + 2, cy - 2], fill=(30, 30, 30))
    opening = 1 + int(round(12 * mouth))
    d.ellipse([cx - 9, cy + 12 - opening // 2, cx + 9, cy + 12 + opening // 2 + 1], fill=(120, 30, 40))
    font = _font()
    d.rectangle([2, 2, 16, 16], fill=(0, 0, 0))
    d.text((5, 3), letter, fill=(255, 255, 255), font=font)
    d.text((WIDTH - 46, HEIGHT - 14), clip, fill=(255, 255, 255), font=font)
    return np.asarray(image)


def write_video(path: Path, letter: str, clip: str, look: dict, own: np.ndarray, mic: np.ndarray,
                laughs: list[tuple[float, float]]) -> None:
    mouth = envelope(own)
    with av.open(str(path), "w", options={"fflags": "+bitexact"}) as container:
        video = container.add_stream("libx264", rate=FPS)
        video.width, video.height, video.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        video.options = {"preset": "medium", "crf": "30", "g": str(2 * FPS), "threads": "1"}
        audio = container.add_stream("aac", rate=RATE, layout="mono")
        audio.bit_rate = 16_000
        for i in range(int(CLIP_S * FPS)):
            t = i / FPS
            laughing = any(s <= t <= e for s, e in laughs)
            frame = av.VideoFrame.from_ndarray(draw_frame(i, letter, clip, look, float(mouth[i]), laughing),
                                               format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, FPS)
            for packet in video.encode(frame):
                container.mux(packet)
        for packet in video.encode():
            container.mux(packet)
        for start in range(0, len(mic), 1024):
            chunk = mic[start: start + 1024].reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="mono")
            frame.sample_rate, frame.pts, frame.time_base = RATE, start, Fraction(1, RATE)
            for packet in audio.encode(frame):
                container.mux(packet)
        for packet in audio.encode():
            container.mux(packet)


# -- tables -----------------------------------------------------------------------------------------------

def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def _responds_familiar(rng: np.random.Generator, truth: str, dprime: float, criterion: float,
                       ease: float) -> bool:
    mean = (dprime / 2 + ease) * (1 if truth == "familiar" else -1)
    return bool(rng.normal(mean, 1.0) > criterion)


def human_ratings(rng: np.random.Generator, truths: dict[str, str], ease: dict[str, float]) -> list[list]:
    rows = []
    for condition, prefix in (("text", "T"), ("audio", "A"), ("video", "V")):
        for r in range(1, RATERS_PER_CONDITION + 1):
            dprime = max(0.0, rng.normal(HUMAN_DPRIME[condition], 0.35))
            criterion = rng.normal(0.45, 0.25)
            for clip, truth in truths.items():
                familiar = _responds_familiar(rng, truth, dprime, criterion, ease[clip])
                rt = float(np.exp(rng.normal(np.log(4.0 if condition == "text" else 3.0), 0.45)))
                rows.append([f"{prefix}{r:02d}", clip, condition, "familiar" if familiar else "stranger",
                             f"{rt:.2f}"])
    return rows


def _raw_output(rng: np.random.Generator, answer: str | None, condition: str) -> str:
    if answer is None:
        return str(rng.choice(["I can't determine their relationship from this clip.",
                               "There is not enough information to decide."]))
    cue = {"text": "the transcript", "audio": "their voices", "video": "the clip"}[condition]
    why = {"familiar": ["they tease each other and laugh together", "they finish each other's sentences",
                        "the turns overlap easily"],
           "stranger": ["the turn-taking is polite and careful", "there are long pauses between turns",
                        "they hedge and ask generic questions"]}[answer]
    style = int(rng.integers(0, 4))
    reason = str(rng.choice(why))
    if style == 0:
        return f"Answer: {answer}. In {cue}, {reason}."
    if style == 1:
        return json.dumps({"answer": answer, "confidence": round(float(rng.uniform(0.5, 0.95)), 2)})
    if style == 2:
        plural = "friends" if answer == "familiar" else "strangers"
        return f"Judging from {cue}, {reason}, so I think they are {plural}."
    return answer


def predictions(rng: np.random.Generator, truths: dict[str, str], ease: dict[str, float]) -> list[list]:
    rows = []
    for model, organisation, conditions in MODELS:
        for condition, (dprime, criterion) in conditions.items():
            for clip, truth in truths.items():
                answer: str | None = "familiar" if _responds_familiar(rng, truth, dprime, criterion,
                                                                     ease[clip]) else "stranger"
                if rng.random() < 0.05:
                    answer = None
                latency = float(np.exp(rng.normal(np.log({"text": 900, "audio": 2600, "video": 4200}[condition]),
                                                  0.3)))
                rows.append([model, organisation, clip, condition, _raw_output(rng, answer, condition),
                             answer or "", f"{latency:.0f}"])
    return rows


def results(rows: list[list], truths: dict[str, str]) -> list[list]:
    """Accuracy and signal detection per model and condition, counted by the rule Thinslice's dashboard
    states (`signal_detection_table`: signal = familiar, log-linear correction; an output that is neither
    label counts as wrong for accuracy and is left out of H and F), so the published figures and the
    recomputed ones agree."""
    answers = pl.DataFrame({"model": [r[0] for r in rows], "modality": [r[3] for r in rows],
                            "answer": [r[5] for r in rows], "ground_truth": [truths[r[2]] for r in rows]})
    table = {(row["model"], row["modality"]): row
             for row in signal_detection_table(answers, ["model", "modality"]).iter_rows(named=True)}
    out = []
    for model, _org, _conditions in MODELS:
        for condition in ("text", "audio", "video"):
            row = table[(model, condition)]
            # + 0.0 writes a negative zero as 0.0000
            out.append([model, condition, row["n"]] + [f"{row[name] + 0.0:.4f}" for name in
                        ("accuracy", "hit_rate", "false_alarm_rate", "d_prime", "criterion")])
    return out


def annotations(conversations: dict[str, Conversation], truths: dict[str, str],
                rng: np.random.Generator) -> list[dict]:
    """Two annotators: whole-clip familiarity guesses (some disagreeing) and vocal-cue time ranges."""
    rows = []
    clips = list(conversations)
    for annotator, jitter, keep in (("ana", 0.05, 1.0), ("ben", 0.15, 0.7)):
        for i, clip in enumerate(clips):
            if i % 4 != (1 if annotator == "ben" else 3):
                guess = truths[clip] if rng.random() < 0.7 else ("stranger" if truths[clip] == "familiar"
                                                                   else "familiar")
                rows.append(_annotation(clip, annotator, "familiarity", guess, None, None, None))
            conv = conversations[clip]
            cues = [("laugh", who, s, e) for who, tr in conv.tracks.items() for s, e in tr.laughs]
            cues += [("overlap", None, s, e) for s, e in conv.overlaps]
            cues += [("backchannel", who, s, e) for who, s, e in conv.backchannels]
            cues += [("hesitation", who, s, e) for who, s, e in conv.hesitations]
            for label, who, start, end in sorted(cues, key=lambda c: (c[2], c[0])):
                if rng.random() > keep:
                    continue
                s = max(0.0, start + float(rng.normal(0, jitter)))
                e = min(CLIP_S, max(s + 0.05, end + float(rng.normal(0, jitter))))
                rows.append(_annotation(clip, annotator, "vocal cues", label, round(s, 2), round(e, 2),
                                        f"audio:{who}" if who else None))
    return rows


def _annotation(clip, annotator, label_set, label, start, end, role) -> dict:
    return {"stimulus": clip, "annotator": annotator, "label_set": label_set, "label": label, "start_s": start,
            "end_s": end, "value": None, "note": None, "media_role": role}


SYNTHETIC_NOTE = """# Synthetic FriendBench sample

Everything in this folder is synthetic and made for Thinslice; none of it comes from FriendBench or
Seamless Interaction. The files follow the shape of the FriendBench release (`validation/data`,
`validation/ratings`, `validation/baselines`, media per clip) so the app can be tried without the real data.

- 8 dyad clips of 20 s (familiar and stranger pairs, 3 recording sites V00-V02, same and mixed gender).
  Speech is espeak-ng reading Either-Or icebreaker lines written for this sample, one word at a time, so
  transcript word times are exact; laughter is synthesised noise and tones; faces are drawn avatars.
- Source interaction ids, clip start times, raters, models (atlas-7b, corvid-pro, mistle-mini,
  nimbus-omni) and their organisations are invented. Ratings and predictions are simulated with signal
  detection (humans: 30 raters per condition, a bias towards answering "stranger").
- `validation/baselines/results.csv` is computed from the simulated predictions by the rule Thinslice's
  dashboard states: signal = familiar, log-linear correction (k + 0.5) / (n + 1); an output that is
  neither label counts as wrong for accuracy and is left out of the hit and false-alarm rates (so of d'
  and c); n_items counts every item.
- `annotations/thinslice_annotations.jsonl` holds two invented annotators' labels.

Regenerate with `resources/sample_build/friendbench.py` (`build(out_dir, seed=7)`).
"""


def build(out_dir: Path, seed: int = 7) -> None:
    """Write the synthetic FriendBench sample into `out_dir` (replacing it); same seed, same files."""
    out_dir = Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    media_root = out_dir / "validation" / "media"
    rng = np.random.default_rng(seed)
    truths, ease, conversations, metadata = {}, {}, {}, []
    for number, (clip, truth, site, genders, detail, part) in enumerate(CLIPS):
        clip_rng = np.random.default_rng([seed, number])
        voices = {}
        for letter, gender in zip("AB", genders):
            pool = VOICES[gender]
            voices[letter] = pool[(number * 2 + (letter == "B")) % len(pool)]
        if voices["A"] == voices["B"]:
            voices["B"] = VOICES[genders[1]][(VOICES[genders[1]].index(voices["B"]) + 1) % 5]
        speakers = {letter: Speaker(voices[letter], int(clip_rng.integers(35, 70)), int(clip_rng.integers(150, 180)))
                    for letter in "AB"}
        f0 = {letter: (250.0 if g == "f" else 140.0) * float(clip_rng.uniform(0.9, 1.1))
              for letter, g in zip("AB", genders)}
        conv = converse(clip_rng, truth == "familiar", speakers, f0)
        conversations[clip], truths[clip] = conv, truth
        ease[clip] = float(clip_rng.normal(0.0, 0.3))
        folder = media_root / clip
        folder.mkdir(parents=True, exist_ok=True)
        for letter in "AB":
            other = "B" if letter == "A" else "A"
            mic = conv.tracks[letter].voice + BLEED * conv.tracks[other].voice
            mic = (0.35 * mic / max(1e-6, float(np.abs(mic).max()))).astype(np.float32)
            sf.write(str(folder / f"{letter}.flac"), mic, RATE, subtype="PCM_16", compression_level=1.0)
            look = {"background": tuple(int(c) for c in clip_rng.integers(40, 120, 3)),
                    "skin": SKIN_TONES[int(clip_rng.integers(0, len(SKIN_TONES)))],
                    "hair": tuple(int(c) for c in clip_rng.integers(10, 110, 3)),
                    "shirt": tuple(int(c) for c in clip_rng.integers(30, 230, 3)),
                    "phase": float(clip_rng.uniform(0, 6.28)), "blink_every": int(clip_rng.integers(28, 45)),
                    "blink_offset": int(clip_rng.integers(0, 20))}
            write_video(folder / f"{letter}.mp4", letter, clip, look, conv.tracks[letter].voice, mic,
                        conv.tracks[letter].laughs)
        segments = sorted((u for tr in conv.tracks.values() for u in tr.utterances), key=lambda u: (u.start, u.speaker))
        transcript = {"clip_id": clip, "duration_s": CLIP_S, "segments": [
            {"speaker": u.speaker, "start": u.start, "end": u.end, "transcript": " ".join(w.word for w in u.words),
             "words": [{"word": w.word, "start": w.start, "end": w.end} for w in u.words]} for u in segments]}
        (folder / "transcript.json").write_text(json.dumps(transcript, indent=1) + "\n", encoding="utf-8")
        start = float(clip_rng.uniform(30, 90) if part == "early" else clip_rng.uniform(400, 600))
        rel = f"validation/media/{clip}"
        metadata.append([clip, truth, site, "same" if genders[0] == genders[1] else "mixed", part, detail,
                         conv.topic, f"{site}_S9{number:03d}_I9000{number:04d}", f"{start:.2f}",
                         f"{start + CLIP_S:.2f}", f"{rel}/A.mp4", f"{rel}/B.mp4", f"{rel}/A.flac", f"{rel}/B.flac",
                         f"{rel}/transcript.json"])
    validation = out_dir / "validation"
    _write_csv(validation / "data" / "metadata.csv",
               ["clip_id", "label", "vendor", "gender_composition", "part", "relationship_detail", "topic",
                "source_interaction", "clip_start_s", "clip_end_s", "video_a", "video_b", "audio_a", "audio_b",
                "transcript"], metadata)
    _write_csv(validation / "ratings" / "human_ratings.csv", ["rater_id", "clip_id", "condition", "response", "rt_s"],
               human_ratings(rng, truths, ease))
    model_rows = predictions(rng, truths, ease)
    _write_csv(validation / "ratings" / "model_predictions.csv",
               ["model", "provider", "clip_id", "modality", "raw_output", "parsed_answer", "latency_ms"], model_rows)
    _write_csv(validation / "baselines" / "results.csv",
               ["model", "modality", "n_items", "accuracy", "hit_rate", "false_alarm_rate", "d_prime", "c"],
               results(model_rows, truths))
    notes = out_dir / "annotations"
    notes.mkdir(parents=True, exist_ok=True)
    with (notes / "thinslice_annotations.jsonl").open("w", encoding="utf-8") as fh:
        for row in annotations(conversations, truths, rng):
            fh.write(json.dumps(row, sort_keys=True) + "\n")
    (out_dir / "SYNTHETIC.md").write_text(SYNTHETIC_NOTE, encoding="utf-8")


if __name__ == "__main__":
    build(Path(__file__).resolve().parents[1] / "sample" / "friendbench")
