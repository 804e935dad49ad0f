import { hashLink } from '../hash-query';

/**
 * The overview's "first steps" on a site that has no devices or no digital twins yet: the order
 * that works (a connector, devices on it, a twin fed by them, then dashboards and rules), each step
 * done or not from real counts, and linked only where the user's roles allow doing it. Pure, so
 * the decisions are unit-tested without a browser; `FirstSteps.svelte` reads the counts.
 */

/** What the site has; null where the user may not read it (the count is unknown, not zero). */
export interface SiteCounts {
  /** Connectors that receive packets (outgoing ones bring no device data). */
  connectors: number | null;
  devices: number | null;
  twins: number | null;
}

export type StepId = 'connector' | 'devices' | 'twin' | 'use';
export type StepLinkId = 'connectors' | 'devices' | 'twins' | 'dashboards' | 'rules';

export interface StepLink {
  id: StepLinkId;
  href: string;
}

export interface FirstStep {
  id: StepId;
  /** null: not counted (the closing step, or a count the user may not read). */
  done: boolean | null;
  /** The pages that do the step, those the user may open and act on. */
  links: StepLink[];
  /** The user's roles allow none of the step's pages: a note instead of a link. */
  notAllowed: boolean;
}

/** What the console may tell about the signed-in user (`PageAccess`). */
export interface StepAccess {
  has(permission: string): boolean;
  canOpen(path: string): boolean;
}

interface PageSpec {
  id: StepLinkId;
  path: string;
  /** Creating there needs this; a reader would find nothing to do on the page. */
  manage: string;
  query?: Record<string, string>;
}

const STEPS: readonly { id: StepId; count?: keyof SiteCounts; pages: PageSpec[] }[] = [
  {
    id: 'connector',
    count: 'connectors',
    // Opens "New connector" at once: the dialog describes every kind.
    pages: [{ id: 'connectors', path: '/connectors', manage: 'connector.manage', query: { new: '1' } }],
  },
  {
    id: 'devices',
    count: 'devices',
    pages: [{ id: 'devices', path: '/devices', manage: 'virtualDevice.manage' }],
  },
  { id: 'twin', count: 'twins', pages: [{ id: 'twins', path: '/twins', manage: 'digitalTwin.manage' }] },
  {
    id: 'use',
    pages: [
      { id: 'dashboards', path: '/dashboards', manage: 'dashboard.manage' },
      { id: 'rules', path: '/rules', manage: 'rule.manage' },
    ],
  },
];

/**
 * Whether the panel is shown: only to a user who can count devices, while the site has none or
 * (where the user can count twins) has no twin. It goes once devices and twins exist.
 */
export function showFirstSteps(counts: SiteCounts): boolean {
  if (counts.devices === null) return false;
  return counts.devices === 0 || counts.twins === 0;
}

export function firstSteps(counts: SiteCounts, access: StepAccess): FirstStep[] {
  return STEPS.map((step) => {
    const links = step.pages
      .filter((page) => access.canOpen(page.path) && access.has(page.manage))
      .map((page) => ({ id: page.id, href: hashLink(page.path, page.query) }));
    const count = step.count ? counts[step.count] : null;
    return { id: step.id, done: count === null ? null : count > 0, links, notAllowed: links.length === 0 };
  });
}
