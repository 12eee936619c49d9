"""A race: one stimulus asked of several live models ("contenders") at once, for a room.

`run_race` asks every contender at the same time, each on a thread of its own, through the one write path
for live results (`LiveService.ask`): each answer is parsed and scored by the benchmark's own rule and kept as
a live prediction of its model and condition, a cut-off or oversized one as a failed attempt. The benchmark's
prompt and the stimulus's media are built once (`LiveService.messages_for`) and the same messages go to every
contender asked in the same condition. A contender that fails (unreachable, a refused key, cut off, over the
size limit, a timeout) ends its own lane with a short message and never holds up the others; one cancel stops
them all. A contender that already has a kept answer for this stimulus and condition is not asked again unless
the presenter says so (`ask_again`): its kept answer is shown instead. What the race stored is published on the
change channel once, when every lane has ended, so the window refreshes its table, facets, dashboard and detail
once rather than once per answer while the other models still stream.

What the stage shows of a race is `app.race_state.RaceState`, fed with these events. Qt-free.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from app.changes import Change, ChangeChannel, Topic
from app.contenders import Contender
from app.live.client import DEFAULT_MAX_ANSWER_BYTES, LiveClient, Message
from app.live.errors import (AnswerTooLarge, EndpointUnreachable, LiveCancelled, LiveError, LiveTimeout,
                             MalformedAnswer, ServerError, StreamCutOff, scrub_secrets)
from app.live.ncp import NcpStep
from app.live.requests import Asking, condition_key, kind_of
from app.live.service import AskOptions, LiveService
from app.live.settings import LiveSettings
from app.ncp_live import step_label
from app.race_state import ANSWERED, ASKING, CANCELLED, FAILED, KEPT, RaceEvent
from storage.live_failures import live_answer
from storage.records import StimulusDetail

RACE_TIMEOUT_S = 60.0
Emit = Callable[[RaceEvent], None]


def race_options(contender: Contender, timeout_s: float = RACE_TIMEOUT_S,
                 max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES) -> AskOptions:
    """How one contender is asked: its endpoint and modality, streamed, with the race's limits."""
    return AskOptions(LiveSettings(contender.base_url, contender.model, contender.api_key_env), timeout_s=timeout_s,
                      stream=True, modality=contender.modality, max_answer_bytes=max_answer_bytes)


def short_failure(error: BaseException, options: AskOptions) -> str:
    """A failure in a few words, for a column on stage (the whole message goes to its tooltip)."""
    if isinstance(error, ServerError) and error.status in (401, 403):
        return f"key refused (HTTP {error.status})"
    if isinstance(error, ServerError) and error.status:
        return f"server error (HTTP {error.status})"
    if isinstance(error, EndpointUnreachable):
        return "cannot reach the endpoint"
    if isinstance(error, LiveTimeout):
        return f"no answer within {options.timeout_s:g} s"
    if isinstance(error, StreamCutOff):
        return "cut off before the end (kept as a failed attempt)"
    if isinstance(error, AnswerTooLarge):
        return f"over the {options.max_answer_bytes // 1024} KB limit (kept as a failed attempt)"
    if isinstance(error, MalformedAnswer):
        return "not a chat answer"
    text = scrub_secrets(str(error)) or type(error).__name__
    return text if len(text) <= 60 else text[:59].rstrip() + "…"


class _Prompts:
    """Messages built once per condition and shared by every contender asked in it; a failure to build them
    (a clip with no audio for an audio contender) is given to each of those contenders."""

    def __init__(self, service: LiveService, detail: StimulusDetail) -> None:
        self._service, self._detail = service, detail
        self._lock = threading.Lock()
        self._built: dict[tuple, list[Message] | Exception] = {}

    def get(self, options: AskOptions) -> list[Message] | None:
        if kind_of(self._detail).asking is Asking.TOOLS:  # an NCP task is acted out with tools, not asked once
            return None
        key = (options.modality, *condition_key(self._detail.id, options.condition(self._detail)))
        with self._lock:  # the first contender of a condition builds; the others wait for the same messages
            if key not in self._built:
                try:
                    self._built[key] = self._service.messages_for(self._detail, options)
                except Exception as error:  # the media could not be read: this condition cannot be asked
                    self._built[key] = error
            built = self._built[key]
        if isinstance(built, Exception):
            raise built
        return built


