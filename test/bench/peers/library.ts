import { Idempotency, IdempotencyError, IdempotencyErrorCodes, type IdempotencyParams } from "@node-idempotency/core";
import { RedisStorageAdapter } from "@node-idempotency/storage-adapter-redis";
import Fastify from "fastify";

/**
 * A peer for `npm run bench`: the order-paid endpoint made idempotent with an
 * off-the-shelf library, @node-idempotency/core on Redis (its
 * storage-adapter-redis), used as its README shows: `onRequest` before the
 * business logic (a replay or an error comes back from it), `onResponse`
 * after, to store the first answer. Its Fastify plugin is not installable
 * here, so the hook is written out as that plugin does it, on the one route.
 *
 * The library keys on an Idempotency-Key header; the gateway's senders put
 * the key in the body, so the handler hands the library the body's event_id
 * as that key (the load stays identical to the gateway's). The library's own
 * answers, as its Fastify plugin maps them: a repeat gets the stored first
 * answer (201) with `Idempotent-Replayed: true`; the same key with another
 * body (its fingerprint, BLAKE2s of JSON.stringify of the body) gets 422;
 * a repeat while the first is still in progress gets 409.
 *
 * Not durable: Redis keeps the keys in memory (its snapshots and AOF, at
 * their defaults, can lose the last second or more). Like the hand-written
 * peer: no schema validation beyond event_id being a string, no logging.
 *
 * Environment: REDIS_URL, KEY_PREFIX (the library's cacheKeyPrefix: a new
 * one per run, so runs never see each other's keys), SENDER_TOKEN, PORT.
 */

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const keyPrefix = process.env.KEY_PREFIX;
if (!keyPrefix) throw new Error("KEY_PREFIX is required");
const expectedAuthorization = `Bearer ${process.env.SENDER_TOKEN ?? ""}`;
const ROUTE = "/integration/v1/orders/paid";

/** The library's Fastify plugin's map from its error codes to statuses. */
const ERROR_STATUS: Record<string, number> = {
  [IdempotencyErrorCodes.IDEMPOTENCY_FINGERPRINT_MISSMATCH]: 422,
  [IdempotencyErrorCodes.IDEMPOTENCY_KEY_LEN_EXEEDED]: 400,
  [IdempotencyErrorCodes.IDEMPOTENCY_KEY_MISSING]: 400,
  [IdempotencyErrorCodes.REQUEST_IN_PROGRESS]: 409,
};

const storage = new RedisStorageAdapter({ url: redisUrl });
await storage.connect();
const idempotency = new Idempotency(storage, { cacheKeyPrefix: keyPrefix });

const app = Fastify({ logger: false });

app.post(ROUTE, async (request, reply) => {
  if (request.headers.authorization !== expectedAuthorization) return reply.code(401).send({ error: "unauthorized" });
  const body = request.body as Record<string, unknown> | null;
  const eventId = body?.event_id;
  if (body === null || typeof eventId !== "string") return reply.code(400).send({ error: "event_id must be a string" });
  const params: IdempotencyParams = { method: "POST", path: ROUTE, headers: { "idempotency-key": eventId }, body };
  try {
    const stored = await idempotency.onRequest(params);
    if (stored !== undefined) {
      return reply
        .code(Number(stored.additional?.status ?? 200))
        .header("idempotent-replayed", "true")
        .send(stored.body ?? stored.error);
    }
  } catch (error) {
    if (!(error instanceof IdempotencyError)) throw error;
    if (error.code === IdempotencyErrorCodes.REQUEST_IN_PROGRESS) reply.header("retry-after", "1");
    return reply.code(ERROR_STATUS[error.code] ?? 500).send({ error: error.message, code: error.code });
  }
  // The business logic: nothing to do but answer.
  const answer = { event_id: eventId, status: "accepted" };
  await idempotency.onResponse(params, { body: answer, additional: { status: 201 } });
  return reply.code(201).send(answer);
});

const close = async () => {
  await app.close();
  await storage.disconnect();
  process.exit(0);
};
process.once("SIGTERM", close);
process.once("SIGINT", close);

const url = await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? "0") });
// The bench waits for this exact line to learn the port.
console.log(`peer listening on ${url}`);
