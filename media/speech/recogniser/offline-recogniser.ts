import type { Logger } from '../../../core/logger.js';
import type { RecogniserLoad } from './protocol.js';
import { RecogniserPool, type RecogniserPoolOptions } from './recogniser-pool.js';

/**
 * The process's offline recogniser: one pool of decoder workers for every call. The gateway role
 * starts it with the role (so the first call does not wait for the model) and stops it on
 * shutdown; anything else that recognises offline (tests, benches, the CLI's simulations) starts
 * it on first use.
 */
let shared: RecogniserPool | undefined;

/** The shared pool, created on first use (its workers start with the first request). */
export function offlineRecogniser(): RecogniserPool {
  shared ??= new RecogniserPool();
  return shared;
}

/**
 * Starts the shared pool's workers now and waits until one is ready. A pool already created
 * lazily is replaced (its workers stopped) so that it gets the role's logger and size.
 */
export async function startOfflineRecogniser(options: RecogniserPoolOptions & { readonly logger?: Logger } = {}): Promise<RecogniserPool> {
  const previous = shared;
  shared = new RecogniserPool(options);
  await previous?.stop();
  await shared.start();
  return shared;
}

/** Stops the shared pool's workers (no process is left behind); the next use starts a new pool. */
export async function stopOfflineRecogniser(graceMs?: number): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.stop(graceMs);
}

/** The shared pool's load: utterances queued and being decoded (admission control reads this). */
export function offlineRecogniserLoad(): RecogniserLoad {
  return shared?.load() ?? { queued: 0, busy: 0, workers: 0 };
}
