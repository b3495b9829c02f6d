/** Entry point of the console bundle: mounts the app, then resumes a live cookie session. */
import { render } from 'preact';
import { App } from './app';
import { resumeSession } from './session';
// Follows the session: loads and applies the account's theme.
import './theme';

const root = document.getElementById('app');
if (root) {
  render(<App />, root);
  void resumeSession();
}
