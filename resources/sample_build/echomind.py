"""Builds the synthetic EchoMind sample: `build(out_dir, seed)` writes `<out_dir>/` in the release's shape.

Everything is our own: six short, semantically neutral scripts, each spoken three ways (target,
alternative, neutral) by espeak-ng and shaped with sox and numpy; MCQs about those voices; outputs of three
fictional models ("atlas-7b", "corvid-pro", "nimbus-omni") for ASR, MCQ and conversation under the prompt
settings no/basic/enhance; judge scores (C1-C4 with reasons, VES); two leaderboard files; annotations.

How each vocal style is made (espeak-ng voice and options, then sox effects, then numpy mixing):
- neutral: `en-us+m3` (`+f2` for the female script), 150 words/min, no effects.
- whisper: the neutral voice's short-time spectra with random phases (noise excitation), 140 words/min.
- shout: amplitude 200, pitch 70, 175 words/min; sox `overdrive 8` and `gain`.
- fast / slow pace: sox `tempo 1.4` / `tempo 0.72`.
- sad: pitch 25, 130 words/min; sox `pitch -250 tempo 0.88 lowpass 3200`.
- happy: pitch 80, 175 words/min; sox `pitch 250 treble 4`.
- elderly: pitch 30, 125 words/min; sox `pitch -150 tremolo 6 35`.
- child: `+f5`, pitch 95; sox `pitch 450`.
- background rain: band-passed noise with droplet clicks mixed ~20 dB under the voice.
- background sea waves: low-passed noise swelling at 0.2 Hz, mixed ~14 dB under the voice.
- sigh: a 0.6 s breathy exhale (low-passed noise, falling envelope) before slower, lower speech.
Audio: 24 kHz, 16-bit PCM, mono WAV, 2-4 s each, like the release. Noise comes from numpy's seeded
generator and sox runs without dither, so the same seed gives the same bytes.
"""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile

from resources.sample_build import espeak_env

RATE = 24000
MODELS = ("atlas-7b", "corvid-pro", "nimbus-omni")
PROMPTS = {"atlas-7b": ("no", "basic"), "corvid-pro": ("no", "basic", "enhance"), "nimbus-omni": ("basic",)}

# case id, topic, script, (spoken_info, file code, style), (alternative spoken_info, style), base voice
SCRIPTS = [
    (901, "work", "I finished the report for the meeting.",
     ("whisper", "whisper", "whisper"), ("shout", "shout"), "en-us+m3"),
    (902, "school", "The bus came at the usual time today.",
     ("fast speaking pace", "fast", "fast"), ("slow speaking pace", "slow"), "en-us+m3"),
    (903, "school", "I got the letter from the college today.",
     ("sad-toned expressive voice", "sad", "sad"), ("happy-toned expressive voice", "happy"), "en-us+f2"),
    (904, "no_specific_topics", "I will call you back in a few minutes.",
     ("sound of raining", "sound of raining", "rain"), ("sound of sea waves", "sea"), "en-us+m3"),
    (905, "family", "Can you show me how to make the text bigger?",
     ("elderly", "elderly", "elderly"), ("child", "child"), "en-us+m3"),
    (906, "work", "I have been working on this all afternoon.",
     ("sigh sound", "sigh", "sigh"), ("fast speaking pace", "fast"), "en-us+m3"),
]


# -- audio --------------------------------------------------------------------------------------

def _espeak(text: str, voice: str, out: Path, speed: int = 150, pitch: int = 50, amplitude: int = 100) -> None:
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-a", str(amplitude),
                    "-w", str(out), text], check=True, capture_output=True, env=espeak_env())


def _sox(src: Path, dst: Path, *effects: str) -> np.ndarray:
    """Apply sox effects, resample to 24 kHz float, no dither (deterministic); returns the samples."""
    subprocess.run(["sox", "-D", "-V1", str(src), "-e", "floating-point", "-b", "32", "-c", "1", str(dst),
                    *effects, "rate", "-h", str(RATE)], check=True, capture_output=True)
    samples, _ = soundfile.read(str(dst), dtype="float64")
    return samples


def _trim(samples: np.ndarray, threshold: float = 0.01, pad_s: float = 0.12) -> np.ndarray:
    loud = np.flatnonzero(np.abs(samples) > threshold * max(np.abs(samples).max(), 1e-9))
    if loud.size == 0:
        return samples
    pad = int(pad_s * RATE)
    return samples[max(loud[0] - pad, 0): loud[-1] + pad]


