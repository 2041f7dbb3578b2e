#!/usr/bin/env python3
"""A hostile magnets server, for the tests and `magnets-fuzz hostile-server`: it answers a board's
HTTP requests (clone's GET …/ops, the board's description) and its live connection (a WebSocket,
PROTOCOL.md) in ways that try to exhaust or hang a client.

    hostile_server.py MODE [INTERVAL]        prints the port it listens on, then serves until killed
    hostile_server.py seeded SEED BUNDLE     each connection a behaviour drawn from SEED

Modes (INTERVAL: seconds between the bytes or messages of a trickle, default 10):
    silent         reads the request and answers nothing, ever
    trickle        HTTP 200, then one byte every INTERVAL; a WebSocket: the server's hello,
                   then its bundle one byte per message, a message every INTERVAL
    endless        HTTP 200 with an endless body and no newline; a WebSocket: the hello, then
                   an endless bundle line in 1 MiB messages
    endless-error  HTTP 500 with an endless body, also to a WebSocket's upgrade
    taken          a WebSocket that sends an empty `taken` every INTERVAL and never a hello
    big-text       a WebSocket whose hello is followed by a 5 MiB text message
    refuse         a WebSocket that answers the hello with a refusal of status -1 and a 100,000-character reason

`seeded` draws, for each connection, one of the modes above or an answer made from BUNDLE (a
real bundle of the board, `magnets ops export`): whole, or mutated (bytes flipped, lines cut,
doubled, swapped or dropped, its header's count or board changed) — to a client that offers
compact bundles, half the time as a compact bundle (`compact_bundle.py`), whole or with its
blocks flipped, cut, doubled, swapped, dropped or replaced — with the live exchange's
messages honest, missing, out of turn, malformed or lying (a `done` with a wrong clock), the
connection cut or stalled at any step.
"""
import base64
import hashlib
import json
import random
import socket
import sys
import threading
import time

# The test leaves no compiled copy of its helper beside it (SwiftPM would warn of the file).
sys.dont_write_bytecode = True
import compact_bundle  # noqa: E402
import ws_frames  # noqa: E402

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def read_head(conn):
    """The request line, its headers (lower-case names) and a reader of what follows."""
    reader = ws_frames.Reader(conn)
    lines = reader.head(limit=65536).decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return lines[0], headers, reader


class Peer:
    """The client's side of a WebSocket, as the server reads it (frames masked by the client)."""

    def __init__(self, conn, reader):
        self.conn, self.reader = conn, reader

    def message(self):
        """("text" | "binary", bytes) of the next message; pings answered, a close raises."""
        kind, data = self.reader.message(self.send)
        if kind == "close":
            raise EOFError
        return kind, data

    def send(self, opcode, payload):
        self.conn.sendall(ws_frames.frame(opcode, payload))

    def json(self, obj):
        self.send(1, json.dumps(obj).encode())

    def hello(self):
        """The client's hello (board, clock), read; the forms of bundle it offers in `offers`."""
        kind, data = self.message()
        hello = json.loads(data) if kind == "text" else {}
        self.offers = hello.get("encodings") or []
        return hello.get("board"), hello.get("clock") or {}

    def bundle(self, compact=False):
        """Reads the client's bundle to its end and its `checked`."""
        if compact:
            while True:
                kind, part = self.message()
                if kind == "text":
                    return json.loads(part)
        data = b""
        while True:
            kind, part = self.message()
            if kind == "text":
                return json.loads(part)
            data += part
            lines = data.split(b"\n")
            if len(lines) > 1:
                header = json.loads(lines[0])
                if len(lines) - 2 == header.get("ops") and data.endswith(b"\n"):
                    break
        kind, part = self.message()
        return json.loads(part) if kind == "text" else {}


def upgrade(conn, headers, reader):
    accept = base64.b64encode(hashlib.sha1(headers.get("sec-websocket-key", "").encode() + GUID).digest())
    conn.sendall(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
    )
    return Peer(conn, reader)


def forever():
    while True:
        time.sleep(3600)


