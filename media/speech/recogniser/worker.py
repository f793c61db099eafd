"""One long-lived pocketsphinx decoder, driven by the Node process over stdin/stdout.

Run by Debian's /usr/bin/python3 with Debian's python3-pocketsphinx (the pyenv python3 on a
developer's PATH lacks it). recogniser-pool.ts starts a few of these and sends one request per
utterance:

  request:  one line of JSON, then exactly `bytes` bytes of 16 kHz 16-bit little-endian PCM
            {"id": 7, "search": {"jsgf": "#JSGF V1.0; ..."} | {"lm": true},
             "beams": [1e-60, 1e-60, 1e-45] | null, "wip": 3e-3 | null,
             "words": [["ph_aa", "AA"], ...], "bytes": 46720}
  response: one line of JSON
            {"id": 7, "ok": true, "text": "yes i'll be there", "score": -7841, "frames": 146,
             "wip": -341, "compiled": false, "segments": [["yes", 0, 32, -1878, 0], ...],
             "decodeMs": 210.3, "cpuMs": 205.1}
            {"id": 7, "ok": false, "error": "..."}

The first line the worker writes is {"ready": true, ...} once the model is loaded (or
{"fatal": "..."} before it exits when it cannot start).

Why a long-lived decoder: pocketsphinx_continuous loaded the model for every decode and cut the
audio with its own VAD; here the model stays loaded, each caller turn (already cut by the
platform's endpointer) is ONE utterance, and each grammar is compiled once and switched to by
name.
"""

import collections
import hashlib
import json
import math
import os
import sys
import time

try:
    from pocketsphinx import Decoder
except ImportError as error:  # the Node side reports this as "python3-pocketsphinx is not installed"
    sys.stdout.write(json.dumps({"fatal": "python3-pocketsphinx is not installed: %s" % error}) + "\n")
    sys.stdout.flush()
    sys.exit(3)

MODEL_DIR = os.environ.get("VAP_POCKETSPHINX_MODEL", "/usr/share/pocketsphinx/model/en-us")
# Grammars compiled and kept at once. A block's grammar serves every turn of every call running
# that block. Measured here: compiling one takes 6-11 ms of CPU and holds 3-7 MB (a block's answer
# grammar, one with 150 knowledge words), against 200-600 ms for a decode; so a few are kept and
# the least recently used slot is reused (pocketsphinx frees the search a name held when the
# name gets a new one), which bounds the worker's memory.
SEARCH_SLOTS = int(os.environ.get("VAP_RECOGNISER_SEARCHES", "16"))
# pocketsphinx's own defaults, for requests that name no beams or insertion penalty.
DEFAULT_BEAMS = (1e-48, 1e-48, 7e-29)
DEFAULT_WIP = 0.65


def create_decoder():
    config = Decoder.default_config()
    config.set_string("-hmm", os.path.join(MODEL_DIR, "en-us"))
    # The whole CMU dictionary, read once (0.15 s); pocketsphinx_continuous read it per decode,
    # which is why the old code cut a dictionary per grammar.
    config.set_string("-dict", os.path.join(MODEL_DIR, "cmudict-en-us.dict"))
    config.set_string("-logfn", "/dev/null")
    return Decoder(config)


def insertion_penalty(config, wip):
    """The per-word insertion penalty a grammar search applies, as fsg_search.c computes it:
    (int32)(logmath_log(wip) * lw) >> SENSCR_SHIFT, with lw held in an int32 (6.5 becomes 6).
    pocketsphinx_continuous logged it ("wip: -341" at 3e-3, "-26" at the default 0.65) and the
    Node side scored readings with it; this gives the same number without a log to read."""
    log_base = config.get_float("-logbase")
    return (int(math.log(wip) / math.log(log_base)) * int(config.get_float("-lw"))) >> 10


