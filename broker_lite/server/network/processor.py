"""A network thread (Kafka's Processor): it serves a share of the connections, multiplexed with
a selector, and does all their reading and writing, never blocking on any one of them.

Each turn of its loop:

1. registers the connections the acceptor handed over;
2. takes the responses the request handlers queued for it (it is woken through a socket pair
   when it sleeps): queues a response's bytes on its connection, sends the connection's next
   request (already read, or once read) to the request queue, then writes what the socket
   takes;
3. waits for sockets to be ready (``selectors``) and serves them: reads frames, writes what the
   socket takes;
4. closes connections idle for ``connections.max.idle.ms``.

A connection is ready for requests once its transport's handshake (TLS) and its authentication
(SASL, a client certificate) are done (see :mod:`.channel`): until then every readiness event
takes them a step further, and the authenticator answers the frames read itself. Its time is
bounded: a connection not ready ``connections.max.idle.ms`` after it was accepted is closed,
whatever it sent. A connection refused by its authenticator is closed, after the refusal when
Kafka sends one (a SASL_AUTHENTICATION_FAILED answer), and nothing else of it is read; both wait
``connection.failed.authentication.delay.ms`` (100 ms), as in Kafka, to slow down password
guessing. Bytes a
TLS transport decrypted and holds are read without waiting for the socket (they would announce
nothing). Once ready, a SaslHandshake starts a re-authentication when the authenticator allows
one, and a request arriving after the session's lifetime closes the connection (KIP-368).

A connection has one request in flight at most: after a request is read the connection is
muted (the selector stops watching it for reads) until the response is queued and its earlier
responses are written (see :mod:`.channel`), as Kafka's processors keep per-connection order.
When the request queue is full, the request stays with its connection and the processor stops
reading from every connection it serves (each pauses at its next readiness), while it keeps
writing responses; it resumes once the handlers made room.
A client that never reads its responses thus holds its own connection only, and one that sends
a request a byte at a time holds nothing but its few bytes.

While a request of a plaintext connection is handled, the connection's frames and socket belong
to the handler thread (the processor neither reads nor writes a muted connection), and
:meth:`Processor.finish` lets it go on where Kafka would hand over to this thread: when the
connection has nothing waiting to be written, the handler writes the response itself, without
blocking; when all of it went, it takes the connection's next request, if one is read already
or the socket holds one (a non-blocking read), nobody waits in the request queue, and it is not
a SaslHandshake nor past the session's lifetime (those are this thread's). Otherwise the answer,
or what the socket did not take, comes to this thread as usual, and the connection with it: it
is unmuted and read again. The channel's lock keeps this thread from closing the socket while a
handler uses it.

A client pipelining requests (a producer with many in flight) has them read several at a time.
While the connection's next request is read already, the handler holds the response back, and
writes it with the following ones in one gathering write, when the run ends or
:data:`MAX_HELD_RESPONSES` wait: one system call, and one wake-up of the client, for a run of
responses rather than for each. No response waits for a request that is not read yet, so a
client that waits for its answer gets it at once. Responses held back go out before anything
else of the connection: before a response the handler cannot write itself, one answered later,
and before the connection is closed by a request.
"""

import logging
import selectors
import socket
import threading
import time
from collections import OrderedDict, deque

from .authenticator import AuthenticationFailed
from .channel import KafkaChannel, ResponseSend, bytes_only, send_bytes
from .config import NetworkConfig
from .quotas import ConnectionQuotas
from .receive import InvalidFrameSize
from .request_channel import CLOSE, NO_RESPONSE, SEND, SENT, Request, RequestChannel
from .request_metrics import RequestMetrics

logger = logging.getLogger(__name__)

READ, WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE
SASL_HANDSHAKE = 17  # the API key of SaslHandshake
MAX_POLL_S = 1.0
# Responses held back while a connection's pipelined requests are handled, for one write.
MAX_HELD_RESPONSES = 16
_perf_ns = time.perf_counter_ns


