import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

/**
 * Where call recordings are read from. A call's `recording_ref` is a path relative to the
 * recordings directory (`<dataDir>/recordings` by default), written by media/ at hang-up.
 */
export interface RecordingFile {
  readonly size: number;
  readonly contentType: string;
  open(range?: { start: number; end: number }): Readable;
}

export interface RecordingStore {
  find(ref: string): Promise<RecordingFile | undefined>;
}

const contentTypes: Readonly<Record<string, string>> = { '.wav': 'audio/wav', '.mp3': 'audio/mpeg', '.ogg': 'audio/ogg', '.opus': 'audio/ogg' };

/** The media type of a recording by its file name. */
export const contentTypeOf = (ref: string): string => contentTypes[path.extname(ref).toLowerCase()] ?? 'application/octet-stream';

export class DirectoryRecordingStore implements RecordingStore {
  private readonly root: string;

  constructor(directory: string) {
    this.root = path.resolve(directory);
  }

  async find(ref: string): Promise<RecordingFile | undefined> {
    const file = path.resolve(this.root, ref);
    // A stored ref must never lead outside the recordings directory (`../`, absolute paths).
    if (!file.startsWith(this.root + path.sep)) return undefined;
    let size: number;
    try {
      const stat = await fs.stat(file);
      if (!stat.isFile()) return undefined;
      size = stat.size;
    } catch {
      return undefined;
    }
    return {
      size,
      contentType: contentTypeOf(file),
      open: (range) => createReadStream(file, range ? { start: range.start, end: range.end } : {}),
    };
  }
}

/** Parses a single `bytes=` range (RFC 9110 sec. 14.1.2); undefined for none or several ranges. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}
