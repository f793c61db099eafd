"""Starts short-lived programs (espeak-ng, one per spoken line) for the Node process.

Why: a spawn from Node forks the Node process, and copying its page tables holds the event loop
for tens of milliseconds at a platform's RSS (12 ms median at 258 MB, 75 ms at 680 MB; measured,
docs/sip-stack.md), long enough to leave a gap in every call's audio. This process is small, so
its forks are cheap, and they happen off Node's event loop. process-spawner.ts starts it once.

  request (one line of JSON):
    {"id": 7, "argv": ["espeak-ng", "--stdout", ...], "stdin": "text"}   run a program
    {"id": 7, "kill": true}                                              kill it (SIGKILL)
  responses (a line of JSON, then, for "data", exactly that many bytes):
    {"id": 7, "data": 4096}             a piece of the program's stdout
    {"id": 7, "exit": 0, "stderr": ""}  it ended (exit -9: killed); "error": it could not start

The first line written is {"ready": true}. The process ends when its stdin closes (Node went).
"""

import json
import os
import subprocess
import sys
import threading

out = sys.stdout.buffer
out_lock = threading.Lock()
running = {}
# Kills that arrived before their program started (the request's thread had not got to it yet).
cancelled = set()
running_lock = threading.Lock()


def send(header, payload=b""):
    line = (json.dumps(header) + "\n").encode()
    with out_lock:
        out.write(line + payload)
        out.flush()


def run(request_id, argv, text):
    try:
        child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as error:
        send({"id": request_id, "error": str(error)})
        return
    with running_lock:
        running[request_id] = child
        if request_id in cancelled:
            cancelled.discard(request_id)
            child.kill()
    stderr = []
    drain = threading.Thread(target=lambda: stderr.append(child.stderr.read(2000)), daemon=True)
    drain.start()
    try:
        child.stdin.write(text.encode())
        child.stdin.close()
    except OSError:
        pass  # killed before it read its text: its exit code says so
    fd = child.stdout.fileno()
    while True:
        piece = os.read(fd, 65536)
        if not piece:
            break
        send({"id": request_id, "data": len(piece)}, piece)
    code = child.wait()
    drain.join()
    with running_lock:
        running.pop(request_id, None)
    send({"id": request_id, "exit": code, "stderr": (stderr[0] if stderr else b"").decode(errors="replace")})


def main():
    send({"ready": True})
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        request_id = request.get("id")
        if request.get("kill"):
            with running_lock:
                child = running.get(request_id)
                if child is None:
                    cancelled.add(request_id)
            if child is not None:
                try:
                    child.kill()
                except OSError:
                    pass
            continue
        threading.Thread(target=run, args=(request_id, request["argv"], request.get("stdin", "")), daemon=True).start()
    # Node went away: take the running programs down with us.
    with running_lock:
        for child in running.values():
            try:
                child.kill()
            except OSError:
                pass


if __name__ == "__main__":
    main()
