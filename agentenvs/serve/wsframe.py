"""WebSocket framing (RFC 6455) over a blocking socket, read and written on the caller's thread.

The server runs each connection on a thread of its own and the client does
its reads when it waits for a reply, so a message crosses no thread but the
one that needs it: websockets' sync client and an asyncio server each woke
one more thread per message, which was most of a remote step's cost.
Extensions (permessage-deflate) are never negotiated; control frames are
answered as they arrive; a message is whole (fragments joined) when returned.
"""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import struct
import threading
from typing import BinaryIO

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, BINARY, CONTINUATION, CLOSE, PING, PONG = 0x1, 0x2, 0x0, 0x8, 0x9, 0xA
#: Below this, header and payload go out in one ``sendall`` (one segment with TCP_NODELAY).
_JOIN_BELOW = 1 << 16


class WebSocketClosed(ConnectionError):
    """The peer closed the connection (``code`` as it sent it, 1006 when the socket simply ended)."""

    def __init__(self, code: int = 1006, reason: str = ""):
        super().__init__(f"the WebSocket closed ({code}{': ' + reason if reason else ''})")
        self.code = code
        self.reason = reason


class ProtocolError(ConnectionError):
    """The peer broke the protocol; the connection is closed with ``code``."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def accept_key(key: str) -> str:
    """``Sec-WebSocket-Accept`` for a client's ``Sec-WebSocket-Key``."""
    return base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()


def new_key() -> str:
    return base64.b64encode(os.urandom(16)).decode()


def valid_key(key: str) -> bool:
    try:
        return len(base64.b64decode(key, validate=True)) == 16
    except ValueError:
        return False


def _sendable(code: int) -> bool:
    """Whether a close frame may carry ``code`` (RFC 6455 7.4: 1005, 1006 and 1015 never travel)."""
    return code in (1000, 1001, 1002, 1003) or 1007 <= code <= 1014 or 3000 <= code <= 4999


def _masked(data: bytes, key: bytes) -> bytes:
    """``data`` XOR the repeated 4-byte ``key``, as one big-integer operation (fast in CPython)."""
    n = len(data)
    if n == 0:
        return data
    stream = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "little") ^ int.from_bytes(stream, "little")).to_bytes(n, "little")


