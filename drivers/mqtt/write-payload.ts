/**
 * The payload a write publishes on a subscription's `writeTopic`, in the subscription's own
 * format, so the device reads it as it would publish it: plain text; JSON with the value at
 * `valuePath`; a tagd entry `{fullTagId, utcTimestamp, quality, value}` for format tagd.
 */
import type { WriteRequest } from '../driver.js';
import { parseJsonPointer } from './json-pointer.js';
import type { MqttSubscriptionConfig } from './schema.js';

/** An integer's exact digits, when the client sent a number beyond ±2^53 as text. */
const integerText = /^-?\d+$/;

/**
 * The payload of one write.
 * @param fullTagId the tag written (format tagd names it in the entry).
 * @param now the write's time, ISO 8601 (format tagd).
 */
export function writePayload(
  subscription: Pick<MqttSubscriptionConfig, 'format' | 'valuePath'>,
  fullTagId: string,
  request: WriteRequest,
  now: () => string,
): string {
  const { value, numberText } = request;
  // JSON text of the value: a number keeps the digits the client sent when they are an integer
  // a double cannot hold.
  const json =
    typeof value === 'number' && numberText !== undefined && integerText.test(numberText)
      ? numberText
      : JSON.stringify(value);
  switch (subscription.format) {
    case 'plain':
      return typeof value === 'string' ? value : json;
    case 'tagd':
      return `{"fullTagId":${JSON.stringify(fullTagId)},"utcTimestamp":${JSON.stringify(now())},"quality":"Good","value":${json}}`;
    case 'json': {
      // The value nested at valuePath, each token an object key.
      let text = json;
      const tokens = parseJsonPointer(subscription.valuePath ?? '');
      for (let i = tokens.length - 1; i >= 0; i--) text = `{${JSON.stringify(tokens[i])}:${text}}`;
      return text;
    }
  }
}
