import { Inflate } from 'fflate';
import { ExtractError } from './errors.js';
import type { ZipLimits } from './types.js';

interface Entry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

const SIG_EOCD = 0x06054b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;
/** Compressed bytes fed to the inflater at a time: bounds one step's output (deflate expands ≤ ~1032×). */
const INFLATE_STEP = 16 * 1024;

/** Thrown by an onChunk callback to stop reading an entry early. */
export class StopReading extends Error {
  override name = 'StopReading';
}

/**
 * A read-only view of a zip archive (Office files are zips) that is safe
 * against zip bombs: the central directory is read first, and the archive is
 * refused when the uncompressed sizes it declares exceed the limits; entries
 * are then inflated in small steps and abandoned as soon as one produces more
 * bytes than it declared. Encrypted entries and ZIP64 archives are refused.
 */
export class ZipArchive {
  private constructor(
    private readonly data: Uint8Array,
    private readonly entries: Map<string, Entry>,
  ) {}

  static open(data: Uint8Array, limits: ZipLimits): ZipArchive {
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const eocd = findEocd(view);
    if (eocd < 0) throw corrupt('no end-of-archive record');
    const count = view.getUint16(eocd + 10, true);
    const cdSize = view.getUint32(eocd + 12, true);
    const cdOffset = view.getUint32(eocd + 16, true);
    if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
      throw new ExtractError('INVALID_ARGUMENT', 'ZIP64 archives are not supported');
    }
    if (count > limits.maxEntries) {
      throw new ExtractError('INVALID_ARGUMENT', `the archive has ${count} parts; at most ${limits.maxEntries} are read`);
    }
    if (cdOffset + cdSize > data.byteLength) throw corrupt('the central directory lies past the end of the file (truncated?)');
    const entries = new Map<string, Entry>();
    const decoder = new TextDecoder('utf-8');
    let total = 0;
    let p = cdOffset;
    for (let i = 0; i < count; i++) {
      if (p + 46 > data.byteLength || view.getUint32(p, true) !== SIG_CENTRAL) throw corrupt('bad central directory entry');
      const flags = view.getUint16(p + 8, true);
      const method = view.getUint16(p + 10, true);
      const compressedSize = view.getUint32(p + 20, true);
      const size = view.getUint32(p + 24, true);
      const nameLen = view.getUint16(p + 28, true);
      const extraLen = view.getUint16(p + 30, true);
      const commentLen = view.getUint16(p + 32, true);
      const localOffset = view.getUint32(p + 42, true);
      if (p + 46 + nameLen > data.byteLength) throw corrupt('bad central directory entry');
      const name = decoder.decode(data.subarray(p + 46, p + 46 + nameLen));
      p += 46 + nameLen + extraLen + commentLen;
      if (name.endsWith('/')) continue;
      if (flags & 1) throw new ExtractError('INVALID_ARGUMENT', 'the file is encrypted (password-protected)');
      if (size === 0xffffffff || compressedSize === 0xffffffff) throw new ExtractError('INVALID_ARGUMENT', 'ZIP64 archives are not supported');
      if (size > limits.maxEntryBytes) {
        throw new ExtractError(
          'INVALID_ARGUMENT',
          `part ${name} would expand to ${formatBytes(size)}, over the ${formatBytes(limits.maxEntryBytes)} limit (a zip bomb or an oversized document)`,
        );
      }
      total += size;
      if (total > limits.maxTotalBytes) {
        throw new ExtractError(
          'INVALID_ARGUMENT',
          `the archive would expand to more than ${formatBytes(limits.maxTotalBytes)} (a zip bomb or an oversized document)`,
        );
      }
      if (entries.has(name)) throw corrupt(`duplicate part ${name}`);
      entries.set(name, { name, method, compressedSize, size, localOffset });
    }
    return new ZipArchive(data, entries);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Inflates a whole entry (bounded by its declared size, itself bounded by the limits). */
  read(name: string): Uint8Array {
    const entry = this.entry(name);
    const out = new Uint8Array(entry.size);
    let off = 0;
    this.stream(name, (chunk) => {
      out.set(chunk, off);
      off += chunk.length;
    });
    return out.subarray(0, off);
  }

  readText(name: string): string {
    return new TextDecoder('utf-8').decode(this.read(name));
  }

  /**
   * Inflates an entry chunk by chunk. `onChunk` may throw StopReading to stop
   * early (returns normally then). Producing more than the declared size fails.
   */
  stream(name: string, onChunk: (chunk: Uint8Array) => void): void {
    const entry = this.entry(name);
    const view = new DataView(this.data.buffer, this.data.byteOffset, this.data.byteLength);
    const lh = entry.localOffset;
    if (lh + 30 > this.data.byteLength || view.getUint32(lh, true) !== SIG_LOCAL) throw corrupt(`bad local header for ${name}`);
    const start = lh + 30 + view.getUint16(lh + 26, true) + view.getUint16(lh + 28, true);
    const end = start + entry.compressedSize;
    if (end > this.data.byteLength) throw corrupt(`part ${name} is cut short (truncated file?)`);
    const compressed = this.data.subarray(start, end);
    let produced = 0;
    const emit = (chunk: Uint8Array) => {
      produced += chunk.length;
      if (produced > entry.size) {
        throw new ExtractError('INVALID_ARGUMENT', `part ${name} expands past its declared size (a zip bomb or a corrupt file)`);
      }
      if (chunk.length > 0) onChunk(chunk);
    };
    try {
      if (entry.method === 0) {
        for (let i = 0; i < compressed.length; i += 64 * 1024) emit(compressed.subarray(i, i + 64 * 1024));
      } else if (entry.method === 8) {
        const inflater = new Inflate((chunk) => emit(chunk));
        for (let i = 0; i < compressed.length; i += INFLATE_STEP) {
          inflater.push(compressed.subarray(i, i + INFLATE_STEP), i + INFLATE_STEP >= compressed.length);
        }
        if (compressed.length === 0) inflater.push(new Uint8Array(0), true);
      } else {
        throw new ExtractError('INVALID_ARGUMENT', `part ${name} uses an unsupported compression method (${entry.method})`);
      }
    } catch (err) {
      if (err instanceof StopReading) return;
      if (err instanceof ExtractError) throw err;
      throw corrupt(`part ${name} cannot be inflated (${err instanceof Error ? err.message : String(err)})`);
    }
    if (produced < entry.size) throw corrupt(`part ${name} is shorter than declared (truncated file?)`);
  }

  private entry(name: string): Entry {
    const e = this.entries.get(name);
    if (!e) throw corrupt(`missing part ${name}`);
    return e;
  }
}

function findEocd(view: DataView): number {
  const min = Math.max(0, view.byteLength - 22 - 0xffff);
  for (let i = view.byteLength - 22; i >= min; i--) {
    if (view.getUint32(i, true) === SIG_EOCD) return i;
  }
  return -1;
}

function corrupt(detail: string): ExtractError {
  return new ExtractError('INVALID_ARGUMENT', `the file is not a valid Office document: ${detail}`);
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GB`;
}
