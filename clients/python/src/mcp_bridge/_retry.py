"""Retrying tool calls lost to UNAVAILABLE, with the same call id, within the call's deadline.

A tool call can be lost without the host having done anything wrong: the connection to the bridge dropped, or
the bridge restarted (a crash, a deploy) or was draining. The bridge keeps each call's one outcome by its call
id (``CallToolRequest.resume``): a call waiting between multi round-trip rounds goes on from its kept round
after a restart, a completed call's result is kept for 5 minutes within a bridge-wide budget (``ABORTED`` /
``CALL_OUTCOME_EVICTED`` once evicted), a call still in flight is joined; when the
bridge cannot know whether the tool ran it answers ``ABORTED`` / ``CALL_OUTCOME_UNKNOWN`` (unless the tool is
annotated ``idempotentHint``: then it sends it again). So ``call_tool`` always sends a call id, and when an
attempt fails ``UNAVAILABLE`` it calls again with the same id and ``resume`` set, with exponential backoff,
until the call's deadline. This module is the policy; the clients (client.py, aio.py) run the loop.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import grpc

from ._gen import reasons
from .errors import BridgeError

RETRY_REASONS: frozenset[str] = frozenset(
    {"", reasons.SHUTTING_DOWN, reasons.SESSION_MOVED, reasons.STATE_STORE_UNAVAILABLE, reasons.NO_REPLICA_AVAILABLE}
)
"""ErrorInfo reasons of the UNAVAILABLE errors that are retried: the transport's own (no ErrorInfo: the
connection dropped or could not be made, or a proxy answered), the bridge draining for a shutdown or a
restart, the session moving between replicas (``SESSION_MOVED``: retry through the proxy) and the replicas'
shared state store not answering for a moment (``STATE_STORE_UNAVAILABLE``), and the proxy finding no replica up
while they restart (``NO_REPLICA_AVAILABLE``, deploy/haproxy: "retry; the session is kept") -- the errors the
bridge says to retry. Not ``WRONG_REPLICA`` (the proxy is misconfigured), ``REPLICA_UNAVAILABLE`` (the session is lost:
create a new one), ``UPSTREAM_UNAVAILABLE`` (the MCP server, not the bridge, is down; the bridge already
reconnects it) nor ``IDENTITY_PROVIDER_UNAVAILABLE``."""


def new_call_id() -> str:
    """A call id for a call the host gave none: ``call-`` and a random UUID (hex)."""
    return f"call-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class RetryPolicy:
    """How ``call_tool`` and ``call_tool_stream`` retry a call that failed ``UNAVAILABLE``.

    On by default. ``Client(..., retry=False)`` (or ``RetryPolicy(enabled=False)``) turns it off for every call;
    ``call_tool(..., retry=False)`` for one call. Other calls (list, read, get, complete, ...) are never retried.

    Attributes:
        enabled: retry at all.
        initial_backoff: seconds before the first retry; doubled (``multiplier``) before each next one ...
        max_backoff: ... up to this many seconds.
        multiplier: the backoff's growth factor.
        jitter: each wait is the backoff times a random factor in ``[1 - jitter, 1 + jitter]``.
        max_retry_time: for a call without a deadline (no ``timeout``), how many seconds after the first failure
            the client keeps retrying (60 by default) before it raises the last error. A call with a deadline
            is retried until its deadline instead.
    """

    enabled: bool = True
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0
    jitter: float = 0.2
    max_retry_time: float = 60.0

    def __post_init__(self) -> None:
        if self.initial_backoff <= 0 or self.max_backoff < self.initial_backoff or self.multiplier < 1:
            raise ValueError("RetryPolicy: need 0 < initial_backoff <= max_backoff and multiplier >= 1")
        if not 0 <= self.jitter < 1 or self.max_retry_time < 0:
            raise ValueError("RetryPolicy: need 0 <= jitter < 1 and max_retry_time >= 0")


DEFAULT_RETRY = RetryPolicy()
NO_RETRY = RetryPolicy(enabled=False)


def policy_of(retry: RetryPolicy | bool) -> RetryPolicy:
    """A RetryPolicy from the ``retry=`` argument: True is the default policy, False none."""
    if isinstance(retry, RetryPolicy):
        return retry
    return DEFAULT_RETRY if retry else NO_RETRY


def retryable(err: BridgeError) -> bool:
    """Whether a failed attempt of a tool call is retried (``UNAVAILABLE`` with a reason in RETRY_REASONS)."""
    return err.code == grpc.StatusCode.UNAVAILABLE and err.reason in RETRY_REASONS


def never_sent(err: BridgeError) -> bool:
    """Whether an attempt certainly never reached the bridge: the transport could not connect. Such an attempt
    cannot have run anything, so the next one need not ask for a lost call's outcome (``resume``) -- it would
    get ``CALL_OUTCOME_UNKNOWN`` for a call the bridge never saw."""
    if err.code != grpc.StatusCode.UNAVAILABLE or err.reason:
        return False
    msg = err.message.lower()
    return "failed to connect" in msg or "connection refused" in msg


class Attempts:
    """The retry state of one tool call: when to try again, with what timeout, and whether to resume.

    ``timeout`` is the call's own (seconds, None for none): it bounds every attempt and the retries together.
    The clock and the random source are parameters for tests.
    """

    def __init__(
        self,
        policy: RetryPolicy,
        timeout: float | None,
        *,
        resume: bool = False,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.policy = policy
        self._clock = clock
        self._rand = rand
        self.start = clock()
        self.deadline = self.start + timeout if timeout is not None else None
        self.resume = resume  # the next attempt asks for the outcome of a call that may have been made before
        self.retries = 0
        self._backoff = policy.initial_backoff
        self._give_up_at: float | None = self.deadline

    def timeout(self) -> float | None:
        """The timeout of the next attempt: what is left of the call's deadline (None: no deadline)."""
        if self.deadline is None:
            return None
        return max(self.deadline - self._clock(), 0.0)

    def reached(self) -> None:
        """The attempt reached the bridge (it answered something): a retry must resume, never run the call anew."""
        self.resume = True

    def retry_after(self, err: BridgeError) -> float | None:
        """Seconds to wait before the next attempt after ``err``, or None to give up and raise ``err``."""
        if not self.policy.enabled or not retryable(err):
            return None
        if not never_sent(err):
            self.resume = True
        now = self._clock()
        if self._give_up_at is None:
            self._give_up_at = now + self.policy.max_retry_time
        j = self.policy.jitter
        delay = self._backoff * (1 - j + 2 * j * self._rand())
        if now + delay >= self._give_up_at:
            return None
        self._backoff = min(self._backoff * self.policy.multiplier, self.policy.max_backoff)
        self.retries += 1
        return delay
