"""Reading EchoMind model outputs: ASR transcripts, MCQ answers and conversation replies, recognised by content."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from storage.importers.common import check_cancel, dumps
from storage.importers.echomind.files import (JUDGE_SCORE_KEYS, KEY_FIELDS, MCQ_TASKS, PROMPTS, STRUCTURAL_FOLDERS,
                                              VOICES, case_key, id_text, parse_options, path_tokens, read_records)


class OutputReading:
    """The part of the reader that reads model output files (mixed into `EchoMindReader`)."""

    def read_output_file(self, path: Path) -> None:
        file = self.rel(path)
        data, lines = read_records(path, file)
        if isinstance(data, dict) and "leaderboardData" in data:
            self.read_leaderboard(data, file)
            return
        if not isinstance(data, list) or not data:
            self.notes.append(f"{file}: skipped (not an EchoMind output list)")
            return
        keys = {k for r in data[:5] if isinstance(r, dict) for k in r}
        answer_field = self.options.mapping.get("answer", "predicted_answer")
        if keys & set(JUDGE_SCORE_KEYS):
            kind = "judge"
        elif "output_content" in keys:
            kind = "conversation"
        elif "question_id" in keys and keys & {"predicted_text_answer", "predicted_audio_answer"}:
            kind = "mcq"
        elif answer_field in keys:
            kind = "asr"
            self.mapping["answer"] = answer_field
        else:
            self.notes.append(f"{file}: skipped (no EchoMind output fields in it)")
            return
        rel_parts = list(path.relative_to(self.root).parts) if path.is_relative_to(self.root) else [path.name]
        folder_model = next((p for p in rel_parts[:-1] if not STRUCTURAL_FOLDERS.match(p)), None)
        tokens = path_tokens(rel_parts)
        data_type = next((t for t in ("human", "synthesis") if t in tokens), None)
        if data_type is None:
            data_type = self.data_types[0] if len(self.data_types) == 1 else "synthesis"
        context = {"file": file, "tokens": tokens, "folder_model": folder_model, "data_type": data_type,
                   "path": path, "parts": rel_parts}
        handler = {"asr": self.read_asr, "mcq": self.read_mcq_answers, "conversation": self.read_conversation,
                   "judge": self.read_judge_file}[kind]
        for line, record in zip(lines, data):
            check_cancel(self.options)
            if not isinstance(record, dict):
                self.log.add(file, line, None, f"<{type(record).__name__}>", "a JSON object per record")
                continue
            handler(record, line, context)

    def model_of(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> str | None:
        field = self.options.mapping.get("model", "model")
        value = record.get(field)
        if isinstance(value, str) and value.strip():
            self.mapping.setdefault("model", field)
            return value.strip()
        if value is not None and not isinstance(value, str):
            self.log.add(ctx["file"], line, field, value, "the model name as a string")
            return None
        if ctx["folder_model"]:
            self.mapping.setdefault("model", "<folder below outputs/>")
            return ctx["folder_model"]
        self.log.add(ctx["file"], line, field, "<missing>",
                     "a model name: a 'model' field, or the file placed in outputs/<model>/")
        return None

    def prompt_of(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> str | None:
        fields = [self.options.mapping["prompt"]] if "prompt" in self.options.mapping else \
            ["ouput_prompt", "output_prompt", "prompt", "system_prompt"]
        for field in fields:
            value = record.get(field)
            if isinstance(value, str) and value.strip():
                self.mapping.setdefault("prompt", field)
                return value.strip()
        joined = "/".join(ctx["parts"]).lower()
        for name in PROMPTS:
            if (name in ("basic_plus_basic", "qwen25omni_default") and name in joined) or name in ctx["tokens"]:
                self.mapping.setdefault("prompt", "<file name>")
                return name
        self.log.add(ctx["file"], line, fields[0], "<missing>",
                     "a prompt setting (no/basic/enhance) in the record or the file name")
        return None

    def script_of(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> str | None:
        case_id = id_text(record.get("case_id"))
        if case_id is None:
            self.log.add(ctx["file"], line, "case_id", record.get("case_id", "<missing>"), "a case id")
            return None
        if self.scripts:
            script = self.scripts.get((ctx["data_type"], case_key(case_id)))
            if script is None:
                self.log.add(ctx["file"], line, "case_id", case_id,
                             f"a case id of the {ctx['data_type']} scripts in this release")
                return None
            return script["stimulus"]
        return f"{ctx['data_type']}/{case_id}"

    def read_asr(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> None:
        stimulus, model = self.script_of(record, line, ctx), self.model_of(record, line, ctx)
        field = self.options.mapping.get("answer", "predicted_answer")
        answer = record.get(field)
        if answer is not None and not isinstance(answer, str):
            self.log.add(ctx["file"], line, field, answer, "the transcript as a string")
            return
        if stimulus and model:
            self.predictions.append({"stimulus": stimulus, "model": model, "modality": "asr", "prompt_setting": "",
                                     "vision_mode": "", "context": "", "raw_output": answer, "answer": answer,
                                     "correct": None, "meta": dumps({"source_file": ctx["file"]}),
                                     "_file": ctx["file"], "_line": line})

    def read_mcq_answers(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> None:
        file = ctx["file"]
        qid = id_text(record.get("question_id"))
        if qid is None:
            self.log.add(file, line, "question_id", record.get("question_id"), "a question id")
            return
        task = next((t for t in MCQ_TASKS if t in ctx["tokens"]), None)
        if task is None:
            tasks = [t for t in MCQ_TASKS if (ctx["data_type"], t, qid) in self.mcqs]
            task = tasks[0] if len(tasks) == 1 else None
        if task is None:
            self.log.add(file, line, "question_id", qid,
                         "a file name saying 'understanding' or 'reasoning' (or an id found in exactly one MCQ file)")
            return
        mcq = self.mcqs.get((ctx["data_type"], task, qid))
        if mcq is None and self.mcqs:
            self.log.add(file, line, "question_id", qid, f"a question id of MCQ/{task}.json ({ctx['data_type']})")
            return
        repeated: dict[str, Any] = {}
        if mcq is None:  # outputs added alone: the record repeats the question, so keep its options and key
            key_field = self.options.mapping.get("label") or next((k for k in KEY_FIELDS if k in record), None)
            repeated = {"options": parse_options(record.get("options_text")) or {},
                        "answer_key": record.get(key_field) if key_field else None}
            mcq = f"{ctx['data_type']}/mcq/{task}/{qid}"
        model = self.model_of(record, line, ctx)
        texts = {}
        for field in ("predicted_text_answer", "predicted_audio_answer"):
            value = record.get(field)
            if value is not None and not isinstance(value, str):
                self.log.add(file, line, field, value, "the model's answer as a string")
                return
            texts[field] = value
        if model is None:
            return
        # the reply as given; app.benchmarks.echomind reads the letter and scores it
        raw = texts["predicted_text_answer"] or texts["predicted_audio_answer"]
        meta = {"predicted_audio_answer": texts["predicted_audio_answer"],
                "predicted_audio_file": record.get("prediected_audio_file"), "source_file": file, **repeated}
        self.predictions.append({"stimulus": mcq, "model": model, "modality": f"mcq_{task}",
                                 "prompt_setting": "", "vision_mode": "",
                                 "context": "audio_output" if "audio_output_true" in ctx["parts"] else "",
                                 "raw_output": raw, "answer": None, "correct": None, "meta": dumps(meta),
                                 "_file": file, "_line": line})

    def read_conversation(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> None:
        file = ctx["file"]
        content = record.get("output_content")
        if not isinstance(content, dict):
            self.log.add(file, line, "output_content", content, "an object with target/neutral/alternative")
            return
        stimulus, model = self.script_of(record, line, ctx), self.model_of(record, line, ctx)
        prompt = self.prompt_of(record, line, ctx)
        if not (stimulus and model and prompt):
            return
        for voice in VOICES:
            reply = content.get(voice)
            if reply is None or reply == {}:
                continue
            if not isinstance(reply, dict):
                self.log.add(file, line, f"output_content.{voice}", reply, "an object")
                continue
            text, transcript = reply.get("response_text"), reply.get("response_audio_transcript")
            wrong = next(((k, v) for k, v in (("response_text", text), ("response_audio_transcript", transcript))
                          if v is not None and not isinstance(v, str)), None)
            if wrong:
                self.log.add(file, line, f"output_content.{voice}.{wrong[0]}", wrong[1], "a string")
                continue
            run = {"stimulus": stimulus, "model": model, "modality": f"conversation:{voice}",
                   "prompt_setting": prompt, "vision_mode": "", "context": ""}
            audio = reply.get("file")
            meta = {"response_audio_file": audio if isinstance(audio, str) else None, "source_file": file}
            if isinstance(audio, str) and audio:
                near = [p for p in (ctx["path"].parent / audio,) if p.is_file()]
                near += sorted(ctx["path"].parent.glob(f"*/{audio}"))[:1]
                if near:
                    meta["response_audio"] = self.rel(near[0])
            self.predictions.append({**run, "raw_output": transcript, "answer": text, "correct": None,
                                     "meta": dumps(meta), "_file": file, "_line": line})
            judged = [reply] + [v for v in reply.values() if isinstance(v, dict)]
            for block in judged:
                if set(block) & set(JUDGE_SCORE_KEYS):
                    self.add_judgments(block, run, line, file, f"output_content.{voice}.")
