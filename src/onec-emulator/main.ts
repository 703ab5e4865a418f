import { startOnecEmulator } from "./emulator.ts";

/** `npm run onec-emulator`: a standalone 1C for the demo and for poking at by hand. */
const port = parsePort(process.env.ONEC_EMULATOR_PORT ?? "8081");
// Set, the emulator's orders outlive the process (see journal.ts); unset, they live in memory only.
const journalPath = process.env.ONEC_EMULATOR_JOURNAL || undefined;
const emulator = await startOnecEmulator({
  host: process.env.ONEC_EMULATOR_HOST || "127.0.0.1",
  port,
  user: process.env.ONEC_USER,
  password: process.env.ONEC_PASSWORD,
  journalPath,
});
if (journalPath !== undefined) {
  console.log(`1C emulator journal ${journalPath}: ${emulator.orders().length} orders restored`);
}
console.log(`1C emulator listening on ${emulator.url}`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    void emulator.close().then(() => process.exit(0));
  });
}

function parsePort(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    console.error(`ONEC_EMULATOR_PORT must be an integer 0..65535, got "${text}"`);
    process.exit(2);
  }
  return value;
}
