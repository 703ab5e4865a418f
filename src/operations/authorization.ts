import { type Principal, ROLES, type Role } from "../config/operators.ts";

/**
 * Who may do what, in one table: the admin API, the command line and any
 * later front end ask `allowed` and nothing else.
 */

export const ACTIONS = {
  /** Every sender's events: lists, details, attempts, replays. */
  "events.read": { minimum: "viewer", doing: "reading events" },
  /** Customers' e-mail addresses and phone numbers in event bodies; masked for anyone else. */
  "personal-data.read": { minimum: "operator", doing: "reading customers' e-mail and phone" },
  /** One event sent to 1C again, with a reason, under the asker's name. */
  "events.replay": { minimum: "operator", doing: "replaying an event" },
  /** Many events replayed in one run, with a reason, under the asker's name. */
  "events.replay-bulk": { minimum: "operator", doing: "replaying events in bulk" },
} as const satisfies Record<string, { minimum: Role; doing: string }>;

export type Action = keyof typeof ACTIONS;

/** Whether `role` may do `action`: each role may do all the roles below it may. */
export function allowed(role: Role, action: Action): boolean {
  const rank = ROLES.indexOf(role);
  return rank !== -1 && rank >= ROLES.indexOf(ACTIONS[action].minimum);
}

/** The roles that may do `action`, least first: for documents and refusals. */
export function rolesAllowed(action: Action): Role[] {
  return ROLES.filter((role) => allowed(role, action));
}

/** One line saying why `principal` may not do `action`: `anna is a viewer; replaying an event needs operator or admin`. */
export function refusal(principal: Principal, action: Action): string {
  return `${principal.name} is ${article(principal.role)} ${principal.role}; ${ACTIONS[action].doing} needs ${rolesAllowed(action).join(" or ")}`;
}

function article(role: Role): string {
  return /^[aeiou]/.test(role) ? "an" : "a";
}
