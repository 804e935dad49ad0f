import { api, ApiError } from '../api/client';
import type { Reply } from '../api/generated';
import { PageAccess } from './page-permissions';
import { router } from './router.svelte';
import { theme } from './theme.svelte';
import { timeZone } from './format/time-zone.svelte';

export type CurrentUser = Reply<'GET /api/v1/user'>;
export type SessionStatus = 'starting' | 'onboarding' | 'signed-out' | 'signed-in' | 'unreachable';

/** Who is signed in, and what the console must show first (onboarding, login or the pages). */
class Session {
  status = $state<SessionStatus>('starting');
  user = $state<CurrentUser | null>(null);
  startError = $state<ApiError | null>(null);
  /** What the user's roles allow: the navigation and the pages follow it. */
  access = $derived(new PageAccess(this.user?.permissions ?? []));

  async start(): Promise<void> {
    api.onUnauthorized = () => this.signedOut();
    try {
      const config = await api.call('GET /api/v1/console/config');
      api.timeoutMs = config.apiTimeoutMs;
      const { required } = await api.call('GET /api/v1/onboarding');
      if (required) {
        this.status = 'onboarding';
        return;
      }
      // Asked in a way that answers 200 when nobody is signed in: a first visit logs no failed request.
      const probe = await api.call('GET /api/v1/session');
      if (!probe.user) return this.signedOut();
      this.signedIn(probe.user);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return this.signedOut();
      this.startError = error instanceof ApiError ? error : new ApiError(0, 'ERROR', String(error));
      this.status = 'unreachable';
    }
  }

  /** Reloads the user after login or a change (2FA); a 401 means signed out. */
  async refresh(): Promise<void> {
    this.signedIn(await api.call('GET /api/v1/user'));
  }

  private signedIn(user: CurrentUser): void {
    this.user = user;
    theme.followAccount(user.uiSettings);
    timeZone.followAccount(user.accountTimeZone);
    this.status = 'signed-in';
  }

  async logout(): Promise<void> {
    await api.call('POST /api/v1/auth/logout');
    this.signedOut();
  }

  finishOnboarding(): void {
    this.status = 'signed-out';
    router.navigate('/login');
  }

  private signedOut(): void {
    this.user = null;
    this.status = 'signed-out';
  }
}

export const session = new Session();
