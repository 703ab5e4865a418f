import { parseArgs } from "node:util";
import { ContractFileError, loadContract } from "../../onec/contract/cases.ts";
import { type ContractResult, newRunId, runContract, runKey } from "../../onec/contract/run-contract.ts";
import { CONTRACT_VERSION } from "../../onec/contract/version.ts";
import { integerOption, noPositionals, parsing } from "../args.ts";
import { type CliContext, CliFailure, type Command, UsageError } from "../context.ts";
import { table } from "../format.ts";

export interface ProbeOptions {
  onecUrl: string;
  user: string | undefined;
  password: string | undefined;
  timeoutMs: number;
}

/** Runs the contract against a 1C base and prints one line per case; 0 when every case holds, else 1. */
export async function probe(options: ProbeOptions, io: CliContext): Promise<number> {
  let cases: ReturnType<typeof loadContract>;
  try {
    cases = loadContract();
  } catch (error) {
    if (error instanceof ContractFileError) throw new CliFailure(`cannot read the contract: ${error.message}`);
    throw error;
  }
  const run = newRunId(new Date(io.now()));
  io.out(`Probing ${options.onecUrl} with ${cases.length} contract cases, run ${run}`);
  io.out(`(event ids and keys of this run start with ${runKey(run)})`);
  io.out("");
  const results = await runContract({
    baseUrl: options.onecUrl,
    user: options.user,
    password: options.password,
    timeoutMs: options.timeoutMs,
    run,
    cases,
  });
  io.out(
    table(
      ["case", "expected", "actual", "ok"],
      results.map((r) => [r.case, r.expected, r.actual, r.skipped ? "skipped" : r.ok ? "ok" : "FAIL"]),
    ),
  );
  const failed = results.filter((r) => !r.ok);
  io.out("");
  const reported = reportedVersions(results);
  io.out(
    `1C reports contract version ${reported.contract ?? "(none)"}, extension version ${reported.extension ?? "(none)"}; this gateway speaks contract version ${CONTRACT_VERSION}.`,
  );
  const skipped = results.filter((r) => r.skipped);
  if (failed.length === 0) {
    const ran = results.length - skipped.length;
    io.out(`All ${ran} cases run passed: this base keeps the contract.`);
    if (skipped.length > 0) {
      io.out(`${skipped.length} staged cases were not run (a base gives their answers only in a setup of its own):`);
      for (const r of skipped) io.out(`  ${r.case}: ${r.expected}; ${r.detail}`);
    }
    return 0;
  }
  io.out("Differences:");
  for (const r of failed) io.out(`  ${r.case}: ${r.detail}`);
  io.out("");
  io.out(`${failed.length} of ${results.length} cases differ from the contract.`);
  if (failed.some(isUnauthorized)) {
    io.err("1C answered 401: check --user/--password (or ONEC_USER/ONEC_PASSWORD).");
  }
  if (reported.contract !== undefined && reported.contract !== CONTRACT_VERSION) {
    io.err(
      `1C speaks contract version ${reported.contract}, this gateway ${CONTRACT_VERSION}: load the 1C extension from this release's 1c/ folder.`,
    );
  }
  return 1;
}

/** What the health case's answer says about 1C's side: {contract_version, extension_version}. */
function reportedVersions(results: readonly ContractResult[]): { contract?: string; extension?: string } {
  const body = results.find((r) => r.case === "health")?.body;
  if (typeof body !== "object" || body === null) return {};
  const { contract_version: contract, extension_version: extension } = body as Record<string, unknown>;
  return {
    ...(typeof contract === "string" ? { contract } : {}),
    ...(typeof extension === "string" ? { extension } : {}),
  };
}

function isUnauthorized(result: ContractResult): boolean {
  return result.actual.startsWith("401");
}

function onecUrlOption(raw: string | undefined): string {
  if (raw === undefined || raw === "") throw new UsageError("--onec-url is required: the 1C base to probe");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--onec-url must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--onec-url must be an http(s) URL, got "${raw}"`);
  }
  return raw;
}

export const probeCommand: Command = {
  name: "probe",
  synopsis: "probe --onec-url URL --test-base",
  summary: "check a 1C test base against the contract",
  help: `Usage: gateway probe --onec-url URL [--user U --password P] [--timeout-ms N] --test-base

Sends the 1C contract's cases (1c/contract/cases.json) to the base, in order,
and prints one line per case: case, expected, actual, ok; then the contract and
extension versions 1C reports (GET /v1/health), and what differs.
Exits 0 when every case holds, 1 on any difference, 2 on bad usage.

It CREATES A REAL ORDER in the base on every run (the first delivery), and sends
requests the base must refuse (unknown article NO-SUCH-ARTICLE-<run>, reused key,
malformed JSON...). Hence --test-base: point it at a test base only. Keys are
fresh on each run, so runs never collide.

Options:
  --onec-url URL    the 1C HTTP service base, e.g. http://1c.local/base/hs/integration (required)
  --user U          Basic user (default ONEC_USER)
  --password P      Basic password (default ONEC_PASSWORD; prefer the variable: argv is visible in ps)
  --timeout-ms N    per request (default 10000)
  --test-base       confirms the base is a test base (required)

Needs neither DATABASE_URL nor ONEC_URL.`,
  async run(argv, context) {
    const { values, positionals } = parsing(() =>
      parseArgs({
        args: argv,
        options: {
          "onec-url": { type: "string" },
          user: { type: "string" },
          password: { type: "string" },
          "timeout-ms": { type: "string" },
          "test-base": { type: "boolean", default: false },
        },
        allowPositionals: true,
      }),
    );
    noPositionals(positionals);
    if (!values["test-base"]) {
      throw new UsageError(
        "--test-base is required: the probe creates real orders in the 1C base it talks to; run it against a test base only",
      );
    }
    const options: ProbeOptions = {
      onecUrl: onecUrlOption(values["onec-url"]),
      user: values.user ?? context.env.ONEC_USER,
      password: values.password ?? context.env.ONEC_PASSWORD,
      timeoutMs: integerOption("timeout-ms", values["timeout-ms"], 10_000, 1, 600_000),
    };
    return probe(options, context);
  },
};
