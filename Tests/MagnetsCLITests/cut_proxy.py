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
import sys
import threading

# The test leaves no compiled copy of its helper beside it (SwiftPM would warn of the file).
sys.dont_write_bytecode = True
import ws_frames  # noqa: E402


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
        reader = ws_frames.Reader(source)
        try:
            # The upgrade request or answer: everything up to the blank line.
            sink.sendall(reader.head() + b"\r\n\r\n")
            while True:
                raw, _, opcode, payload = reader.frame()
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