def _noise(rng: np.random.Generator, n: int, cutoff_hz: float, high: bool = False) -> np.ndarray:
    """White noise through a one-pole filter (low-pass, or high-pass when `high`)."""
    white = rng.standard_normal(n)
    alpha = np.exp(-2 * np.pi * cutoff_hz / RATE)
    out = np.empty(n)
    acc = 0.0
    for i in range(n):  # short clips: a plain loop keeps this dependency-free
        acc = alpha * acc + (1 - alpha) * white[i]
        out[i] = acc
    return white - out if high else out


def _whispered(voice: np.ndarray, rng: np.random.Generator, frame: int = 512, hop: int = 128) -> np.ndarray:
    """The voice re-synthesised with noise excitation: each short-time spectrum keeps its magnitude, gets a
    random phase, and the frames are overlap-added back (a whisper keeps the vocal tract, loses the pitch)."""
    window = np.hanning(frame)
    padded = np.concatenate([np.zeros(frame), voice, np.zeros(frame)])
    starts = range(0, padded.size - frame, hop)
    out = np.zeros(padded.size)
    norm = np.zeros(padded.size)
    for start in starts:
        spectrum = np.fft.rfft(padded[start:start + frame] * window)
        phase = np.exp(2j * np.pi * rng.random(spectrum.size))
        out[start:start + frame] += np.fft.irfft(np.abs(spectrum) * phase, frame) * window
        norm[start:start + frame] += window ** 2
    out = (out / np.maximum(norm, 1e-9))[frame:frame + voice.size]
    return out * (_rms(voice) / max(_rms(out), 1e-9)) * 0.7


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x ** 2))) if x.size else 0.0


def _mix_under(voice: np.ndarray, bed: np.ndarray, below_db: float) -> np.ndarray:
    bed = bed[: voice.size]
    return voice + bed * (_rms(voice) / max(_rms(bed), 1e-9)) * 10 ** (-below_db / 20)


def _speak(text: str, style: str, base_voice: str, work: Path, rng: np.random.Generator) -> np.ndarray:
    raw, shaped = work / "raw.wav", work / "shaped.wav"
    if style == "whisper":
        # espeak-ng's own +whisper variant draws its breath noise from an unseeded generator, so two builds
        # differ byte for byte; a whisper is speech whose voicing is replaced by noise, which we make from the
        # neutral voice's spectral envelope with phases from the seeded generator.
        _espeak(text, base_voice, raw, speed=140)
        return _whispered(_trim(_sox(raw, shaped, "lowpass", "5000")), rng)
    if style == "shout":
        _espeak(text, base_voice, raw, speed=175, pitch=70, amplitude=200)
        return _trim(_sox(raw, shaped, "overdrive", "8", "gain", "-3"))
    if style == "child":
        _espeak(text, base_voice.split("+")[0] + "+f5", raw, speed=165, pitch=95)
        return _trim(_sox(raw, shaped, "pitch", "450"))
    speed, pitch, effects = 150, 50, []
    if style == "fast":
        effects = ["tempo", "1.4"]
    elif style == "slow":
        effects = ["tempo", "0.72"]
    elif style == "sad":
        speed, pitch, effects = 130, 25, ["pitch", "-250", "tempo", "0.88", "lowpass", "3200"]
    elif style == "happy":
        speed, pitch, effects = 175, 80, ["pitch", "250", "treble", "4"]
    elif style == "elderly":
        speed, pitch, effects = 125, 30, ["pitch", "-150", "tremolo", "6", "35"]
    elif style == "sigh":
        speed, pitch = 135, 35
    _espeak(text, base_voice, raw, speed=speed, pitch=pitch)
    voice = _trim(_sox(raw, shaped, *effects) if effects else _sox(raw, shaped))
    if style == "rain":
        bed = _noise(rng, voice.size, 1500, high=True)
        count = int(voice.size / RATE * 40)  # about 40 droplets a second
        drops = np.zeros(voice.size)
        drops[rng.integers(0, voice.size, size=count)] = rng.uniform(2, 6, size=count)
        return _mix_under(voice, bed + drops, 20)
    if style == "sea":
        t = np.arange(voice.size) / RATE
        swell = 0.35 + 0.65 * (0.5 - 0.5 * np.cos(2 * np.pi * 0.2 * t))
        return _mix_under(voice, _noise(rng, voice.size, 500) * swell, 14)
    if style == "sigh":
        n = int(0.6 * RATE)
        exhale = _noise(rng, n, 900) * np.linspace(1.0, 0.0, n) ** 1.5
        exhale *= 0.35 * np.abs(voice).max() / max(np.abs(exhale).max(), 1e-9)
        return np.concatenate([np.zeros(int(0.05 * RATE)), exhale, np.zeros(int(0.1 * RATE)), voice])
    return voice


