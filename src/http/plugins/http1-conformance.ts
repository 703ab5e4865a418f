import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { type Answer, problemAnswer } from "../answers.ts";
import { SPOKEN_VERSIONS } from "../client-error.ts";
import { sendAnswer } from "../problem-handler.ts";

/**
 * What HTTP/1.1 asks of a server that Node's HTTP layer leaves to us, in one
 * onRequest hook (the accept path pays one call for both):
 *
 * - Requests pipelined on one connection are processed one at a time, in
 *   order. Node parses every request in a read and hands each to its
 *   handler at once, queueing only the answers; a GET of an event sent right
 *   after its POST then ran before the POST was recorded (404). RFC 9112
 *   §9.3.2 allows parallel processing only when every request is safe; one
 *   at a time needs no bookkeeping: Node gives a queued answer its socket
 *   when every answer before it has finished (ServerResponse 'socket', the
 *   signal the on-finished package waits for), so a request whose answer has
 *   no socket yet waits for that. A request on its own connection, or the
 *   first of a pipeline, is not delayed.
 * - Versions other than HTTP/1.x get 505 (RFC 9110 §15.6.6, RFC 9112 §2.3).
 *   llhttp reads an HTTP/0.9 request line (no version) and HTTP/2.0 and would
 *   have them answered as HTTP/1.1.
 *
 * Wrapped with fastify-plugin: the hook must see every route's requests.
 */
async function http1Conformance(app: FastifyInstance): Promise<void> {
  app.addHook("onRequest", (request, reply, done) => {
    const { httpVersionMajor, httpVersionMinor } = request.raw;
    if (httpVersionMajor !== 1) {
      // Nothing is read of the request; the client is not one to keep talking to.
      reply.header("connection", "close");
      sendAnswer(reply, versionRefusal(httpVersionMajor, httpVersionMinor, request.id));
      return;
    }
    if (reply.raw.socket !== null) {
      done();
      return;
    }
    // After the earlier answer's 'finish' listeners (its log line and count), not inside them.
    reply.raw.once("socket", () => process.nextTick(done));
  });
}

/** The 505 for a request line of HTTP/major.minor: says what was heard and what the gateway speaks. */
function versionRefusal(major: number, minor: number, correlationId: string): Answer {
  const heard =
    major === 0
      ? "the request line has no HTTP version (HTTP/0.9)"
      : `HTTP/${major}.${minor} is not spoken on this listener`;
  return problemAnswer("GW_ERR_HTTP_VERSION_NOT_SUPPORTED", correlationId, {
    detail: `${heard}; ${SPOKEN_VERSIONS}. Nothing was recorded`,
  });
}

export default fp(http1Conformance, { name: "http1-conformance", fastify: "5.x" });
