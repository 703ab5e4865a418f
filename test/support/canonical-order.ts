import canonicalize from "canonicalize";
import { expect } from "vitest";

/**
 * The adapters build every event with its keys in RFC 8785's order, so that
 * the gateway writes its canonical text with JSON.stringify (fingerprint.ts).
 * Held to the reference implementation, not to ours: a key out of order would
 * only cost speed, and this is where it shows.
 */
export function expectCanonicalKeyOrder(event: unknown): void {
  expect(JSON.stringify(event), "the event's keys are not in RFC 8785's order").toBe(canonicalize(event));
}
