#!/usr/bin/env python3
"""A client of a board's live connection written from PROTOCOL.md alone (no magnets code), for
the tests: a WebSocket client on a plain socket (RFC 6455) and scenarios that speak the protocol
by hand. Each scenario prints one JSON object with what it saw.

    live_client.py PORT BOARD TOKEN SCENARIO [ARG]

Scenarios:
    exchange CLOCK_JSON BUNDLE_FILE   hello with CLOCK, read the server's hello and bundle, send
                                      BUNDLE_FILE as the bundle, checked, read done
    exchange-compact CLOCK_JSON BUNDLE_FILE
                                      the same offering compact bundles: the server's is read as
                                      blocks, BUNDLE_FILE sent as blocks (compact_bundle.py)
    follow                            an exchange of nothing, then follow; prints the first taken
    follow-until-close                follow, then print every message until the server closes
    malformed | unknown | early-checked | oversize | stall
                                      a broken exchange; prints the refusal or the close
    hands MAGNET RO_TOKEN             a page "eve" sends bad hands (malformed, oversized, an
                                      unknown magnet, 1,000 in a second), a viewer (RO_TOKEN)
                                      sends one; an observer page "obs" reports what it saw
"""
import base64
import json
import os
import socket
import struct
import sys
import time

# The test leaves no compiled copy of its helper beside it (SwiftPM would warn of the file).
sys.dont_write_bytecode = True
import compact_bundle  # noqa: E402
import ws_frames  # noqa: E402


class Closed(Exception):
    pass


class WebSocket:
    def __init__(self, port, path, token):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        key = base64.b64encode(os.urandom(16)).decode()
        head = (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {token}\r\n\r\n"
        )
        self.sock.sendall(head.encode())
        self.reader = ws_frames.Reader(self.sock, closed=Closed)
        self.status = int(self.reader.head().split(b" ")[1])

    def send_frame(self, opcode, payload, fin=True):
        self.sock.sendall(ws_frames.frame(opcode, payload, fin=fin, masked=True))

    def send_json(self, obj):
        self.send_frame(1, json.dumps(obj).encode())

    def send_text(self, text):
        self.send_frame(1, text.encode())

    def send_binary(self, data):
        self.send_frame(2, data)

    def receive(self):
        """The next message: ("text", str), ("binary", bytes) or ("close", code)."""
        kind, data = self.reader.message(self.send_frame)
        return kind, data.decode() if kind == "text" else data

    def receive_json(self):
        kind, data = self.receive()
        if kind != "text":
            raise Closed(f"expected a control message, got {kind} {data!r:.80}")
        return json.loads(data)

    def receive_bundle(self):
        """The peer's bundle, whole: (header, op lines)."""
        data = b""
        while True:
            kind, part = self.receive()
            if kind != "binary":
                raise Closed(f"expected bundle bytes, got {kind} {part!r:.200}")
            data += part
            lines = data.split(b"\n")
            header = json.loads(lines[0]) if len(lines) > 1 else None
            if header is not None and len(lines) - 2 == header["ops"] and data.endswith(b"\n"):
                return header, lines[1:-1]


def receive_compact(ws):
    """The peer's compact bundle, whole: (header as a dict, ops). Only the counts are read."""
    kind, block = ws.receive()
    if kind != "binary" or block[:1] != b"\x01":
        raise Closed(f"expected a header block, got {kind} {block!r:.200}")
    at = 1
    def varint():
        nonlocal at
        value, shift = 0, 0
        while True:
            b = block[at]
            at += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value
    def string():
        nonlocal at
        n = varint()
        at += n
        return block[at - n : at].decode()
    board = string()
    clock = {}
    for _ in range(varint()):
        replica = string()
        clock[replica] = varint()
    count, ops = varint(), 0
    while ops < count:
        kind, block = ws.receive()
        if kind != "binary" or block[:1] != b"\x02":
            raise Closed(f"expected a block of ops, got {kind} {block!r:.200}")
        at = 1
        ops += varint()
    return {"board": board, "clock": clock, "ops": count}, ops


def until_close(ws):
    """What comes until the connection closes: control messages and the close code."""
    seen = []
    try:
        while True:
            kind, data = ws.receive()
            if kind == "close":
                seen.append({"close": data})
                return seen
            seen.append(json.loads(data) if kind == "text" else {"binary": len(data)})
    except (Closed, OSError) as error:
        seen.append({"closed": str(error)})
        return seen


def messages_for(ws, seconds):
    """The text messages that come within `seconds` (JSON), and whether the connection closed."""
    seen, closed = [], False
    ws.sock.settimeout(0.2)
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            kind, data = ws.receive()
        except socket.timeout:
            continue
        except (Closed, OSError):
            closed = True
            break
        if kind == "close":
            closed = True
            break
        if kind == "text":
            seen.append(json.loads(data))
    ws.sock.settimeout(20)
    return seen, closed


