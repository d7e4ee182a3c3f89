"""Responses on their way out: bytes and file regions written as far as the socket takes them,
resumed later, in order."""

import os

import pytest

from broker_lite.log.segment import FileRegion
from broker_lite.server.network.channel import ResponseSend


class Socket:
    """A transport taking at most ``budget`` bytes per call (0: would block)."""

    def __init__(self, budget: int):
        self.budget = budget
        self.received = bytearray()
        self.calls = 0

    def send_buffers(self, buffers) -> int:
        self.calls += 1
        if self.budget == 0:
            raise BlockingIOError
        data = b"".join(bytes(b) for b in buffers)[:self.budget]
        self.received += data
        return len(data)

    def send_region(self, region, position: int, count: int) -> int:
        self.calls += 1
        if self.budget == 0:
            raise BlockingIOError
        data = os.pread(region.fd, min(count, self.budget), position)
        self.received += data
        return len(data)


@pytest.fixture
def region(tmp_path):
    path = tmp_path / "segment"
    path.write_bytes(bytes(range(100)))
    with open(path, "rb") as file:
        yield lambda position, size: FileRegion(file.fileno(), position, size)


def test_bytes_go_out_in_one_gathering_write(region):
    socket = Socket(budget=1000)
    send = ResponseSend([b"head", b"er", b"body"])
    assert send.write_to(socket) is True
    assert socket.received == b"header" + b"body" and socket.calls == 1


@pytest.mark.parametrize("budget", [1, 3, 7, 50])
def test_partial_writes_resume_where_they_stopped(region, budget):
    socket = Socket(budget=budget)
    send = ResponseSend([b"abc", region(10, 20), b"", b"xyz", region(90, 10)])
    rounds = 0
    while not send.write_to(socket):
        rounds += 1
        assert rounds < 1000
    assert socket.received == b"abc" + bytes(range(10, 30)) + b"xyz" + bytes(range(90, 100))


def test_a_full_socket_leaves_everything_for_later(region):
    socket = Socket(budget=0)
    send = ResponseSend([b"abc", region(0, 5)])
    assert send.write_to(socket) is False
    socket.budget = 100
    assert send.write_to(socket) is True
    assert socket.received == b"abc" + bytes(range(5))


def test_a_region_past_the_end_of_its_file_is_padded_with_zeros(region):
    socket = Socket(budget=1000)
    send = ResponseSend([region(95, 10), b"!"])
    assert send.write_to(socket) is True
    assert socket.received == bytes(range(95, 100)) + bytes(5) + b"!"


def test_regions_are_closed_once_sent_or_dropped(region):
    sent, dropped = region(0, 10), region(0, 10)
    assert ResponseSend([sent]).write_to(Socket(budget=100))
    ResponseSend([b"x", dropped]).close()
    assert sent.fd == -1 and dropped.fd == -1


def test_empty_chunks_are_passed_over_wherever_they_are(region):
    socket = Socket(budget=1000)
    send = ResponseSend([b"", b"ab", b"", region(0, 3), b""])
    assert send.write_to(socket) is True
    assert socket.received == b"ab" + bytes(range(3))


@pytest.mark.parametrize("sent", [0, 1, 2, 5, 6])
def test_a_response_partly_sent_elsewhere_goes_on_from_there(sent):
    socket = Socket(budget=1000)
    send = ResponseSend([b"abc", b"", b"def", b""], sent=sent)
    assert send.write_to(socket) is True
    assert socket.received == b"abcdef"[sent:]
