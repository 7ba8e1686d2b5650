"""A board's web page on a localhost port: TCP forwarded into the board's namespace.

The panels listen inside their boards' network namespaces, as on the boards; a browser on
the host reaches them through `localhost:<port>`. Each connection is relayed to
127.0.0.1:<port> inside the namespace (the socket is opened from within it), so the boards
need no IP addressing for it.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading

from foosball.rig.network import inside


class PortForward:
    def __init__(self, port: int, namespace: str | None, target_port: int | None = None,
                 host: str = "127.0.0.1") -> None:
        self.port = port
        self.namespace = namespace
        self.target_port = target_port or port
        self._server = socket.create_server((host, port), reuse_port=False)
        self._running = True
        self._thread = threading.Thread(target=self._accept, name=f"forward-{port}",
                                        daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while self._running:
            readable, _, _ = select.select([self._server], [], [], 0.2)
            if not readable:
                continue
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        try:
            with inside(self.namespace):
                upstream = socket.create_connection(("127.0.0.1", self.target_port), 5.0)
        except OSError:
            client.close()
            return
        pair = {client: upstream, upstream: client}
        try:
            while self._running:
                readable, _, _ = select.select(list(pair), [], [], 0.5)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    pair[sock].sendall(data)
        except OSError:
            pass
        finally:
            for sock in pair:
                with contextlib.suppress(OSError):
                    sock.close()

    def close(self) -> None:
        self._running = False
        self._server.close()
        self._thread.join(timeout=1.0)
