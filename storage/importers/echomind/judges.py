"""Reading EchoMind judge scores (C1-C4 and VES, 1-5) and leaderboard tables."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from storage.importers.echomind.files import JUDGE_CRITERIA, SCALE_MAX, VES_REASON_KEYS, VOICES


class JudgeReading:
    """The part of the reader that reads judge scores and leaderboards (mixed into `EchoMindReader`)."""

    def read_judge_file(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> None:
        voice_value = record.get("voice_type", record.get("voice"))
        voice = voice_value if voice_value in VOICES else next((v for v in VOICES if v in ctx["tokens"]), None)
        if voice is None:
            self.log.add(ctx["file"], line, "voice_type", voice_value if voice_value is not None else "<missing>",
                         "target, neutral or alternative (in the record or the file name)")
            return
        stimulus, model = self.script_of(record, line, ctx), self.model_of(record, line, ctx)
        prompt = self.prompt_of(record, line, ctx)
        if stimulus and model and prompt:
            run = {"stimulus": stimulus, "model": model, "modality": f"conversation:{voice}",
                   "prompt_setting": prompt, "vision_mode": "", "context": ""}
            self.add_judgments(record, run, line, ctx["file"], "")

    def add_judgments(self, block: dict[str, Any], run: dict[str, Any], line: int, file: str, where: str) -> None:
        judge = next((block[k] for k in ("judge", "judge_model", "evaluator") if isinstance(block.get(k), str)), "")
        for criterion, base in [*JUDGE_CRITERIA.items(), ("VES", "VES")]:
            key = f"{base}_score"
            if key not in block:
                continue
            score = block[key]
            if isinstance(score, str):
                try:
                    score = float(score.strip())
                except ValueError:
                    pass
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= SCALE_MAX:
                self.log.add(file, line, where + key, score, f"a score from 1 to {SCALE_MAX:g}")
                continue
            reasons = (f"{base}_reason", f"{base}_resaon") if criterion != "VES" else VES_REASON_KEYS
            rationale = next((block[k] for k in reasons if isinstance(block.get(k), str)), None)
            self.judgments.append({**run, "judge": judge, "criterion": criterion, "score": float(score),
                                   "scale_max": SCALE_MAX, "rationale": rationale, "_file": file, "_line": line})

    def read_leaderboard(self, data: dict[str, Any], file: str) -> None:
        entries = data["leaderboardData"]
        if not isinstance(entries, list):
            self.log.add(file, None, "leaderboardData", f"<{type(entries).__name__}>", "a list of models")
            return
        source = Path(file).name
        seen: set[tuple[str, str, str]] = set()
        for number, entry in enumerate(entries, start=1):
            info = entry.get("info") if isinstance(entry, dict) else None
            name = info.get("name") if isinstance(info, dict) else None
            if not isinstance(name, str) or not name.strip():
                self.log.add(file, number, "info.name", name if isinstance(info, dict) else entry,
                             "each leaderboard entry to have info.name (record number shown)")
                continue
            for group, metrics in entry.items():
                if group == "info":
                    continue
                if not isinstance(metrics, dict):
                    self.log.add(file, number, group, metrics, "an object of metric -> value")
                    continue
                for metric, value in metrics.items():
                    row = {"model": name.strip(), "source": source, "metric_group": group, "metric": metric}
                    if (name.strip(), group, metric) in seen:
                        self.log.add(file, number, f"{group}.{metric}", name,
                                     "each model's metric once per leaderboard file")
                        continue
                    seen.add((name.strip(), group, metric))
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        self.aggregates.append({**row, "value": float(value), "value_text": None})
                    elif isinstance(value, str):
                        try:
                            self.aggregates.append({**row, "value": float(value), "value_text": None})
                        except ValueError:
                            self.aggregates.append({**row, "value": None, "value_text": value})
                    elif value is None:
                        self.aggregates.append({**row, "value": None, "value_text": None})
                    else:
                        self.log.add(file, number, f"{group}.{metric}", value, "a number or a text such as '-'")
