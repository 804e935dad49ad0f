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
 *
 * `--v8-pool-size=0`: one V8 helper thread per CPU beyond the first, instead of Node's fixed four.
 * The helpers (concurrent marking, parallel scavenges, background compilation) run at the broker
 * thread's priority; on 2 CPUs four of them took both CPUs at times, and the broker thread waited
 * up to 15 ms in the run queue with a packet unread (`/proc/thread-self/schedstat`). In alternating
 * 10,000 msg/s runs: publish → visible p99 7.2–12.5 ms (median 9.4) against 10.5–30.7 ms (median
 * 14.7), durable QoS 1 throughput unchanged (docs/performance.md).
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64', '--v8-pool-size=0'];