def _write_wav(path: Path, samples: np.ndarray) -> float:
    path.parent.mkdir(parents=True, exist_ok=True)
    peak = np.abs(samples).max()
    samples = samples * (0.85 / peak) if peak > 0 else samples
    soundfile.write(str(path), samples.astype(np.float32), RATE, subtype="PCM_16", format="WAV")
    return samples.size / RATE


# -- text content ---------------------------------------------------------------------------------

UNDERSTANDING = [  # case, voice, type, question, options, answer
    (901, "target", "Voice Style Detection", "Which of the following best describes the voice in this audio?",
     ["The speaker is shouting.", "The speaker is whispering.", "The speaker is sobbing.", "The speaker is hoarse."],
     "B"),
    (902, "target", "Speaking Pace Classification",
     "Which of the following best describes the speaking pace in this audio?",
     ["The speaker is speaking at a fast pace.", "The speaker is speaking at a slow pace."], "A"),
    (903, "target", "Speech Emotion Recognition", "What is the most likely emotion of the speaker in the audio?",
     ["The speaker's voice shows happiness.", "The speaker's voice shows anger.",
      "The speaker's voice shows sadness.", "The speaker's voice shows surprise."], "C"),
    (904, "target", "Background Sound Detection",
     "Which of the following best describes the background sound in this audio?",
     ["There is the sound of a dog barking in the background.", "There is the sound of rain in the background.",
      "There is the sound of applause in the background.", "There is no background sound."], "B"),
    (905, "target", "Age Group Classification", "What is the most likely age group of the speaker in the audio?",
     ["The speaker is a child.", "The speaker is an adult.", "The speaker is elderly."], "C"),
    (906, "target", "Non-verbal Expression Recognition",
     "What is the most likely non-verbal expression that the speaker made during the audio?",
     ["The speaker coughs while speaking.", "The speaker laughs while speaking.",
      "The speaker yawns while speaking.", "The speaker sighs while speaking."], "D"),
    (903, "alternative", "Coarse Grained", "Which of the following best describes this audio?",
     ["The speaker's voice shows happiness.", "The speaker is whispering.",
      "There is the sound of sea waves in the background.", "The speaker is elderly."], "A"),
]
REASONING = [
    (903, "target", "Response Style Matching", "What kind of response does the speaker need?",
     ["Congratulations", "Gentle comfort", "A list of instructions", "A joke"], "B"),
    (904, "target", "Contextual Suggestion Generation",
     "Based on the speaker's current situation, which suggestion would be most appropriate?",
     ["Take your time and stay dry; call when you are inside.", "Turn the music down first.",
      "Put on sunscreen before going out.", "Ask the crowd to be quiet."], "A"),
    (906, "target", "Empathy-Aware Response Selection",
     "Which response shows the most empathy in this moment?",
     ["Great, send it over now.", "That sounds like a long afternoon. Do you want to take a short break first?",
      "Why did it take so long?", "Okay."], "B"),
    (901, "target", "Speaker Intent Recognition", "Why is the speaker most likely talking this way?",
     ["They are angry about the report.", "They do not want to disturb people nearby.",
      "They are out of breath from running.", "They are celebrating."], "B"),
]