class Processor:
    """Serves the connections handed to it by :meth:`accept`, on a thread of its own."""

    def __init__(self, processor_id: int, request_channel: RequestChannel,
                 quotas: ConnectionQuotas, metrics: RequestMetrics, config: NetworkConfig,
                 name: str = "broker"):
        self.id = processor_id
        self._requests = request_channel
        self._quotas = quotas
        self._metrics = metrics
        self._max_request_bytes = config.socket_request_max_bytes
        self._idle_s = config.idle_timeout_s
        self._refusal_delay_s = config.connection_failed_authentication_delay_ms / 1000
        # refused: (close_at, channel), in order
        self._delayed: deque[tuple[float, KafkaChannel]] = deque()
        self._selector = selectors.DefaultSelector()
        self._wake_in, self._wake_out = socket.socketpair()
        self._wake_in.setblocking(False)
        self._wake_out.setblocking(False)
        self._selector.register(self._wake_in, READ, None)
        self._sleeping = False
        self._woken = False
        self._new: deque = deque()  # (socket, peer, Listener) from the acceptor
        self._buffered: set[KafkaChannel] = set()  # TLS bytes held, read without waiting
        self._responses: deque[Request] = deque()  # answered requests from the handlers
        self._commands: deque = deque()  # functions to run on this thread
        self._channels: dict[str, KafkaChannel] = {}
        self._by_activity: OrderedDict[str, KafkaChannel] = OrderedDict()  # least recent first
        self._paused: deque[KafkaChannel] = deque()  # stopped reading while the queue was full
        self._blocked = False  # the request queue was full
        self._next_index = 0
        self._stopping = False
        self.connections_created = 0
        self.connections_closed = 0
        # Kafka's selector metrics: successful-authentication-total, ...
        self.successful_authentications = 0
        self.successful_reauthentications = 0
        self.failed_authentications = 0
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"{name}-network-thread-{processor_id}")

    # -- from other threads ---------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    def accept(self, sock: socket.socket, peer: tuple, listener) -> None:
        """Take a connection (the acceptor's, already counted in the quotas)."""
        self._new.append((sock, peer, listener))
        self.wakeup()

    def enqueue_response(self, request: Request) -> None:
        """Queue an answered request for sending (the request channel's, any thread)."""
        self._responses.append(request)
        self.wakeup()

    def finish(self, request: Request) -> Request | None:
        """The answer to ``request``, from the handler thread that handled it (see the module
        docstring): on a connection whose socket a handler may use, with nothing else to write,
        the response is written now, and the connection's next request is returned for the
        same thread when it may take it; otherwise the answer, or what the socket did not
        take, goes to this processor, and with it the connection."""
        channel = request.connection
        if request.action != CLOSE and channel.transport.handler_io:
            with channel.lock:
                if not channel.closed and channel.in_flight is request and not channel.unsent:
                    following = self._held(channel, request)
                    if following is None and self._sent_now(channel, request):
                        following = self._next_request(channel)
                        if following is None:
                            request.action = SENT
                    if following is not None:
                        channel.in_flight = following
                        return following
        self.enqueue_response(request)
        return None

    def _held(self, channel: KafkaChannel, request: Request) -> Request | None:
        """(a handler thread, holding the channel) When the connection's next request is read
        already, hold this response back, to go out with the following ones in one write;
        that next request then, or None (the response is to be written now)."""
        held = channel.held
        if request.action != SEND or len(held) >= MAX_HELD_RESPONSES \
                or channel.receive.peek_frame() is None or not bytes_only(request.chunks):
            return None
        following = self._next_request(channel)
        if following is not None:
            request.sending = _perf_ns()
            held.append(request)
        return following

    def _sent_now(self, channel: KafkaChannel, request: Request) -> bool:
        """(a handler thread, holding the channel) Write the response as far as the socket
        takes it; whether all of it went (what is left stays in ``request.chunks``, a
        :class:`ResponseSend`, for this processor)."""
        held = channel.held
        if held:  # the responses held back go first, in the same write
            chunks = [chunk for earlier in held for chunk in earlier.chunks]
            if request.action == SEND:
                chunks.extend(request.chunks)
            request.action, request.chunks = SEND, chunks
            for earlier in held:
                self._finish(earlier)
            held.clear()
        if request.action == SEND:
            request.sending = _perf_ns()
            chunks = request.chunks
            try:
                sent, size = send_bytes(channel.transport, chunks)
                if sent >= 0:
                    if sent < size:
                        request.chunks = ResponseSend(chunks, request, sent)
                        return False
                else:
                    request.chunks = send = ResponseSend(chunks, request)
                    if not send.write_to(channel.transport):
                        return False
            except OSError:  # BlockingIOError too: the processor takes it from the start
                return False  # or meets the error again, and closes the connection
            request.chunks = None
        self._finish(request)
        return True

    def _next_request(self, channel: KafkaChannel) -> Request | None:
        """(a handler thread, holding the channel) The connection's next request, when it is
        read already or in the socket, no other request waits for a handler, and it needs
        nothing of this processor (a re-authentication, an expired session); else None."""
        if self._others_first():
            return None
        receive = channel.receive
        try:
            payload = receive.peek_frame()
            if payload is None:
                if not receive.read_from(channel.transport.read_into):
                    return None  # the peer closed: this processor finds out
                payload = receive.peek_frame()
        except (OSError, InvalidFrameSize):
            return None  # this processor meets it again, and closes the connection
        if payload is None or _is_sasl_handshake(payload) \
                or channel.authenticator.session_expired(time.monotonic()):
            return None
        receive.skip_frame(payload)
        request = Request(self.id, channel.id, payload, channel.peer, channel.listener,
                          channel.principal, self._requests, channel)
        request.dequeued = request.received
        return request

    def _others_first(self) -> bool:
        """Whether a handler must leave a connection's next requests to take their turn in the
        request queue: others wait there, or this processor stopped reading, or stops."""
        return self._stopping or self._blocked or bool(self._requests.request_queue_size)

    def following(self, request: Request, limit: int) -> list:
        """(the handler thread handling ``request``) The payloads of the connection's requests
        read after it already, whole frames in its buffer, ``limit`` at most, left in place;
        none unless the handler may take them now, as :meth:`_next_request` rules."""
        channel = request.connection
        if channel is None or not channel.transport.handler_io or self._others_first():
            return []
        with channel.lock:
            if channel.closed or channel.in_flight is not request \
                    or channel.authenticator.session_expired(time.monotonic()):
                return []
            try:
                return channel.receive.peek_frames(limit)
            except InvalidFrameSize:
                return []  # this processor meets it again, and closes the connection

    def take_following(self, request: Request, count: int) -> None:
        """(the handler thread handling ``request``) Take the first ``count`` payloads of
        :meth:`following`, answered in ``request``'s response."""
        channel = request.connection
        taken = []
        with channel.lock:
            receive = channel.receive
            for _ in range(count):
                payload = receive.peek_frame()
                receive.skip_frame(payload)
                taken.append(payload)
        request.folded = tuple(taken)

    def wakeup(self) -> None:
        """Make the selector return, when the thread is waiting in it."""
        if self._sleeping and not self._woken:
            self._woken = True
            try:
                self._wake_out.send(b"\0")
            except OSError:  # full (a wake-up is pending anyway) or closed (stopping)
                pass

    def call(self, function, timeout_s: float = 10):
        """Run ``function()`` on this thread (between two turns of its loop); its result."""
        if not self.started or not self._thread.is_alive():
            return function()
        done = threading.Event()
        result = []

        def command() -> None:
            result.append(function())
            done.set()
        self._commands.append(command)
        self.wakeup()
        done.wait(timeout_s)
        return result[0] if result else None

    @property
    def connection_count(self) -> int:
        return len(self._channels)

    @property
    def response_queue_size(self) -> int:
        return len(self._responses)

    def drop_connections(self) -> int:
        """Close every connection now, as a network failure would; how many."""
        return self.call(self._close_all) or 0

    def shutdown(self) -> None:
        self._stopping = True
        self.wakeup()
        if self.started and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        if not self.started:
            self._close_all()
            self._release_selector()

    # -- the loop ---------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stopping:
                self._configure_new_connections()
                self._process_responses()
                self._run_commands()
                if self._blocked and self._requests.has_room():
                    self._unblock()
                self._poll()
                self._close_refused()
                self._close_idle()
        except Exception:
            logger.exception("network thread %d failed", self.id)
        finally:
            try:
                self._process_responses()  # answers given at stop go out if the socket takes them
            finally:
                self._close_all()
                self._release_selector()

    def _poll(self) -> None:
        timeout = MAX_POLL_S
        if self._idle_s is not None and self._by_activity:
            oldest = next(iter(self._by_activity.values()))
            timeout = min(timeout, max(oldest.last_active + self._idle_s - time.monotonic(),
                                       0.001))
        if self._blocked:
            timeout = min(timeout, 0.01)  # room may come without a wake-up
        if self._delayed:
            timeout = min(timeout, max(self._delayed[0][0] - time.monotonic(), 0))
        self._woken = False
        self._sleeping = True
        if self._new or self._responses or self._commands or self._stopping or self._buffered:
            timeout = 0
        events = self._selector.select(timeout)
        self._sleeping = False
        now = time.monotonic()
        for key, mask in events:
            channel = key.data
            if channel is None:
                self._drain_wakeups()
                continue
            if channel.id not in self._channels:
                continue  # closed earlier in this turn
            if not mask:  # watching for nothing, it hung up or failed (epoll reports those)
                logger.debug("connection %s hung up", _address(channel.peer))
                self._close(channel)
                continue
            self._serve(channel, mask, now)
        if self._buffered:
            for channel in list(self._buffered):
                self._buffered.discard(channel)
                if channel.id in self._channels and (channel.events or 0) & READ:
                    self._serve(channel, READ, now)

    def _serve(self, channel: KafkaChannel, mask: int, now: float) -> None:
        try:
            if mask & WRITE:
                self._write(channel, now)
            if mask & READ and channel.id in self._channels:
                self._read(channel, now)
        except InvalidFrameSize as exc:
            self._refuse(channel, exc)
        except AuthenticationFailed as exc:
            self._failed_authentication(channel, exc)
        except OSError as exc:
            if not channel.ready:  # a failed TLS handshake: not TLS, a bad certificate, ...
                logger.info("Failed authentication with %s (SSL handshake failed: %s)",
                            _address(channel.peer), _reason(exc))
            else:
                logger.debug("connection %s failed: %s", _address(channel.peer), exc)
            self._close(channel)

    def _failed_authentication(self, channel: KafkaChannel, exc: AuthenticationFailed) -> None:
        """Close a refused client, after ``connection.failed.authentication.delay.ms`` (Kafka's
        ``failedAuthenticationDelayMs``: nothing is read or written meanwhile) and its refusal,
        when there is one."""
        logger.info("Failed authentication with %s (%s)", _address(channel.peer), exc)
        self.failed_authentications += 1
        if self._refusal_delay_s <= 0:
            self._close_refused_now(channel)
            return
        channel.closing = True
        channel.close_at = close_at = time.monotonic() + self._refusal_delay_s
        self._delayed.append((close_at, channel))
        self._update_interest(channel)

    def _close_refused(self) -> None:
        now = time.monotonic()
        while self._delayed and self._delayed[0][0] <= now:
            _, channel = self._delayed.popleft()
            channel.close_at = None
            if channel.id in self._channels:
                self._close_refused_now(channel)

    def _close_refused_now(self, channel: KafkaChannel) -> None:
        if not (channel.closing and channel.unsent):
            self._close(channel)
            return
        try:  # its refusal goes out first
            self._write(channel, time.monotonic())
        except OSError:
            self._close(channel)

    def _drain_wakeups(self) -> None:
        try:
            while self._wake_in.recv(4096):
                pass
        except OSError:
            pass

    def _run_commands(self) -> None:
        while self._commands:
            self._commands.popleft()()

    # -- connections ------------------------------------------------------------------------

    def _configure_new_connections(self) -> None:
        while self._new:
            sock, peer, listener = self._new.popleft()
            if self._stopping:
                self._quotas.dec(peer[0])
                sock.close()
                continue
            self._next_index += 1
            local = sock.getsockname()
            connection_id = (f"{local[0]}:{local[1]}-{peer[0]}:{peer[1]}-"
                             f"{self.id}-{self._next_index}")
            builder = listener.channels
            try:
                transport = builder.transport(sock)
            except OSError as exc:
                logger.debug("connection %s failed: %s", _address(peer), exc)
                self._quotas.dec(peer[0])
                sock.close()
                continue
            channel = KafkaChannel(connection_id, peer, listener.name, transport,
                                   builder.authenticator(), self._max_request_bytes)
            self._channels[connection_id] = channel
            self.connections_created += 1
            channel.last_active = time.monotonic()
            self._by_activity[channel.id] = channel
            self._update_interest(channel)

    def _touch(self, channel: KafkaChannel, now: float) -> None:
        if not channel.ready:
            return  # the handshake and the authentication are timed from the connection
        channel.last_active = now
        by_activity = self._by_activity
        by_activity[channel.id] = channel
        by_activity.move_to_end(channel.id)

    def _close_idle(self) -> None:
        if self._idle_s is None:
            return
        now = time.monotonic()
        deadline = now - self._idle_s
        while self._by_activity:
            channel = next(iter(self._by_activity.values()))
            if channel.last_active > deadline:
                return
            if not channel.ready:
                logger.info("closing %s: not authenticated within connections.max.idle.ms "
                            "(%d ms)", _address(channel.peer), self._idle_s * 1000)
                self._close(channel)
                continue
            if channel.in_flight is not None or channel.unsent or channel.paused:
                self._touch(channel, now)  # waiting for its response or for room: not idle
                continue
            logger.debug("closing idle connection %s", _address(channel.peer))
            self._close(channel)

    def _close(self, channel: KafkaChannel) -> None:
        if self._channels.pop(channel.id, None) is None:
            return
        self._by_activity.pop(channel.id, None)
        if channel.events is not None:
            try:
                self._selector.unregister(channel.transport.sock)
            except (KeyError, ValueError, OSError):
                pass
            channel.events = None
        self._buffered.discard(channel)
        channel.close()
        self._quotas.dec(channel.peer[0])
        self.connections_closed += 1

    def _close_all(self) -> int:
        channels = list(self._channels.values())
        for channel in channels:
            self._close(channel)
        self._paused.clear()
        self._buffered.clear()
        self._delayed.clear()
        self._blocked = False
        while self._new:
            sock, peer, _ = self._new.popleft()
            self._quotas.dec(peer[0])
            sock.close()
        while self._responses:
            self._responses.popleft().release()
        return len(channels)

    def _release_selector(self) -> None:
        self._selector.close()
        self._wake_in.close()
        self._wake_out.close()

    def _update_interest(self, channel: KafkaChannel) -> None:
        if channel.id not in self._channels:
            return  # closed
        events = 0
        if not channel.closing and (not channel.ready
                                    or (not channel.muted and not channel.paused)):
            events = READ
        if channel.unsent and channel.close_at is None:
            events |= WRITE
        if events & READ and channel.transport.buffered_read:
            self._buffered.add(channel)  # no readiness event will tell of them
        if events == channel.events:
            return
        sock = channel.transport.sock
        if channel.events is None:
            if not events:
                return
            self._selector.register(sock, events, channel)
        else:  # a muted connection stays registered, watching for nothing: one system call
            self._selector.modify(sock, events, channel)
        channel.events = events

    # -- reading ----------------------------------------------------------------------------

    def _read(self, channel: KafkaChannel, now: float) -> None:
        if channel.closing:
            return
        transport = channel.transport
        if not transport.ready:
            channel.prepare()  # the TLS handshake, a step
            if channel.ready:
                self.successful_authentications += 1  # a TLS client, its certificate checked
            if channel.unsent:
                self._write(channel, now)
            if not channel.ready:
                self._update_interest(channel)
                return
        if self._blocked and channel.ready:
            self._pause(channel)
            return
        try:
            count = channel.receive.read_from(transport.read_into)
        except BlockingIOError:
            self._update_interest(channel)  # a TLS transport may have a record to send
            return
        if count == 0:
            logger.debug("connection %s closed by the peer", _address(channel.peer))
            self._close(channel)
            return
        self._touch(channel, now)
        if not channel.ready:
            self._authenticate(channel, now)
            if not channel.ready:
                return
        self._dispatch(channel)

    def _authenticate(self, channel: KafkaChannel, now: float) -> None:
        """Let the authenticator take the frames read; write its answers. A refusal or a
        failure is handled here (whoever calls this)."""
        before = getattr(channel.authenticator, "reauthentications", 0)
        try:
            channel.prepare()
            if channel.ready:
                if getattr(channel.authenticator, "reauthentications", 0) > before:
                    self.successful_reauthentications += 1
                else:
                    self.successful_authentications += 1
            if channel.unsent:
                self._write(channel, now)
            elif channel.ready:
                self._touch(channel, now)
        except InvalidFrameSize as exc:
            self._refuse(channel, exc)
        except AuthenticationFailed as exc:
            self._failed_authentication(channel, exc)
        except OSError as exc:
            logger.debug("connection %s failed: %s", _address(channel.peer), exc)
            self._close(channel)
        self._update_interest(channel)

    def _dispatch(self, channel: KafkaChannel) -> None:
        """Send the channel's next request to the request queue, if it has a whole one and none
        in flight; otherwise make sure it is read."""
        if channel.id not in self._channels:
            return
        if not channel.ready:
            if channel.receive.partial and not channel.closing:
                self._authenticate(channel, time.monotonic())
            else:
                self._update_interest(channel)
            return
        if not channel.muted and not self._stopping:
            try:
                payload = channel.receive.next_frame()
            except InvalidFrameSize as exc:
                self._refuse(channel, exc)
                return
            if payload is not None and not self._authenticated(channel, payload):
                return
            if payload is not None:
                request = Request(self.id, channel.id, payload, channel.peer, channel.listener,
                                  channel.principal, self._requests, channel)
                channel.in_flight = request
                if self._blocked or not self._requests.try_send_request(request, self):
                    channel.pending = request
                    self._blocked = True
                    self._pause(channel)
        self._update_interest(channel)

    def _authenticated(self, channel: KafkaChannel, payload) -> bool:
        """Whether ``payload`` is a request for the handlers: not when it starts a
        re-authentication, nor when the session expired (the connection is then closed)."""
        authenticator = channel.authenticator
        now = time.monotonic()
        if _is_sasl_handshake(payload):
            try:
                started = authenticator.begin_reauthentication(channel, payload, now)
            except AuthenticationFailed as exc:
                self._failed_authentication(channel, exc)
                return False
            if started:
                logger.debug("re-authenticating %s", _address(channel.peer))
                self._authenticate(channel, now)
                return False
        if authenticator.session_expired(now):
            logger.info("closing %s: its SASL session expired (connections.max.reauth.ms) "
                        "without re-authentication", _address(channel.peer))
            self._close(channel)
            return False
        return True

    def _refuse(self, channel: KafkaChannel, exc: InvalidFrameSize) -> None:
        limit = "socket.request.max.bytes" if channel.ready else "sasl.server.max.receive.size"
        logger.warning("closing %s: %s (%s %d)", _address(channel.peer), exc, limit,
                       channel.receive.max_size)
        self._close(channel)

    def _pause(self, channel: KafkaChannel) -> None:
        if not channel.paused:
            channel.paused = True
            self._paused.append(channel)
            self._update_interest(channel)

    def _unblock(self) -> None:
        """The request queue has room again: queue what waited, read again."""
        paused = self._paused
        while paused:
            channel = paused[0]
            if channel.id in self._channels:
                if channel.pending is not None:
                    if not self._requests.try_send_request(channel.pending, self):
                        return
                    channel.pending = None
                channel.paused = False
                self._update_interest(channel)
            paused.popleft()
        self._blocked = False
        for channel in list(self._channels.values()):  # frames that arrived while blocked
            if channel.ready and not channel.muted and channel.receive.partial:
                self._dispatch(channel)

    # -- writing ----------------------------------------------------------------------------

    def _process_responses(self) -> None:
        responses = self._responses
        while responses:
            request = responses.popleft()
            channel = self._channels.get(request.connection_id)
            if channel is None or channel.in_flight is not request:
                request.release()  # the connection is gone
                continue
            if channel.held:  # the chain of requests it ends was not written yet
                for earlier in channel.held:
                    channel.queue_send(earlier.chunks, earlier)
                    earlier.chunks = None
                channel.held.clear()
            action = request.action
            if action == SENT:  # its handler sent the response: the connection is back
                channel.in_flight = None
                self._touch(channel, time.monotonic())
                self._dispatch(channel)
                continue
            if not request.sending:
                request.sending = _perf_ns()
            try:
                if action == SEND:
                    channel.queue_send(request.chunks, request)
                    request.chunks = None
                    channel.in_flight = None
                    self._dispatch(channel)  # handled while this response is being written
                    self._write(channel, time.monotonic())
                elif action == NO_RESPONSE:
                    channel.in_flight = None
                    self._finish(request)
                    self._dispatch(channel)
                else:
                    assert action == CLOSE
                    logger.info("closing %s: %s", _address(channel.peer), request.reason)
                    self._finish(request)
                    if channel.sends:  # the answers to the requests before it, if they fit
                        channel.write()
                    self._close(channel)
            except OSError as exc:
                logger.debug("connection %s failed: %s", _address(channel.peer), exc)
                self._close(channel)

    def _write(self, channel: KafkaChannel, now: float) -> None:
        done = channel.write()
        if channel.closing and not channel.unsent:
            self._close(channel)  # its refusal is out
            return
        if done:
            self._touch(channel, now)
            for send in done:
                if send.request is not None:
                    self._finish(send.request)
            self._dispatch(channel)  # it may have waited for its responses to be written
        else:
            self._update_interest(channel)

    def _finish(self, request: Request) -> None:
        request.sent = _perf_ns()
        self._metrics.record(request)


def _address(peer: tuple) -> str:
    return f"{peer[0]}:{peer[1]}" if peer else "?"


def _is_sasl_handshake(payload) -> bool:
    """Whether the request's API key (its first two bytes) is SaslHandshake's."""
    return len(payload) >= 2 and payload[1] == SASL_HANDSHAKE and payload[0] == 0


def _reason(exc: OSError) -> str:
    return getattr(exc, "reason", None) or exc.strerror or str(exc)
