/**
 * One write of one Modbus tag over an open connection, and what its outcome means to a client.
 * Coils go by FC 5 (FC 15 with `writeFunctions: "multiple"`), holding registers by FC 6 for one
 * register (FC 16 with `"multiple"`) and FC 16 for more, a `bit` tag by FC 22 Mask Write
 * Register. A device that answers FC 22 with exception 1 (illegal function) gets a
 * read-modify-write instead: FC 3 reads the register, FC 6 writes it back with the bit changed.
 * Between the two, the device itself or another master may change the register's other bits;
 * the write then puts their old values back (the race is documented in docs/api.md, "Writing tags"). tagd's own
 * writes cannot race each other: the driver sends them one at a time.
 */
import type { WriteResult } from '../driver.js';
import type { ModbusTagState } from './poll-plan.js';
import { illegalFunction, ModbusRequestError } from './request-error.js';
import { encodeRegisters, type RawWrite, wireBit } from './value-encoder.js';

/** What a write needs of the connection (ModbusConnection). */
export interface WriteChannel {
  read(unit: number, functionCode: number, address: number, count: number): Promise<Uint8Array>;
  write(
    unit: number,
    functionCode: number,
    data: Uint8Array,
    echoBytes: number,
  ): Promise<Uint8Array>;
}

/** How the driver writes, from its config and what it learnt of the device. */
export interface WriteOptions {
  /** FC 15 and 16 even for a single coil or register (devices without FC 5 and 6). */
  multiple: boolean;
  /** Units known to answer FC 22 with "illegal function": they get a read-modify-write. */
  noMaskWrite: Set<number>;
  /** Told once when a unit turns out to lack FC 22. */
  maskWriteRefused(unit: number): void;
  /** Counts each request sent (for the driver's `writeRequests` counter). */
  sent(): void;
  /**
   * Called once the write's last request is in the connection's queue (writes queued after it
   * are sent after it), or once the write ended without sending.
   */
  queued(): void;
}

const u16 = (value: number): [number, number] => [(value >> 8) & 0xff, value & 0xff];

/**
 * Writes `raw` to `tag` and maps the answer: an acknowledgement is Good, an exception Bad
 * (DeviceException, with its name), a request that went out without an answer Uncertain
 * (OutcomeUnknown), and a request never sent (no connection, a line that never went quiet)
 * Bad (Disconnected): it changed nothing.
 */
export async function writeTag(
  channel: WriteChannel,
  tag: ModbusTagState,
  raw: RawWrite,
  options: WriteOptions,
): Promise<WriteResult> {
  try {
    await send(channel, tag, raw, options);
    return { status: 'Good' };
  } catch (error) {
    if (!(error instanceof ModbusRequestError)) throw error;
    return outcome(error);
  } finally {
    options.queued();
  }
}

/** Queues a write request and tells `options` it is queued (the connection queues at once). */
function queue(
  channel: WriteChannel,
  options: WriteOptions,
  unit: number,
  functionCode: number,
  data: Uint8Array,
  echoBytes: number,
): Promise<Uint8Array> {
  options.sent();
  const answer = channel.write(unit, functionCode, data, echoBytes);
  options.queued();
  return answer;
}

async function send(
  channel: WriteChannel,
  tag: ModbusTagState,
  raw: RawWrite,
  options: WriteOptions,
): Promise<void> {
  const { address } = tag.config;
  const unit = tag.unitId;
  if (tag.type === 'bool') {
    const on = (raw as { raw: boolean }).raw;
    if (options.multiple)
      await queue(
        channel,
        options,
        unit,
        15,
        new Uint8Array([...u16(address), 0, 1, 1, on ? 1 : 0]),
        4,
      );
    else
      await queue(
        channel,
        options,
        unit,
        5,
        new Uint8Array([...u16(address), on ? 0xff : 0, 0]),
        4,
      );
    return;
  }
  if (tag.type === 'bit') {
    await writeBit(channel, tag, (raw as { raw: boolean }).raw, options);
    return;
  }
  const bytes = encodeRegisters(
    {
      type: tag.type,
      order: tag.config.order,
      scale: tag.config.scale,
      offset: tag.config.offset,
      length: tag.config.length,
    },
    raw,
  );
  await writeRegisters(channel, unit, address, bytes, options);
}

async function writeRegisters(
  channel: WriteChannel,
  unit: number,
  address: number,
  bytes: Uint8Array,
  options: WriteOptions,
): Promise<void> {
  const registers = bytes.length / 2;
  if (registers === 1 && !options.multiple) {
    await queue(channel, options, unit, 6, new Uint8Array([...u16(address), ...bytes]), 4);
    return;
  }
  const data = new Uint8Array(5 + bytes.length);
  data.set([...u16(address), ...u16(registers), bytes.length]);
  data.set(bytes, 5);
  await queue(channel, options, unit, 16, data, 4);
}

async function writeBit(
  channel: WriteChannel,
  tag: ModbusTagState,
  on: boolean,
  options: WriteOptions,
): Promise<void> {
  const { address } = tag.config;
  const unit = tag.unitId;
  const mask = 1 << wireBit(tag.config.bit ?? 0, tag.config.order);
  if (!options.noMaskWrite.has(unit)) {
    // FC 22: result = (current AND andMask) OR (orMask AND NOT andMask): the device changes the
    // one bit itself, so no other bit can be lost in between.
    const andMask = ~mask & 0xffff;
    const orMask = on ? mask : 0;
    try {
      await queue(
        channel,
        options,
        unit,
        22,
        new Uint8Array([...u16(address), ...u16(andMask), ...u16(orMask)]),
        6,
      );
      return;
    } catch (error) {
      if (!(error instanceof ModbusRequestError) || error.exceptionCode !== illegalFunction)
        throw error;
      options.noMaskWrite.add(unit);
      options.maskWriteRefused(unit);
    }
  }
  // Read-modify-write. A failed read wrote nothing: its error is re-raised as not sent.
  let data: Uint8Array;
  try {
    data = await channel.read(unit, 3, address, 1);
  } catch (error) {
    if (!(error instanceof ModbusRequestError)) throw error;
    throw new ModbusRequestError(
      error.failure,
      `reading the register before changing bit ${tag.config.bit}: ${error.message}`,
      error.exceptionCode,
      false,
    );
  }
  const current = (((data[0] as number) << 8) | (data[1] as number)) & 0xffff;
  const next = on ? current | mask : current & ~mask & 0xffff;
  await writeRegisters(channel, unit, address, new Uint8Array(u16(next)), {
    ...options,
    multiple: false,
  });
}

/** The result of a write that failed with `error`. */
function outcome(error: ModbusRequestError): WriteResult {
  switch (error.failure) {
    case 'exception':
      return {
        status: 'Bad',
        reason: 'DeviceException',
        message: `The device refused the write: ${error.message}.`,
      };
    case 'malformed':
      // The device answered, but not with an acknowledgement of this write.
      return {
        status: 'Uncertain',
        reason: 'OutcomeUnknown',
        message: `${error.message}; whether the device applied the write is unknown.`,
      };
    case 'timeout':
    case 'closed':
      if (!error.sent)
        return {
          status: 'Bad',
          reason: error.failure === 'closed' ? 'Disconnected' : 'Timeout',
          message: `Nothing was written: ${error.message}.`,
        };
      return {
        status: 'Uncertain',
        reason: 'OutcomeUnknown',
        message: `The write was sent but not acknowledged (${error.message}); it is not sent again. Read the tag to see whether the device applied it.`,
      };
  }
}