def kept_answer(service: LiveService, detail: StimulusDetail, contender: Contender, lane: int) -> RaceEvent | None:
    """The answer an earlier race (or the live panel) kept for this contender's model and condition, as a
    "kept" event of `lane`, or None."""
    condition = race_options(contender).condition(detail)
    row = live_answer(service.store.cursor(), detail.id, contender.model, condition_key(detail.id, condition)[1:])
    if row is None:
        return None
    return RaceEvent(lane, KEPT, row.raw_output, row.answer, row.correct, row.latency_s, prediction_id=row.prediction_id)


def prepare_race() -> None:
    """Load what a race needs before the first one (the live client's modules, the TLS context), on a worker
    when the stage opens, so that pressing R starts every stream at once."""
    client = LiveClient(LiveSettings("http://127.0.0.1/v1", "prepare"))
    client.prepare()
    client.close()


def run_race(service: LiveService, detail: StimulusDetail, contenders: Sequence[Contender], emit: Emit,
             cancel: Callable[[], bool] = lambda: False, *, ask_again: bool = False,
             timeout_s: float = RACE_TIMEOUT_S, max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES) -> None:
    """Ask every contender about `detail` at once and report each lane's events through `emit` (called on the
    contenders' threads). Returns when every lane has ended. A contender with a kept answer is shown that
    answer instead of being asked, unless `ask_again`."""
    prompts = _Prompts(service, detail)
    to_ask = []
    for lane, contender in enumerate(contenders):
        kept = None if ask_again else kept_answer(service, detail, contender, lane)
        if kept is not None:
            emit(kept)
        else:
            to_ask.append(lane)
    if not to_ask:
        return
    held: list[Change] = []
    quiet = ChangeChannel()
    quiet.subscribe(list(Topic), held.append)
    racer = LiveService(service.store, quiet)

    def ask(lane: int) -> None:
        options = race_options(contenders[lane], timeout_s, max_answer_bytes)
        try:
            messages = prompts.get(options)
            if cancel():
                raise LiveCancelled("")
            emit(RaceEvent(lane, ASKING))
            result = racer.ask(detail, options, cancel, messages=messages,
                                 on_delta=lambda piece: emit(RaceEvent(lane, "text", piece)),
                                 on_step=lambda step: emit(RaceEvent(lane, "text", _step_line(step))))
        except LiveCancelled:
            emit(RaceEvent(lane, CANCELLED))
        except Exception as error:  # every failure ends this lane alone; the others go on
            full = scrub_secrets(str(error)) if isinstance(error, LiveError) else \
                f"Could not ask: {scrub_secrets(str(error))}"
            emit(RaceEvent(lane, FAILED, getattr(error, "partial_text", ""), message=short_failure(error, options),
                           full_message=full))
        else:
            emit(RaceEvent(lane, ANSWERED, result.text, result.answer, result.correct, result.latency_s,
                           prediction_id=result.prediction_id))

    try:
        with ThreadPoolExecutor(max_workers=len(to_ask), thread_name_prefix="race") as pool:
            for future in [pool.submit(ask, lane) for lane in to_ask]:
                future.result()
    finally:
        if held:
            service.channel.publish(set().union(*(c.topics for c in held)), dataset_id=detail.dataset_id,
                                    stimulus_ids=set().union(*(c.stimulus_ids for c in held)), source="live")


def _step_line(step: NcpStep) -> str:
    return f"{step_label(step)} — {'ok' if step.returned else 'failed'}\n"
