import { useEffect, useRef } from 'preact/hooks';
import { AlarmBanner } from './alarm-banner';
import { currentUser, loadCurrentUser } from './current-user';
import { accountPageId, pages } from './pages';
import { href, route } from './router';
import { can, session, signOut } from './session';
import { productName } from './theme';
import { ThemePicker } from './theme-picker';

/**
 * The top bar: the gateway's host name and version, the pages this account may open, who is
 * signed in (a link to My account), the theme, Sign out, and the alarm banner under them.
 */
export function NavBar() {
  const current = route.value.segments[0] ?? 'tags';
  const bar = useRef<HTMLElement>(null);
  const username = session.value?.username;
  // Who the server says this is, with the gateway's version and host name, once per account.
  useEffect(() => {
    currentUser.value = undefined;
    if (username) void loadCurrentUser().catch(() => undefined);
  }, [username]);
  const gateway = currentUser.value;
  // Its height (it wraps on narrow windows, and the alarm banner adds a row) as the CSS
  // variable --top-bar-height, so the Tags page fills the window below it exactly.
  useEffect(() => {
    const element = bar.current;
    if (!element) return;
    const root = document.documentElement;
    const follow = new ResizeObserver(() =>
      root.style.setProperty('--top-bar-height', `${element.offsetHeight}px`),
    );
    follow.observe(element);
    return () => {
      follow.disconnect();
      root.style.removeProperty('--top-bar-height');
    };
  }, []);
  return (
    <header class="top-bar" ref={bar}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <span class="brand">{productName()}</span>
      {gateway ? (
        <span class="gateway-info" title="The gateway this console is connected to">
          {gateway.hostName} · tagd {gateway.version}
        </span>
      ) : null}
      <nav aria-label="Console pages">
        <ul>
          {pages
            .filter((page) => can(page.permission))
            .map((page) => (
              <li key={page.id}>
                <a href={href(page.id)} aria-current={page.id === current ? 'page' : undefined}>
                  {page.title}
                </a>
              </li>
            ))}
        </ul>
      </nav>
      <a
        class="who"
        href={href(accountPageId)}
        aria-current={current === accountPageId ? 'page' : undefined}
        title="My account: password, two-factor, theme"
      >
        {username}
      </a>
      <ThemePicker />
      <button type="button" onClick={() => void signOut()}>
        Sign out
      </button>
      <AlarmBanner />
    </header>
  );
}