def fixed(conn, mode, interval):
    """One connection in one of the fixed modes."""
    _, headers, reader = read_head(conn)
    if mode == "silent":
        forever()
    websocket = headers.get("upgrade", "").lower() == "websocket"
    if not websocket or mode == "endless-error":
        if mode == "endless-error":
            conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n\r\n")
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n")
        if mode == "trickle":
            while True:
                conn.sendall(b"{")
                time.sleep(interval)
        chunk = b"x" * (1 << 20)
        while True:
            conn.sendall(chunk)
    peer = upgrade(conn, headers, reader)
    if mode == "taken":
        while True:
            peer.json({"type": "taken", "entries": []})
            time.sleep(interval)
    board, clock = peer.hello()
    if mode == "refuse":
        peer.json({"type": "refuse", "status": -1, "error": "x" * 100000})
        forever()
    peer.json({"type": "hello", "protocol": 1, "board": board, "clock": clock, "access": "write"})
    if mode == "trickle":
        header = json.dumps({"magnets_bundle": 1, "board": board, "clock": clock, "since": None, "ops": 1})
        for byte in (header + "\n" + "x" * 10**9).encode():
            peer.send(2, bytes([byte]))
            time.sleep(interval)
    if mode == "big-text":
        peer.send(1, b" " * (5 << 20))
        forever()
    chunk = b"x" * (1 << 20)
    while True:
        peer.send(2, chunk)


# MARK: - Seeded


def mutate(bundle, rng):
    """BUNDLE changed in one of the ways a broken or lying server might change it."""
    lines = bundle.split(b"\n")[:-1]
    header, ops = json.loads(lines[0]), lines[1:]
    how = rng.choice(["flip", "truncate", "double", "swap", "drop", "count", "board", "clock", "empty", "junk"])
    if how == "flip" and bundle:
        data = bytearray(bundle)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if how == "truncate":
        return bundle[: rng.randrange(len(bundle) + 1)]
    if how == "double" and ops:
        i = rng.randrange(len(ops))
        ops.insert(i, ops[i])
    elif how == "swap" and len(ops) > 1:
        i, j = rng.randrange(len(ops)), rng.randrange(len(ops))
        ops[i], ops[j] = ops[j], ops[i]
    elif how == "drop" and ops:
        ops.pop(rng.randrange(len(ops)))
        header["ops"] -= rng.choice([0, 1])
    elif how == "count":
        header["ops"] = rng.choice([-1, 0, len(ops) + 1, 10**12, "3"])
    elif how == "board":
        header["board"] = rng.choice(["", "x" * 200, "another-board", None])
    elif how == "clock":
        header["clock"] = rng.choice([{}, {"BAD": 1}, {"zed": -1}, {"zed": 10**15}, [], None])
    elif how == "empty":
        return b""
    elif how == "junk":
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096)))
    return b"".join(line + b"\n" for line in [json.dumps(header).encode()] + ops)


def mutate_compact(blocks, rng):
    """The messages of a compact bundle changed as a broken or lying server might change them."""
    blocks = list(blocks)
    how = rng.choice(["flip", "truncate", "double", "swap", "drop", "count", "junk", "text", "varint"])
    i = rng.randrange(len(blocks))
    if how == "flip":
        data = bytearray(blocks[i])
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        blocks[i] = bytes(data)
    elif how == "truncate":
        blocks[i] = blocks[i][: rng.randrange(len(blocks[i]) + 1)]
    elif how == "double":
        blocks.insert(i, blocks[i])
    elif how == "swap":
        j = rng.randrange(len(blocks))
        blocks[i], blocks[j] = blocks[j], blocks[i]
    elif how == "drop":
        blocks.pop(i)
    elif how == "count":
        blocks[0] = blocks[0][:-1] + compact_bundle.varint(rng.choice([0, 1, 10**12, 2**64 - 1]))
    elif how == "junk":
        blocks[i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096)))
    elif how == "varint":
        at = rng.randrange(len(blocks[i]) + 1)
        blocks[i] = blocks[i][:at] + b"\xff" * rng.randint(1, 12) + b"\x01" + blocks[i][at:]
    else:
        blocks[i] = b'{"magnets_bundle": 1}\n'
    return blocks


def parts(data, rng):
    """DATA cut anywhere into parts of 1 byte to 1 MiB."""
    i = 0
    while i < len(data):
        n = rng.choice([1, 7, 100, 4096, 65536, 1 << 20])
        yield data[i : i + n]
        i += n


