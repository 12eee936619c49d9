"""A race: one stimulus asked of several live models ("contenders") at once, for a room.

`run_race` asks every contender at the same time, each on a thread of its own, through the one write path
for live results (`LiveService.ask`): each answer is parsed and scored by the benchmark's own rule and kept as
a live prediction of its model and condition, a cut-off or oversized one as a failed attempt. The benchmark's
prompt and the stimulus's media are built once (`LiveService.messages_for`) and the same messages go to every
contender asked in the same condition. A contender that fails (unreachable, a refused key, cut off, over the
size limit, a timeout) ends its own lane with a short message and never holds up the others; one cancel stops
them all. A contender that already has a kept answer for this stimulus and condition is not asked again unless
the presenter says so (`ask_again`): its kept answer is shown instead.

`RaceState` is what the stage shows, fed with the race's events on one thread: each lane's text so far, its
time, its answer, and which verdicts the presenter has revealed (in the order the contenders finished; the
truth last, once every lane has ended). Qt-free.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from app.contenders import Contender
from app.live.client import DEFAULT_MAX_ANSWER_BYTES, Message
from app.live.errors import (AnswerTooLarge, EndpointUnreachable, LiveCancelled, LiveError, LiveTimeout,
                             MalformedAnswer, ServerError, StreamCutOff, scrub_secrets)
from app.live.ncp import NcpStep
from app.live.requests import NCP_KIND, condition_key
from app.live.service import AskOptions, LiveService
from app.live.settings import LiveSettings
from app.ncp_live import step_label
from storage.live_failures import live_answer
from storage.records import StimulusDetail

# what a lane is doing
WAITING, ASKING, ANSWERED, KEPT, FAILED, CANCELLED = "waiting", "asking", "answered", "kept", "failed", "cancelled"
ENDED = (ANSWERED, KEPT, FAILED, CANCELLED)
RACE_TIMEOUT_S = 60.0
Emit = Callable[["RaceEvent"], None]


@dataclass(frozen=True)
class RaceEvent:
    """Something that happened in one lane: the request went out ("asking"), a piece of streamed text
    ("text"), an answer ("answered", or "kept" from an earlier race), a failure ("failed", with a short
    `message` and the whole one in `full_message`), or a cancel ("cancelled")."""

    lane: int
    kind: str
    text: str = ""
    answer: str | None = None
    correct: bool | None = None
    latency_s: float | None = None
    message: str = ""
    full_message: str = ""
    prediction_id: int | None = None


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
        if self._detail.kind == NCP_KIND:  # an NCP task is acted out with tools, not asked once
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

    def ask(lane: int) -> None:
        options = race_options(contenders[lane], timeout_s, max_answer_bytes)
        try:
            messages = prompts.get(options)
            if cancel():
                raise LiveCancelled("")
            emit(RaceEvent(lane, ASKING))
            result = service.ask(detail, options, cancel, messages=messages,
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

    with ThreadPoolExecutor(max_workers=len(to_ask), thread_name_prefix="race") as pool:
        for future in [pool.submit(ask, lane) for lane in to_ask]:
            future.result()


def _step_line(step: NcpStep) -> str:
    return f"{step_label(step)} — {'ok' if step.returned else 'failed'}\n"


@dataclass
class Lane:
    """One contender's column: what it is doing, its text so far, and its answer once it has one."""

    contender: Contender
    status: str = WAITING
    pieces: list[str] = field(default_factory=list)
    chars: int = 0
    answer: str | None = None
    correct: bool | None = None
    latency_s: float | None = None
    message: str = ""
    full_message: str = ""
    prediction_id: int | None = None
    ended_at: float | None = None
    revealed: bool = False

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    @property
    def has_verdict(self) -> bool:
        """An answer the benchmark's rule read (answered now or kept from before)."""
        return self.status in (ANSWERED, KEPT)

    def text(self) -> str:
        return "".join(self.pieces)

    def tail(self, limit: int) -> str:
        """The last `limit` characters of the text so far (a column shows where the answer has got to),
        gathered from the end without joining the whole answer."""
        taken, size = [], 0
        for piece in reversed(self.pieces):
            taken.append(piece[-(limit - size):])
            size += len(taken[-1])
            if size >= limit:
                break
        return "".join(reversed(taken))


