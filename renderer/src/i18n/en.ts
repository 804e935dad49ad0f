import { enDrivers } from './en.drivers';
import { enRules } from './en.rules';
import { enFlows } from './en.flows';
import { enGateways } from './en.gateways';
import { enExports } from './en.exports';
import { enMaps } from './en.maps';
import { enAdmin } from './en.admin';
import { enDashboards } from './en.dashboards';
import { enPublicDashboards } from './en.public-dashboards';
import { enDevices } from './en.devices';
import { enDeviceOps } from './en.device-ops';
import { enTwins } from './en.twins';
import { enTwinPlaces } from './en.twin-places';
import { enServerErrors } from './en.server-errors';
import { enSchemaProblems } from './en.schema-problems';
import { enTerms } from './en.terms';
import { enOverview } from './en.overview';
import { enConsole } from './en.console';
import { enCharts } from './en.charts';

/** English texts. German (de.ts) must have the same keys: its type is this object's. */
export const en = {
  app: {
    name: 'Stellwerk',
    tagline: 'Devices and digital twins, on your premises',
    skipToContent: 'Skip to content',
    readOnly: 'Read only: changing this needs the permission “{permission}”.',
    loading: 'Loading…',
    mainNavigation: 'Main navigation',
    language: 'Language',
    themeToLight: 'Switch to light theme',
    themeToDark: 'Switch to dark theme',
    logout: 'Log out',
    notFound: 'This page does not exist.',
    backHome: 'Back to the overview',
  },
  nav: { home: 'Overview', security: 'Security' },
  errors: {
    unexpected: 'Something went wrong. Try again; if it keeps failing, report the details below.',
    details: 'Details for a report',
    timeout: 'The server did not answer within {seconds} s.',
    network: 'The server cannot be reached. Check the connection and try again.',
  },
  common: {
    email: 'E-mail',
    password: 'Password',
    name: 'Name',
    copy: 'Copy',
    copied: 'Copied',
    continue: 'Continue',
    cancel: 'Cancel',
    back: 'Back',
  },
  onboarding: {
    title: 'Welcome to Stellwerk',
    intro: 'Create the first administrator. The setup token is printed in the server log at the first start.',
    setupToken: 'Setup token',
    passwordHint: 'At least 12 characters.',
    confirmPassword: 'Repeat password',
    passwordsDiffer: 'The passwords differ.',
    submit: 'Create administrator',
    done: 'The administrator was created. Log in now.',
  },
  invitation: {
    title: 'Set your password',
    intro:
      'You were invited to Stellwerk. Choose a password for your account; then log in with your e-mail address.',
    signedInAs: 'You are logged in as {email} in this browser. Setting the password logs you out first.',
    submit: 'Set password',
    invitedAs: 'You were invited as {email}.',
    askAgain: 'Ask your administrator to send you a new invitation.',
    toLogin: 'Not now: open the console',
    done: 'Your password is set. Log in now.',
  },
  login: {
    title: 'Log in',
    intro: 'Sign in to the Stellwerk console.',
    submit: 'Log in',
    codeTitle: 'Two-factor authentication',
    codeIntro: 'Enter the 6-digit code from your authenticator app.',
    federatedCodeIntro:
      'Your identity provider has signed you in. Enter the 6-digit code from your authenticator app to finish.',
    code: 'Authentication code',
    useRecoveryCode: 'Use a recovery code instead',
    useCode: 'Use an authenticator code instead',
    recoveryCode: 'Recovery code',
    verify: 'Verify',
    setupTitle: 'Set up two-factor authentication',
    setupIntro: 'Your account requires two-factor authentication. Set it up now to continue.',
    afterSetup: 'Two-factor authentication is active. Enter a new code to log in.',
  },
  twoFactor: {
    scan: 'Scan this QR code with an authenticator app (such as Aegis, Google Authenticator or 1Password).',
    qrAlt: 'QR code for your authenticator app',
    secret: 'Or enter this key by hand',
    code: 'Code from the app',
    codeHint: '6 digits; a new one appears every 30 seconds.',
    activate: 'Activate',
    starting: 'Preparing…',
    recoveryTitle: 'Your recovery codes',
    recoveryIntro:
      'Each code allows one login without your authenticator. Store them somewhere safe: they are shown only this once.',
    copyAll: 'Copy all codes',
    saved: 'I have stored my recovery codes',
  },
  home: {
    title: 'Hello, {name}',
    intro: 'You are signed in to {account}.',
    profile: 'Your profile',
    account: 'Account',
    twoFactor: 'Two-factor authentication',
    enabled: 'On',
    disabled: 'Off',
    permissions: 'Permissions',
    setUpTwoFactor: 'Set up two-factor authentication',
  },
  security: {
    title: 'Security',
    intro: 'Protect your login with a second factor.',
    enabledText: 'Two-factor authentication is on for your login.',
    done: 'Two-factor authentication is now active.',
  },
  twins: enTwins,
  twinPlaces: enTwinPlaces,
  devices: enDevices,
  deviceOps: enDeviceOps,
  admin: enAdmin,
  dashboards: enDashboards,
  charts: enCharts,
  publicDashboards: enPublicDashboards,
  drivers: enDrivers,
  rules: enRules,
  flows: enFlows,
  gateways: enGateways,
  exports: enExports,
  maps: enMaps,
  serverErrors: enServerErrors,
  schemaProblems: enSchemaProblems,
  terms: enTerms,
  overview: enOverview,
  console: enConsole,
};

export type Messages = typeof en;
