/**
 * Node flags every launcher passes to the server process (npm start, the systemd unit, the desktop
 * app, the tests and benchmarks; `launchers.test.ts` checks they agree). V8 reads them only when the
 * process starts, so the server cannot set them itself.
 *
 * `--max-semi-space-size=64`: a young generation of 64 MiB per semi-space (V8's default is 16 MiB on
 * 64-bit). Every MQTT packet allocates short-lived objects on the broker thread; with the default the
 * scavenger ran so often that its helper threads took a third of a CPU during bursts. Measured in
 * alternating runs of `BENCH_ONLY='fast QoS 1' npm run bench:ingest`: durable QoS 1 at 73–89% of
 * Mosquitto with the flag, 63–69% without (docs/performance.md). Costs up to ~128 MiB more RSS.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
