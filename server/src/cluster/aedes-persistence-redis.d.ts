// The package ships no types; only the factory with an existing ioredis connection is used here.
declare module 'aedes-persistence-redis' {
  import type { Redis } from 'ioredis';
  export default function aedesPersistenceRedis(options: { conn: Redis }): unknown;
}
