/**
 * German labels and help of connector-kind settings, keyed by kind and setting. English comes from
 * the kind's settings schema (`title`, `description`); a missing German text falls back to it
 * (lib/connectors/setting-texts.ts). lib/connectors/setting-texts.test.ts lists missing keys.
 */
export interface SettingText {
  label: string;
  help?: string;
}
type KindTexts = Record<string, SettingText>;

const tls = (peer = 'Server'): KindTexts => ({
  serverCa: { label: 'CA-Zertifikat (PEM)', help: `PEM der CA, die das ${peer}-Zertifikat signiert hat` },
  clientCert: { label: 'Client-Zertifikat (PEM)', help: 'PEM-Client-Zertifikat (mit Client-Schlüssel)' },
  clientKey: { label: 'Client-Schlüssel (PEM)', help: 'Privater PEM-Schlüssel zum Client-Zertifikat' },
  rejectUnauthorized: {
    label: 'Zertifikat prüfen',
    help: 'Aus: selbst signierte oder nicht prüfbare Zertifikate werden angenommen',
  },
});

const delivery: KindTexts = {
  queueSize: { label: 'Warteschlange', help: 'Höchstens so viele wartende Nachrichten' },
  overflow: { label: 'Wenn die Warteschlange voll ist', help: 'Welche Nachricht verworfen wird' },
  maxAttempts: { label: 'Versuche', help: 'Zustellversuche je Nachricht' },
  retryDelayMs: { label: 'Erste Wiederholung nach (ms)', help: 'Verdoppelt sich mit jeder Wiederholung' },
};

const mqttClient: KindTexts = {
  url: { label: 'Broker-URL', help: 'mqtt://-, mqtts://-, ws://- oder wss://-URL des Brokers' },
  qos: { label: 'QoS' },
  protocolVersion: { label: 'Protokollversion', help: '4: MQTT 3.1.1, 5: MQTT 5' },
  clientId: { label: 'Client-ID' },
  username: { label: 'Benutzername' },
  password: { label: 'Passwort' },
  ...tls(),
};

const lorawan: KindTexts = {
  skipFrameCounterCheck: {
    label: 'Frame-Counter nicht prüfen',
    help: 'Keine Hinweise auf zurückgesetzte oder wiederholte Frame-Counter (Geräte, die bei 0 beginnen)',
  },
};

const chirpstackApi: KindTexts = {
  apiUrl: {
    label: 'REST-API-Adresse',
    help: 'Basis der ChirpStack-REST-API, z. B. http://chirpstack-rest-api:8090',
  },
  apiToken: {
    label: 'API-Token',
    help: 'ChirpStack-API-Token (Downlinks, Löschen von Geräten, Gateway-Import)',
  },
  tenantId: { label: 'Mandanten-ID', help: 'ChirpStack-Mandant, dessen Gateways importiert werden' },
  ...lorawan,
};

