"""The network layer, as Kafka's implementation chapter (5.1) describes it: "a fairly
straightforward NIO server": one acceptor thread per listener, and ``num.network.threads``
processor threads each serving a fixed share of the connections, with a selector; then a bounded
request queue, ``num.io.threads`` request handler threads, and a purgatory where requests that
wait are parked without holding a thread. The number of threads does not depend on the number of
connections.

How a request travels::

    client --> acceptor ------------> processor (TLS handshake and SASL login first, on secured
                                                 listeners; then reads the frame; the
                                                 connection is muted)
                (quotas: max.connections,      |
                 max.connections.per.ip)       v
                                       request queue (queued.max.requests; full: stop reading)
                                               |
                                               v
                                       request handler thread --> Dispatcher --> API handler
                                               |                                     |
                                               |        (may wait: purgatory, completed by an
                                               |         append, a coordinator, a timeout)
                                               v                                     v
                                       response queue of the processor  <------------+
                                               |
                                               v
    client <-- processor (writes: sendmsg for bytes, sendfile for record data; the connection
               is unmuted once the response is sent, and its next request is read)

One shortcut departs from Kafka's pipeline, for CPython's sake. Kafka's threads run in parallel;
here one thread at a time runs Python (the GIL), so each handoff between threads (processor to
request queue to handler to response queue to processor, each a wake-up) costs more than the
work of a small request, and a client that pipelines requests on one connection (a producer)
would be served at the pace of those handoffs. So the request handler that answered a request
on a plaintext connection (its socket may be used from any thread, unlike a TLS session's state)
finishes the job when nothing stands in the way, as ``finish`` in :mod:`.processor` details::

    request handler thread: handle --> write the response (the socket takes it at once, and
        ^                              none of the connection's is waiting) --> the next request,
        |                              already read or in the socket, no other in the queue
        +--------------------------------------------------------------------------+

While the connection's next request is read already, the handler holds the response back and
writes it with the following ones, 17 responses in one gathering write at most: a producer with
many requests in flight gets a system call, and a wake-up, per run of responses rather than per
response, and its requests are read up to 256 KiB at a time (:mod:`.receive`).

For the same reason a handler may also take the plaintext connection's requests read after the
one in hand, at once, and answer them all in one response (``Request.following`` and
``take_following``): the dispatcher does so for a producer's Produce requests (acks=1 or all),
whose records for a partition then go to the log in one write
(:func:`~broker_lite.server.handlers.produce.handle_run`). The requests keep their order, each
gets its own answer, and each counts in the request metrics.

Anything else goes the way drawn above: a response the socket does not take whole (the processor
writes the rest), a connection with no whole request to read (the processor gets it back, and
waits for its next one), a request queue where others wait (the next request takes its turn
there), a TLS connection, a re-authentication. What Kafka guarantees holds: one request in
flight per connection, responses in request order, the number of threads fixed, back-pressure
through ``queued.max.requests``, and no thread ever blocks on a socket (the handler's reads and
writes are non-blocking, and it stops where they would block). In the request metrics, a request
taken this way spent no time in the request queue nor in the response queue.

=========================  ======================================================================
module                     concept (Kafka's class)
=========================  ======================================================================
:mod:`.socket_server`      listeners, acceptors and processors; start, enable, stop (SocketServer)
:mod:`.acceptor`           accepting connections, handing them to processors (Acceptor)
:mod:`.processor`          one network thread and its connections (Processor)
:mod:`.channel`            one connection: transport, authenticator, frames, sends (KafkaChannel)
:mod:`.channel_builders`   each listener's transports and authenticators (ChannelBuilders)
:mod:`.transport`          plaintext bytes, or TLS over memory BIOs (Plaintext/SslTransportLayer)
:mod:`.authenticator`      who the client is: nobody, a certificate's subject (Authenticator)
:mod:`.sasl`               SaslHandshake, SaslAuthenticate, re-authentication
                           (SaslServerAuthenticator)
:mod:`.receive`            size-prefixed frames out of a byte stream (NetworkReceive)
:mod:`.quotas`             max.connections and max.connections.per.ip (ConnectionQuotas)
:mod:`.request_channel`    the request queue, the way back, stage times (RequestChannel)
:mod:`.request_handler`    the request handler threads (KafkaRequestHandlerPool)
:mod:`.request_metrics`    per-API request counts and stage latencies (RequestChannel metrics)
:mod:`.config`             the settings, with Kafka's names
=========================  ======================================================================

Kafka frames every request and response with a 4-byte big-endian size; a request larger than
``socket.request.max.bytes`` closes its connection before its body is read, and a connection idle
for ``connections.max.idle.ms`` is closed by its processor, as is one that has not finished its
TLS handshake and SASL login by then. Each request carries the listener it came in on and its
principal (``User:ANONYMOUS``, ``User:alice``, ``User:CN=...``).
"""

from .config import NetworkConfig
from .request_channel import RESPONDS_LATER, CloseConnection, Request, RequestChannel
from .request_handler import RequestHandlerPool
from .socket_server import Listener, SocketServer

__all__ = ["RESPONDS_LATER", "CloseConnection", "Listener", "NetworkConfig", "Request",
           "RequestChannel", "RequestHandlerPool", "SocketServer"]