class RaceState:
    """The race as the stage shows it. Apply events in the order they came, on one thread."""

    def __init__(self, contenders: Sequence[Contender], truth: str | None, verdicts_at_once: bool = False,
                 now: float | None = None) -> None:
        self.lanes = [Lane(c) for c in contenders]
        self.truth = truth or None
        self.verdicts_at_once = verdicts_at_once
        self.started_at = time.monotonic() if now is None else now
        self.finish_order: list[int] = []   # lanes with a verdict, in the order they finished
        self.truth_revealed = False

    def apply(self, event: RaceEvent, now: float | None = None) -> None:
        """Fold one event into its lane. A lane that has ended takes no more text; an answer that was stored
        just as the race was cancelled still shows, since the store has it."""
        lane = self.lanes[event.lane]
        now = time.monotonic() if now is None else now
        if event.kind == "text":
            if not lane.ended:
                lane.status = ASKING
                lane.pieces.append(event.text)
                lane.chars += len(event.text)
            return
        if event.kind == ASKING:
            if not lane.ended:
                lane.status = ASKING
            return
        if lane.ended and not (lane.status == CANCELLED and event.kind == ANSWERED):
            return
        lane.status, lane.ended_at = event.kind, now
        if event.kind in (ANSWERED, KEPT, FAILED) and event.text:
            lane.pieces, lane.chars = [event.text], len(event.text)
        lane.answer, lane.correct, lane.latency_s = event.answer, event.correct, event.latency_s
        lane.message, lane.full_message, lane.prediction_id = event.message, event.full_message, event.prediction_id
        if lane.has_verdict and event.lane not in self.finish_order:
            self.finish_order.append(event.lane)

    def elapsed(self, index: int, now: float | None = None) -> float:
        """Seconds lane `index` has taken: the answer's own latency once it has one, else the time since the
        race began (until the lane ended)."""
        lane = self.lanes[index]
        if lane.latency_s is not None and lane.has_verdict:
            return lane.latency_s
        end = lane.ended_at if lane.ended_at is not None else (time.monotonic() if now is None else now)
        return max(0.0, end - self.started_at)

    def over(self) -> bool:
        """True once every lane has ended."""
        return all(lane.ended for lane in self.lanes)

    def cancel_all(self, now: float | None = None) -> list[int]:
        """Mark every running lane cancelled (the race's cancel stops their requests); returns them."""
        now = time.monotonic() if now is None else now
        running = [i for i, lane in enumerate(self.lanes) if not lane.ended]
        for i in running:
            self.lanes[i].status, self.lanes[i].ended_at = CANCELLED, now
        return running

    # ----- revealing -------------------------------------------------------------------------------------
    def verdict_shown(self, index: int) -> bool:
        return self.lanes[index].has_verdict and (self.verdicts_at_once or self.lanes[index].revealed)

    def truth_shown(self) -> bool:
        return self.truth_revealed or (self.verdicts_at_once and self.over())

    def reveal_next(self) -> int | None:
        """Reveal the verdict of the next contender to have finished, in finishing order, or the truth once
        every lane has ended and every verdict is shown. Returns the lane revealed, -1 for the truth, or None
        when nothing can be revealed now."""
        for index in self.finish_order:
            if not self.verdict_shown(index):
                self.lanes[index].revealed = True
                return index
        if self.over() and self.truth is not None and not self.truth_shown():
            self.truth_revealed = True
            return -1
        return None

    def reveal_all(self) -> None:
        """Reveal every verdict there is, and the truth once every lane has ended."""
        while self.reveal_next() is not None:
            pass

    def all_revealed(self) -> bool:
        """True once the race is over and the room has seen every verdict and the truth."""
        return self.over() and all(self.verdict_shown(i) for i in self.finish_order) and (
            self.truth is None or self.truth_shown())
