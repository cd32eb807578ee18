"""moto's S3 server for the tests, with its requests handled one at a time.

Real S3 makes a conditional write (`If-None-Match: *`, `If-Match`) atomic. moto's threaded
server checks the condition and stores the object as two steps, so two concurrent
`If-None-Match: *` PUTs can both succeed there, and the lock tests ("16 contenders: exactly
one holder") would fail on moto's race rather than on ours. One lock around the WSGI
application restores S3's guarantee; connections are still served by threads, so keep-alive
clients never wait for each other's idle sockets.

Usage: <moto-venv>/bin/python scripts/moto-server.py -H 127.0.0.1 -p <port>
"""

import threading

from moto import server

_serial = threading.Lock()
_dispatch = server.DomainDispatcherApplication.__call__


def _serialized(self, environ, start_response):
    with _serial:
        # moto builds each response completely; materialising the iterable inside the lock
        # keeps any lazy body in the same critical section.
        return list(_dispatch(self, environ, start_response))


server.DomainDispatcherApplication.__call__ = _serialized

if __name__ == "__main__":
    server.main()
