import { readFileSync } from "node:fs";
import { loadConfig } from "../../config/load-config.ts";
import { principalOf } from "../../config/operators.ts";
import { type Action, allowed, refusal } from "../../operations/authorization.ts";
import { requestedByOption } from "../args.ts";
import { CliFailure, UsageError } from "../context.ts";
import { ONEC_URL_NOT_NEEDED } from "../open-register.ts";

/** The variable a support shell keeps its owner's token in. */
export const TOKEN_VARIABLE = "GATEWAY_TOKEN";

export interface IdentityOptions {
  /** `--by NAME`: who asks, where no OPERATORS_FILE says it. */
  by: string | undefined;
  /** `--token-file PATH`: a file holding the token alone (it stays out of the shell's history and `ps`). */
  tokenFile: string | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The name a replay is recorded under. Where OPERATORS_FILE lists people, it
 * is the name of the person whose token is given (`--token-file`, or
 * GATEWAY_TOKEN), and their role must allow `action`: the command line is
 * held to the same rules as the admin API. Without OPERATORS_FILE, as
 * before: `--by`, or the operating system's user@host.
 */
export function replaySigner(options: IdentityOptions, action: Action, env: Env): string {
  const operatorsFile = env.OPERATORS_FILE?.trim() ?? "";
  if (operatorsFile === "") {
    if (options.tokenFile !== undefined) {
      throw new UsageError("--token-file needs OPERATORS_FILE, the list the token is checked against");
    }
    return requestedByOption(options.by);
  }
  const { operators } = loadConfig(env, { onecUrl: ONEC_URL_NOT_NEEDED });
  const { token, from } = givenToken(options.tokenFile, env);
  const principal = principalOf(token, operators);
  if (principal === undefined) {
    throw new CliFailure(`the token in ${from} belongs to no one in OPERATORS_FILE; nothing was replayed`);
  }
  if (!allowed(principal.role, action)) throw new CliFailure(`${refusal(principal, action)}; nothing was replayed`);
  const by = options.by?.trim();
  if (by !== undefined && by !== "" && by !== principal.name) {
    throw new UsageError(
      `--by "${by}" names someone else: with OPERATORS_FILE a replay is recorded under the token's owner, "${principal.name}"; leave --by out`,
    );
  }
  return principal.name;
}

function givenToken(tokenFile: string | undefined, env: Env): { token: string; from: string } {
  if (tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(tokenFile, "utf8");
    } catch (error) {
      throw new CliFailure(`--token-file ${tokenFile} cannot be read: ${(error as Error).message}`);
    }
    const token = text.trim();
    if (token === "" || /\s/.test(token)) {
      throw new CliFailure(`--token-file ${tokenFile} must hold your token alone, on one line`);
    }
    return { token, from: `--token-file ${tokenFile}` };
  }
  const token = env[TOKEN_VARIABLE]?.trim();
  if (token === undefined || token === "") {
    throw new CliFailure(
      `OPERATORS_FILE is set, so a replay is recorded under its requester's name: put your token in ${TOKEN_VARIABLE}, or pass --token-file FILE`,
    );
  }
  return { token, from: TOKEN_VARIABLE };
}
