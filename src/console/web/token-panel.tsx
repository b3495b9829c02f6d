import { useSignal } from '@preact/signals';
import { ApiError, api } from './api-client';
import { FormError } from './form-error';

/** Props of {@link TokenPanel}. */
export interface TokenPanelProps {
  /** Service account whose token *Generate token* makes. */
  account?: string;
  /** A secret to show once (a temporary password), instead of generating a token. */
  secret?: string;
  label?: string;
}

/**
 * User Actions: *Generate token* for a service account. The token is shown once, with a copy
 * button; leaving the page forgets it (the server keeps only its version, never the token).
 */
export function TokenPanel({
  account,
  secret,
  label = 'Service token (shown once)',
}: TokenPanelProps) {
  const token = useSignal(secret ?? '');
  const error = useSignal('');
  const copied = useSignal('');
  const confirming = useSignal(false);

  const generate = async () => {
    confirming.value = false;
    error.value = '';
    copied.value = '';
    try {
      const answer = await api<{ token: string }>(
        `/api/v2/Users/${encodeURIComponent(account ?? '')}/Token`,
        { method: 'POST' },
      );
      token.value = answer.token;
    } catch (failure) {
      error.value = failure instanceof ApiError ? failure.message : String(failure);
    }
  };

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(token.value);
      copied.value = 'Copied to the clipboard.';
    } catch {
      // No clipboard (plain HTTP to another host): select it for Ctrl+C instead.
      (document.getElementById('token-value') as HTMLInputElement | null)?.select();
      copied.value = 'Selected: press Ctrl+C to copy.';
    }
  };

  return (
    <div class="token-panel">
      {account ? (
        <>
          <h2>Generate token</h2>
          <p>
            A service account signs in with this token alone; it never expires. Generating a new one
            voids the previous token at once.
          </p>
          {confirming.value ? (
            <div class="buttons">
              <button type="button" class="danger" onClick={() => void generate()}>
                Generate and void the old token
              </button>
              <button
                type="button"
                onClick={() => {
                  confirming.value = false;
                }}
              >
                Cancel
              </button>
            </div>
          ) : (
            <button
              type="button"
              class="primary"
              onClick={() => {
                confirming.value = true;
              }}
            >
              Generate token
            </button>
          )}
        </>
      ) : null}
      <FormError>{error.value}</FormError>
      {token.value ? (
        <div class="field">
          <label for="token-value">{label}</label>
          <div class="token-row">
            <input id="token-value" readOnly value={token.value} class="mono" />
            <button type="button" onClick={() => void copy()}>
              Copy
            </button>
          </div>
          <p class="hint" role="status">
            {copied.value || 'Copy it now: it is not shown again.'}
          </p>
        </div>
      ) : null}
    </div>
  );
}
