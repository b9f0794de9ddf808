"""The recorder's writer process: ``python -m roadsim.capture.writer_process FD PATH
OVERWRITE COMPRESSION CHUNK_SIZE``, started by `roadsim.capture.Recorder`, which talks to
it over the socket FD (see `roadsim.capture.recorder.serve`)."""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

from roadsim.capture.recorder import serve


def main(argv: list[str]) -> None:
    fd, path, overwrite, compression, chunk_size = argv
    serve(Connection(int(fd)), path, overwrite == "1", compression, int(chunk_size))


if __name__ == "__main__":
    main(sys.argv[1:])
