# The media relay: Debian bookworm's rtpengine 10.5 (`rtpengine-daemon`, the package the test
# suite runs), in userspace (`--table=-1`: no kernel module). Build context: edge-conf/.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends rtpengine-daemon \
 && rm -rf /var/lib/apt/lists/*
CMD ["rtpengine", "--config-file=none", "--foreground", "--log-stderr", "--table=-1"]