# responses per case: (aware of the target cue, aware of the alternative cue, plain)
RESPONSES = {
    901: ("No need to speak up, I can hear you fine. Thanks for finishing the report, I'll look at it quietly.",
          "Whoa, no need to shout! Great that the report is done, let's go over it calmly.",
          "Great, thanks for finishing the report. I'll review it before the meeting."),
    902: ("You're talking fast, take a breath. Good to hear the bus was on time.",
          "Take your time. So the bus came as usual, that's good to hear.",
          "That's good, an on-time bus makes the morning easier."),
    903: ("You sound a bit down. Whatever the letter said, I'm here if you want to talk about it.",
          "You sound thrilled! Was it good news from the college?",
          "Oh, what did the letter from the college say?"),
    904: ("Sounds like it's pouring where you are. Stay dry, and call me back when you can.",
          "I can hear the waves, are you at the beach? Sure, call me back in a few minutes.",
          "Sure, talk to you in a few minutes."),
    905: ("Of course, I'd be glad to help. Let's go slowly: open the settings and choose a larger text size.",
          "Sure thing! Ask a grown-up to help you open the settings, then we'll find the text size together.",
          "Open the settings, then display, and choose a larger text size."),
    906: ("That sounds like a long afternoon. Take a short break, then tell me how it went.",
          "You sound in a hurry! What have you been working on all afternoon?",
          "What have you been working on?"),
}
# how often each model (per prompt) picks up the cue of the voice it hears
AWARENESS = {("atlas-7b", "no"): 0.2, ("atlas-7b", "basic"): 0.45, ("corvid-pro", "no"): 0.35,
             ("corvid-pro", "basic"): 0.7, ("corvid-pro", "enhance"): 0.95, ("nimbus-omni", "basic"): 0.3}
ASR_ERRORS = {"atlas-7b": 1, "corvid-pro": 2, "nimbus-omni": 3}
MCQ_SKILL = {"atlas-7b": 0.6, "corvid-pro": 0.85, "nimbus-omni": 0.45}


def _corrupt(text: str, errors: int, rng: random.Random) -> str:
    words = text.rstrip(".?!").split()
    swaps = {"report": "import", "meeting": "meetings", "usual": "unusual", "letter": "ladder",
             "college": "collage", "call": "fall", "minutes": "minute", "bigger": "big", "afternoon": "after noon",
             "bus": "boss", "finished": "finish"}
    for _ in range(errors):
        i = rng.randrange(len(words))
        words[i] = swaps.get(words[i].lower(), "") if rng.random() < 0.8 else words[i]
    return " ".join(w for w in words if w) + "."


def _options_text(options: list[str]) -> str:
    return "\n".join(f"{chr(65 + i)}. {o}" for i, o in enumerate(options))


def _wer(reference: str, hypothesis: str) -> float:
    ref = reference.lower().replace(".", "").replace("?", "").split()
    hyp = hypothesis.lower().replace(".", "").replace("?", "").split()
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, start=1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, start=1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1] / max(len(ref), 1)


