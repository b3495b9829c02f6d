// Andon board: a custom app hosted by tagd's extensions server. It uses only the public API on
// its own origin (the profile's extensions.enableApi), as any custom app would:
//   - a cookie session: POST /api/v2/Users/Authenticate?useCookies=true, then the browser sends
//     the HttpOnly session cookie; unsafe requests echo the tagd_csrf cookie in X-CSRF-Token;
//   - live values: EventSource on GET /api/v2/Tags/Stream?pattern=Demo/**, whose events carry
//     JSON arrays of samples {fullTagId, utcTimestamp, quality, value?, reason?, message?,
//     metadata?}: first the current samples, then each change.
// No token is kept by this script: the cookies carry the session, and the page cannot read them.

const pattern = 'Demo/**';
const streamUrl = `/api/v2/Tags/Stream?pattern=${encodeURIComponent(pattern)}`;
const qualities = {
  Good: 'quality-good',
  Stale: 'quality-stale',
  Bad: 'quality-bad',
  Unavailable: 'quality-unavailable',
};

// A tile's colour is what its value means, as on any andon board: green running, amber waiting
// (needs attention soon), red stopped or faulted, grey only for what is switched off or out of
// service. The words a state tag may take, lower case; add your line's own. Numbers mean
// nothing by themselves here (a neutral tile); booleans are running (true) or off (false).
const meanings = {
  run: ['running', 'run', 'on', 'ok', 'auto', 'automatic', 'producing', 'started'],
  wait: ['idle', 'waiting', 'starved', 'blocked', 'paused', 'setup', 'changeover', 'warning'],
  stop: ['stopped', 'stop', 'fault', 'faulted', 'error', 'alarm', 'down', 'failed', 'tripped'],
  off: ['off', 'disabled', 'out of service', 'maintenance', 'offline'],
};
const meaningOfWord = new Map(
  Object.entries(meanings).flatMap(([meaning, words]) => words.map((word) => [word, meaning])),
);

const $ = (id) => document.getElementById(id);
const tiles = new Map();
let stream;
let preAuthToken;
let pendingPassword;

/** The CSRF cookie's value, echoed on unsafe requests (double submit). */
function csrfToken() {
  const entry = document.cookie.split('; ').find((part) => part.startsWith('tagd_csrf='));
  return entry ? decodeURIComponent(entry.slice('tagd_csrf='.length)) : '';
}

/** A JSON request to the API; the session goes as cookies, same origin only. */
async function api(method, path, body, bearer) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  else if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken();
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json = {};
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = {};
  }
  return { status: response.status, json };
}

function setConnection(text, state) {
  const element = $('connection');
  element.textContent = text;
  element.dataset.state = state;
}

function showSignIn(message) {
  closeStream();
  $('sign-in').hidden = false;
  $('board').hidden = true;
  $('board-empty').hidden = true;
  $('sign-out').hidden = true;
  $('sign-in-form').hidden = false;
  $('two-factor-form').hidden = true;
  $('change-password-form').hidden = true;
  $('sign-in-error').textContent = message ?? '';
  setConnection('Signed out', 'off');
}

function showBoard() {
  $('sign-in').hidden = true;
  $('board').hidden = false;
  $('board-empty').hidden = tiles.size > 0;
  $('sign-out').hidden = false;
  openStream();
}

/** What a sign-in step answered: signed in, or the next step (two-factor, new password). */
function afterSignInStep(response) {
  if (response.status === 200 && response.json.preAuthToken) {
    preAuthToken = response.json.preAuthToken;
    $('sign-in-form').hidden = true;
    if (response.json.requiresTwoFactor) $('two-factor-form').hidden = false;
    else if (response.json.requiresPasswordChange) $('change-password-form').hidden = false;
    $('sign-in-error').textContent = '';
    return;
  }
  if (response.status === 200) {
    preAuthToken = undefined;
    pendingPassword = undefined;
    showBoard();
    return;
  }
  const detail = response.json.detail ?? `The sign-in failed (HTTP ${response.status}).`;
  $('sign-in-error').textContent = detail;
}

async function signIn(event) {
  event.preventDefault();
  const form = new FormData(event.target);
  pendingPassword = String(form.get('password'));
  const response = await api('POST', '/api/v2/Users/Authenticate?useCookies=true', {
    username: String(form.get('username')),
    password: pendingPassword,
  });
  event.target.reset();
  afterSignInStep(response);
}

async function twoFactor(event) {
  event.preventDefault();
  const code = String(new FormData(event.target).get('code'));
  event.target.reset();
  const response = await api('POST', '/api/v2/Users/Authenticate/TwoFactor?useCookies=true', {
    preAuthToken,
    code,
  });
  afterSignInStep(response);
}

async function changePassword(event) {
  event.preventDefault();
  const newPassword = String(new FormData(event.target).get('newPassword'));
  event.target.reset();
  const response = await api(
    'POST',
    '/api/v2/Users/Current/ChangePassword?useCookies=true',
    { currentPassword: pendingPassword, newPassword },
    preAuthToken,
  );
  afterSignInStep(response);
}

