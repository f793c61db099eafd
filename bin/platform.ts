import { realpathSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, parseRoles } from '../core/config/load-config.js';
import type { PlatformConfig } from '../core/config/schema.js';
import { ListenError } from '../core/errors.js';
import { createLogger, type Logger } from '../core/logger.js';
import { openStore, type Store } from '../control-api/store/database.js';
import { migrateToLatest } from '../control-api/store/migrate.js';
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

/** Builds the whole platform from a validated config: store, migrations, then each role. */
export async function startPlatform(config: PlatformConfig, logger: Logger): Promise<Platform> {
  const secrets = resolveLocalSecrets(config.dataDir, config.security);
  if (secrets.operatorTokenFile) {
    logger.info({ file: secrets.operatorTokenFile }, 'management API operator token generated for local use (read it from this file)');
  }
  const store = await openStore({
    ...(config.database.url ? { url: config.database.url } : {}),
    pgliteDir: path.join(config.dataDir, 'pglite'),
    poolSize: config.database.poolSize,
  });
  const { applied } = await migrateToLatest(store.db);
  logger.info({ store: store.kind, migrationsApplied: applied.length }, 'database ready');

  let draining = false;
  const ctx: PlatformContext = { config, logger, store, secrets, isDraining: () => draining };
  const roles: RunningRole[] = [];
  try {
    for (const name of roleStartOrder.filter((r) => config.roles.includes(r))) {
      roles.push(
        await roleStarters[name](ctx).catch((error: unknown) => {
          // Name the role in a listen failure: "SIP WS (gateway role) cannot listen on ...".
          throw error instanceof ListenError ? new ListenError(`${error.listener} (${name} role)`, error.host, error.port, error.cause) : error;
        }),
      );
    }
  } catch (error) {
    await Promise.allSettled(roles.map((r) => r.stop(0)));
    await store.close();
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    config,
    store,
    roles,
    stop() {
      stopping ??= (async () => {
        draining = true;
        // Reverse start order: the gateway stops taking calls before the parts it depends on go.
        for (const role of [...roles].reverse()) {
          try {
            await role.stop(config.shutdownGraceMs);
          } catch (error) {
            logger.error({ role: role.name, err: error }, 'role did not stop cleanly');
          }
        }
        await store.close();
      })();
      return stopping;
    },
  };
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
  let platform: Platform;
  try {
    platform = await startPlatform(config, logger);
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    // An operational failure, not a bug: one line naming the listener, role and port, no stack.
    logger.fatal({ listener: error.listener, host: error.host, port: error.port, code: error.code }, error.message);
    logger.flush();
    process.exit(listenExitCodes[error.code] ?? 69);
  }
  logger.info({ roles: platform.roles.map((r) => r.name) }, 'platform started');

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
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
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
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