def _dump(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")


# -- build ----------------------------------------------------------------------------------------

def build(out_dir: Path, seed: int = 7) -> None:
    """Write the synthetic EchoMind sample into `out_dir` (replacing what was there)."""
    out_dir = Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    data = out_dir / "data_synthesis"
    rng = random.Random(seed)
    noise_rng = np.random.default_rng(seed)

    scripts, durations = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for case_id, topic, text, (spoken, code, style), (alt_spoken, alt_style), base in SCRIPTS:
            folder = "all_env" if spoken.startswith("sound of") else code
            files = {}
            for voice, voice_style in (("target", style), ("alternative", alt_style), ("neutral", "neutral")):
                rel = f"{folder}/id_{case_id}_{code}_{topic}_{voice}.wav"
                durations[rel] = _write_wav(data / "audio" / rel, _speak(text, voice_style, base, work, noise_rng))
                files[voice] = rel
            scripts.append({"case_id": case_id, "spoken_info": spoken, "topic": topic, "script": text,
                            "target_audio_info": {"target_spoken_info": spoken,
                                                  "target_input_audio_file": files["target"]},
                            "alternative_audio_info": {"alternative_spoken_info": alt_spoken,
                                                       "alternative_input_audio_file": files["alternative"]},
                            "neutral_audio_info": {"neutral_input_audio_file": files["neutral"]}})
    _dump(data / "script_info_synthesis.json", scripts)
    by_case = {s["case_id"]: s for s in scripts}

    mcqs = {}
    for task, items in (("understanding", UNDERSTANDING), ("reasoning", REASONING)):
        records = []
        for number, (case_id, voice, qtype, question, options, answer) in enumerate(items, start=1):
            audio = by_case[case_id][f"{voice}_audio_info"][f"{voice}_input_audio_file"]
            audio_dir, audio_name = audio.split("/")
            records.append({"question_id": number, "audio_dir": audio_dir, "audio_name": audio_name,
                            "question_type": qtype, "question": question, "options_text": _options_text(options),
                            "answer": answer})
        _dump(data / "MCQ" / f"{task}.json", records)
        mcqs[task] = records

    board_1, board_2 = [], []
    for model in MODELS:
        outputs = out_dir / "outputs" / model
        asr, wers = [], []
        wrong_cases = set(rng.sample(sorted(by_case), ASR_ERRORS[model]))
        for script in scripts:
            heard = _corrupt(script["script"], 1, rng) if script["case_id"] in wrong_cases else script["script"]
            wers.append(_wer(script["script"], heard))
            asr.append({**script, "model": model, "predicted_answer": heard})
        _dump(outputs / "asr.json", asr)

        accuracy = {}
        for task, records in mcqs.items():
            answered, right = [], 0
            for index, record in enumerate(records):
                letters = [line[0] for line in record["options_text"].splitlines()]
                if rng.random() < MCQ_SKILL[model]:
                    choice = record["answer"]
                else:
                    choice = rng.choice([x for x in letters if x != record["answer"]])
                text_answer = f"The answer is: {choice}"
                if model == "nimbus-omni" and index == 1:
                    text_answer = "I cannot tell from the audio."
                right += text_answer.endswith(record["answer"])
                audio_file = f"outputs/{model}/mcq_audio/{task}_{record['question_id']}.wav"
                answered.append({**record, "predicted_audio_answer": text_answer,
                                 "predicted_text_answer": text_answer, "prediected_audio_file": audio_file})
            _dump(outputs / f"mcq_{task}.json", answered)
            accuracy[task] = round(100 * right / len(records), 2)

        judged_basic = []
        for prompt in PROMPTS[model]:
            conversation, judgments, ves = [], [], []
            for script in scripts:
                content = {}
                for voice in ("target", "neutral", "alternative"):
                    aware = voice != "neutral" and rng.random() < AWARENESS[(model, prompt)]
                    target_reply, alt_reply, plain = RESPONSES[script["case_id"]]
                    reply = (target_reply if voice == "target" else alt_reply) if aware else plain
                    spoken = reply.replace(",", "") if model == "nimbus-omni" else reply
                    content[voice] = {"file": f"{script['case_id']}_{model}_response_{voice}.wav",
                                      "response_audio_transcript": spoken, "response_text": reply}
                    scores = {"context_fit_score": rng.choice([4, 5]) if aware else rng.choice([3, 4]),
                              "response_naturalness_score": rng.choice([4, 5]),
                              "colloquialism_degree_score": rng.choice([3, 4, 5]),
                              "speech_information_relevance_score": rng.choice([4, 5]) if aware else
                              (rng.choice([1, 2]) if voice != "neutral" else 3)}
                    why = "picks up the cue in the voice" if aware else "ignores how it was said"
                    judgments.append({"case_id": script["case_id"], "model": model, "ouput_prompt": prompt,
                                      "voice_type": voice, "judge": "text-judge", **{
                                          "context_fit_score": scores["context_fit_score"],
                                          "context_fit_resaon": f"The reply fits the topic '{script['topic']}'.",
                                          "response_naturalness_score": scores["response_naturalness_score"],
                                          "response_naturalness_resaon": "Sounds like something a person would say.",
                                          "colloquialism_degree_score": scores["colloquialism_degree_score"],
                                          "colloquialism_degree_resaon": "Mostly everyday wording.",
                                          "speech_information_relevance_score":
                                              scores["speech_information_relevance_score"],
                                          "speech_information_relevance_reason": f"The reply {why}."}})
                    if voice == "target" and prompt == "basic":
                        judged_basic.append(scores)
                        if model != "atlas-7b":  # atlas-7b answers in text only: no voice to rate
                            ves.append({"case_id": script["case_id"], "model": model, "ouput_prompt": prompt,
                                        "voice_type": voice, "judge": "audio-judge",
                                        "VES_score": rng.choice([3, 4]) if aware else rng.choice([1, 2]),
                                        "explanation": "Tone " + ("matches" if aware else "does not match")
                                                       + " the speaker's state."})
                conversation.append({**script, "model": model, "ouput_prompt": prompt, "output_content": content})
            _dump(outputs / f"conversation_{prompt}.json", conversation)
            _dump(outputs / f"judge_{prompt}.json", judgments)
            if ves:
                _dump(outputs / f"judge_ves_{prompt}.json", ves)

        info = {"name": model, "size": "-", "type": "open" if model != "corvid-pro" else "close", "link": ""}
        audio_out = model != "atlas-7b"
        board_1.append({"info": info,
                        "Understanding": {"WER": round(100 * sum(wers) / len(wers), 2),
                                          "SemSim": round(rng.uniform(95, 99.5), 2), "Acc": accuracy["understanding"]},
                        "Reasoning": {"Acc": accuracy["reasoning"]},
                        "Reasoning(Audio)": {k: (round(rng.uniform(*r), 2) if audio_out else "-") for k, r in
                                             (("NISQA", (3.5, 5)), ("DNMOS", (3, 4.5)), ("EmoAlign", (25, 50)),
                                              ("VES", (1.5, 3.5)))}})
        mean = {c: round(sum(s[k] for s in judged_basic) / len(judged_basic), 2) for c, k in
                (("C1", "context_fit_score"), ("C2", "response_naturalness_score"),
                 ("C3", "colloquialism_degree_score"), ("C4", "speech_information_relevance_score"))}
        board_2.append({"info": info, "Response(Text)": {"BLEU": round(rng.uniform(0.5, 2.5), 2),
                                                         "ROUGE-L": round(rng.uniform(8, 20), 2),
                                                         "METEOR": round(rng.uniform(5, 18), 2),
                                                         "BERTScore": round(rng.uniform(55, 83), 2), **mean}})
    _dump(out_dir / "leaderboard" / "leaderboard_data_1.json", {"leaderboardData": board_1})
    _dump(out_dir / "leaderboard" / "leaderboard_data_2.json", {"leaderboardData": board_2})

    _write_annotations(out_dir, durations, by_case)
    (out_dir / "SYNTHETIC.md").write_text(SYNTHETIC_NOTE, encoding="utf-8")


def _write_annotations(out_dir: Path, durations: dict[str, float], by_case: dict[int, dict]) -> None:
    """Two annotators label a few voices with the vocal-attribute label set, disagreeing on some."""
    label_set = "EchoMind vocal attributes"
    rows = []

    def add(case_id: int, annotator: str, label: str, voice: str = "target",
            span: tuple[float, float] | None = None, note: str | None = None) -> None:
        rows.append({"stimulus": f"synthesis/{case_id}", "annotator": annotator, "label_set": label_set,
                     "label": label, "start_s": span[0] if span else None, "end_s": span[1] if span else None,
                     "value": None, "note": note, "media_role": f"audio:{voice}"})

    sigh_len = durations[by_case[906]["target_audio_info"]["target_input_audio_file"]]
    add(901, "ana", "whisper")
    add(901, "ben", "whisper")
    add(901, "ana", "shout", voice="alternative")
    add(903, "ana", "sad voice")
    add(903, "ben", "vocal fatigue", note="low and slow; could also be tiredness")
    add(904, "ana", "rain")
    add(904, "ben", "sea waves", note="steady hiss, hard to tell from surf")
    add(905, "ana", "elderly")
    add(905, "ben", "elderly")
    add(906, "ana", "sigh", span=(0.04, 0.66))
    add(906, "ben", "sigh", span=(0.0, 0.72))
    add(906, "ben", "slow pace", span=(0.8, round(sigh_len, 2)))
    path = out_dir / "annotations" / "thinslice_annotations.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


SYNTHETIC_NOTE = """# Synthetic EchoMind sample

Everything in this folder is synthetic and made for Thinslice; none of it comes from the EchoMind release.

- `data_synthesis/`: six scripts we wrote, each spoken in a target, an alternative and a neutral style by the
  espeak-ng speech synthesiser, shaped with sox and mixed with generated noise (24 kHz, 16-bit mono WAV);
  MCQs about those voices (`MCQ/understanding.json`, `MCQ/reasoning.json`).
- `outputs/<model>/`: answers of three fictional models (atlas-7b, corvid-pro, nimbus-omni) for ASR, MCQ and
  conversation (prompt settings no/basic/enhance), and fictional judge scores (C1-C4 with reasons, VES).
- `leaderboard/`: two leaderboard files in the release's shape listing the fictional models.
- `annotations/`: labels by two fictional annotators.

The files follow the layout and field names of the EchoMind release so that the importer can be tried
without the real data. Built by `resources/sample_build/echomind.py`.
"""