class WebSocket:
    """One end of an open WebSocket: ``send`` and ``recv`` whole messages.

    ``rfile`` is a buffered reader of ``sock`` (the one that read the
    handshake, so bytes that came with it are not lost). A client masks what
    it sends and refuses masked frames; a server the reverse. ``max_size``
    bounds a message (None: no bound). A timeout or a broken frame leaves the
    stream unusable: the caller closes the connection.
    """

    def __init__(self, sock: socket.socket, rfile: BinaryIO, *, client: bool, max_size: int | None = None):
        self.sock = sock
        self._rfile = rfile
        self._client = client
        self._max_size = max_size
        self._send_lock = threading.Lock()
        self._close_sent = False
        self._timeout: float | None = sock.gettimeout()
        self._keys, self._key_at = b"", 0

    def send(self, message: str | bytes) -> None:
        """A text frame for ``str``, a binary frame for ``bytes``."""
        if isinstance(message, str):
            self._send_frame(TEXT, message.encode())
        else:
            self._send_frame(BINARY, bytes(message))

    def recv(self, timeout: float | None = None) -> str | bytes:
        """The next message (``str`` for text); pings are answered on the way. Raises ``TimeoutError``
        when none is whole within ``timeout`` seconds, ``WebSocketClosed`` when the peer closed."""
        if timeout != self._timeout:  # each settimeout is two fcntl calls: only on a change
            self.sock.settimeout(timeout)
            self._timeout = timeout
        opcode, parts, size = 0, [], 0
        while True:
            fin, frame_op, payload = self._read_frame(size)
            if frame_op >= CLOSE:
                self._on_control(frame_op, payload)
                continue
            if frame_op == CONTINUATION:
                if not opcode:
                    raise self._fail(1002, "a continuation frame with no message to continue")
            elif opcode:
                raise self._fail(1002, "a new message began before the last one ended")
            else:
                opcode = frame_op
            size += len(payload)
            parts.append(payload)
            if fin:
                break
        data = b"".join(parts)
        if opcode == BINARY:
            return data
        try:
            return data.decode()
        except UnicodeDecodeError:
            raise self._fail(1007, "a text message that is not UTF-8") from None

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Send a close frame (once) and end the socket; never raises."""
        try:
            if not self._close_sent:
                self._close_sent = True
                self._send_frame(CLOSE, struct.pack("!H", code) + reason.encode()[:123])
        except OSError:
            pass
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def _on_control(self, opcode: int, payload: bytes) -> None:
        if opcode == PING:
            self._send_frame(PONG, payload)
        elif opcode == CLOSE:
            if len(payload) == 1:
                raise self._fail(1002, "a close frame's code is two bytes")
            code = struct.unpack("!H", payload[:2])[0] if payload else 1005
            if payload and not _sendable(code):
                raise self._fail(1002, f"close code {code} may not be sent")
            try:
                reason = payload[2:].decode()
            except UnicodeDecodeError:
                raise self._fail(1007, "a close reason that is not UTF-8") from None
            self.close(1000 if code == 1005 else code)
            raise WebSocketClosed(code, reason)
        elif opcode != PONG:
            raise self._fail(1002, f"an unknown control opcode {opcode:#x}")

    def _read_exact(self, n: int) -> bytes:
        data = self._rfile.read(n)
        if len(data) < n:
            raise WebSocketClosed(1006, "the connection ended")
        return data

    def _read_frame(self, before: int = 0) -> tuple[bool, int, bytes]:
        """The next frame; ``before``: the bytes of the message it continues, which count to ``max_size``."""
        first, second = self._read_exact(2)
        fin, opcode, masked, length = bool(first & 0x80), first & 0x0F, bool(second & 0x80), second & 0x7F
        if first & 0x70:
            raise self._fail(1002, "reserved bits set: no extension was agreed")
        if opcode not in (CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG):
            raise self._fail(1002, f"an unknown opcode {opcode:#x}")
        if opcode >= CLOSE and (length > 125 or not fin):
            raise self._fail(1002, "a control frame over 125 bytes or fragmented")
        if masked == self._client:
            raise self._fail(1002, "a server must not mask its frames" if self._client else "unmasked client frame")
        if length == 126:
            length = struct.unpack("!H", self._read_exact(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._read_exact(8))[0]
        if opcode >= CLOSE:
            before = 0  # a control frame amid a message is not part of it
        if self._max_size is not None and before + length > self._max_size:  # refused before it is read
            raise self._fail(1009, f"a message over {self._max_size} bytes")
        key = self._read_exact(4) if masked else b""
        payload = self._read_exact(length) if length else b""
        return fin, opcode, _masked(payload, key) if masked else payload

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        mask_bit = 0x80 if self._client else 0
        if n < 126:
            header = struct.pack("!BB", 0x80 | opcode, mask_bit | n)
        elif n < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, mask_bit | 126, n)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, mask_bit | 127, n)
        with self._send_lock:
            if self._client:
                if self._key_at == len(self._keys):  # masking keys from the OS's generator, 256 at a time
                    self._keys, self._key_at = os.urandom(1024), 0
                key = self._keys[self._key_at : self._key_at + 4]
                self._key_at += 4
                header, payload = header + key, _masked(payload, key)
            if n < _JOIN_BELOW:
                self.sock.sendall(header + payload)
            else:
                self.sock.sendall(header)
                self.sock.sendall(payload)

    def _fail(self, code: int, message: str) -> ProtocolError:
        self.close(code, message)
        return ProtocolError(code, message)
