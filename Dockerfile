# Production image of the platform. Not built in CI here (no Docker engine on our machines);
# kept in step with the README quick start: the same `npm ci` and `npm start`.
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends espeak-ng sox pocketsphinx pocketsphinx-en-us openssl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY . .
ENV NODE_ENV=production DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080 8081 5060/udp 5060/tcp 5061/tcp 5062/tcp
USER node
CMD ["node", "--import", "tsx", "bin/platform.ts"]
