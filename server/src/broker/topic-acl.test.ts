import { describe, expect, it } from 'vitest';
import { DeviceDownlinkTopics, DeviceUplinkTopics, topicAcl } from './topic-acl.js';

const A = '01a200aa-989b-76c9-840b-4a0dd99a745f';
const B = '01a200aa-989b-76c9-840b-4a0dd99a7460';

describe('DeviceUplinkTopics', () => {
  const family = new DeviceUplinkTopics();
  it('allows publishing to the own connector up topic and names the device', () => {
    expect(family.canPublish(A, `connectors/${A}/devices/meter-1/up`)).toBe('meter-1');
    expect(family.canPublish(A, `connectors/${A}/devices/Zähler 7 (Keller)/up`)).toBe('Zähler 7 (Keller)');
  });
  it.each([
    [`connectors/${B}/devices/meter-1/up`, 'another connector'],
    [`connectors/${A}/devices//up`, 'empty device'],
    [`connectors/${A}/devices/+/up`, 'wildcard device'],
    [`connectors/${A}/devices/#/up`, 'multi-level wildcard'],
    [`connectors/${A}/devices/a/b/up`, 'device with a slash'],
    [`connectors/${A}/devices/meter-1/down`, 'downlink'],
    [`connectors/${A}/devices/meter-1/up/extra`, 'extra level'],
    [`/connectors/${A}/devices/meter-1/up`, 'leading slash'],
    [`connectors/${A}/devices/${'x'.repeat(201)}/up`, 'over-long device'],
    ['$SYS/broker/uptime', '$SYS'],
    ['#', 'everything'],
  ])('refuses %s (%s)', (topic) => {
    expect(family.canPublish(A, topic)).toBeNull();
  });
  it('never allows subscribing to or receiving uplinks', () => {
    expect(family.canSubscribe()).toBe(false);
    expect(family.canReceive()).toBe(false);
  });
});

describe('DeviceDownlinkTopics', () => {
  const family = new DeviceDownlinkTopics();
  it('allows the own connector down topics, one device or all', () => {
    expect(family.canSubscribe(A, `connectors/${A}/devices/+/down`)).toBe(true);
    expect(family.canSubscribe(A, `connectors/${A}/devices/meter-1/down`)).toBe(true);
  });
  it.each([
    `connectors/${B}/devices/+/down`,
    `connectors/${A}/devices/#`,
    `connectors/${A}/#`,
    `connectors/+/devices/+/down`,
    `connectors/${A}/devices/+/up`,
    `connectors/${A}/devices//down`,
    `connectors/${A}/devices/+/+`,
    `+/${A}/devices/+/down`,
    '#',
    '+/#',
    '$SYS/#',
    '$SYS/+/heartbeat',
  ])('refuses subscribing to %s', (filter) => {
    expect(family.canSubscribe(A, filter)).toBe(false);
  });
  it('never lets a client publish a downlink', () => {
    expect(family.canPublish()).toBeNull();
  });
  it('delivers only the own connector downlinks', () => {
    expect(family.canReceive(A, `connectors/${A}/devices/meter-1/down`)).toBe(true);
    expect(family.canReceive(A, `connectors/${B}/devices/meter-1/down`)).toBe(false);
    expect(family.canReceive(A, `connectors/${A}/devices/meter-1/up`)).toBe(false);
    expect(family.canReceive(A, '$SYS/x/heartbeat')).toBe(false);
  });
});

describe('topicAcl', () => {
  it('is the union of the families and denies everything else', () => {
    expect(topicAcl.uplinkDevice(A, `connectors/${A}/devices/d/up`)).toBe('d');
    expect(topicAcl.uplinkDevice(A, `connectors/${A}/devices/d/down`)).toBeNull();
    expect(topicAcl.canSubscribe(A, `connectors/${A}/devices/d/down`)).toBe(true);
    expect(topicAcl.canSubscribe(A, `connectors/${A}/devices/d/up`)).toBe(false);
    expect(topicAcl.canReceive(B, `connectors/${A}/devices/d/down`)).toBe(false);
  });
});
