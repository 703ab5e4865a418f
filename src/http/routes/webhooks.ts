import type { FastifyBodyParser, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type WebhookIntake, type WebhookOutcome, webhookOutcomeLabel } from "../../accept/webhook-intake.ts";
import { GatewayProblem } from "../../errors/problem.ts";
import type { GatewayMetrics } from "../../observability/metrics.ts";
import type { EventRegister } from "../../register/port.ts";
import type { Platform, SourceAdapter, SourceSettings } from "../../sources/port.ts";
import { problemAnswer } from "../answers.ts";
import { parseMediaType } from "../media-type.ts";
import { problemCodeFor, sendAnswer } from "../problem-handler.ts";
import { verifiedSenderCharge } from "../sender-rate-limit.ts";
import { webhookAnswerFor } from "../webhook-answers.ts";
import { webhookGetSchema, webhookRouteSchema } from "./webhook-schemas.ts";

export const WEBHOOKS_PATH = "/integration/v1/webhooks";

/** The sender a request to an unconfigured webhook URL counts as: one series, one bucket, whatever the URL says. */
const UNKNOWN_SENDER = "-";

/** What Shopify and WooCommerce send (JSON) and Tilda (a form, or JSON); any other type still reaches the catch-all. */
const PLATFORM_MEDIA_TYPES = ["application/json", "application/x-www-form-urlencoded"];

/** What Fastify sees instead of a Content-Type that does not parse: a valid type no parser names, so the catch-all's. */
const UNREADABLE_LABEL = { "content-type": "application/octet-stream" };

export interface WebhookRoutesOptions {
  intake: WebhookIntake;
  adapters: Readonly<Record<Platform, SourceAdapter>>;
  sources: readonly SourceSettings[];
  register: EventRegister;
  metrics: GatewayMetrics;
  rateLimit: { max: number; windowMs: number };
  bodyLimit: number;
  now: () => number;
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** The platform a webhook route takes. */
    platform?: Platform;
  }
}

interface WebhookParams {
  sender: string;
  token?: string;
}

/**
 * The platforms' native webhooks, one URL per platform and sender, pasted
 * into the shop's admin: /integration/v1/webhooks/shopify/shop-a. Tilda
 * signs nothing, so its URL carries the sender's secret as a last segment.
 * The bytes reach the adapter as received, whatever their media type (JSON,
 * a form, WooCommerce's untyped ping): the signature is over them.
 */