class Worker:
    def __init__(self):
        self.decoder = create_decoder()
        self.config = self.decoder.get_config()
        self.slots = collections.OrderedDict()  # grammar key -> slot name

    def add_words(self, words):
        """Adds the dictionary entries a grammar needs that the model's dictionary lacks."""
        missing = [(w, p) for w, p in words if self.decoder.lookup_word(w) is None]
        for i, (word, phones) in enumerate(missing):
            # `update` on the last one only: it rebuilds the searches' word tables once.
            self.decoder.add_word(word, phones, i == len(missing) - 1)

    def select(self, search, beams, wip):
        """Switches to the search for this grammar and these settings; compiles it on first use.
        Returns the search's word insertion penalty and whether it was compiled now."""
        beams = tuple(beams or DEFAULT_BEAMS)
        wip = wip if wip is not None else DEFAULT_WIP
        if search.get("lm"):
            key = "lm"
        else:
            key = hashlib.sha1(json.dumps([search["jsgf"], beams, wip]).encode()).hexdigest()
        penalty = insertion_penalty(self.config, wip)
        if key in self.slots:
            self.slots.move_to_end(key)
            self.decoder.set_search(self.slots[key])
            return penalty, False
        # A search takes the beams and penalties of the decoder's configuration when it is created.
        self.config.set_float("-beam", beams[0])
        self.config.set_float("-pbeam", beams[1])
        self.config.set_float("-wbeam", beams[2])
        self.config.set_float("-wip", wip)
        if len(self.slots) >= SEARCH_SLOTS:
            _, name = self.slots.popitem(last=False)
        else:
            name = "s%d" % len(self.slots)
        try:
            if key == "lm":
                self.decoder.set_lm_file(name, os.path.join(MODEL_DIR, "en-us.lm.bin"))
            else:
                self.decoder.set_jsgf_string(name, search["jsgf"])
        except RuntimeError:
            raise ValueError("pocketsphinx refused the grammar (a syntax error or a word missing from the dictionary)")
        self.slots[key] = name
        self.decoder.set_search(name)
        return penalty, True

    def decode(self, request, pcm):
        started, cpu = time.perf_counter(), time.process_time()
        self.add_words(request.get("words") or [])
        penalty, compiled = self.select(request["search"], request.get("beams"), request.get("wip"))
        decoder = self.decoder
        # start_stream resets the front end's noise statistics: without it a turn was decoded
        # differently depending on the turns decoded before it (another call's, even).
        decoder.start_stream()
        decoder.start_utt()
        # full_utt=True: the whole turn at once, so cepstral mean normalisation uses this turn's
        # own mean (the model's "batch" setting) instead of a prior carried over between turns.
        decoder.process_raw(pcm, False, True)
        decoder.end_utt()
        hyp = decoder.hyp()
        segments = [[s.word, s.start_frame, s.end_frame, s.ascore, s.lscore] for s in decoder.seg()] if hyp else []
        return {
            "ok": True,
            "text": hyp.hypstr if hyp else "",
            "score": hyp.best_score if hyp else 0,
            "frames": decoder.n_frames(),
            "wip": penalty,
            "compiled": compiled,
            "segments": segments,
            "decodeMs": round((time.perf_counter() - started) * 1000, 1),
            # CPU time: what the decode costs, whatever else the machine is doing.
            "cpuMs": round((time.process_time() - cpu) * 1000, 1),
        }


def read_exactly(stream, n):
    chunks = []
    while n > 0:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def main():
    stdin, stdout = sys.stdin.buffer, sys.stdout
    try:
        worker = Worker()
    except Exception as error:  # model missing or unreadable
        stdout.write(json.dumps({"fatal": "pocketsphinx model could not be loaded: %s" % error}) + "\n")
        stdout.flush()
        sys.exit(3)
    stdout.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    stdout.flush()
    try:
        while True:
            header = stdin.readline()
            if not header:
                return  # the Node side closed stdin: shut down
            request = json.loads(header)
            pcm = read_exactly(stdin, int(request.get("bytes", 0)))
            try:
                response = worker.decode(request, pcm)
            except Exception as error:  # a bad request fails alone; the worker and its searches stay
                response = {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}
            response["id"] = request.get("id")
            stdout.write(json.dumps(response) + "\n")
            stdout.flush()
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return


if __name__ == "__main__":
    main()
