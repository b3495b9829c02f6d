/**
 * The API with a TagWriter and one real driver behind it, for the write tests of each driver:
 * writes go through POST /api/v2/Tags/Write exactly as a client sends them.
 */
import type { ExecutionContext } from 'ava';
import type { Driver, DriverDeps } from '../../drivers/driver.js';
import { TagWriter } from '../../src/tags/tag-writer.js';
import { type ApiHarness, type ApiResponse, startApi } from './api-harness.js';

/** A started API, driver and an Operator's token. */
export interface WriteHarness<D extends Driver> {
  api: ApiHarness;
  driver: D;
  writer: TagWriter;
  /** An Operator's access token. */
  token: string;
  /** POSTs `{ writes }` as the Operator. */
  write(writes: { fullTagId: string; value: unknown }[]): Promise<ApiResponse>;
  /** The results of a write that must answer 200. */
  results(
    writes: { fullTagId: string; value: unknown }[],
  ): Promise<{ fullTagId: string; status: string; reason?: string; message?: string }[]>;
}

/**
 * Starts the API (manual clock), builds the driver on its store and clock, starts it and
 * registers it with the writer. The driver is stopped with the test.
 */
export async function startWriteHarness<D extends Driver>(
  t: ExecutionContext,
  makeDriver: (deps: DriverDeps) => D,
  options: { writesPerSecond?: number } = {},
): Promise<WriteHarness<D>> {
  let writer: TagWriter | undefined;
  const api = await startApi(t, {
    deps: ({ store, clock, logs, audit }) => {
      writer = new TagWriter({
        store,
        audit,
        logger: logs.logger,
        now: () => clock.now(),
        writesPerSecond: options.writesPerSecond ?? 100_000,
      });
      return { writer };
    },
  });
  const driver = makeDriver({
    store: api.store,
    clock: api.clock,
    logger: api.logs.logger,
    stateDir: api.stateDir,
  });
  t.teardown(() => driver.stop());
  await driver.start();
  (writer as TagWriter).register(driver);
  await api.addUser('operator', ['Operators']);
  const token = await api.signIn('operator');
  const write = (writes: { fullTagId: string; value: unknown }[]) =>
    api.request('/api/v2/Tags/Write', { method: 'POST', token, body: { writes } });
  return {
    api,
    driver,
    writer: writer as TagWriter,
    token,
    write,
    async results(writes) {
      const response = await write(writes);
      if (response.status !== 200)
        throw new Error(`write answered ${response.status}: ${JSON.stringify(response.body)}`);
      return response.json.results as {
        fullTagId: string;
        status: string;
        reason?: string;
        message?: string;
      }[];
    },
  };
}
