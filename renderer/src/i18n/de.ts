import { deDrivers } from './de.drivers';
import { deRules } from './de.rules';
import { deFlows } from './de.flows';
import { deGateways } from './de.gateways';
import { deExports } from './de.exports';
import { deMaps } from './de.maps';
import { deAdmin } from './de.admin';
import type { Messages } from './en';
import { deDashboards } from './de.dashboards';
import { deCharts } from './de.charts';
import { dePublicDashboards } from './de.public-dashboards';
import { deDevices } from './de.devices';
import { deDeviceOps } from './de.device-ops';
import { deTwins } from './de.twins';
import { deTwinPlaces } from './de.twin-places';
import { deServerErrors } from './de.server-errors';
import { deSchemaProblems } from './de.schema-problems';
import { deTerms } from './de.terms';
import { deOverview } from './de.overview';
import { deConsole } from './de.console';

export const de: Messages = {
  app: {
    name: 'Stellwerk',
    tagline: 'Geräte und digitale Zwillinge, bei Ihnen vor Ort',
    skipToContent: 'Zum Inhalt springen',
    readOnly: 'Nur lesen: Ändern erfordert die Berechtigung „{permission}“.',
    loading: 'Wird geladen…',
    mainNavigation: 'Hauptnavigation',
    language: 'Sprache',
    themeToLight: 'Zum hellen Design wechseln',
    themeToDark: 'Zum dunklen Design wechseln',
    logout: 'Abmelden',
    notFound: 'Diese Seite gibt es nicht.',
    backHome: 'Zurück zur Übersicht',
  },
  nav: { home: 'Übersicht', security: 'Sicherheit' },
  errors: {
    unexpected:
      'Etwas ist schiefgegangen. Versuchen Sie es noch einmal; schlägt es weiter fehl, melden Sie die Details unten.',
    details: 'Details für eine Meldung',
    timeout: 'Der Server hat nicht innerhalb von {seconds} s geantwortet.',
    network: 'Der Server ist nicht erreichbar. Prüfen Sie die Verbindung und versuchen Sie es noch einmal.',
  },
  common: {
    email: 'E-Mail',
    password: 'Passwort',
    name: 'Name',
    copy: 'Kopieren',
    copied: 'Kopiert',
    continue: 'Weiter',
    cancel: 'Abbrechen',
    back: 'Zurück',
  },
  onboarding: {
    title: 'Willkommen bei Stellwerk',
    intro:
      'Legen Sie den ersten Administrator an. Das Einrichtungstoken steht beim ersten Start im Server-Log.',
    setupToken: 'Einrichtungstoken',
    passwordHint: 'Mindestens 12 Zeichen.',
    confirmPassword: 'Passwort wiederholen',
    passwordsDiffer: 'Die Passwörter stimmen nicht überein.',
    submit: 'Administrator anlegen',
    done: 'Der Administrator wurde angelegt. Melden Sie sich jetzt an.',
  },
  invitation: {
    title: 'Passwort festlegen',
    intro:
      'Sie wurden zu Stellwerk eingeladen. Wählen Sie ein Passwort für Ihr Konto und melden Sie sich dann mit Ihrer E-Mail-Adresse an.',
    signedInAs:
      'In diesem Browser sind Sie als {email} angemeldet. Beim Festlegen des Passworts werden Sie zuerst abgemeldet.',
    submit: 'Passwort festlegen',
    invitedAs: 'Sie wurden als {email} eingeladen.',
    askAgain: 'Bitten Sie Ihren Administrator um eine neue Einladung.',
    toLogin: 'Nicht jetzt: zur Konsole',
    done: 'Ihr Passwort ist festgelegt. Melden Sie sich jetzt an.',
  },
  login: {
    title: 'Anmelden',
    intro: 'Melden Sie sich an der Stellwerk-Konsole an.',
    submit: 'Anmelden',
    codeTitle: 'Zwei-Faktor-Authentifizierung',
    codeIntro: 'Geben Sie den 6-stelligen Code aus Ihrer Authenticator-App ein.',
    federatedCodeIntro:
      'Ihr Identitätsanbieter hat Sie angemeldet. Geben Sie zum Abschluss den 6-stelligen Code aus Ihrer Authenticator-App ein.',
    code: 'Authentifizierungscode',
    useRecoveryCode: 'Stattdessen einen Wiederherstellungscode verwenden',
    useCode: 'Stattdessen einen Code aus der App verwenden',
    recoveryCode: 'Wiederherstellungscode',
    verify: 'Bestätigen',
    setupTitle: 'Zwei-Faktor-Authentifizierung einrichten',
    setupIntro:
      'Ihr Konto verlangt Zwei-Faktor-Authentifizierung. Richten Sie sie jetzt ein, um fortzufahren.',
    afterSetup:
      'Die Zwei-Faktor-Authentifizierung ist aktiv. Geben Sie einen neuen Code ein, um sich anzumelden.',
  },
  twoFactor: {
    scan: 'Scannen Sie diesen QR-Code mit einer Authenticator-App (etwa Aegis, Google Authenticator oder 1Password).',
    qrAlt: 'QR-Code für Ihre Authenticator-App',
    secret: 'Oder geben Sie diesen Schlüssel von Hand ein',
    code: 'Code aus der App',
    codeHint: '6 Ziffern; alle 30 Sekunden erscheint ein neuer.',
    activate: 'Aktivieren',
    starting: 'Wird vorbereitet…',
    recoveryTitle: 'Ihre Wiederherstellungscodes',
    recoveryIntro:
      'Jeder Code erlaubt eine Anmeldung ohne Authenticator. Bewahren Sie sie sicher auf: Sie werden nur dieses eine Mal angezeigt.',
    copyAll: 'Alle Codes kopieren',
    saved: 'Ich habe meine Wiederherstellungscodes gespeichert',
  },
  home: {
    title: 'Hallo, {name}',
    intro: 'Sie sind bei {account} angemeldet.',
    profile: 'Ihr Profil',
    account: 'Konto',
    twoFactor: 'Zwei-Faktor-Authentifizierung',
    enabled: 'An',
    disabled: 'Aus',
    permissions: 'Berechtigungen',
    setUpTwoFactor: 'Zwei-Faktor-Authentifizierung einrichten',
  },
  security: {
    title: 'Sicherheit',
    intro: 'Schützen Sie Ihre Anmeldung mit einem zweiten Faktor.',
    enabledText: 'Die Zwei-Faktor-Authentifizierung ist für Ihre Anmeldung eingeschaltet.',
    done: 'Die Zwei-Faktor-Authentifizierung ist jetzt aktiv.',
  },
  twins: deTwins,
  twinPlaces: deTwinPlaces,
  devices: deDevices,
  deviceOps: deDeviceOps,
  admin: deAdmin,
  dashboards: deDashboards,
  charts: deCharts,
  publicDashboards: dePublicDashboards,
  drivers: deDrivers,
  rules: deRules,
  flows: deFlows,
  gateways: deGateways,
  exports: deExports,
  maps: deMaps,
  serverErrors: deServerErrors,
  schemaProblems: deSchemaProblems,
  terms: deTerms,
  overview: deOverview,
  console: deConsole,
};
