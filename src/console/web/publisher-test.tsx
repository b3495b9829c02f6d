import { useSignal } from '@preact/signals';
import { api, failureMessage } from './api-client';

/** What `POST …/{name}/Test` answers (PublisherTestResult). */
interface TestResult {
  ok: boolean;
  httpStatus?: number;
  pubackReasonCode?: number;
  attempts: number;
  durationMs: number;
  samples: number;
  at: string;
  error?: string;
}

/** The receiver's answer in words: what came back, how long it took, how much was sent. */
export function describeTestResult(result: TestResult): string {
  const answer =
    result.httpStatus !== undefined
      ? `the receiver answered HTTP ${result.httpStatus}`
      : result.pubackReasonCode !== undefined
        ? `the broker acknowledged (PUBACK, reason code ${result.pubackReasonCode})`
        : 'no answer';
  const outcome = result.ok ? 'Delivered' : 'Not delivered';
  const why = !result.ok && result.error ? ` (${result.error})` : '';
  return `${outcome}: ${answer}${why} in ${result.durationMs} ms; ${result.samples} tag${
    result.samples === 1 ? '' : 's'
  } sent.`;
}

/** Props of {@link SendTest}. */
export interface SendTestProps {
  /** The route, e.g. `/api/v2/Publishers/Webhooks/feed/Test`. */
  path: string;
  /** The publisher's name, for the button's accessible name. */
  name: string;
}

/**
 * "Send test": delivers one batch of the saved configuration now and shows the receiver's
 * answer. Unsaved edits are not used: the test is of what the publisher would send.
 */
export function SendTest({ path, name }: SendTestProps) {
  const busy = useSignal(false);
  const answer = useSignal<{ ok: boolean; text: string } | undefined>(undefined);
  const send = async () => {
    busy.value = true;
    answer.value = undefined;
    try {
      const result = await api<TestResult>(path, { method: 'POST' });
      answer.value = { ok: result.ok, text: describeTestResult(result) };
    } catch (error) {
      answer.value = {
        ok: false,
        text: failureMessage(error),
      };
    } finally {
      busy.value = false;
    }
  };
  return (
    <div class="send-test">
      <button type="button" disabled={busy.value} onClick={() => void send()}>
        Send test<span class="visually-hidden"> batch through {name}</span>
      </button>
      <small class="hint">Sends one batch of the saved settings now.</small>
      <p
        role="status"
        data-testid="send-test-answer"
        class={answer.value?.ok === false ? 'form-error' : ''}
      >
        {busy.value ? 'Sending…' : (answer.value?.text ?? '')}
      </p>
    </div>
  );
}
