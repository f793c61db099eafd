import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DatabaseRecordingStore, RECORDING_CHUNK_BYTES } from '../../control-api/features/calls/database-recordings.js';
import { forEachStore } from '../helpers/stores.js';

async function bytes(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

forEachStore('recordings in the database (recordings.store: database)', (getStore) => {
  let dir: string;
  let store: DatabaseRecordingStore;
  /** Two full chunks and a partial third: ranges cross chunk boundaries. */
  const audio = Buffer.concat([Buffer.from('RIFF'), randomBytes(2 * RECORDING_CHUNK_BYTES + 1000)]);

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'vap-db-recordings-'));
    store = new DatabaseRecordingStore(getStore().db, dir);
    mkdirSync(path.join(dir, '2026-11-25'), { recursive: true });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('a finished recording kept by the node that recorded it', () => {
    const ref = path.join('2026-11-25', 'call-a.wav');

    before(async () => {
      writeFileSync(path.join(dir, ref), audio);
      await store.keep(ref);
    });

    it('leaves the local directory and is read back whole, from another store instance (another node)', async () => {
      assert.equal(existsSync(path.join(dir, ref)), false);
      const elsewhere = new DatabaseRecordingStore(getStore().db, mkdtempSync(path.join(tmpdir(), 'vap-other-node-')));
      const file = await elsewhere.find(ref);
      assert.ok(file);
      assert.equal(file.size, audio.length);
      assert.equal(file.contentType, 'audio/wav');
      assert.ok((await bytes(file.open())).equals(audio));
    });

    it('serves byte ranges inside one chunk, across chunk boundaries and up to the last byte', async () => {
      const file = await store.find(ref);
      assert.ok(file);
      const c = RECORDING_CHUNK_BYTES;
      for (const [start, end] of [[0, 0], [10, 99], [c - 5, c + 5], [c - 1, 2 * c], [0, audio.length - 1], [2 * c, audio.length - 1], [audio.length - 1, audio.length - 1]] as const) {
        const got = await bytes(file.open({ start, end }));
        assert.ok(got.equals(audio.subarray(start, end + 1)), `range ${start}-${end}: ${got.length} bytes`);
      }
    });
  });

  it('stores an empty recording and one of exactly one chunk', async () => {
    for (const [name, data] of [['empty.wav', Buffer.alloc(0)], ['one.wav', randomBytes(RECORDING_CHUNK_BYTES)]] as const) {
      const ref = path.join('2026-11-25', name);
      writeFileSync(path.join(dir, ref), data);
      await store.keep(ref);
      const file = await store.find(ref);
      assert.ok(file);
      assert.equal(file.size, data.length);
      assert.ok((await bytes(file.open())).equals(data));
    }
  });

  it('serves a recording whose copy never happened from the local directory of the node that has it', async () => {
    const ref = path.join('2026-11-25', 'local-only.wav');
    writeFileSync(path.join(dir, ref), Buffer.from('RIFFlocal'));
    const file = await store.find(ref);
    assert.ok(file);
    assert.equal((await bytes(file.open())).toString(), 'RIFFlocal');
    assert.equal(await new DatabaseRecordingStore(getStore().db, mkdtempSync(path.join(tmpdir(), 'vap-other-node-'))).find(ref), undefined);
  });

  it('refuses a ref that leads outside the directory, and a missing file, keeping nothing', async () => {
    await assert.rejects(store.keep('../escape.wav'), /outside the recordings directory/);
    await assert.rejects(store.keep(path.join('2026-11-25', 'missing.wav')), /ENOENT/);
    assert.equal(await store.find(path.join('2026-11-25', 'missing.wav')), undefined);
  });
});
