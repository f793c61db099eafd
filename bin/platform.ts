import { realpathSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, parseRoles } from '../core/config/load-config.js';
import type { PlatformConfig } from '../core/config/schema.js';
import { ListenError, StartupError } from '../core/errors.js';
import { createLogger, type Logger } from '../core/logger.js';
import { collectProcessMetrics } from '../core/metrics.js';
import type { DrainControl, DrainStatus } from '../control-api/api/management/admin-drain.js';
import { openStore, type Store } from '../control-api/platform/store/database.js';
import { migrateToLatest } from '../control-api/platform/store/migrate.js';
import { storeStartupError } from '../control-api/platform/store/startup-errors.js';
import { createOpsApp } from '../control-api/platform/http/ops-app.js';
import { serve, type RunningServer } from '../control-api/platform/http/serve.js';
import { resolveLocalSecrets } from './local-secrets.js';
import { roleStartOrder, roleStarters } from './roles/index.js';
import type { PlatformContext, RunningRole } from './roles/role.js';

/**
 * sysexits(3) codes for a listener that cannot open: EX_NOPERM for a privileged port, EX_CONFIG
 * for an address that is not this host's, EX_UNAVAILABLE otherwise (a port in use).
 */
const listenExitCodes: Readonly<Record<string, number>> = { EACCES: 77, EADDRNOTAVAIL: 78, EADDRINUSE: 69 };

export interface Platform {
  readonly config: PlatformConfig;
  readonly store: Store;
  readonly roles: readonly RunningRole[];
  stop(): Promise<void>;
}

export interface StartOptions {
  /**
   * What a drain requested over the API (POST /v1/admin/drain) runs: the process's own shutdown
   * (drain, stop, exit). Without it the platform stops without exiting.
   */
  readonly onShutdownRequested?: (reason: string) => void;
}

/** The store, migrated; a failure the operator can fix (directory in use, no such database) is a StartupError. */
async function openMigratedStore(config: PlatformConfig): Promise<{ store: Store; applied: readonly string[] }> {
  let store: Store | undefined;
  try {
    store = await openStore({
      ...(config.database.url ? { url: config.database.url } : {}),
      pgliteDir: path.join(config.dataDir, 'pglite'),
      poolSize: config.database.poolSize,
    });
    const { applied } = await migrateToLatest(store.db);
    return { store, applied };
  } catch (error) {
    await store?.close().catch(() => undefined);
    throw storeStartupError(error, config.database.url) ?? error;
  }
}

/** Builds the whole platform from a validated config: store, migrations, then each role. */
export async function startPlatform(config: PlatformConfig, logger: Logger, options: StartOptions = {}): Promise<Platform> {
  collectProcessMetrics();
  const secrets = resolveLocalSecrets(config.dataDir, config.security);
  if (secrets.operatorTokenFile) {
    logger.info({ file: secrets.operatorTokenFile }, 'management API operator token generated for local use (read it from this file)');
  }
  const { store, applied } = await openMigratedStore(config);
  logger.info({ store: store.kind, migrationsApplied: applied.length }, 'database ready');

  let draining = false;
  const liveCallSources: Array<() => number> = [];
  const status = (): DrainStatus => ({ draining, liveCalls: liveCallSources.reduce((n, count) => n + count(), 0), drainTimeoutMs: config.drainTimeoutMs });
  const drain: DrainControl = {
    start() {
      if (!draining) {
        draining = true;
        // `stop` is defined below; a drain can only be requested once the roles run.
        const shutdown = options.onShutdownRequested ?? (() => void stop());
        shutdown('drain requested');
      }
      return status();
    },
    status,
  };
  // Until every role runs, /readyz says so: a HEALTHCHECK or load balancer that saw the control
  // API answer first would otherwise send work (or a SIGTERM) to a half-started process.
  let started = false;
  const readinessChecks = {
    startup: async (): Promise<void> => {
      if (!started) throw new Error('starting');
    },
  };
  const ctx: PlatformContext = { config, logger, store, secrets, isDraining: () => draining, readinessChecks, drain, countLiveCalls: (count) => void liveCallSources.push(count) };
  const roles: RunningRole[] = [];
  let ops: RunningServer | undefined;
  try {
    for (const name of roleStartOrder.filter((r) => config.roles.includes(r))) {
      roles.push(
        await roleStarters[name](ctx).catch((error: unknown) => {
          // Name the role in a listen failure: "SIP WS (gateway role) cannot listen on ...".
          throw error instanceof ListenError ? new ListenError(`${error.listener} (${name} role)`, error.host, error.port, error.cause) : error;
        }),
      );
    }
    ops = await startOps(config, ctx);
    started = true;
  } catch (error) {
    await Promise.allSettled(roles.map((r) => r.stop(0)));
    await store.close();
    throw error;
  }

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      draining = true;
      // Drain first, every role at once (docs/operations.md): the gateway answers new INVITEs
      // and OPTIONS 503 and waits for its live calls up to drainTimeoutMs, the worker places no
      // new call; the control API and sandbox go on serving, with /readyz at 503.
      logger.info({ liveCalls: status().liveCalls, drainTimeoutMs: config.drainTimeoutMs }, 'draining');
      await Promise.all(
        roles.map(async (role) => {
          try {
            await role.drain?.(config.drainTimeoutMs);
          } catch (error) {
            logger.error({ role: role.name, err: error }, 'role did not drain cleanly');
          }
        }),
      );
      // Reverse start order: the gateway stops taking calls before the parts it depends on go.
      for (const role of [...roles].reverse()) {
        try {
          await role.stop(config.shutdownGraceMs);
        } catch (error) {
          logger.error({ role: role.name, err: error }, 'role did not stop cleanly');
        }
      }
      // Last: its /metrics and /readyz answer for the whole drain.
      await ops?.close(config.shutdownGraceMs);
      await store.close();
    })();
    return stopping;
  };
  return { config, store, roles, stop };
}

