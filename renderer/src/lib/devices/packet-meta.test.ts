import { describe, expect, it } from 'vitest';
import { metaSummary, payloadShown } from './packet-meta';

describe('packet metadata summary', () => {
  it('names port, counter, the best gateway with RSSI and SNR, how many more heard it, and the data rate', () => {
    expect(
      metaSummary({
        fPort: 2,
        fCnt: 4711,
        gateways: [
          { gatewayId: 'far', rssi: -120, snr: -9 },
          { gatewayId: 'near', gatewayEui: 'b827ebfffe000001', rssi: -112, snr: -3.5 },
        ],
        dataRate: 'SF9BW125',
      }),
    ).toEqual(['fPort 2', 'fCnt 4711', '-112 dBm', 'SNR -3.5 dB', 'near (+1)', 'SF9BW125']);
  });

  it('shows a non-uplink event and an MQTT topic, and nothing without metadata', () => {
    expect(metaSummary({ event: 'join', gateways: [{ gatewayEui: 'aa' }], spreadingFactor: 7 })).toEqual([
      'join',
      'aa',
      'SF7',
    ]);
    expect(metaSummary({ topic: 'plant/m-1/up' })).toEqual(['plant/m-1/up']);
    expect(metaSummary(null)).toEqual([]);
  });
});

describe('payload shown in the packet history', () => {
  const b64 = (bytes: number[]) => Buffer.from(bytes).toString('base64');

  it('keeps text, shows short binary as hex even when it is valid UTF-8, long binary as base64', () => {
    expect(payloadShown('{"t":"ü"}\n', b64([]))).toBe('{"t":"ü"}\n');
    expect(payloadShown('\u0001\u0004', b64([1, 4]))).toBe('hex: 01 04');
    expect(payloadShown(null, b64([0x00, 0x01, 0xe2, 0x40]))).toBe('hex: 00 01 e2 40');
    const long = b64(Array.from({ length: 65 }, () => 0xff));
    expect(payloadShown(null, long)).toBe(`base64: ${long}`);
  });
});
