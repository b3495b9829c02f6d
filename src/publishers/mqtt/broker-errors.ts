/**
 * What went wrong with a broker, in words for the log and the status reason. Never the broker
 * URL (it may hold a credential), never a username or password: network errors are named by
 * their code, refusals by the MQTT reason code the broker sent.
 */
import { describeRequestError } from '../webhook/delivery.js';

/**
 * MQTT 5 reason codes (CONNACK, PUBACK, SUBACK) and MQTT 3.1.1 CONNACK return codes that mean
 * something to an operator, in words.
 */
const reasonTexts: Record<number, string> = {
  // MQTT 3.1.1 CONNACK return codes.
  1: 'the broker refused the protocol version',
  2: 'the broker refused the client id',
  3: 'the broker is unavailable',
  4: 'the broker refused the username or password',
  5: 'the broker refused the connection as not authorized',
  // MQTT 5 reason codes.
  128: 'the broker refused with an unspecified error',
  131: 'the broker refused: implementation specific error',
  133: 'the broker refused the client id',
  134: 'the broker refused the username or password',
  135: 'not authorized by the broker',
  136: 'the broker is unavailable',
  137: 'the broker is busy',
  138: 'the client is banned by the broker',
  140: 'the broker refused the authentication method',
  144: 'the broker refused the topic name',
  151: 'the broker reports a quota exceeded',
  153: 'the broker refused the payload format',
};

/** True for the reason codes that mean a wrong or insufficient credential. */
export function isCredentialRefusal(code: number | undefined): boolean {
  return code === 4 || code === 5 || code === 134 || code === 135 || code === 140;
}

/**
 * One error of the mqtt client in words, e.g. "the broker refused the username or password
 * (MQTT reason 134)" or "connection refused (ECONNREFUSED)".
 * @param url the broker URL, scrubbed from any message that would quote it.
 */
export function describeBrokerError(error: unknown, url: URL): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number') {
    const text = reasonTexts[code] ?? 'the broker refused';
    return `${text} (MQTT reason ${code})`;
  }
  return describeRequestError(error, url).replaceAll('the destination', 'the broker');
}
