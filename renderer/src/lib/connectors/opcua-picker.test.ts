import { describe, expect, it } from 'vitest';
import { addedNodes, mappedNodeIds, stateNameOf, type BrowsedNode } from './opcua-picker';

const node = (nodeId: string, displayName: string): BrowsedNode => ({
  nodeId,
  browseName: `2:${displayName}`,
  displayName,
  nodeClass: 'Variable',
  dataType: 'Double',
});

describe('OPC UA node picker', () => {
  it('appends a picked variable to an empty or existing node list', () => {
    const first = addedNodes('', node('ns=2;s=Boiler.Temperature', 'Temperature'), 'boiler-1');
    expect(JSON.parse(first)).toEqual([
      { nodeId: 'ns=2;s=Boiler.Temperature', deviceId: 'boiler-1', state: 'Temperature' },
    ]);
    const second = addedNodes(first, node('ns=2;i=7', 'Flow rate (m³/h)'), 'boiler-1');
    expect(JSON.parse(second)).toEqual([
      { nodeId: 'ns=2;s=Boiler.Temperature', deviceId: 'boiler-1', state: 'Temperature' },
      { nodeId: 'ns=2;i=7', deviceId: 'boiler-1', state: 'Flow_rate_m_h' },
    ]);
    expect(mappedNodeIds(second)).toEqual(new Set(['ns=2;s=Boiler.Temperature', 'ns=2;i=7']));
  });

  it('adds a node once and never overwrites text that is not a JSON list', () => {
    const once = addedNodes('[]', node('i=2258', 'CurrentTime'), 'plc');
    expect(addedNodes(once, node('i=2258', 'CurrentTime'), 'plc')).toBe(once);
    expect(addedNodes('[{"nodeId": "i=1",', node('i=2258', 'CurrentTime'), 'plc')).toBe('[{"nodeId": "i=1",');
    expect(addedNodes('{"nodeId": "i=1"}', node('i=2258', 'CurrentTime'), 'plc')).toBe('{"nodeId": "i=1"}');
    expect(mappedNodeIds('not json')).toEqual(new Set());
  });

  it('names states without a leading underscore or characters a state key avoids', () => {
    expect(stateNameOf(node('i=1', '_Internal'))).toBe('Internal');
    expect(stateNameOf(node('i=1', '°°°'))).toBe('value');
    expect(stateNameOf({ ...node('i=1', ''), browseName: '3:Pressure' })).toBe('Pressure');
  });
});
