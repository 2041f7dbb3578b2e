"""A compact bundle (PROTOCOL.md, "Compact bundles") made from a §5 text bundle, written from
PROTOCOL.md alone (no magnets code): the hostile server sends it, whole or damaged.

    messages(TEXT_BUNDLE, block=N) -> [bytes, ...]   the header block, then blocks of N ops
"""
import json
import math
import struct

KINDS = ["board.create", "board.resize", "tray.add", "zone.add", "zone.remove", "boundary.add",
         "boundary.remove", "magnet.pull", "magnet.move", "magnet.return", "op.undo"]


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def zigzag(n):
    return (n << 1) if n >= 0 else ((-n) << 1) - 1


def string(s):
    b = s.encode()
    return varint(len(b)) + b


def whole(d):
    return float(d).is_integer() and abs(d) < 2**52 and not (d == 0 and math.copysign(1, d) < 0)


def number(d):
    return varint(zigzag(int(d)) << 1) if whole(d) else b"\x01" + struct.pack("<d", float(d))


def header_block(header):
    out = b"\x01" + string(header["board"]) + varint(len(header["clock"]))
    for replica in sorted(header["clock"], key=lambda r: r.encode()):
        out += string(replica) + varint(header["clock"][replica])
    return out + varint(header["ops"])


class Block:
    def __init__(self):
        self.strings, self.contexts = {}, {}
        self.columns = [[] for _ in range(7)]
        self.payloads = bytearray()
        self.last_seq, self.lamport, self.time, self.x, self.y = {}, 0, 0, 0.0, 0.0
        self.count = 0

    def s(self, text):
        return self.strings.setdefault(text, len(self.strings))

    def coordinate(self, value, axis):
        previous = getattr(self, axis)
        if whole(value) and whole(previous):
            self.payloads += varint(zigzag(int(value) - int(previous)) << 1)
        else:
            self.payloads += b"\x01" + struct.pack("<d", float(value))
        setattr(self, axis, float(value))

    def point(self, p):
        self.coordinate(p[0], "x")
        self.coordinate(p[1], "y")

    def target(self, op):
        if "to" in op:
            self.payloads += varint(0)
            self.point(op["to"])
        else:
            self.payloads += varint(len(op["path"]) + 1)
            for p in op["path"]:
                self.point(p)

    def magnet(self, text):
        replica, seq = text.rsplit("-", 1)
        self.payloads += varint(self.s(replica)) + varint(int(seq))

    def add(self, op):
        self.count += 1
        replica, seq = op["replica"], op["seq"]
        context = tuple(sorted(((r, c) for r, c in op["clock"].items() if r != replica), key=lambda e: e[0].encode()))
        if context not in self.contexts:
            for r, _ in context:
                self.s(r)
            self.contexts[context] = len(self.contexts)
        values = [self.s(replica), zigzag(seq - self.last_seq.get(replica, 0)), zigzag(op["lamport"] - self.lamport),
                  self.contexts[context], self.s(op["author"]), zigzag(op["time"] - self.time), KINDS.index(op["kind"])]
        self.last_seq[replica], self.lamport, self.time = seq, op["lamport"], op["time"]
        for column, value in zip(self.columns, values):
            column.append(value)
        p, kind = self.payloads, op["kind"]
        if kind == "board.create":
            p += varint(self.s(op["name"])) + number(op["width"]) + number(op["height"])
        elif kind == "board.resize":
            p += number(op["width"]) + number(op["height"])
        elif kind == "tray.add":
            p += varint(self.s(op["letter"])) + varint(self.s(op["color"])) + number(op["width"]) + number(op["height"])
            p += varint(0) if op.get("unlimited") else varint(1) + varint(zigzag(op["count"]))
        elif kind == "zone.add":
            p += varint(self.s(op["name"])) + b"".join(number(op[k]) for k in ("x", "y", "width", "height"))
            p += varint(zigzag(op["capacity"]))
            accepts = op.get("accepts")
            p += varint(0) if accepts is None else varint(len(accepts) + 1) + b"".join(varint(self.s(c)) for c in accepts)
        elif kind in ("zone.remove", "boundary.remove"):
            p += varint(self.s(op["name"]))
        elif kind == "boundary.add":
            p += varint(self.s(op["name"]))
            self.point(op["from"])
            self.point(op["to"])
        elif kind == "magnet.pull":
            p += varint(self.s(op["letter"])) + varint(self.s(op["color"]))
            self.target(op)
        elif kind == "magnet.move":
            self.magnet(op["magnet"])
            self.target(op)
        elif kind == "magnet.return":
            self.magnet(op["magnet"])
        elif kind == "op.undo":
            replica, seq = op["target"].rsplit(":", 1)
            p += varint(self.s(replica)) + varint(int(seq)) + varint(zigzag(op["target_lamport"]))
            if "magnet" in op:
                p += varint(1)
                self.magnet(op["magnet"])
            elif "zone" in op:
                p += varint(3) + varint(self.s(op["zone"]))
            elif "boundary" in op:
                p += varint(4) + varint(self.s(op["boundary"]))
            elif "letter" in op:
                p += varint(2) + varint(self.s(op["letter"])) + varint(self.s(op["color"]))
            else:
                p += varint(0)

    def finish(self):
        out = b"\x02" + varint(self.count) + varint(len(self.strings))
        out += b"".join(string(s) for s in self.strings)  # (dicts keep the order of insertion)
        out += varint(len(self.contexts))
        for context in self.contexts:
            out += varint(len(context)) + b"".join(varint(self.strings[r]) + varint(c) for r, c in context)
        for column in self.columns:
            runs = bytearray()
            i = 0
            while i < len(column):
                j = i
                while j < len(column) and column[j] == column[i]:
                    j += 1
                runs += varint(j - i) + varint(column[i])
                i = j
            out += varint(len(runs)) + bytes(runs)
        return out + varint(len(self.payloads)) + bytes(self.payloads)


def messages(bundle, block=1000):
    lines = bundle.split(b"\n")[:-1]
    header, ops = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    out = [header_block(header)]
    for start in range(0, len(ops), block):
        b = Block()
        for op in ops[start : start + block]:
            b.add(op)
        out.append(b.finish())
    return out
