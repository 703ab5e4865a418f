import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import Fastify from "fastify";

/**
 * A peer for `npm run bench`: the idempotent order-paid endpoint a competent
 * developer writes in an afternoon with Fastify and better-sqlite3. One table
 * keyed by (sender, event_id); per request one `BEGIN IMMEDIATE … COMMIT`:
 * look the key up, insert it if new (201 with the stored answer), the same
 * body again → 200 with the stored answer, another body → 409.
 *
 * Its limits, on purpose (an afternoon's work): no schema validation beyond
 * event_id being a string, no logging, no metrics, no delivery to 1C, and the
 * body hash is SHA-256 of JSON.stringify of the parsed body (key order as
 * sent), not a canonical form.
 *
 * Environment: DATABASE_PATH (a SQLite file), SYNCHRONOUS (FULL: an fsync on
 * every commit, durable on power loss; NORMAL: WAL commits without an fsync,
 * durable across a crash of the process but not of the machine), SENDER_TOKEN
 * (the one bearer token accepted), PORT.
 */

const SYNCHRONOUS = process.env.SYNCHRONOUS ?? "FULL";
if (SYNCHRONOUS !== "FULL" && SYNCHRONOUS !== "NORMAL") throw new Error("SYNCHRONOUS must be FULL or NORMAL");
const databasePath = process.env.DATABASE_PATH;
if (!databasePath) throw new Error("DATABASE_PATH is required");
const expectedAuthorization = `Bearer ${process.env.SENDER_TOKEN ?? ""}`;
const SENDER = "shop";

const db = new Database(databasePath);
db.pragma("journal_mode = WAL");
db.pragma(`synchronous = ${SYNCHRONOUS}`);
db.exec(`CREATE TABLE IF NOT EXISTS events (
  sender TEXT NOT NULL,
  event_id TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  status TEXT NOT NULL,
  answer TEXT NOT NULL,
  PRIMARY KEY (sender, event_id)
)`);

const find = db.prepare<[string, string], { body_hash: string; answer: string }>(
  "SELECT body_hash, answer FROM events WHERE sender = ? AND event_id = ?",
);
const insert = db.prepare<[string, string, string, string, string]>(
  "INSERT INTO events (sender, event_id, body_hash, status, answer) VALUES (?, ?, ?, ?, ?)",
);

type Outcome = { status: 200 | 201 | 409; answer: string };

/** better-sqlite3's transaction(): `.immediate` runs it inside BEGIN IMMEDIATE … COMMIT. */
const register = db.transaction((eventId: string, bodyHash: string): Outcome => {
  const known = find.get(SENDER, eventId);
  if (known === undefined) {
    const answer = JSON.stringify({ event_id: eventId, status: "accepted" });
    insert.run(SENDER, eventId, bodyHash, "accepted", answer);
    return { status: 201, answer };
  }
  if (known.body_hash === bodyHash) return { status: 200, answer: known.answer };
  return { status: 409, answer: JSON.stringify({ error: "event_id already used with another body" }) };
});

const app = Fastify({ logger: false });

app.post("/integration/v1/orders/paid", async (request, reply) => {
  if (request.headers.authorization !== expectedAuthorization) return reply.code(401).send({ error: "unauthorized" });
  const body = request.body as { event_id?: unknown } | null;
  if (typeof body?.event_id !== "string") return reply.code(400).send({ error: "event_id must be a string" });
  const bodyHash = createHash("sha256").update(JSON.stringify(body)).digest("hex");
  const { status, answer } = register.immediate(body.event_id, bodyHash);
  return reply.code(status).type("application/json").send(answer);
});

const close = async () => {
  await app.close();
  db.close();
  process.exit(0);
};
process.once("SIGTERM", close);
process.once("SIGINT", close);

const url = await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? "0") });
// The bench waits for this exact line to learn the port.
console.log(`peer listening on ${url}`);
