/**
 * Where a derived-tag driver keeps the totals of its `integrate` calls across restarts:
 * `<state dir>/derived/<driver>.json`, `{ "version": 1, "totals": { "<tag name>": { "integrate#0":
 * 1234.5 } } }`, replaced atomically and durably (temporary file, fsync, rename) so a crash
 * leaves the old totals or the new ones, never a torn file.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ProfileNotFoundError } from '../../src/errors.js';
import { DurableJsonFile } from '../../src/profile/durable-json-file.js';

/** Totals by tag name, then by call key (`integrate#0`). */
export type DerivedTotals = Record<string, Record<string, number>>;

interface TotalsDocument {
  version: 1;
  totals: DerivedTotals;
}

/** The totals file of one driver. */
export class TotalsFile {
  private readonly file: DurableJsonFile<TotalsDocument>;
  private lastText: string | undefined;

  constructor(
    private readonly stateDir: string,
    driverName: string,
  ) {
    this.file = new DurableJsonFile(join(stateDir, 'derived', `${driverName}.json`));
  }

  /** The file's path. */
  get path(): string {
    return this.file.file;
  }

  /**
   * The saved totals; none when there is no file.
   * @throws when the file exists but cannot be read or parsed (the caller decides).
   */
  async load(): Promise<DerivedTotals> {
    let document: TotalsDocument;
    try {
      document = await this.file.read();
    } catch (error) {
      if (error instanceof ProfileNotFoundError) return {};
      throw error;
    }
    const totals: DerivedTotals = {};
    const saved = document?.totals;
    if (typeof saved !== 'object' || saved === null) return totals;
    for (const [tag, calls] of Object.entries(saved)) {
      if (typeof calls !== 'object' || calls === null) continue;
      const kept: Record<string, number> = {};
      for (const [key, total] of Object.entries(calls)) {
        if (typeof total === 'number' && Number.isFinite(total)) kept[key] = total;
      }
      totals[tag] = kept;
    }
    this.lastText = JSON.stringify(totals);
    return totals;
  }

  /** Saves the totals when they differ from what was saved last. */
  async save(totals: DerivedTotals): Promise<void> {
    const text = JSON.stringify(totals);
    if (text === this.lastText) return;
    await mkdir(join(this.stateDir, 'derived'), { recursive: true, mode: 0o700 });
    await this.file.write({ version: 1, totals });
    this.lastText = text;
  }
}
