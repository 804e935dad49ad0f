import { describe, expect, it } from 'vitest';
import { chirpstackGateway, ttsGateway } from './gateway-import.js';

describe('network-server gateway lists', () => {
  it('reads a TTS v3 gateway: EUI lower-cased, gateway id kept, first antenna location', () => {
    expect(
      ttsGateway({
        ids: { gateway_id: 'roof-gw', eui: '58A0CBFFFE800001' },
        name: 'Roof',
        antennas: [{ location: { latitude: 52.1, longitude: 13.2, altitude: 30 } }],
      }),
    ).toEqual({
      eui: '58a0cbfffe800001',
      networkId: 'roof-gw',
      title: 'Roof',
      description: '',
      location: { latitude: 52.1, longitude: 13.2, altitude: 30 },
    });
    expect(ttsGateway({ ids: { gateway_id: 'virtual' } })).toEqual({ skip: 'no gateway EUI', id: 'virtual' });
  });

  it('reads a ChirpStack v4 gateway list item in camelCase and proto names; 0/0 is no location', () => {
    expect(
      chirpstackGateway({
        gatewayId: '0016C001F153A14C',
        name: 'Cellar',
        location: { latitude: 0, longitude: 0 },
      }),
    ).toMatchObject({ eui: '0016c001f153a14c', networkId: null, title: 'Cellar', location: null });
    expect(chirpstackGateway({ gateway_id: '0016c001f153a14d' })).toMatchObject({
      title: '0016c001f153a14d',
    });
    expect(chirpstackGateway({ gatewayId: 'not-an-eui' })).toEqual({
      skip: 'gateway id is not an EUI',
      id: 'not-an-eui',
    });
  });
});