def hands(port, board, token, magnet, ro_token):
    out = {}
    observer = WebSocket(port, f"/boards/{board}/live", token)
    observer.send_json({"type": "join", "name": "obs"})
    eve = WebSocket(port, f"/boards/{board}/live", token)
    eve.send_json({"type": "join", "name": "eve"})
    viewer = WebSocket(port, f"/boards/{board}/live", ro_token)
    viewer.send_json({"type": "join", "name": "val"})
    out["eve_joined"] = eve.receive_json()
    refusals = []

    def refused(ws, send):
        # Pages say they are still here (a page silent for 8 s is closed).
        observer.send_json({"type": "here"})
        send()
        seen, closed = messages_for(ws, 1.1)
        refusals.append({"refusals": [m["error"] for m in seen if m["type"] == "hand-refused"], "closed": closed})

    refused(eve, lambda: eve.send_text('{"type": "hand", "magnet": "' + magnet + '", "x": "left"}'))
    refused(eve, lambda: eve.send_text('{"type": "hand", "magnet": "' + magnet + '", "x": 1, "y": 2, "pad": "' + "x" * 2000 + '"}'))
    refused(eve, lambda: eve.send_json({"type": "hand", "magnet": "nobody-99", "x": 10, "y": 10}))

    def flood():
        for i in range(1000):
            eve.send_json({"type": "hand", "magnet": magnet, "x": 100 + i % 500, "y": 200})

    started = time.time()
    refused(eve, flood)
    out["flood_seconds"] = round(time.time() - started, 2)
    refused(viewer, lambda: viewer.send_json({"type": "hand", "magnet": magnet, "x": 5, "y": 5}))
    out["refused"] = refusals
    # The good hand after all that arrives, with eve's name.
    time.sleep(1.1)
    eve.send_json({"type": "hand", "magnet": magnet, "x": 321, "y": 123})
    seen, closed = messages_for(observer, 1.5)
    out["observer_closed"] = closed
    hands_seen = [h for m in seen if m["type"] in ("hand", "hands") for h in m.get("hands", [m])]
    out["observer_hands"] = len(hands_seen)
    out["observer_last_hand"] = hands_seen[-1] if hands_seen else None
    out["observer_present"] = [m for m in seen if m["type"] == "present"][-1:]
    out["observer_refusals"] = [m for m in seen if m["type"] == "hand-refused"]
    print(json.dumps(out), flush=True)


def main():
    port, board, token, scenario = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    if scenario == "hands":
        hands(port, board, token, sys.argv[5], sys.argv[6])
        return
    ws = WebSocket(port, f"/boards/{board}/live", token)
    out = {"status": ws.status}
    if ws.status != 101:
        print(json.dumps(out))
        return
    if scenario in ("exchange", "exchange-compact"):
        compact = scenario == "exchange-compact"
        clock = json.loads(sys.argv[5])
        with open(sys.argv[6], "rb") as f:
            bundle = f.read()
        board_id = json.loads(bundle.split(b"\n")[0])["board"]
        hello = {"type": "hello", "protocol": 1, "board": board_id, "clock": clock, "dry_run": False}
        if compact:
            hello["encodings"] = ["compact"]
        ws.send_json(hello)
        out["hello"] = ws.receive_json()
        if compact:
            header, count = receive_compact(ws)
            out["received"] = {"clock": header["clock"], "ops": count}
            # Blocks of one op each: every block is read on its own.
            for block in compact_bundle.messages(bundle, block=1):
                ws.send_binary(block)
        else:
            header, lines = ws.receive_bundle()
            out["received"] = {"clock": header["clock"], "ops": len(lines)}
            # The bundle in parts cut at odd places (inside lines), as the protocol allows.
            for start in range(0, len(bundle), 97):
                ws.send_binary(bundle[start : start + 97])
        ws.send_json({"type": "checked"})
        out["done"] = ws.receive_json()
    elif scenario == "follow":
        ws.send_json({"type": "follow"})
        out["ready"] = True
        print(json.dumps(out), flush=True)
        out = {"taken": ws.receive_json()}
    elif scenario == "follow-until-close":
        ws.send_json({"type": "follow"})
        print(json.dumps({"ready": True}), flush=True)
        seen = until_close(ws)
        out["types"] = [m.get("type", m.get("close", "closed")) if isinstance(m, dict) else m for m in seen]
        out["resync"] = [m for m in seen if m.get("type") == "resync"]
    elif scenario == "malformed":
        ws.send_text("{this is not json")
        out["seen"] = until_close(ws)
    elif scenario == "unknown":
        ws.send_json({"type": "teleport", "where": "moon"})
        out["seen"] = until_close(ws)
    elif scenario == "early-checked":
        ws.send_json({"type": "checked"})
        out["seen"] = until_close(ws)
    elif scenario == "oversize":
        # Only the head of a 5 MiB frame: the size it announces is refused at once.
        ws.sock.sendall(struct.pack("!BBQ", 0x82, 0x80 | 127, 5 << 20) + os.urandom(4))
        out["seen"] = until_close(ws)
    elif scenario == "stall":
        # A hello, then nothing: the server gives up on the exchange after its timeout.
        ws.send_json({"type": "hello", "protocol": 1, "board": sys.argv[5], "clock": {}, "dry_run": False})
        started = time.time()
        out["seen"] = until_close(ws)
        out["seconds"] = round(time.time() - started, 1)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
