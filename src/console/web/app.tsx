import { AccountPage } from './account-page';
import { AlarmsPage } from './alarms-page';
import { AssistantPage } from './assistant-page';
import { CollectionsPage } from './collections-page';
import { DriversPage } from './drivers-page';
import { EventsPage } from './events-page';
import { NavBar } from './nav-bar';
import { accountPageId, pages } from './pages';
import { ProfileCheckPage } from './profile-check';
import { PublishersPage } from './publishers-page';
import { route } from './router';
import { can, session } from './session';
import { SignInPage } from './sign-in-page';
import { TagsPage } from './tags-page';
import { TrendsPage } from './trends-page';
import { UsersPage } from './users-page';

/** The console: sign-in until a session exists, then the page the hash names. */
export function App() {
  const current = session.value;
  if (current === undefined) {
    return (
      <main id="main" class="loading">
        <p role="status">Loading…</p>
      </main>
    );
  }
  if (current === null) return <SignInPage />;
  const wanted = route.value.segments[0];
  if (wanted === accountPageId) {
    return (
      <>
        <NavBar />
        <main id="main" tabIndex={-1}>
          <AccountPage />
        </main>
      </>
    );
  }
  const allowed = pages.filter((page) => can(page.permission));
  const page = allowed.find((candidate) => candidate.id === wanted) ?? allowed[0];
  // A page this account may not open is not offered; asked for by URL it says so.
  const refused = wanted !== undefined && !allowed.some((candidate) => candidate.id === wanted);
  return (
    <>
      <NavBar />
      <main id="main" tabIndex={-1}>
        {refused ? (
          <p class="notice" role="alert">
            This account may not open that page.
          </p>
        ) : !page ? (
          <p class="notice">This account holds no permission the console can show.</p>
        ) : page.id === 'tags' ? (
          <TagsPage />
        ) : page.id === 'alarms' ? (
          <AlarmsPage />
        ) : page.id === 'trends' ? (
          <TrendsPage />
        ) : page.id === 'drivers' ? (
          <DriversPage />
        ) : page.id === 'publishers' ? (
          <PublishersPage />
        ) : page.id === 'collections' ? (
          <CollectionsPage />
        ) : page.id === 'events' ? (
          <EventsPage />
        ) : page.id === 'profile' ? (
          <ProfileCheckPage />
        ) : page.id === 'assistant' ? (
          <AssistantPage />
        ) : (
          <UsersPage />
        )}
      </main>
    </>
  );
}
