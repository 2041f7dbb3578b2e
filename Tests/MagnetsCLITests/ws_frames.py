"""WebSocket frames (RFC 6455) on a plain socket, shared by the tests' helpers (live_client.py,
cut_proxy.py, hostile_server.py): reading a socket a frame or a message at a time, and making
the frames to send. No magnets code: the helpers speak the protocol from PROTOCOL.md alone."""
import os
import struct


class Reader:
    """Reads a socket exactly as far as asked, keeping what came beyond for the next read; a
    socket that ends first raises `closed`."""

    def __init__(self, sock, buffer=b"", closed=EOFError):
        self.sock, self.buffer, self.closed = sock, buffer, closed

    def exactly(self, n):
        while len(self.buffer) < n:
            more = self.sock.recv(1 << 20)
            if not more:
                raise self.closed("closed")
            self.buffer += more
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def head(self, limit=None):
        """An HTTP head: everything up to the blank line, which is read but not returned. More
        than `limit` bytes without one raises `closed`."""
        while b"\r\n\r\n" not in self.buffer:
            if limit is not None and len(self.buffer) > limit:
                raise self.closed("no end to the head")
            more = self.sock.recv(1 << 16)
            if not more:
                raise self.closed("closed during the head")
            self.buffer += more
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        return head

    def frame(self):
        """(its bytes as they came, fin, opcode, payload unmasked) of the next frame."""
        head = self.exactly(2)
        n, extra = head[1] & 0x7F, b""
        if n == 126:
            extra = self.exactly(2)
            (n,) = struct.unpack("!H", extra)
        elif n == 127:
            extra = self.exactly(8)
            (n,) = struct.unpack("!Q", extra)
        mask = self.exactly(4) if head[1] & 0x80 else b""
        payload = self.exactly(n)
        return head + extra + mask + payload, bool(head[0] & 0x80), head[0] & 0x0F, xor(payload, mask)

    def message(self, send):
        """The next message: ("text", bytes), ("binary", bytes) or ("close", its code or None).
        Fragments are joined; a ping is answered through `send(opcode, payload)`, a pong skipped."""
        parts, kind = [], None
        while True:
            _, fin, opcode, payload = self.frame()
            if opcode == 8:
                return "close", struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
            if opcode == 9:
                send(10, payload)
                continue
            if opcode == 10:
                continue
            if opcode in (1, 2):
                kind = "text" if opcode == 1 else "binary"
            parts.append(payload)
            if fin:
                return kind, b"".join(parts)


def frame(opcode, payload, fin=True, masked=False):
    """A frame's bytes; `masked` as a client's must be, with a fresh mask."""
    first, bit, n = (0x80 if fin else 0) | opcode, 0x80 if masked else 0, len(payload)
    if n < 126:
        head = struct.pack("!BB", first, bit | n)
    elif n < 65536:
        head = struct.pack("!BBH", first, bit | 126, n)
    else:
        head = struct.pack("!BBQ", first, bit | 127, n)
    if not masked:
        return head + payload
    mask = os.urandom(4)
    return head + mask + xor(payload, mask)


def xor(payload, mask):
    """`payload` masked with `mask` (or unmasked: the same), repeated; as it is without one."""
    if not mask:
        return payload
    repeated = (mask * (len(payload) // 4 + 1))[: len(payload)]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(len(payload), "big")
