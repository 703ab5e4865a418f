import { randomBytes } from "node:crypto";
import { deadline } from "../../util/deadline.ts";
import { type CaseExpect, type ContractCase, loadContract } from "./cases.ts";
import { compareAnswer, describeActual, describeExpected, jsonOrUndefined, type ObservedAnswer } from "./compare.ts";
import { fillTemplates, type RecordedAnswer, TemplateError } from "./template.ts";

/**
 * Runs the 1C contract (1c/contract/cases.json) in order against a base URL
 * and says, case by case, whether the answer kept it. A diagnostic: global
 * fetch, one request at a time, no retries.
 */

export interface ContractRunOptions {
  /** The 1C base, e.g. http://1c.local/base/hs/integration; the cases' paths are appended. */
  baseUrl: string;
  user?: string | undefined;
  password?: string | undefined;
  /** Per request. */
  timeoutMs?: number;
  /** Makes the run's keys and articles; a fresh one by default (see newRunId). */
  run?: string;
  /** The shipped contract by default. */
  cases?: readonly ContractCase[];
  /**
   * Stages a case that needs it (the emulator's faults), and undoes that after the case. Without it,
   * staged cases are skipped: a real base cannot be made to refuse or fail on demand.
   */
  stage?: CaseStager;
}

export interface CaseStager {
  apply(faults: Record<string, unknown>): Promise<void>;
  reset(): Promise<void>;
}

export interface ContractResult {
  case: string;
  ok: boolean;
  /** A few words: "201 order", "409 EVENT_ID_REUSED". */
  expected: string;
  /** The same for the answer: "201 order ORD-000001"; "no answer" or "not sent" when there was none. */
  actual: string;
  /** Every difference, "; "-separated; "" when ok; for a skipped case, what it needs. */
  detail: string;
  /** A staged case run without a way to stage it: neither passed nor failed. */
  skipped?: boolean;
  /** The answer's parsed JSON body; undefined when there was no answer or it was not JSON. */
  body?: unknown;
}

export interface PreparedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** "20261129T123456Z-a1b2c3": sortable, unique enough, and a valid event id and SKU fragment. */
export function newRunId(now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replace(/[-:]/g, "");
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

/** The idempotency key of a run's first delivery; the other cases' keys start with it. */
export function runKey(run: string): string {
  return `contract-${run}`;
}

/**
 * One run's memory: its keys, and the answers earlier cases got, which later
 * cases refer to. The client contract test drives it with OnecClient instead of fetch.
 */
export class ContractSession {
  readonly run: string;
  readonly key: string;
  readonly #answers = new Map<string, RecordedAnswer>();

  constructor(run: string = newRunId()) {
    this.run = run;
    this.key = runKey(run);
  }

  /** The case with its templates filled. Throws TemplateError when it refers to an answer that is not there. */
  prepare(contractCase: ContractCase): { request: PreparedRequest; expect: CaseExpect } {
    return { request: this.prepareRequest(contractCase), expect: this.prepareExpect(contractCase) };
  }

  prepareRequest(contractCase: ContractCase): PreparedRequest {
    const fill = this.#filler(contractCase);
    const { request } = contractCase;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) headers[name] = String(fill(value));
    let body: string | undefined;
    if (request.body?.kind === "json") body = JSON.stringify(fill(request.body.value));
    else if (request.body?.kind === "raw") body = String(fill(request.body.text));
    return { method: request.method, path: String(fill(request.path)), headers, body };
  }

  prepareExpect(contractCase: ContractCase): CaseExpect {
    const fill = this.#filler(contractCase);
    const { expect } = contractCase;
    return {
      status: expect.status,
      headers: fill(expect.headers) as Record<string, unknown>,
      body: fill(expect.body) as Record<string, unknown>,
    };
  }

  record(caseName: string, answer: ObservedAnswer): void {
    this.#answers.set(caseName, {
      status: answer.status,
      headers: answer.headers,
      body: jsonOrUndefined(answer.bodyText),
    });
  }

  #filler(contractCase: ContractCase): (value: unknown) => unknown {
    const scope = { run: this.run, key: this.key, caseName: contractCase.name, answers: this.#answers };
    return (value) => fillTemplates(value, scope);
  }
}

export async function runContract(options: ContractRunOptions): Promise<ContractResult[]> {
  const cases = options.cases ?? loadContract();
  const session = new ContractSession(options.run);
  const base = options.baseUrl.replace(/\/+$/, "");
  const auth =
    options.user !== undefined && options.user !== ""
      ? `Basic ${Buffer.from(`${options.user}:${options.password ?? ""}`, "utf8").toString("base64")}`
      : undefined;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const results: ContractResult[] = [];
  for (const contractCase of cases) {
    const { stage } = contractCase;
    if (stage === undefined) {
      results.push(await runCase(contractCase, session, { base, auth, timeoutMs }));
    } else if (options.stage === undefined) {
      results.push(skipped(contractCase, stage.base));
    } else {
      await options.stage.apply(stage.emulator);
      try {
        results.push(await runCase(contractCase, session, { base, auth, timeoutMs }));
      } finally {
        await options.stage.reset();
      }
    }
  }
  return results;
}

function skipped(contractCase: ContractCase, needs: string): ContractResult {
  return {
    case: contractCase.name,
    ok: true,
    skipped: true,
    expected: describeExpected(contractCase.expect),
    actual: "skipped",
    detail: `staged: needs ${needs}`,
  };
}

async function runCase(
  contractCase: ContractCase,
  session: ContractSession,
  target: { base: string; auth: string | undefined; timeoutMs: number },
): Promise<ContractResult> {
  const result = { case: contractCase.name, expected: describeExpected(contractCase.expect) };
  let prepared: ReturnType<ContractSession["prepare"]>;
  try {
    prepared = session.prepare(contractCase);
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    return { ...result, ok: false, actual: "not sent", detail: error.message };
  }
  const { request, expect } = prepared;
  const headers = { ...request.headers };
  if (target.auth !== undefined) headers.authorization = target.auth;
  let answer: ObservedAnswer;
  const timeout = deadline(target.timeoutMs);
  try {
    const response = await fetch(`${target.base}${request.path}`, {
      method: request.method,
      headers,
      body: request.body,
      redirect: "manual",
      signal: timeout.signal,
    });
    const answerHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      answerHeaders[name] = value;
    });
    answer = { status: response.status, headers: answerHeaders, bodyText: await response.text() };
  } catch (error) {
    return { ...result, ok: false, actual: "no answer", detail: describeFetchError(error, target.timeoutMs) };
  } finally {
    timeout.clear();
  }
  session.record(contractCase.name, answer);
  const problems = compareAnswer(expect, answer);
  return {
    ...result,
    expected: describeExpected(expect),
    ok: problems.length === 0,
    actual: describeActual(answer),
    detail: problems.join("; "),
    body: jsonOrUndefined(answer.bodyText),
  };
}

/** Global fetch hides the socket error in `cause`. */
function describeFetchError(error: unknown, timeoutMs: number): string {
  const err = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === "TimeoutError" || err?.name === "AbortError") return `no answer within ${timeoutMs} ms`;
  const cause = err?.cause;
  if (cause?.code !== undefined) return `${cause.code}: ${cause.message ?? err.message ?? ""}`.trim();
  return err?.message ?? String(error);
}
