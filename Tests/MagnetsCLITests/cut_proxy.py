#!/usr/bin/env python3
"""A TCP proxy in front of `magnets serve` that cuts a live connection at one step of the
exchange (PROTOCOL.md), for the tests: it passes the upgrade, then reads the WebSocket frames
both ways and closes both sockets at the step named.

    cut_proxy.py SERVER_PORT STEP      prints the port it listens on, then serves until killed

Steps: after-hello (the server's hello reaches the client, then the cut), mid-bundle (half of
the server's first bundle part reaches it), before-checked (the client's checked never reaches
the server), before-done (the server's done never reaches the client).
"""
import socket
import struct
import sys
import threading


def read_exactly(sock, n, buffer):
    while len(buffer[0]) < n:
        more = sock.recv(1 << 16)
        if not more:
            raise EOFError
        buffer[0] += more
    data, buffer[0] = buffer[0][:n], buffer[0][n:]
    return data


def frames(sock, buffer):
    """(raw bytes, opcode, payload) of each frame, payload unmasked."""
    while True:
        head = read_exactly(sock, 2, buffer)
        n, masked = head[1] & 0x7F, head[1] & 0x80
        extra = b""
        if n == 126:
            extra = read_exactly(sock, 2, buffer)
            (n,) = struct.unpack("!H", extra)
        elif n == 127:
            extra = read_exactly(sock, 8, buffer)
            (n,) = struct.unpack("!Q", extra)
        mask = read_exactly(sock, 4, buffer) if masked else b""
        payload = read_exactly(sock, n, buffer)
        plain = bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if masked else payload
        yield head + extra + mask + payload, head[0] & 0x0F, plain


def serve(client, server_port, step):
    upstream = socket.create_connection(("127.0.0.1", server_port))
    done = threading.Event()

    def cut():
        done.set()
        for s in (client, upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def pump(source, sink, from_server):
        buffer = [b""]
        try:
            # The upgrade request or answer: everything up to the blank line.
            while b"\r\n\r\n" not in buffer[0]:
                more = source.recv(1 << 16)
                if not more:
                    raise EOFError
                buffer[0] += more
            head, buffer[0] = buffer[0].split(b"\r\n\r\n", 1)
            sink.sendall(head + b"\r\n\r\n")
            for raw, opcode, payload in frames(source, buffer):
                text = payload.decode(errors="replace") if opcode == 1 else ""
                if from_server and step == "before-done" and '"done"' in text:
                    return cut()
                if not from_server and step == "before-checked" and '"checked"' in text:
                    return cut()
                if from_server and step == "mid-bundle" and opcode == 2:
                    sink.sendall(raw[: len(raw) // 2])
                    return cut()
                sink.sendall(raw)
                if from_server and step == "after-hello" and '"hello"' in text:
                    return cut()
        except (EOFError, OSError):
            if not done.is_set():
                cut()

    threading.Thread(target=pump, args=(client, upstream, False), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client, True), daemon=True).start()


def main():
    server_port, step = int(sys.argv[1]), sys.argv[2]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        serve(client, server_port, step)


if __name__ == "__main__":
    main()
