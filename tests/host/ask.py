# ask.py - for the shoald integration tests' raw control clients (python3):
# ask(PATH, REQUEST) sends REQUEST (bytes, its newline included) on a
# connection of its own to the control socket at PATH and returns the
# whole answer (bytes), read until shoald closes the connection.
import socket


def ask(path, req):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(req)
    got = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
    s.close()
    return got