def seeded(conn, rng, bundle, interval):
    header = json.loads(bundle.split(b"\n")[0])
    modes = ["silent", "trickle", "endless", "endless-error", "taken", "big-text"]
    behaviour = rng.choice(modes + ["honest"] * 3 + ["mutated"] * 6 + ["lying"] * 4 + ["cut"] * 2)
    if behaviour in modes:
        return fixed(conn, behaviour, interval)
    request, headers, reader = read_head(conn)
    body = bundle if behaviour == "honest" else mutate(bundle, rng)
    if headers.get("upgrade", "").lower() != "websocket":
        if behaviour == "cut":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body[: len(body) // 2])
            return
        description = json.dumps({"id": header["board"], "name": "b", "width": 1, "height": 1, "ops": 1,
                                  "clock": header["clock"]}).encode()
        if "/ops" not in request:
            body = description
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        return
    peer = upgrade(conn, headers, reader)
    board, clock = peer.hello()
    steps = ["hello", "bundle", "checked", "done"]
    stop = rng.choice(steps) if behaviour in ("cut", "lying") else None
    how = rng.choice(["cut", "stall", "refuse", "malformed", "out-of-turn", "lie"]) if stop else None

    def misbehave():
        if how == "cut":
            conn.close()
        elif how == "stall":
            forever()
        elif how == "refuse":
            peer.json({"type": "refuse", "status": rng.choice([400, 409, 413, 500, 503, 999, -1]),
                       "error": rng.choice(["no", "x" * 100000, ""])})
        elif how == "malformed":
            peer.send(1, rng.choice([b"{", b"[]", b"null", b'{"type": 3}', b'{"type": "nope"}', b"\xff\xfe"]))
        elif how == "out-of-turn":
            peer.json(rng.choice([{"type": "checked"}, {"type": "follow"},
                                  {"type": "done", "accepted": 0, "skipped": 0, "clock": {}},
                                  {"type": "hello", "protocol": 1, "board": board, "clock": {}}]))
        else:
            peer.json({"type": "done", "accepted": rng.choice([-5, 0, 10**9]), "skipped": 0,
                       "clock": rng.choice([{}, clock, {"zed": 10**12}, {"BAD": 1}])})
        forever()

    if stop == "hello":
        misbehave()
    # A client that offers compact bundles gets one half the time, damaged as a text one would be.
    compact = "compact" in peer.offers and rng.random() < 0.5
    answer = {"type": "hello", "protocol": 1, "board": board if rng.random() < 0.9 else "other",
              "clock": header["clock"] if rng.random() < 0.9 else clock, "access": "write" if rng.random() < 0.9 else "read"}
    if compact:
        answer["encoding"] = "compact" if rng.random() < 0.95 else rng.choice(["zip", 3, None])
    peer.json(answer)
    if compact:
        blocks = compact_bundle.messages(bundle, block=rng.choice([1, 3, 1000]))
        if behaviour != "honest":
            blocks = mutate_compact(blocks, rng)
        if stop == "bundle":
            for block in blocks[: rng.randrange(len(blocks) + 1)]:
                peer.send(2, block)
            misbehave()
        for block in blocks:
            peer.send(2, block)
    else:
        if stop == "bundle":
            for part in parts(body[: rng.randrange(len(body) + 1)], rng):
                peer.send(2, part)
            misbehave()
        for part in parts(body, rng):
            peer.send(2, part)
    peer.bundle(compact)
    if stop in ("checked", "done"):
        misbehave()
    peer.json({"type": "done", "accepted": 0, "skipped": 0, "clock": header["clock"]})
    forever()


def main():
    mode = sys.argv[1]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    if mode == "seeded":
        rng = random.Random(int(sys.argv[2]))
        bundle = open(sys.argv[3], "rb").read()
        interval = 0.5
    else:
        rng, bundle = None, None
        interval = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0

    def serve(conn, connection_rng):
        try:
            if mode == "seeded":
                seeded(conn, connection_rng, bundle, interval)
            else:
                fixed(conn, mode, interval)
        except (OSError, EOFError, ValueError):
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    while True:
        conn, _ = listener.accept()
        connection_rng = random.Random(rng.random()) if rng else None
        threading.Thread(target=serve, args=(conn, connection_rng), daemon=True).start()


if __name__ == "__main__":
    main()