export const deKindSettings: Record<string, KindTexts> = {
  modbus: {
    host: { label: 'Host', help: 'Hostname oder IP-Adresse des Modbus-TCP-Servers (Gerät oder Gateway)' },
    port: { label: 'Port', help: 'TCP-Port (Vorgabe 502)' },
    unitId: { label: 'Unit-ID', help: 'Unit-(Slave-)ID der Einträge, die keine nennen (Vorgabe 1)' },
    pollIntervalMs: {
      label: 'Abfrageintervall (ms)',
      help: 'Zeit zwischen dem Beginn zweier Abfragen (Vorgabe 5000)',
    },
    timeoutMs: {
      label: 'Zeitlimit (ms)',
      help: 'Längste Wartezeit auf eine Antwort; bleibt sie aus, wird die Verbindung neu aufgebaut (Vorgabe 3000)',
    },
    report: {
      label: 'Speichern',
      help: 'every-poll (Vorgabe): jeden Wert jeder Abfrage; change: nur geänderte Werte',
    },
    registers: {
      label: 'Registertabelle',
      help: 'Ein Eintrag je Wert: deviceId, state, table, address, optional unitId, type, wordOrder, byteOrder, scale, offset',
    },
  },
  'mqtt-broker': {
    maxConnections: {
      label: 'Höchstzahl Verbindungen',
      help: 'So viele Clients dürfen mit diesem Konnektor gleichzeitig verbunden sein',
    },
  },
  'webhook-in': {
    deviceIdField: {
      label: 'Feld der Geräte-ID',
      help: 'Feld, das das Gerät bezeichnet (Vorgabe device_id)',
    },
  },
  'mqtt-in': {
    ...mqttClient,
    topics: { label: 'Topics', help: 'Zu abonnierende Topic-Filter' },
    deviceIdSource: { label: 'Herkunft der Geräte-ID', help: 'Woher die Geräte-ID kommt (Vorgabe: Topic)' },
    deviceIdTopicSegment: {
      label: 'Topic-Ebene der Geräte-ID',
      help: 'Ebene im Topic; negative Werte zählen vom Ende',
    },
    deviceIdField: { label: 'Nutzdatenfeld der Geräte-ID', help: 'Feld der Nutzdaten mit der Geräte-ID' },
    downlinkTopic: {
      label: 'Downlink-Topic',
      help: 'Topic-Vorlage für Downlinks; {deviceId}, {devEui} und {fPort} werden eingesetzt',
    },
    sharedGroup: {
      label: 'Shared-Subscription-Gruppe',
      help: 'MQTT 5 $share/<Gruppe>/<Filter>, z. B. stellwerk; leer: ein gewöhnliches Abonnement',
    },
    sharedSlots: {
      label: 'Sitzungen der Gruppe',
      help: 'Persistente Sitzungen, die sich das Abonnement teilen (Vorgabe 2), verteilt auf die Knoten',
    },
  },
  'tts-uplink': {
    deviceIdFrom: { label: 'Geräte-ID aus', help: 'Was das Gerät bezeichnet (Vorgabe dev_eui)' },
    applicationId: { label: 'Application-ID', help: 'Die TTS-Application, zu der dieser Webhook gehört' },
    apiUrl: {
      label: 'Cluster-Adresse',
      help: 'The-Things-Stack-Cluster, z. B. https://eu1.cloud.thethings.network',
    },
    apiKey: {
      label: 'API-Schlüssel',
      help: 'API-Schlüssel mit Rechten an der Application (Downlinks, Löschen von Geräten)',
    },
    webhookId: { label: 'Webhook-ID', help: 'Die ID des Webhooks in der TTS-Application' },
    ...lorawan,
  },
  'chirpstack-uplink': chirpstackApi,
  'chirpstack-mqtt': {
    ...mqttClient,
    applicationId: {
      label: 'Application-ID',
      help: 'ChirpStack-Application; leer: alle Applications des Brokers',
    },
    ...chirpstackApi,
  },
  'loriot-uplink': {
    uplinkFrom: {
      label: 'Uplink aus',
      help: 'Welche Nachricht als Uplink gilt, wenn rx und gw beide aktiv sind (Vorgabe rx)',
    },
    ...lorawan,
  },
  'webhook-out': {
    url: { label: 'URL', help: 'http://- oder https://-URL, ohne Zugangsdaten' },
    method: { label: 'Methode' },
    headers: { label: 'Header', help: 'Zusätzliche Header der Anfrage (höchstens 30)' },
    signingSecret: { label: 'Signaturschlüssel', help: 'whsec_ + Base64 (Standard Webhooks)' },
    timeoutMs: { label: 'Zeitlimit (ms)' },
    ...delivery,
  },
  'mqtt-out': {
    ...mqttClient,
    topic: { label: 'Topic', help: 'Topic-Vorlage; {{feld}} setzt ein Feld der Nachricht ein' },
    retain: { label: 'Retain' },
    ...delivery,
  },
  'kafka-out': {
    brokers: { label: 'Broker', help: 'host:port der Bootstrap-Broker' },
    topic: { label: 'Topic' },
    keyField: { label: 'Schlüsselfeld', help: 'Feld der Nachricht, das als Schlüssel des Datensatzes dient' },
    acks: { label: 'Bestätigungen', help: '-1: alle Replikate (Vorgabe)' },
    clientId: { label: 'Client-ID' },
    ssl: { label: 'TLS' },
    ...tls('Broker'),
    saslMechanism: { label: 'SASL-Verfahren' },
    saslUsername: { label: 'SASL-Benutzername' },
    saslPassword: { label: 'SASL-Passwort' },
    connectionTimeoutMs: { label: 'Verbindungs-Zeitlimit (ms)' },
    ...delivery,
  },
  websocket: {
    ...tls(),
    url: { label: 'Server-URL', help: 'ws://- oder wss://-URL des Servers' },
    headers: {
      label: 'HTTP-Header',
      help: 'Header des Verbindungsaufbaus (nicht geheim: für ein Token das Bearer-Token nutzen)',
    },
    bearerToken: { label: 'Bearer-Token', help: 'Wird als Authorization: Bearer … gesendet' },
    subscribeMessage: {
      label: 'Abonnement-Nachricht',
      help: 'Wird nach dem Verbinden als Textnachricht gesendet (z. B. eine JSON-Anfrage)',
    },
    messages: {
      label: 'Nachrichten',
      help: 'json (Vorgabe): ein JSON-Objekt oder eine Liste von Objekten; any: Bytes für den Treiber',
    },
    deviceIdPointer: {
      label: 'JSON-Pointer der Geräte-ID',
      help: 'Wo in jedem Objekt die Geräte-ID steht (z. B. /device/id)',
    },
    deviceId: {
      label: 'Feste Geräte-ID',
      help: 'Das Gerät, zu dem jede Nachricht gehört (sein Treiber liest sie)',
    },
    pingIntervalSeconds: {
      label: 'Ping-Abstand (s)',
      help: 'Ohne Pong bis zum nächsten Ping wird die Verbindung getrennt (Vorgabe 30)',
    },
    downlinkFormat: {
      label: 'Downlink-Format',
      help: 'json (Vorgabe): ein JSON-Objekt als Text, mit der Geräte-ID am JSON-Pointer; binary: Bytes unverändert',
    },
  },
  weather: {
    baseUrl: {
      label: 'Basis-URL der API',
      help: 'Open-Meteo oder ein Spiegel; /v1/forecast wird angehängt (Vorgabe https://api.open-meteo.com)',
    },
    places: {
      label: 'Koordinaten',
      help: 'Orte zum Abfragen; die Geräte-ID ist sonst „Breite,Länge“ mit 4 Nachkommastellen',
    },
    twinLocations: {
      label: 'Orte der Zwillinge',
      help: 'Auch den Ort jedes Zwillings des Accounts abfragen (Geräte-ID twin-<Zwillings-ID>)',
    },
    twinTag: { label: 'Nur Zwillinge mit Tag', help: 'Nur Zwillinge mit diesem Tag' },
    variables: {
      label: 'Werte',
      help: 'Vorgabe: Temperatur, Niederschlag, Windgeschwindigkeit und -richtung, Globalstrahlung',
    },
    forecastHours: {
      label: 'Vorhersage-Stunden',
      help: 'Stunden voraus als forecast.<h>h.<Wert> (Vorgabe 1, 3, 6, 12, 24; leer: keine)',
    },
    intervalSeconds: {
      label: 'Abfrage-Abstand (s)',
      help: 'Vorgabe 900; mindestens STELLWERK_WEATHER_MIN_INTERVAL_SECONDS des Servers (sonst 60)',
    },
  },
  'smtp-mail': {
    host: { label: 'SMTP-Server' },
    port: { label: 'Port' },
    security: { label: 'Verschlüsselung', help: 'starttls (Vorgabe), tls für implizites TLS auf 465, none' },
    rejectUnauthorized: tls().rejectUnauthorized!,
    from: { label: 'Absender', help: 'Adresse oder Name <Adresse>' },
    to: { label: 'Empfänger', help: 'Vorgegebene Empfänger' },
    auth: { label: 'Anmeldung' },
    username: { label: 'Benutzername' },
    password: { label: 'Passwort' },
    oauth2Provider: { label: 'OAuth-2.0-Anbieter' },
    oauth2ClientId: { label: 'OAuth-2.0-Client-ID' },
    oauth2ClientSecret: { label: 'OAuth-2.0-Client-Secret' },
    oauth2RefreshToken: {
      label: 'OAuth-2.0-Refresh-Token',
      help: 'Wird von der Zustimmung beim Anbieter gesetzt',
    },
    oauth2AuthUrl: { label: 'Autorisierungs-URL' },
    oauth2TokenUrl: { label: 'Token-URL' },
    oauth2Scope: { label: 'Scope' },
    ...delivery,
  },
  lwm2m: {
    port: { label: 'UDP-Port', help: 'Port, auf dem der Server lauscht (Vorgabe 5683)' },
    bindAddress: {
      label: 'Adresse',
      help: 'Adresse, auf der der Server lauscht (Vorgabe 127.0.0.1; 0.0.0.0 oder :: für alle Schnittstellen)',
    },
    observe: {
      label: 'Beobachtete Pfade',
      help: 'Objekt-, Instanz- oder Ressourcenpfade, die nach jeder Registrierung beobachtet werden, z. B. 3303/0/5700',
    },
    maxClients: { label: 'Höchstens registrierte Clients', help: 'Vorgabe 1000' },
  },
  iec104: {
    host: { label: 'Host', help: 'Hostname oder IP-Adresse der Unterstation' },
    port: { label: 'Port', help: 'TCP-Port (Vorgabe 2404)' },
    commonAddress: {
      label: 'Gemeinsame Adresse (CA)',
      help: 'ASDU-Adresse für Generalabfrage, Uhrzeitsynchronisation und Zeilen ohne ca (Vorgabe 1)',
    },
    originatorAddress: {
      label: 'Herkunftsadresse',
      help: 'Herkunftsadresse in der Übertragungsursache (Vorgabe 0)',
    },
    k: { label: 'k', help: 'Höchstens so viele unquittierte I-Telegramme senden (Vorgabe 12)' },
    w: { label: 'w', help: 'Empfangene I-Telegramme spätestens nach so vielen quittieren (Vorgabe 8)' },
    t0: { label: 't0 (s)', help: 'Sekunden für den Verbindungsaufbau (Vorgabe 30)' },
    t1: { label: 't1 (s)', help: 'Sekunden bis zur Quittung oder Bestätigung (Vorgabe 15)' },
    t2: {
      label: 't2 (s)',
      help: 'Empfangene I-Telegramme spätestens nach so vielen Sekunden quittieren (Vorgabe 10; unter t1)',
    },
    t3: { label: 't3 (s)', help: 'Sekunden Stille bis zu einem TESTFR (Vorgabe 20)' },
    interrogationIntervalSeconds: {
      label: 'Generalabfrage alle (s)',
      help: 'Zusätzlich zur Generalabfrage nach jedem Start (0: nur nach dem Start)',
    },
    clockSync: { label: 'Uhrzeit synchronisieren', help: 'Nach jedem Start die Uhrzeit senden (Vorgabe an)' },
    selectBeforeOperate: {
      label: 'Anwählen vor Ausführen',
      help: 'Befehle erst anwählen, dann ausführen (Vorgabe an)',
    },
    points: {
      label: 'Datenpunktliste (CSV)',
      help: 'Kopfzeile ioa,device_id,state[,type,scale,ca]; siehe docs/connectors/iec104.md',
    },
  },
  opcua: {
    endpointUrl: { label: 'Endpunkt-URL', help: 'opc.tcp://host:port/pfad des Server-Endpunkts' },
    securityMode: { label: 'Sicherheitsmodus', help: 'Nachrichtensicherheit (Vorgabe None)' },
    securityPolicy: {
      label: 'Sicherheitsrichtlinie',
      help: 'Vorgabe Basic256Sha256, wenn gesichert',
    },
    username: {
      label: 'Benutzername',
      help: 'Ohne Benutzername und ohne Zertifikat ist die Sitzung anonym',
    },
    password: { label: 'Passwort' },
    userCertificate: {
      label: 'Benutzerzertifikat (PEM)',
      help: 'X.509-Zertifikat zur Anmeldung (mit dem privaten Schlüssel)',
    },
    userPrivateKey: { label: 'Privater Schlüssel (PEM)', help: 'Privater Schlüssel des Benutzerzertifikats' },
    serverCertificateSha256: {
      label: 'SHA-256 des Server-Zertifikats',
      help: 'Fingerabdruck des Zertifikats, dem vertraut wird; ohne ihn gilt das zuerst gesehene',
    },
    samplingIntervalMs: {
      label: 'Abtastintervall (ms)',
      help: 'Wie oft der Server jeden Knoten abtastet (Vorgabe 1000)',
    },
    publishingIntervalMs: {
      label: 'Sendeintervall (ms)',
      help: 'Wie oft der Server Änderungen sendet (Vorgabe 1000)',
    },
    nodes: { label: 'Knoten', help: 'Knoten-IDs, den Zuständen von Geräten zugeordnet' },
  },
};
