/** Why a Modbus request failed. */
export type ModbusFailure =
  /** The device answered with an exception code. */
  | 'exception'
  /** No answer within the timeout. */
  | 'timeout'
  /** The connection closed before the answer came. */
  | 'closed'
  /** The answer did not fit the request (wrong function, byte count or CRC). */
  | 'malformed';

/** Names of the standard exception codes, for messages. */
const exceptionNames: Record<number, string> = {
  1: 'illegal function',
  2: 'illegal data address',
  3: 'illegal data value',
  4: 'server device failure',
  5: 'acknowledge',
  6: 'server device busy',
  8: 'memory parity error',
  10: 'gateway path unavailable',
  11: 'gateway target device failed to respond',
};

/** Exception code 1: the device does not support the function (e.g. FC 22 Mask Write). */
export const illegalFunction = 1;

/** Exception code 2: the request touched an address the device does not have. */
export const illegalDataAddress = 2;

/** A failed read request. */
export class ModbusRequestError extends Error {
  override readonly name = 'ModbusRequestError';

  /**
   * @param failure what went wrong.
   * @param exceptionCode the device's exception code, for `exception`.
   * @param sent whether the request had gone out on the line: a write that failed before it
   *   was sent changed nothing, one that failed after may have been applied. Default true.
   */
  constructor(
    readonly failure: ModbusFailure,
    message: string,
    readonly exceptionCode?: number,
    readonly sent = true,
  ) {
    super(message);
  }

  /** The name of the exception of an `exception` failure, e.g. `illegal data value`. */
  get exceptionName(): string | undefined {
    return this.exceptionCode === undefined ? undefined : exceptionNames[this.exceptionCode];
  }

  /** The error for an exception answer with `code`. */
  static exception(code: number): ModbusRequestError {
    const name = exceptionNames[code] ?? 'unknown exception';
    return new ModbusRequestError('exception', `Modbus exception ${code} (${name})`, code);
  }
}
