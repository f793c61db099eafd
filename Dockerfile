# Production image of the platform: compiled JavaScript (dist/) run by plain node, as user `node`.
# No Docker engine runs on our machines: `scripts/check-dockerfile.ts` runs these steps without one
# and `test/system/container-files.test.ts` checks this file on every `npm test` (docs/deployment.md).
# Node 24 is an LTS line (maintenance until 2028-04-30); bookworm matches the Debian we test on.

# Build stage: dev dependencies (TypeScript) compile the production folders into dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied; the build runs below.
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build:dist

# Runtime stage: production dependencies and dist/ only.
FROM node:24-bookworm-slim
# espeak-ng and pocketsphinx: the offline voice (python3-pocketsphinx runs the recogniser's decoder
# workers, dist/media/speech/recogniser/worker.py, with the pocketsphinx-en-us model, and the
# spawner that starts espeak-ng, dist/media/speech/spawner/spawner.py); sox: audio
# conversion; openssl: the self-signed SIP TLS certificate made on first start when none is
# configured; rtpengine-daemon: WebRTC media of web calls (the gateway starts it in userspace mode).
RUN apt-get update \
 && apt-get install -y --no-install-recommends espeak-ng sox python3-pocketsphinx pocketsphinx-en-us openssl rtpengine-daemon \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY examples ./examples
# The data volume (PGlite, generated secrets, TLS certificate, recordings) must belong to the user
# the platform runs as; a volume mounted at /data starts with this ownership.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
# 8080 control API, 8081 sandbox, SIP 5060 UDP/TCP, 5061 TLS, 5062 WebSocket, 5063 secure
# WebSocket (web calls), 8082 cloud telephony providers' webhooks and media streams. RTP uses the
# UDP range RTP_PORT_MIN..RTP_PORT_MAX: docker-compose.yml sets it and publishes that same range
# (not listed here, so `docker run -P` does not publish ten thousand ports).
EXPOSE 8080 8081 8082 5060/udp 5060/tcp 5061/tcp 5062/tcp 5063/tcp
USER node
# Ready = the control role answers /readyz (database reachable, not draining). Slim images have no
# curl, so node's own fetch asks; CONTROL_PORT is the same variable the platform reads.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.CONTROL_PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--enable-source-maps", "dist/bin/platform.js"]