export async function webhookRoutes(app: FastifyInstance, options: WebhookRoutesOptions): Promise<void> {
  const { intake, metrics, now } = options;
  const settingsFor = new Map(options.sources.map((settings) => [`${settings.platform}/${settings.sender}`, settings]));

  app.removeAllContentTypeParsers();
  const rawBytes: FastifyBodyParser<Buffer> = (request, raw, done) => {
    const encoding = request.headers["content-encoding"];
    if (encoding === undefined || encoding.trim().toLowerCase() === "identity") done(null, raw);
    else
      done(
        new GatewayProblem(
          "GW_ERR_UNSUPPORTED_MEDIA_TYPE",
          `Content-Encoding "${encoding}" is not read; send the body as it is`,
        ),
      );
  };
  // No bodyLimit here: each route below sets its own, which Fastify applies to the parser and the 413 names.
  app.addContentTypeParser("*", { parseAs: "buffer" }, rawBytes);
  // The same parser under the platforms' own media types: Fastify caches the parser it finds for a named type,
  // but looks for the catch-all anew on every request, parsing the Content-Type header each time.
  app.addContentTypeParser(PLATFORM_MEDIA_TYPES, { parseAs: "buffer" }, rawBytes);

  const platformOf = (request: FastifyRequest): Platform => request.routeOptions.config.platform ?? "shopify";
  app.addHook("onRequest", (request, _reply, done) => {
    const { sender } = request.params as WebhookParams;
    // Anyone can name any sender in a URL: only a configured one gets its own metric series and rate-limit bucket.
    request.sender = settingsFor.has(`${platformOf(request)}/${sender}`) ? sender : UNKNOWN_SENDER;
    // Fastify answers 415 to a Content-Type it cannot parse ("", "///") before any parser runs. The signature is
    // over the bytes whatever their label, so Fastify is shown a label its catch-all takes; the adapter still
    // reads, and the kept delivery still records, the label as sent (request.raw.headers, untouched).
    const label = request.raw.headers["content-type"];
    if (label !== undefined && parseMediaType(label) === undefined) request.headers = UNREADABLE_LABEL;
    done();
  });
  app.addHook("onError", async (request, _reply, error) => {
    metrics.webhook(platformOf(request), request.sender, problemCodeFor(error));
  });
  const chargeSender = await verifiedSenderCharge(app, options.rateLimit, options.register.hitCounter);

  const handle = async (request: FastifyRequest<{ Params: WebhookParams }>, reply: FastifyReply) => {
    const platform = platformOf(request);
    const adapter = options.adapters[platform];
    const settings = settingsFor.get(`${platform}/${request.params.sender}`);
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const outcome: WebhookOutcome =
      settings === undefined
        ? // An unknown sender gets the 401 of a wrong signature. Not the same detail, and WooCommerce's ping
          // is answered only at a configured sender's URL: a shop that pasted a wrong URL learns it when it
          // saves the webhook. A sender's name is in the URL the shop pastes: no secret to hide.
          {
            kind: "unauthorized",
            detail: `no ${platform} webhook is configured at this URL, or its signature does not verify`,
          }
        : await intake.take(
            adapter,
            settings,
            { headers: request.raw.headers, raw, urlToken: request.params.token, receivedAt: now() },
            request.id,
            request.trace?.context,
            chargeSender === undefined ? undefined : () => chargeSender(request, reply),
          );
    metrics.webhook(platform, request.sender, webhookOutcomeLabel(outcome));
    request.logEvent = logFieldsOf(outcome);
    if (outcome.kind === "unauthorized") {
      const wait = await request.server.authThrottle.failed(request, "sender", `${platform}/${request.params.sender}`);
      if (wait !== undefined) {
        return sendAnswer(
          reply,
          problemAnswer("GW_ERR_AUTH_THROTTLED", request.id, {
            detail: "too many deliveries whose signature did not verify; wait and send again",
            retryAfterSeconds: wait,
          }),
        );
      }
    }
    return sendAnswer(reply, webhookAnswerFor(outcome, adapter, request.id));
  };

  for (const platform of Object.keys(options.adapters) as Platform[]) {
    const path =
      platform === "tilda" ? `${WEBHOOKS_PATH}/tilda/:sender/:token` : `${WEBHOOKS_PATH}/${platform}/:sender`;
    app.post<{ Params: WebhookParams }>(
      path,
      { schema: webhookRouteSchema(platform), config: { platform }, bodyLimit: options.bodyLimit },
      handle,
    );
    // HEAD comes with GET. Nothing is checked or recorded.
    app.get(path, { schema: webhookGetSchema(platform), config: { platform } }, (request, reply) =>
      sendAnswer(
        reply,
        problemAnswer("GW_ERR_METHOD_NOT_ALLOWED", request.id, {
          detail: `${request.method} is not taken here: the platform sends its webhook deliveries to this URL by POST`,
          allow: "POST",
        }),
      ),
    );
  }
}

function logFieldsOf(outcome: WebhookOutcome): { eventId: string; eventStatus?: string } | undefined {
  if (outcome.kind === "event")
    return { eventId: outcome.result.record.eventId, eventStatus: outcome.result.record.status };
  if (outcome.kind === "ignored" || outcome.kind === "unmapped")
    return { eventId: outcome.delivery.key, eventStatus: outcome.kind };
  return undefined;
}
