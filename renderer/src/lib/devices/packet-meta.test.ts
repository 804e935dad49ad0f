import { describe, expect, it } from 'vitest';
import { metaSummary } from './packet-meta';

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
