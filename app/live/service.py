"""Asking a live model about stimuli and keeping the answers: the one write path for live results.

`LiveService` runs one stimulus (a plain question, an AgentViSS role-play turn, or an NCP task acted out
with tools on the belief engine) or a batch of them, and saves what came back. Only an answer that
finished normally is stored as a prediction and scored; a cut-off or oversized one is kept as a failed
attempt with what arrived (`storage.live_failures`) and never replaces a complete answer. After every
write the service publishes on the change channel (`Topic.ROWS, FACETS, METRICS, DETAIL` for an answer,
`Topic.DETAIL` for a failed attempt), so the table, the facets and the dashboard refresh.

A batch resumes from the store: a stimulus is skipped when the model being run already has a complete
live answer for it under the condition it would be asked in now, so switching models answers every
stimulus the new model has not answered. Everything here runs on a worker thread; callbacks are called
on that thread. Qt-free.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.changes import ChangeChannel, Topic
from app.live.batch import BatchProgress, BatchReport, Skipped, run_batch
from app.live.client import DEFAULT_MAX_ANSWER_BYTES, LiveClient, Message
from app.live.errors import IncompleteAnswer, LiveCancelled, LiveError
from app.benchmarks.ncp import ncp_messages
from app.live.ncp import NcpStep
from app.live.requests import (ROLE_PLAY_TASK, Asking, Condition, build_messages, condition_for, condition_key,
                               kind_of, parse_answer, prompt_record, template_for)
from app.live.settings import LiveSettings
from app.ncp_live import NcpTask, goal_text, run_live_ncp_task, transcript
from app.prompts import PromptTemplate
from storage import queries
from storage.live_runs import store_live_prediction, store_live_trace
from storage.live_failures import live_answered, store_live_failure
from storage.records import StimulusDetail
from storage.store import Store

ANSWER_TOPICS = (Topic.ROWS, Topic.FACETS, Topic.METRICS, Topic.DETAIL)
# Streamed text is handed on in pieces at most this often, so a fast stream costs the view a few
# appends a second rather than one per network frame.
DELTA_INTERVAL_S = 0.05
Cancel = Callable[[], bool]


@dataclass(frozen=True)
class AskOptions:
    """How to ask: the endpoint, the condition chosen in the panel, and the limits."""

    settings: LiveSettings
    timeout_s: float = 60.0
    stream: bool = True
    modality: str = "text"
    prompt_setting: str = "no"
    role: str = ""
    role_task: str = ROLE_PLAY_TASK
    max_steps: int = 30
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    templates: Mapping[str, PromptTemplate] = field(default_factory=dict)  # edited templates by name

    def template(self, detail: StimulusDetail) -> PromptTemplate:
        """The (possibly edited) template this stimulus is asked with."""
        default = template_for(detail)
        return self.templates.get(default.name, default)

    def condition(self, detail: StimulusDetail) -> Condition:
        return condition_for(detail, {"modality": self.modality, "prompt_setting": self.prompt_setting,
                                      "role": self.role})

    def client(self) -> LiveClient:
        return LiveClient(self.settings, timeout_s=self.timeout_s, max_retries=0,
                          max_answer_bytes=self.max_answer_bytes)


@dataclass(frozen=True)
class LiveResult:
    """One finished ask. `prediction_id` is the stored answer (None when nothing was stored)."""

    kind: str
    stimulus_id: int
    text: str
    answer: str | None
    correct: bool | None
    latency_s: float
    tokens_in: int | None
    tokens_out: int | None
    prediction_id: int | None = None
    steps: tuple[NcpStep, ...] = ()
    stopped: str = ""
    atoms: tuple[tuple[str, bool], ...] = ()


class _Coalescer:
    """Hands streamed text on in pieces at most every `DELTA_INTERVAL_S` (the rest when flushed)."""

    def __init__(self, sink: Callable[[str], None]) -> None:
        self._sink = sink
        self._pieces: list[str] = []
        self._last = 0.0

    def __call__(self, piece: str) -> None:
        self._pieces.append(piece)
        now = time.monotonic()
        if now - self._last >= DELTA_INTERVAL_S:
            self.flush()
            self._last = now

    def flush(self) -> None:
        if self._pieces:
            text, self._pieces = "".join(self._pieces), []
            self._sink(text)


class LiveService:
    """Runs live asks against `store` and publishes what it saved on `channel`."""

    def __init__(self, store: Store, channel: ChangeChannel | None = None) -> None:
        self.store = store
        self.channel = channel or ChangeChannel()
        # Live answers of a batch arrive on several threads at once; their writes go one at a time.
        self._writes = threading.Lock()

    # ----- reading -----------------------------------------------------------------------------------
    def detail(self, stimulus_id: int) -> StimulusDetail | None:
        return queries.stimulus_detail(self.store.cursor(), stimulus_id)

    def answered(self, stimulus_ids: Sequence[int], model: str) -> set[tuple[int, str, str, str, str]]:
        """Condition keys (`app.live.requests.condition_key`) of the complete live answers `model` gave
        about these stimuli."""
        return live_answered(self.store.cursor(), list(stimulus_ids), model)

    # ----- one stimulus ------------------------------------------------------------------------------
    def ask(self, detail: StimulusDetail, options: AskOptions, cancel: Cancel = lambda: False,
            on_delta: Callable[[str], None] | None = None, on_step: Callable[[NcpStep], None] | None = None,
            client: LiveClient | None = None, messages: list[Message] | None = None) -> LiveResult:
        """Ask about one stimulus and save the answer. A cut-off or oversized answer is kept as a failed
        attempt and re-raised (`IncompleteAnswer`); a cancelled one is not kept at all. `messages`, when given,
        are what `messages_for` built for these options (a race builds them once for every model it asks)."""
        own = client is None
        client = client or options.client()
        try:
            if kind_of(detail).asking is Asking.TOOLS:
                return self._ask_ncp(client, detail, options, cancel, on_step)
            return self._ask_plain(client, detail, options, cancel, on_delta, messages)
        finally:
            if own:
                client.close()

    @staticmethod
    def messages_for(detail: StimulusDetail, options: AskOptions) -> list[Message]:
        """The chat messages a plain question about `detail` is asked with under `options` (the benchmark's
        prompt and the stimulus's media, decoded: call on a worker)."""
        condition = options.condition(detail)
        return build_messages(detail, options.modality, options.template(detail), condition["prompt_setting"] or "no",
                              condition["context"] or None, options.role_task)

    def _ask_plain(self, client: LiveClient, detail: StimulusDetail, options: AskOptions, cancel: Cancel,
                   on_delta: Callable[[str], None] | None, messages: list[Message] | None = None) -> LiveResult:
        condition, template = options.condition(detail), options.template(detail)
        if messages is None:
            messages = self.messages_for(detail, options)
        prompt = prompt_record(messages)
        pieces = _Coalescer(on_delta) if on_delta is not None and options.stream else None
        started = time.perf_counter()
        try:
            reply = client.ask(messages, stream=options.stream, on_delta=pieces, cancel=cancel, temperature=0)
        except IncompleteAnswer as incomplete:
            if pieces is not None:
                pieces.flush()
            self._save_failure(detail, options, condition, template, incomplete, prompt,
                               time.perf_counter() - started)
            raise
        if pieces is not None:
            pieces.flush()
        answer, correct = parse_answer(detail, reply.text)
        if cancel():
            raise LiveCancelled(reply.text)
        pid = self.save_answer(detail, options, condition, template, prompt=prompt, raw_output=reply.text,
                               answer=answer, correct=correct, latency_s=reply.latency_s,
                               tokens_in=reply.prompt_tokens, tokens_out=reply.completion_tokens)
        return LiveResult(detail.kind, detail.id, reply.text, answer, correct, reply.latency_s, reply.prompt_tokens,
                          reply.completion_tokens, pid)

    def _ask_ncp(self, client: LiveClient, detail: StimulusDetail, options: AskOptions, cancel: Cancel,
                 on_step: Callable[[NcpStep], None] | None) -> LiveResult:
        """Run one NCP attempt and save it with its trace. A cancel that comes after the model stopped
        still keeps the attempt out of the store."""
        template, condition = options.template(detail), options.condition(detail)
        task = NcpTask.from_detail(detail)
        started = time.perf_counter()
        try:
            attempt = run_live_ncp_task(client, task, options.max_steps, template, on_step, cancel,
                                        stream=options.stream, temperature=0)
        except IncompleteAnswer as incomplete:
            self._save_failure(detail, options, condition, template, incomplete,
                               prompt_record(ncp_messages(goal_text(task.goal), task.context, template)),
                               time.perf_counter() - started)
            raise
        if cancel():
            raise LiveCancelled(attempt.final_text)
        pid = self.save_answer(
            detail, options, condition, template,
            prompt=prompt_record(ncp_messages(attempt.goal, attempt.state, template)), raw_output=transcript(attempt),
            answer=None, correct=attempt.success, latency_s=attempt.latency_s, tokens_in=attempt.tokens_in,
            tokens_out=attempt.tokens_out, trace=list(attempt.trace),
            extra_params={"max_steps": options.max_steps, "stopped": attempt.stopped,
                          "tool_calls": len(attempt.steps)})
        return LiveResult(detail.kind, detail.id, attempt.final_text, None, attempt.success, attempt.latency_s,
                          attempt.tokens_in, attempt.tokens_out, pid, tuple(attempt.steps), attempt.stopped,
                          tuple(attempt.atoms))

    # ----- writing (the one write path) -----------------------------------------------------------------
    @staticmethod
    def _params(options: AskOptions, template: PromptTemplate) -> dict[str, Any]:
        """What the run was asked with: never the key, only the name of the variable holding it."""
        return {"base_url": options.settings.base_url, "api_key_env": options.settings.api_key_env,
                "stream": options.stream, "temperature": 0, "template": template.name,
                "timeout_s": options.timeout_s, "max_answer_bytes": options.max_answer_bytes}

    def save_answer(self, detail: StimulusDetail, options: AskOptions, condition: Condition,
                    template: PromptTemplate, *, prompt: str, raw_output: str, answer: str | None,
                    correct: bool | None, latency_s: float | None, tokens_in: int | None, tokens_out: int | None,
                    trace: list[dict[str, Any]] | None = None, extra_params: dict[str, Any] | None = None) -> int:
        """Store a complete answer (and an NCP attempt's trace), then publish it; returns the prediction id."""
        params = {**self._params(options, template), **(extra_params or {})}
        with self._writes:
            cur = self.store.cursor()
            pid = store_live_prediction(cur, dataset_id=detail.dataset_id, model=options.settings.model, **condition,
                                        stimulus_id=detail.id, prompt=prompt, raw_output=raw_output, answer=answer,
                                        correct=correct, latency_s=latency_s, tokens_in=tokens_in,
                                        tokens_out=tokens_out, params_json=params)
            if trace is not None:
                store_live_trace(cur, prediction_id=pid, stimulus_id=detail.id, steps=trace)
        self.channel.publish(ANSWER_TOPICS, dataset_id=detail.dataset_id, stimulus_ids=[detail.id], source="live")
        return pid

    def _save_failure(self, detail: StimulusDetail, options: AskOptions, condition: Condition,
                      template: PromptTemplate, error: IncompleteAnswer, prompt: str, latency_s: float) -> int:
        with self._writes:
            fid = store_live_failure(self.store.cursor(), dataset_id=detail.dataset_id, stimulus_id=detail.id,
                                     model=options.settings.model, **condition, status=error.status,
                                     reason=str(error), partial_output=error.partial_text, prompt=prompt,
                                     latency_s=latency_s, params=self._params(options, template))
        self.channel.publish((Topic.DETAIL,), dataset_id=detail.dataset_id, stimulus_ids=[detail.id],
                             source="live")
        return fid

    # ----- batches -----------------------------------------------------------------------------------
    def run_batch(self, stimulus_ids: Sequence[int], options: AskOptions, cancel: Cancel = lambda: False,
                  workers: int = 4, on_progress: Callable[[BatchProgress], None] | None = None,
                  on_result: Callable[[int, LiveResult | None, str | None], None] | None = None,
                  ) -> BatchReport[LiveResult]:
        """Ask about every listed stimulus the model has not answered under its condition, `workers` at a
        time (not streamed). Errors are per stimulus (scrubbed, as every `LiveError`) and the batch goes on."""
        options = replace(options, stream=False)
        client = options.client()
        # read from the store when the batch starts: what this model has answered, under which condition
        done = self.answered(stimulus_ids, options.settings.model)

        def one(sid: int) -> LiveResult:
            detail = self.detail(sid)
            if detail is None:
                raise LiveError(f"stimulus {sid} is gone from the store")
            if condition_key(sid, options.condition(detail)) in done:
                raise Skipped()
            try:
                return self.ask(detail, options, cancel, client=client)
            except LiveError:
                raise
            except Exception as error:  # one stimulus's own problem (missing media, no goal): the batch goes on
                raise LiveError(str(error) or type(error).__name__) from error  # (LiveError scrubs its message)

        try:
            return run_batch(list(stimulus_ids), one, lambda sid: sid, max_workers=workers, on_progress=on_progress,
                             on_result=on_result, cancel=cancel)
        finally:
            client.close()
