import { timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseJsonText } from "./json-text.ts";
import { type SenderEntry, sha256 } from "./senders.ts";

/**
 * The people who use the admin API and the command line's replays, each with
 * a role. Like SENDERS_FILE, OPERATORS_FILE holds SHA-256 digests only, so it
 * can be deployed and reviewed without handing out anyone's token.
 */

/** From least to most: each role may do everything the one before it may. */
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** Who is asking: the name every replay is recorded under, and what they may do. */
export interface Principal {
  readonly name: string;
  readonly role: Role;
}

export interface OperatorEntry extends Principal {
  readonly tokenSha256: Buffer;
}

/** The name ADMIN_TOKEN's holder is recorded under. */
export const ADMIN_TOKEN_NAME = "admin";

/** Letters (any script), digits and `. _ @ -`, with inner spaces: "anna", "a.smirnova@shop.ru", "Анна С". */
export const OPERATOR_NAME_PATTERN = /^[\p{L}\p{N}._@-](?:[\p{L}\p{N} ._@-]{0,62}[\p{L}\p{N}._@-])?$/u;

export class OperatorConfigError extends Error {
  override readonly name = "OperatorConfigError";
}

export interface OperatorSources {
  /** OPERATORS_FILE, if set. */
  file: string | undefined;
  /** ADMIN_TOKEN, if set: an admin named "admin". */
  adminToken: string | undefined;
  /** A token must identify one party: a sender's token is never also a person's. */
  senders: readonly SenderEntry[];
}

/**
 * Everyone allowed on the admin routes: OPERATORS_FILE's people and
 * ADMIN_TOKEN's admin. Empty when neither is set (the admin routes are then off).
 */
export function configuredOperators(sources: OperatorSources): readonly OperatorEntry[] {
  const fromFile = sources.file === undefined ? [] : readOperatorsFile(sources.file);
  const fromToken =
    sources.adminToken === undefined
      ? []
      : [{ name: ADMIN_TOKEN_NAME, role: "admin" as const, tokenSha256: sha256(sources.adminToken) }];
  return checkOperators([...fromToken, ...fromFile], sources.senders);
}

/** `{"operators": [{"name": "anna", "role": "operator", "token_sha256": "<64 hex>"}]}` */
export function readOperatorsFile(path: string): OperatorEntry[] {
  let parsed: unknown;
  try {
    parsed = parseJsonText(readFileSync(path, "utf8"));
  } catch (error) {
    throw new OperatorConfigError(`OPERATORS_FILE ${path} cannot be read as JSON: ${(error as Error).message}`);
  }
  const operators = (parsed as { operators?: unknown })?.operators;
  if (!Array.isArray(operators)) {
    throw new OperatorConfigError(`OPERATORS_FILE ${path} must be {"operators": [...]}`);
  }
  if (operators.length === 0) {
    throw new OperatorConfigError(`OPERATORS_FILE ${path} lists no operators; unset OPERATORS_FILE instead`);
  }
  return operators.map((item, index) => operatorEntry(item, `OPERATORS_FILE ${path}: operators[${index}]`));
}

function operatorEntry(item: unknown, where: string): OperatorEntry {
  const {
    name,
    role,
    token_sha256: digest,
  } = (item ?? {}) as { name?: unknown; role?: unknown; token_sha256?: unknown };
  if (typeof name !== "string" || !OPERATOR_NAME_PATTERN.test(name)) {
    throw new OperatorConfigError(
      `${where} needs a "name" of 1-64 letters, digits, ". _ @ -" and inner spaces, got ${JSON.stringify(name)}`,
    );
  }
  if (typeof role !== "string" || !(ROLES as readonly string[]).includes(role)) {
    throw new OperatorConfigError(
      `${where} ("${name}") has role ${JSON.stringify(role)}; a role is one of ${ROLES.join(", ")}`,
    );
  }
  if (typeof digest !== "string" || !/^[0-9a-f]{64}$/i.test(digest)) {
    throw new OperatorConfigError(`${where} ("${name}") needs a 64-hex "token_sha256"`);
  }
  return { name, role: role as Role, tokenSha256: Buffer.from(digest, "hex") };
}

/**
 * One name, one token, one party: a shared name would make the audit trail
 * ambiguous, and a shared token would make a sender or a viewer act as someone else.
 */
export function checkOperators(
  operators: readonly OperatorEntry[],
  senders: readonly SenderEntry[],
): readonly OperatorEntry[] {
  const names = new Set<string>();
  const digests = new Set<string>();
  const senderDigests = new Map(senders.map((sender) => [sender.tokenSha256.toString("hex"), sender.id]));
  for (const operator of operators) {
    if (names.has(operator.name)) {
      throw new OperatorConfigError(
        operator.name === ADMIN_TOKEN_NAME
          ? `operator "${ADMIN_TOKEN_NAME}" is configured twice: ADMIN_TOKEN is the admin named "${ADMIN_TOKEN_NAME}"; rename the one in OPERATORS_FILE`
          : `operator "${operator.name}" is configured twice`,
      );
    }
    const digest = operator.tokenSha256.toString("hex");
    if (digests.has(digest)) throw new OperatorConfigError(`two operators share one token (one is "${operator.name}")`);
    const sender = senderDigests.get(digest);
    if (sender !== undefined) {
      throw new OperatorConfigError(
        `operator "${operator.name}" has the token of sender "${sender}"; give each its own`,
      );
    }
    names.add(operator.name);
    digests.add(digest);
  }
  return operators;
}

/**
 * Who a bearer token belongs to. Compares the token's digest with every
 * operator's, always all of them, in constant time, as senders are found:
 * the timing says nothing about which digest came close. The one lookup for
 * the admin API, the command line and anything signing people in.
 */
export function principalOf(token: string, operators: readonly OperatorEntry[]): Principal | undefined {
  const digest = sha256(token);
  let found: Principal | undefined;
  for (const operator of operators) {
    if (timingSafeEqual(digest, operator.tokenSha256) && found === undefined) {
      found = { name: operator.name, role: operator.role };
    }
  }
  return found;
}
