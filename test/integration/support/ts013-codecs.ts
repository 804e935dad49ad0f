/**
 * Payload codecs written to the LoRa Alliance codec API (TS013) in the style vendors publish them:
 * plain ES5 with helpers and constant tables at the top level, `decodeUplink(input)` switching on
 * `input.fPort`, `{data, warnings, errors}` results, and `encodeDownlink`/`decodeDownlink`. Written
 * for these tests; no vendor's code.
 */

/** A water meter: port 1 index frame (nested battery), port 2 alarm list, port 10 configuration. */
export const WATER_METER_CODEC = `
var ALARMS = { 1: 'leak', 2: 'backflow', 4: 'tamper' };
var MEDIUM = ['water', 'warm water'];

function readUInt32BE(bytes, i) {
  return ((bytes[i] << 24) >>> 0) + (bytes[i + 1] << 16) + (bytes[i + 2] << 8) + bytes[i + 3];
}

function decodeIndex(bytes, variables) {
  var warnings = [];
  var volume = readUInt32BE(bytes, 0) / 1000;
  var voltage = (bytes[5] * 10 + 2000) / 1000;
  if (voltage < 3.1) warnings.push('battery voltage low: ' + voltage + ' V');
  return {
    data: {
      volume: volume,
      medium: MEDIUM[bytes[4]] || 'unknown',
      battery: { voltage: voltage, low: voltage < 3.1 },
      meter: { serial: variables.serial || null }
    },
    warnings: warnings
  };
}

function decodeAlarms(bytes) {
  var list = [];
  for (var i = 0; i < bytes.length; i++) {
    if (!ALARMS[bytes[i]]) return { errors: ['unknown alarm code ' + bytes[i]] };
    list.push({ code: bytes[i], name: ALARMS[bytes[i]] });
  }
  return { data: { alarms: list, alarmCount: list.length } };
}

function decodeUplink(input) {
  console.log('fPort', input.fPort, 'bytes', input.bytes.length);
  switch (input.fPort) {
    case 1:
      if (input.bytes.length < 6) return { errors: ['index frame too short'] };
      return decodeIndex(input.bytes, input.variables);
    case 2:
      return decodeAlarms(input.bytes);
    default:
      return { errors: ['unknown FPort ' + input.fPort] };
  }
}

function encodeDownlink(input) {
  var minutes = input.data.reportingIntervalMinutes;
  if (typeof minutes !== 'number' || minutes < 1 || minutes > 1440) {
    return { errors: ['reportingIntervalMinutes must be 1-1440'] };
  }
  return { bytes: [0x01, (minutes >> 8) & 0xff, minutes & 0xff], fPort: 10, warnings: [], errors: [] };
}

function decodeDownlink(input) {
  if (input.bytes[0] !== 0x01) return { errors: ['unknown command ' + input.bytes[0]] };
  return { data: { reportingIntervalMinutes: (input.bytes[1] << 8) | input.bytes[2] } };
}
`;

/**
 * A heat meter whose frames say what they are in their first byte, so it decodes without fPort;
 * several readings per frame (nested array) and a warning for a meter in error state.
 */
export const HEAT_METER_CODEC = `
var FRAME_READINGS = 0x21;

function decodeUplink(input) {
  var b = input.bytes;
  console.log('frame', b[0], 'of', b.length, 'bytes');
  if (b[0] !== FRAME_READINGS) return { errors: ['frame type ' + b[0] + ' not supported'] };
  var readings = [];
  for (var i = 2; i + 1 < b.length; i += 2) readings.push({ value: ((b[i] << 8) | b[i + 1]) / 10 });
  var result = {
    data: { status: { code: b[1], ok: b[1] === 0 }, readings: readings, receivedYear: input.recvTime.getUTCFullYear() },
    warnings: []
  };
  if (b[1] !== 0) result.warnings.push('meter reports status ' + b[1]);
  return result;
}
`;

/** A minimal codec for route-table fixtures: every driver route (parser test, downlink encoding) works on it. */
export const FIXTURE_CODEC_PARSER = {
  type: 'javascript',
  code: 'function decodeUplink(input) { return { data: { size: input.bytes.length } }; }\nfunction encodeDownlink(input) { return { bytes: [1], fPort: 1 }; }',
};