async function signOut() {
  closeStream();
  await api('POST', '/api/v2/Users/SignOut');
  showSignIn('Signed out.');
}

/** Renews the session from its refresh cookie; true when the browser is signed in. */
async function renewSession() {
  const response = await api('GET', '/api/v2/Users/Refresh');
  return response.status === 200;
}

function closeStream() {
  if (stream) stream.close();
  stream = undefined;
}

function openStream() {
  closeStream();
  setConnection('Connecting…', 'connecting');
  const source = new EventSource(streamUrl);
  stream = source;
  const onSamples = (event) => {
    let samples;
    try {
      samples = JSON.parse(event.data);
    } catch {
      return;
    }
    if (!Array.isArray(samples)) return;
    for (const sample of samples) showSample(sample);
    $('board-empty').hidden = tiles.size > 0;
  };
  source.addEventListener('message', onSamples);
  source.addEventListener('open', () => setConnection('Live', 'live'));
  source.addEventListener('error', async () => {
    if (stream !== source) return;
    // EventSource retries network errors by itself; an HTTP refusal (401: the session cookie
    // expired) closes it for good: renew the session once, or ask to sign in again.
    if (source.readyState !== EventSource.CLOSED) {
      setConnection('Reconnecting…', 'connecting');
      return;
    }
    closeStream();
    setConnection('Renewing the session…', 'connecting');
    if (await renewSession()) openStream();
    else showSignIn('The session ended: sign in again.');
  });
}

/** The tag's name on its tile: the path without the driver, e.g. Line1/Temperature. */
function labelOf(fullTagId) {
  const slash = fullTagId.indexOf('/');
  return slash < 0 ? fullTagId : fullTagId.slice(slash + 1);
}

function formatValue(sample) {
  if (!('value' in sample) || sample.value === null || sample.value === undefined) return '—';
  const { value } = sample;
  if (typeof value === 'boolean') return value ? 'ON' : 'OFF';
  if (typeof value === 'number') {
    const text = Number.isInteger(value) ? String(value) : value.toFixed(2);
    const unit = sample.metadata?.unit;
    return unit ? `${text} ${unit}` : text;
  }
  return String(value);
}

function tileFor(fullTagId) {
  let tile = tiles.get(fullTagId);
  if (tile) return tile;
  const element = document.createElement('article');
  element.className = 'tile';
  const name = document.createElement('h3');
  name.textContent = labelOf(fullTagId);
  name.title = fullTagId;
  const value = document.createElement('p');
  value.className = 'value';
  const quality = document.createElement('p');
  quality.className = 'quality';
  const time = document.createElement('p');
  time.className = 'time';
  element.append(name, value, quality, time);
  tile = { element, value, quality, time };
  tiles.set(fullTagId, tile);
  // Tiles in tag order, whatever order the samples come in.
  const board = $('board');
  const after = [...tiles.keys()].sort().indexOf(fullTagId);
  board.insertBefore(element, board.children[after] ?? null);
  return tile;
}

/**
 * What the sample's value means: run, wait, stop or off, or none (a number, an unknown word).
 * A Bad or Unavailable sample carries no value the device vouches for: it means nothing either,
 * and its quality marker says why.
 */
function meaningOf(sample) {
  if (sample.quality === 'Bad' || sample.quality === 'Unavailable') return 'none';
  const { value } = sample;
  if (typeof value === 'boolean') return value ? 'run' : 'off';
  if (typeof value === 'string') return meaningOfWord.get(value.trim().toLowerCase()) ?? 'none';
  return 'none';
}

function showSample(sample) {
  if (!sample || typeof sample.fullTagId !== 'string') return;
  const tile = tileFor(sample.fullTagId);
  const quality = String(sample.quality ?? 'Unavailable');
  // The tile's colour: the value's meaning. Its frame and marker: the quality, so a Stopped
  // line is red whatever the quality, and a lost connection shows on any tile.
  tile.element.className = `tile meaning-${meaningOf(sample)} ${qualities[quality] ?? 'quality-unavailable'}`;
  tile.value.textContent = formatValue(sample);
  // The quality in words as well as colour: readable for everyone, on any screen.
  const reason = sample.reason ? ` (${sample.reason})` : '';
  tile.quality.textContent = `${quality}${reason}`;
  tile.quality.title = sample.message ?? '';
  const at = new Date(sample.utcTimestamp);
  tile.time.textContent = Number.isNaN(at.getTime()) ? '' : at.toLocaleTimeString();
}

document.addEventListener('DOMContentLoaded', async () => {
  $('sign-in-form').addEventListener('submit', signIn);
  $('two-factor-form').addEventListener('submit', twoFactor);
  $('change-password-form').addEventListener('submit', changePassword);
  $('sign-out').addEventListener('click', signOut);
  if (await renewSession()) showBoard();
  else showSignIn();
});
