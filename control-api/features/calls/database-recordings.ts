import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/schema.js';
import { contentTypeOf, DirectoryRecordingStore, type RecordingFile, type RecordingStore } from './recording-store.js';

/** 256 KiB: about 8 s of the stereo 16-bit 8 kHz call recording per row, a few rows per Range request. */
export const RECORDING_CHUNK_BYTES = 256 * 1024;
/** Chunk rows fetched per query while streaming: bounds memory per download to about 2 MiB. */
const ROWS_PER_READ = 8;

/**
 * Recordings in the database (`recordings.store: database`): every node that serves the calls
 * API reads every call's recording, whichever node recorded it (docs/edge.md, "Recordings"). A
 * call is recorded to a local file as always (media/ writes WAV while the call runs); when it ends,
 * `keep` copies the finished file into `call_recordings` / `call_recording_chunks` in one
 * transaction and removes the local copy. A recording whose copy failed stays in the local
 * directory and is served from there by the node that has it.
 */
export class DatabaseRecordingStore implements RecordingStore {
  private readonly local: DirectoryRecordingStore;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly directory: string,
  ) {
    this.local = new DirectoryRecordingStore(directory);
  }

  /** Copies `<directory>/<ref>` into the database, then deletes the file. Throws when the copy failed (the file stays). */
  async keep(ref: string): Promise<void> {
    const root = path.resolve(this.directory);
    const file = path.resolve(root, ref);
    if (!file.startsWith(root + path.sep)) throw new Error(`recording ref ${ref} leads outside the recordings directory`);
    const handle = await fs.open(file, 'r');
    try {
      await this.db.transaction().execute(async (trx) => {
        let size = 0;
        // Full chunks but the last (offsets in `find` depend on it), one in memory at a time: a
        // long call's recording is tens of megabytes.
        for (let seq = 0; ; seq++) {
          const chunk = await readFull(handle, RECORDING_CHUNK_BYTES);
          if (chunk.length === 0) break;
          await trx.insertInto('call_recording_chunks').values({ ref, seq, data: chunk }).execute();
          size += chunk.length;
          if (chunk.length < RECORDING_CHUNK_BYTES) break;
        }
        await trx.insertInto('call_recordings').values({ ref, size, chunk_bytes: RECORDING_CHUNK_BYTES, content_type: contentTypeOf(ref) }).execute();
      });
    } finally {
      await handle.close();
    }
    await fs.rm(file, { force: true });
  }

  async find(ref: string): Promise<RecordingFile | undefined> {
    const row = await this.db.selectFrom('call_recordings').select(['size', 'chunk_bytes', 'content_type']).where('ref', '=', ref).executeTakeFirst();
    if (!row) return this.local.find(ref);
    const size = Number(row.size);
    return {
      size,
      contentType: row.content_type,
      open: (range) => Readable.from(this.chunks(ref, row.chunk_bytes, range ?? { start: 0, end: size - 1 })),
    };
  }

  /** The bytes `range.start..range.end` (inclusive), read a few chunk rows at a time. */
  private async *chunks(ref: string, chunkBytes: number, range: { start: number; end: number }): AsyncGenerator<Buffer> {
    if (range.end < range.start) return;
    const last = Math.floor(range.end / chunkBytes);
    for (let first = Math.floor(range.start / chunkBytes); first <= last; first += ROWS_PER_READ) {
      const rows = await this.db
        .selectFrom('call_recording_chunks')
        .select(['seq', 'data'])
        .where('ref', '=', ref)
        .where('seq', '>=', first)
        .where('seq', '<=', Math.min(last, first + ROWS_PER_READ - 1))
        .orderBy('seq')
        .execute();
      for (const row of rows) {
        const data = Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength);
        const offset = row.seq * chunkBytes;
        const from = Math.max(0, range.start - offset);
        const to = Math.min(data.length, range.end - offset + 1);
        if (to > from) yield data.subarray(from, to);
      }
    }
  }
}

/** Up to `bytes` bytes from the handle's position; shorter only at the end of the file. */
async function readFull(handle: fs.FileHandle, bytes: number): Promise<Buffer> {
  const buf = Buffer.alloc(bytes);
  let filled = 0;
  while (filled < bytes) {
    const { bytesRead } = await handle.read(buf, filled, bytes - filled, null);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buf.subarray(0, filled);
}
