import Fastify from "fastify";

/**
 * The baseline for `npm run bench`: the least a Fastify server can do on the
 * gateway's route — parse the JSON body with Fastify's default parser and
 * answer. No logging, no validation, no storage, so the gap to the gateway is
 * exactly the cost of accepting an event durably.
 */
const app = Fastify({ logger: false });

app.post("/integration/v1/orders/paid", async (_request, reply) => {
  return reply.code(201).send({ ok: true });
});

const url = await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? "0") });
// accept.ts waits for this exact line to learn the port.
console.log(`bare server listening on ${url}`);
