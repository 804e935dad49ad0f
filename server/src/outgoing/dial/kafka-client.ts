import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';
import type { DialOut } from './dial-out.js';

/**
 * kafkajs clients for tenant-set brokers: the socket factory sends every connection through
 * DialOut, the seed brokers and the brokers the cluster's metadata names alike.
 */
export function guardedKafka(
  dial: DialOut,
  config: Omit<KafkaConfig, 'socketFactory' | 'logLevel' | 'logCreator'>,
): Kafka {
  return new Kafka({
    ...config,
    // Failures reach the connector log through the dispatcher; kafkajs's own logger stays silent.
    logLevel: logLevel.NOTHING,
    socketFactory: ({ host, port, ssl, onConnect }) =>
      // kafkajs hands `ssl: true` through as it was configured.
      dial.socket({ host, port, ...(ssl ? { tls: typeof ssl === 'object' ? ssl : {} } : {}) }, onConnect),
  });
}