/** The ops endpoint when `ops.port` is set; without it a process serving no HTTP says it cannot be scraped. */
async function startOps(config: PlatformConfig, ctx: PlatformContext): Promise<RunningServer | undefined> {
  if (config.ops.port === undefined) {
    if (!config.ops.metricsOnAppPorts) ctx.logger.warn('ops.metricsOnAppPorts is false and ops.port is unset: /metrics is served nowhere');
    else if (!config.roles.includes('control') && !config.roles.includes('sandbox')) {
      ctx.logger.warn({ roles: config.roles }, 'no /metrics, /readyz or /healthz in this process: set ops.port (OPS_PORT) to serve them');
    }
    return undefined;
  }
  const app = createOpsApp({ store: ctx.store, logger: ctx.logger.child({ role: 'ops' }), isDraining: ctx.isDraining, readinessChecks: ctx.readinessChecks, metricsToken: config.ops.metricsToken });
  const running = await serve(app, config.ops.host, config.ops.port, { name: 'ops endpoint', http: config.http });
  ctx.logger.info({ url: running.url, port: running.port }, 'ops endpoint listening (/healthz, /readyz, /metrics)');
  return running;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      role: { type: 'string' },
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write('usage: platform [--role all|gateway,control,sandbox,worker] [--config file.yaml]\n');
    return;
  }
  let config: PlatformConfig;
  try {
    config = loadConfig({
      ...(values.config ? { file: values.config } : {}),
      ...(values.role ? { overrides: { roles: parseRoles(values.role) } } : {}),
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 78; // EX_CONFIG
      return;
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel });
  let platform: Platform | undefined;
  let signals = 0;
  let exiting = false;
  /** A signal that came while the roles were starting: acted on once they run. */
  let signalledDuringStart: NodeJS.Signals | undefined;
  /** Drain, stop every role, exit: SIGTERM, SIGINT and POST /v1/admin/drain all end here. */
  const shutdown = (reason: string): void => {
    if (exiting || !platform) return;
    exiting = true;
    logger.info({ reason, drainTimeoutMs: config.drainTimeoutMs, graceMs: config.shutdownGraceMs }, 'shutting down');
    platform.stop().then(
      () => {
        logger.info('stopped');
        logger.flush();
        // Every role has stopped and the database is closed. Exit now rather than when the loop
        // drains: Agenda keeps an idle 30 s liveness timer per finished run, which would hold a
        // stopped worker for up to 30 s.
        process.exit(process.exitCode ?? 0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        logger.flush();
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      // The operator does not want to wait for the drain: live calls are cut without a BYE.
      logger.warn({ signal }, 'second signal: exiting now');
      logger.flush();
      process.exit(130);
    }
    if (!platform) {
      // `docker stop` right after `docker run`: stop cleanly once started rather than die
      // half-way through a migration or a certificate write.
      signalledDuringStart = signal;
      logger.info({ signal }, 'signal while starting: stopping once started');
      return;
    }
    shutdown(signal);
  };
  // Before the start, not after: a signal in between would take Node's default (exit 143).
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    platform = await startPlatform(config, logger, { onShutdownRequested: shutdown });
  } catch (error) {
    // Operational failures, not bugs: one line naming what failed, a sysexits status, no stack.
    if (error instanceof ListenError) {
      logger.fatal({ listener: error.listener, host: error.host, port: error.port, code: error.code }, error.message);
      logger.flush();
      process.exit(listenExitCodes[error.code] ?? 69);
    }
    if (error instanceof StartupError) {
      logger.fatal(error.details, error.message);
      logger.flush();
      process.exit(error.exitCode);
    }
    throw error;
  }
  logger.info({ roles: platform.roles.map((r) => r.name) }, 'platform started');
  if (signalledDuringStart) shutdown(signalledDuringStart);
}

/**
 * Whether this module is the process entry (`node dist/bin/platform.js`, or the .ts under tsx in
 * tests), not imported for startPlatform(). Node gives a module its real path, hence realpath.
 */
function isEntryModule(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false; // an entry path that does not exist as given (no extension): not this file
  }
}

if (isEntryModule()) {
  main().catch((error: unknown) => {
    process.stderr.write(`platform failed to start: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
