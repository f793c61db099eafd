# The SIP edge: Debian bookworm's Kamailio 5.6, the package the test suite runs
# (test/system/edge-multi-node.test.ts), with this folder's configuration. Every module
# kamailio.cfg loads is in the `kamailio` package. Build context: edge-conf/.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends kamailio \
 && rm -rf /var/lib/apt/lists/*
COPY kamailio.cfg dispatcher.list /etc/vap-edge/
# Binds its sockets as root, then drops to the package's kamailio user (-u/-g).
CMD ["kamailio", "-DD", "-E", "-u", "kamailio", "-g", "kamailio", "-f", "/etc/vap-edge/kamailio.cfg"]
