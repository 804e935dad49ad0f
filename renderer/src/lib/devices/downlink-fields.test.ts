import { describe, expect, it } from 'vitest';
import { downlinkFields } from './downlink-fields';

describe('downlink fields', () => {
  it('offers port and confirmation on the LoRaWAN network servers', () => {
    for (const type of ['tts-uplink', 'chirpstack-uplink', 'chirpstack-mqtt']) {
      expect(downlinkFields({ type, config: {} })).toEqual({ fPort: true, confirmed: true });
    }
  });

  it('offers neither on connectors that carry no LoRaWAN frame', () => {
    for (const type of ['mqtt-broker', 'websocket', 'modbus', 'lwm2m', 'opcua', 'iec104']) {
      expect(downlinkFields({ type, config: {} })).toEqual({ fPort: false, confirmed: false });
    }
    expect(downlinkFields(null)).toEqual({ fPort: false, confirmed: false });
  });

  it('offers the port on an MQTT subscription whose downlink topic names it', () => {
    const bridge = { type: 'mqtt-in', config: { downlinkTopic: 'lora/{devEui}/down/{fPort}' } };
    expect(downlinkFields(bridge)).toEqual({ fPort: true, confirmed: false });
    const plain = { type: 'mqtt-in', config: { downlinkTopic: 'devices/{deviceId}/down' } };
    expect(downlinkFields(plain)).toEqual({ fPort: false, confirmed: false });
  });
});
