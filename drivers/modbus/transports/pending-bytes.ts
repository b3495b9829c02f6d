/**
 * The bytes a framer received but could not cut into an answer yet: a partial answer waits
 * for the rest, which comes in a later chunk of the stream.
 */
export class PendingBytes {
  private bytes: Uint8Array = new Uint8Array(0);

  /** The bytes waiting, followed by `chunk` (`chunk` itself when none wait: no copy). */
  joined(chunk: Uint8Array): Uint8Array {
    if (this.bytes.length === 0) return chunk;
    const bytes = new Uint8Array(this.bytes.length + chunk.length);
    bytes.set(this.bytes);
    bytes.set(chunk, this.bytes.length);
    return bytes;
  }

  /** Keeps `bytes` from offset `from` on (a partial answer) for the next chunk. */
  keep(bytes: Uint8Array, from: number): void {
    this.bytes = from === bytes.length ? new Uint8Array(0) : bytes.slice(from);
  }

  /** Drops the bytes waiting. */
  clear(): void {
    this.bytes = new Uint8Array(0);
  }
}
