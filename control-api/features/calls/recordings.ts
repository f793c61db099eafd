import path from 'node:path';
import type { Kysely } from 'kysely';
import type { PlatformConfig } from '../../../core/config/schema.js';
import type { Database } from '../../platform/store/schema.js';
import { DatabaseRecordingStore } from './database-recordings.js';
import { DirectoryRecordingStore, type RecordingStore } from './recording-store.js';

/** Where calls are recorded and how their recordings are read back (config `recordings`). */
export interface Recordings {
  /** Calls record into this directory while they run. */
  readonly directory: string;
  /** What the calls API reads recordings from. */
  readonly store: RecordingStore;
  /** Called with a finished recording's ref; moves it to shared storage when the store has one. */
  readonly keep?: (ref: string) => Promise<void>;
}

export function recordingsFor(config: Pick<PlatformConfig, 'dataDir' | 'recordings'>, db: Kysely<Database>): Recordings {
  const directory = config.recordings.directory ?? path.join(config.dataDir, 'recordings');
  if (config.recordings.store === 'database') {
    const store = new DatabaseRecordingStore(db, directory);
    return { directory, store, keep: (ref) => store.keep(ref) };
  }
  return { directory, store: new DirectoryRecordingStore(directory) };
}
