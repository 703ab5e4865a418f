import type { SourceOutcome } from "../../register/source-port.ts";
import { ConsoleError } from "./console-error.ts";
import { parseSender, singleValues } from "./list-query.ts";

/** What the platform deliveries' list shows: filters, and where the page starts (newest first, by id). */
export interface DeliveryQuery {
  outcome?: SourceOutcome | undefined;
  sender?: string | undefined;
  /** The page starts strictly before this delivery id ("Older"). */
  before?: number | undefined;
}

export const DELIVERY_OUTCOMES: readonly SourceOutcome[] = ["ignored", "unmapped", "accepted"];

export function parseDeliveryQuery(query: unknown): DeliveryQuery {
  const fields = singleValues(query);
  return {
    outcome: parseOutcome(fields.outcome),
    sender: parseSender(fields.sender),
    before: parseBefore(fields.before),
  };
}

/** The filters as query parameters, for the tabs and the paging links. */
export function deliveryQueryParams(query: DeliveryQuery): Record<string, string | undefined> {
  return { outcome: query.outcome, sender: query.sender };
}

/** A delivery id in a console URL; anything else names no delivery. */
export function deliveryIdOf(params: unknown): number | undefined {
  const { id } = (params ?? {}) as { id?: unknown };
  return typeof id === "string" && DELIVERY_ID.test(id) ? Number(id) : undefined;
}

/** The register's ids, below 2^53. */
const DELIVERY_ID = /^[1-9][0-9]{0,14}$/;

function parseOutcome(value: string | undefined): SourceOutcome | undefined {
  if (value === undefined || value === "") return undefined;
  const outcome = DELIVERY_OUTCOMES.find((candidate) => candidate === value);
  if (outcome === undefined) throw badQuery(`outcome must be one of ${DELIVERY_OUTCOMES.join(", ")}`);
  return outcome;
}

function parseBefore(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!DELIVERY_ID.test(value)) throw badQuery('the "Older" link is damaged; start again from the newest deliveries');
  return Number(value);
}

function badQuery(detail: string): ConsoleError {
  return new ConsoleError(400, "Bad request", detail);
}
