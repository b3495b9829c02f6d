import { useSignal } from '@preact/signals';
import { api, failureMessage } from './api-client';
import { FormError } from './form-error';

/** A problem or warning as `POST /api/v2/Profile/Check` lists it. */
interface Finding {
  path: string;
  message: string;
  /** What `tagd start` does about a start-up check's finding. */
  effect?: string;
}

/** What `POST /api/v2/Profile/Check` answers (ProfileCheck). */
interface ProfileCheck {
  valid: boolean;
  problems: Finding[];
  warnings: Finding[];
  uncheckedSecrets: string[];
  startupChecks: 'all' | 'valid-parts' | 'skipped';
}

/** What `tagd start` does about a finding, in words. */
const effectWords: Record<string, string> = {
  refused: 'tagd would not start',
  'driver-left-out': 'the driver would be left out',
  'publisher-error': 'the publisher would be in Error',
  'app-left-out': 'the extension app would be left out',
  unlicensed: 'not covered by the license',
};

const startupWords: Record<ProfileCheck['startupChecks'], string> = {
  all: 'The start-up checks ran on the whole profile.',
  'valid-parts': 'The start-up checks ran on the parts without schema errors.',
  skipped: 'The start-up checks could not run.',
};

function FindingList({ id, title, findings }: { id: string; title: string; findings: Finding[] }) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id} class="section-title">
        {title} ({findings.length})
      </h2>
      {findings.length === 0 ? (
        <p>None.</p>
      ) : (
        <ul class="findings" data-testid={id}>
          {findings.map((finding) => (
            <li key={`${finding.path} ${finding.message}`}>
              <code>{finding.path}</code>: {finding.message}
              {finding.effect ? (
                <span class="muted"> ({effectWords[finding.effect] ?? finding.effect})</span>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/**
 * Profile check (Administrators: ProfileManage): the running profile (`GET /api/v2/Profile`,
 * secrets masked) sent to `POST /api/v2/Profile/Check`, which runs `tagd profile check`'s schema
 * and start-up checks; every problem and warning (collections a publisher or history names but
 * the profile lacks included) listed with its path.
 */
export function ProfileCheckPage() {
  const busy = useSignal(false);
  const result = useSignal<ProfileCheck | undefined>(undefined);
  const error = useSignal('');
  const check = async () => {
    busy.value = true;
    error.value = '';
    try {
      const profile = await api<Record<string, unknown>>('/api/v2/Profile');
      result.value = await api<ProfileCheck>('/api/v2/Profile/Check', {
        method: 'POST',
        body: profile,
      });
    } catch (failure) {
      error.value = failureMessage(failure);
    } finally {
      busy.value = false;
    }
  };
  const value = result.value;
  return (
    <section class="panel" aria-labelledby="profile-check-title">
      <div class="panel-head">
        <h1 id="profile-check-title">Profile check</h1>
        <div class="actions">
          <button type="button" class="primary" disabled={busy.value} onClick={() => void check()}>
            Check the running profile
          </button>
        </div>
      </div>
      <p class="hint">
        What <code>tagd profile check</code> does, on the profile tagd runs now (changes made in the
        console included): the schema, then the start-up checks (listeners, certificates, files, the
        license), and the references to tags and collections that do not exist.
      </p>
      <FormError>{error.value}</FormError>
      <div role="status">
        {busy.value ? (
          <p>Checking…</p>
        ) : value ? (
          <p data-testid="profile-check-verdict">
            {value.valid
              ? 'The profile is valid: tagd would start with every part running.'
              : 'The profile has problems.'}{' '}
            {startupWords[value.startupChecks]}
          </p>
        ) : null}
      </div>
      {value && !busy.value ? (
        <>
          <FindingList id="profile-problems" title="Problems" findings={value.problems} />
          <FindingList id="profile-warnings" title="Warnings" findings={value.warnings} />
          {value.uncheckedSecrets.length > 0 ? (
            <FindingList
              id="profile-unchecked-secrets"
              title="Secrets this tagd cannot open"
              findings={value.uncheckedSecrets.map((path) => ({
                path,
                message: 'sealed with another key',
              }))}
            />
          ) : null}
        </>
      ) : null}
    </section>
  );
}
