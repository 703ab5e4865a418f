import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, posix } from "node:path";
import { parse as parseYaml } from "yaml";
import { orderPaidEvent } from "../support/events.ts";
import { call, postEvent } from "../support/http.ts";
import {
  type Dockerfile,
  durationMs,
  envOf,
  finalStage,
  last,
  numericUser,
  readDockerfile,
  type Stage,
} from "./dockerfile.ts";
import { dockerIgnore } from "./dockerignore.ts";

/**
 * The Dockerfile rehearsed without Docker (this machine has no registry for base images and no
 * engine): its own instructions, read from the file, run in a clean folder.
 *
 * - The build context is the working tree's files (tracked and untracked, not git-ignored)
 *   less what .dockerignore excludes.
 * - Each stage gets a folder standing for its file system; WORKDIR, COPY (from the context or
 *   `--from` a stage), ENV and RUN run there in order. RUN lines run with `sh -c` in the WORKDIR,
 *   as root like a build, with the stage's ENV; `apt-get` lines are not run (the machine is not
 *   the image), but the tools they install must be on the machine.
 * - The final stage's CMD then runs as its USER (setpriv with that uid and gid, no other groups),
 *   with its ENV, the volume being a folder the RUN lines gave that user. The 1C stand-in is
 *   compose.yaml's `onec` service, its command run from the same tree.
 * - Ready is the HEALTHCHECK's own command exiting 0, run as the same user with the same env.
 * - An event is posted; STOPSIGNAL is sent; during the drain /readyz answers 503, the health
 *   check fails and an event posted then is still accepted; the process exits 0 after at least
 *   SHUTDOWN_DELAY_MS and within compose.yaml's stop_grace_period. Started again on the same
 *   volume, the gateway has both events delivered, one order each in 1C.
 *
 * Standalone: `node --import tsx test/packaging/rehearse.ts` (run it as root: RUN chowns, and the
 * CMD runs as another user). test/packaging/image.test.ts runs it in `npm test`.
 */

const repoRoot = new URL("../../", import.meta.url).pathname;

/** Kubernetes' default terminationGracePeriodSeconds: the image's drain must fit in it. */
export const KUBERNETES_GRACE_MS = 30_000;
/** What main.ts allows the stop after the drain (closeWithGrace's delay beyond SHUTDOWN_DELAY_MS). */
export const CLOSE_BOUND_MS = 10_000;

export interface Rehearsal {
  /** Milliseconds per phase: context, each stage, start to healthy, drain. */
  readonly timings: Record<string, number>;
  readonly log: readonly string[];
}

export interface ComposeService {
  image?: string;
  command?: string[] | string;
  environment?: Record<string, string> | string[];
  volumes?: string[];
  healthcheck?: { test?: string[] | string; disable?: boolean };
  stop_grace_period?: string;
  stop_signal?: string;
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
}

export function readCompose(path = join(repoRoot, "compose.yaml")): ComposeFile {
  return parseYaml(readFileSync(path, "utf8")) as ComposeFile;
}

export function composeEnv(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
  return Object.fromEntries(env.map((pair) => [pair.split("=", 1)[0] ?? "", pair.slice(pair.indexOf("=") + 1)]));
}

/**
 * What the Dockerfile must say, checked on the parsed file (and compose.yaml, where the two must
 * agree). Returns the problems found; the rehearsal refuses to run with any.
 */
export function imageProblems(dockerfile: Dockerfile, compose: ComposeFile, startScript: string): string[] {
  const problems: string[] = [];
  const runtime = finalStage(dockerfile);
  if (dockerfile.stages.length < 2) problems.push("not multi-stage: a build stage and a runtime stage");
  const major = readFileSync(join(repoRoot, ".nvmrc"), "utf8").trim();
  if (!new RegExp(`^node:${major}[.\\d]*-[\\w-]*slim(@sha256:[0-9a-f]{64})?$`).test(runtime.image)) {
    problems.push(`the runtime image ${runtime.image} is not the official Node ${major} slim image pinned by tag`);
  }
  const user = numericUser(runtime);
  if (user === undefined)
    problems.push(`USER must be numeric uid:gid, got "${last(runtime, "USER")?.text ?? "(none: root)"}"`);
  else if (user.uid === 0 || user.gid === 0) problems.push("USER is root");
  if (last(runtime, "STOPSIGNAL")?.text !== "SIGTERM") problems.push("STOPSIGNAL is not SIGTERM");
  const cmd = last(runtime, "CMD")?.exec;
  const [node, ...flags] = startScript.trim().split(/\s+/);
  if (cmd === undefined) problems.push("CMD is not in exec form (a shell would be PID 1 and swallow SIGTERM)");
  else if (cmd.join(" ") !== [node, ...flags].join(" ")) {
    problems.push(`CMD ${JSON.stringify(cmd)} is not package.json's start script "${startScript}"`);
  }
  if (last(runtime, "ENTRYPOINT") !== undefined) problems.push("an ENTRYPOINT would stand between PID 1 and node");
  const health = last(runtime, "HEALTHCHECK");
  if (health?.exec === undefined || !health.exec.some((arg) => arg.includes("/readyz"))) {
    problems.push("HEALTHCHECK does not ask /readyz in exec form");
  }
  const env = envOf(runtime);
  const volumes = runtime.instructions
    .filter((i) => i.keyword === "VOLUME")
    .flatMap((i) => i.exec ?? i.text.split(/\s+/));
  const database = env.DATABASE_URL ?? "";
  if (!volumes.some((volume) => database.startsWith(`${volume.replace(/\/$/, "")}/`))) {
    problems.push(`DATABASE_URL ${database || "(unset)"} is not on a VOLUME (${volumes.join(", ") || "none"})`);
  }
  const imageStop = Number(env.SHUTDOWN_DELAY_MS ?? 0) + CLOSE_BOUND_MS;
  if (imageStop >= KUBERNETES_GRACE_MS) {
    problems.push(`SHUTDOWN_DELAY_MS + ${CLOSE_BOUND_MS} ms = ${imageStop} ms does not fit Kubernetes' 30 s grace`);
  }
  const gateway = compose.services.gateway;
  if (gateway === undefined) problems.push("compose.yaml has no gateway service");
  else {
    const grace = durationMs(gateway.stop_grace_period ?? "10s");
    const composeStop = Number(composeEnv(gateway).SHUTDOWN_DELAY_MS ?? env.SHUTDOWN_DELAY_MS ?? 0) + CLOSE_BOUND_MS;
    if (composeStop >= grace) {
      problems.push(`compose: SHUTDOWN_DELAY_MS + ${CLOSE_BOUND_MS} ms = ${composeStop} ms exceeds stop_grace_period`);
    }
    if (JSON.stringify(healthCommand(gateway)) !== JSON.stringify(health?.exec)) {
      problems.push("compose.yaml's gateway healthcheck is not the Dockerfile's HEALTHCHECK command");
    }
  }
  return problems;
}

/** A compose healthcheck's command without its CMD marker. */
export function healthCommand(service: ComposeService): string[] | undefined {
  const test = service.healthcheck?.test;
  if (!Array.isArray(test) || test[0] !== "CMD") return undefined;
  return test.slice(1);
}

export async function rehearse(report: (line: string) => void = () => {}): Promise<Rehearsal> {
  const log: string[] = [];
  const say = (line: string) => {
    log.push(line);
    report(line);
  };
  const timings: Record<string, number> = {};
  const timed = async <T>(name: string, step: () => T | Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await step();
    timings[name] = Math.round(performance.now() - started);
    say(`${name}: ${timings[name]} ms`);
    return result;
  };

  const dockerfile = readDockerfile(join(repoRoot, "Dockerfile"));
  const compose = readCompose();
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> };
  const problems = imageProblems(dockerfile, compose, pkg.scripts.start ?? "");
  if (problems.length > 0) throw new Error(`Dockerfile:\n- ${problems.join("\n- ")}`);

  const root = mkdtempSync(join(tmpdir(), "gateway-image-"));
  // The stages' folders stand for whole file systems: readable by the image's user, like / is.
  chmodSync(root, 0o755);
  const children: ChildProcess[] = [];
  try {
    const context = join(root, "context");
    await timed("context", () => copyContext(context));
    const stageRoots = new Map<string, string>();
    for (const stage of dockerfile.stages) {
      const stageRoot = join(root, `stage-${stage.name}`);
      stageRoots.set(stage.name, stageRoot);
      await timed(`stage ${stage.name}`, () => runStage(stage, stageRoot, context, stageRoots, say));
    }

    const runtime = finalStage(dockerfile);
    const runtimeRoot = stageRoots.get(runtime.name) ?? "";
    const workdir = workdirOf(runtime);
    const inImage = (path: string) => join(runtimeRoot, path);
    const user = numericUser(runtime) ?? { uid: 0, gid: 0 };
    // The image's node: this machine's, copied where the image's user can run it (the repository's
    // own copy may sit in a folder only root may enter).
    mkdirSync(join(root, "node-bin"));
    copyFileSync(process.execPath, join(root, "node-bin", "node"));
    chmodSync(join(root, "node-bin", "node"), 0o755);
    const imagePath = `${join(root, "node-bin")}:/usr/local/bin:/usr/bin:/bin`;
    const imageEnv = mapPaths(envOf(runtime), runtime, inImage);

    // The production tree holds no TypeScript toolchain.
    for (const dev of ["typescript", "tsx", "vitest", "@biomejs/biome"]) {
      if (existsSync(join(inImage(workdir), "node_modules", dev)))
        throw new Error(`node_modules/${dev} is in the image`);
    }
    const databaseFile = imageEnv.DATABASE_URL ?? "";
    const volume = dirname(databaseFile);
    if (statSync(volume).uid !== user.uid) throw new Error(`the volume ${volume} is not owned by uid ${user.uid}`);

    // The 1C stand-in: compose.yaml's onec service, its command from the same tree, as the same user.
    const onecService = compose.services.onec;
    if (onecService === undefined) throw new Error("compose.yaml has no onec service");
    const onecPort = await freePort();
    const onecVolume = join(root, "onec-volume");
    mkdirSync(onecVolume);
    chownSync(onecVolume, user.uid, user.gid);
    const onecEnv = {
      ...mapVolumes(composeEnv(onecService), onecService, onecVolume),
      ONEC_EMULATOR_PORT: String(onecPort),
    };
    const onecCommand =
      typeof onecService.command === "string" ? onecService.command.split(/\s+/) : onecService.command;
    if (onecCommand === undefined) throw new Error("compose.yaml's onec service has no command");
    const onecUrl = `http://127.0.0.1:${onecPort}`;
    const onec = runAs(user, onecCommand, inImage(workdir), { PATH: imagePath, ...imageEnv, ...onecEnv });
    children.push(onec.child);
    await waitFor(
      async () => (await call(`${onecUrl}/v1/health`).catch(() => undefined))?.status === 200,
      20_000,
      () => onec.output.join("\n"),
    );

    const port = await freePort();
    const env: Record<string, string> = {
      PATH: imagePath,
      ...imageEnv,
      PORT: String(port),
      ONEC_URL: onecUrl,
      ALLOW_ANONYMOUS: "true",
    };
    const cmd = last(runtime, "CMD")?.exec ?? [];
    const health = last(runtime, "HEALTHCHECK");
    const healthCmd = health?.exec ?? [];
    const startPeriod = durationMs(health?.flags["start-period"] ?? "0s");
    const healthy = () => runAsSync(user, healthCmd, inImage(workdir), env) === 0;
    const url = `http://127.0.0.1:${port}`;

    let gateway = runAs(user, cmd, inImage(workdir), env);
    children.push(gateway.child);
    await timed("start to healthy", () => waitFor(healthy, startPeriod, () => gateway.output.join("\n")));
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${gateway.child.pid}/status`, "utf8"))?.[1];
    if (Number(uid) !== user.uid) throw new Error(`the gateway runs as uid ${uid}, not ${user.uid}`);
    if (statSync(databaseFile).uid !== user.uid) throw new Error("the register file is not the image user's");
    say(`gateway pid ${gateway.child.pid} uid ${uid}, register ${databaseFile}`);

    // The CLI from the image (package.json's bin), as support runs it: its probe reads the contract
    // (1c/contract/, package data) and checks the emulator against it. Like a real base, the
    // emulator then knows its articles (the example event's), so it refuses the probe's unknown one.
    const skus = orderPaidEvent().order.items.map((item) => item.sku);
    const known = await fetch(`${onecUrl}/_emulator/faults`, {
      method: "PUT",
      body: JSON.stringify({ knownSkus: skus }),
      headers: { "content-type": "application/json" },
    });
    if (known.status !== 200)
      throw new Error(`the emulator refused its articles: ${known.status} ${await known.text()}`);
    const pkgBin = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { bin: Record<string, string> })
      .bin;
    const probe = runAs(
      user,
      ["node", pkgBin.gateway ?? "", "probe", "--onec-url", onecUrl, "--test-base"],
      inImage(workdir),
      env,
    );
    const [probeCode] = (await once(probe.child, "exit")) as [number | null];
    if (probeCode !== 0)
      throw new Error(`gateway probe from the image exited ${probeCode}:\n${probe.output.join("\n")}`);
    say("gateway probe from the image: the emulator holds to the contract");

    const first = orderPaidEvent();
    const accepted = await postEvent(url, first);
    if (accepted.status !== 201 && accepted.status !== 202)
      throw new Error(`POST answered ${accepted.status}: ${accepted.text}`);

    // The stop, as `docker stop` does it: STOPSIGNAL, then the grace period.
    const signal = (last(runtime, "STOPSIGNAL")?.text ?? "SIGTERM") as NodeJS.Signals;
    const drainMs = Number(env.SHUTDOWN_DELAY_MS ?? 0);
    const graceMs = durationMs(compose.services.gateway?.stop_grace_period ?? "10s");
    const stopped = performance.now();
    const exited = once(gateway.child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    gateway.child.kill(signal);
    const second = orderPaidEvent();
    if (drainMs > 0) {
      await waitFor(
        async () => (await call(`${url}/readyz`)).status === 503,
        2000,
        () => "readyz never said 503",
      );
      if (healthy()) throw new Error("the HEALTHCHECK passes while the gateway drains");
      const during = await postEvent(url, second);
      if (during.status !== 201 && during.status !== 202) {
        throw new Error(`a POST during the drain answered ${during.status}: ${during.text}`);
      }
      const alive = await call(`${url}/healthz`);
      if (alive.status !== 200) throw new Error(`/healthz answered ${alive.status} during the drain`);
    }
    const timeout = setTimeout(() => gateway.child.kill("SIGKILL"), graceMs);
    const [code, killedBy] = await exited;
    clearTimeout(timeout);
    timings.drain = Math.round(performance.now() - stopped);
    say(`${signal}: exit ${code ?? killedBy} after ${timings.drain} ms (drain ${drainMs} ms, grace ${graceMs} ms)`);
    if (code !== 0)
      throw new Error(`the gateway exited ${code ?? killedBy} after ${signal}:\n${gateway.output.join("\n")}`);
    if (timings.drain < drainMs) throw new Error(`the gateway stopped before SHUTDOWN_DELAY_MS (${timings.drain} ms)`);

    // Started again on the same volume: nothing was lost, and 1C has one order per event.
    gateway = runAs(user, cmd, inImage(workdir), env);
    children.push(gateway.child);
    await waitFor(healthy, startPeriod, () => gateway.output.join("\n"));
    const events = drainMs > 0 ? [first, second] : [first];
    await waitFor(
      async () => {
        const orders = (await call(`${onecUrl}/_emulator/orders`)).json().orders as { key: string }[];
        return events.every((event) => orders.filter((order) => order.key === event.event_id).length === 1);
      },
      20_000,
      () => "1C did not get exactly one order per event",
    );
    for (const event of events) {
      const status = await call(`${url}/integration/v1/orders/paid/${event.event_id}`);
      if (status.status !== 200 || !status.text.includes("SUCCEEDED")) {
        throw new Error(`event ${event.event_id} after the restart: ${status.status} ${status.text}`);
      }
    }
    say(`after the restart: ${events.length} events SUCCEEDED, one order each in 1C`);
    return { timings, log };
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await Promise.all(
      children.map((child) => (child.exitCode === null && child.signalCode === null ? once(child, "exit") : null)),
    );
    rmSync(root, { recursive: true, force: true });
  }
}

/** The build context: the working tree's files less .gitignore's and .dockerignore's. */
function copyContext(context: string): void {
  const ignored = dockerIgnore(repoRoot);
  const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
    cwd: repoRoot,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  })
    .split("\0")
    .filter((file) => file !== "" && !ignored(file) && existsSync(join(repoRoot, file)));
  for (const file of new Set(files)) {
    mkdirSync(dirname(join(context, file)), { recursive: true });
    cpSync(join(repoRoot, file), join(context, file), { verbatimSymlinks: true });
  }
}

function workdirOf(stage: Stage, upTo = stage.instructions.length): string {
  let workdir = "/";
  for (const instruction of stage.instructions.slice(0, upTo)) {
    if (instruction.keyword === "WORKDIR") workdir = posix.resolve(workdir, instruction.text);
  }
  return workdir;
}

async function runStage(
  stage: Stage,
  stageRoot: string,
  context: string,
  stageRoots: ReadonlyMap<string, string>,
  say: (line: string) => void,
): Promise<void> {
  mkdirSync(stageRoot, { recursive: true });
  chmodSync(stageRoot, 0o755);
  const env: Record<string, string> = {};
  let workdir = "/";
  const inStage = (path: string) => join(stageRoot, posix.resolve(workdir, path));
  for (const instruction of stage.instructions) {
    switch (instruction.keyword) {
      case "WORKDIR":
        workdir = posix.resolve(workdir, instruction.text);
        mkdirSync(inStage("."), { recursive: true });
        break;
      case "ENV":
        Object.assign(env, envOf({ ...stage, instructions: [instruction] }));
        break;
      case "COPY": {
        const parts = instruction.exec ?? instruction.text.split(/\s+/);
        const destination = parts.at(-1) ?? ".";
        const fromStage = instruction.flags.from;
        const sourceRoot = fromStage === undefined ? context : stageRoots.get(fromStage);
        if (sourceRoot === undefined) throw new Error(`COPY --from=${fromStage}: no such stage before`);
        for (const source of parts.slice(0, -1)) {
          const from = join(sourceRoot, source);
          if (!existsSync(from)) throw new Error(`Dockerfile line ${instruction.line}: COPY ${source}: not there`);
          const to = inStage(destination);
          const intoFolder = destination.endsWith("/") || destination === "." || statSync(from).isDirectory();
          mkdirSync(intoFolder ? to : dirname(to), { recursive: true });
          cpSync(from, statSync(from).isDirectory() ? to : intoFolder ? join(to, basename(from)) : to, {
            recursive: true,
            verbatimSymlinks: true,
          });
        }
        break;
      }
      case "RUN": {
        const command = instruction.exec?.join(" ") ?? instruction.text;
        if (/^apt-get\b/.test(command)) {
          // The machine stands in for the image's packages: what the line installs must be here.
          const wanted = /apt-get install\s+(.*?)(?:&&|$)/.exec(command)?.[1]?.split(/\s+/) ?? [];
          for (const name of wanted.filter((word) => word !== "" && !word.startsWith("-"))) {
            if (spawnSync("sh", ["-c", `command -v ${name}`]).status !== 0) {
              throw new Error(`RUN line ${instruction.line} installs ${name}, which this machine lacks`);
            }
          }
          say(`RUN line ${instruction.line} (apt-get): not run, its tools are on this machine`);
          break;
        }
        // Run on this machine, an absolute path would be the machine's: only the WORKDIR's relative ones map.
        if (/(^|[\s=])\/(?!dev\/null\b)/.test(command)) {
          throw new Error(`RUN line ${instruction.line} names an absolute path the rehearsal cannot map: ${command}`);
        }
        const started = performance.now();
        const result = spawnSync("sh", ["-c", command], {
          cwd: inStage("."),
          env: buildEnv(env),
          encoding: "utf8",
          maxBuffer: 64 * 1024 * 1024,
        });
        if (result.status !== 0) {
          throw new Error(
            `RUN line ${instruction.line} failed (${result.status}): ${command}\n${result.stdout}\n${result.stderr}`,
          );
        }
        say(`RUN ${command}: ${Math.round(performance.now() - started)} ms`);
        break;
      }
      default:
        // FROM's ARG, USER, VOLUME, EXPOSE, HEALTHCHECK, STOPSIGNAL, CMD: read when the image runs.
        break;
    }
  }
}

/**
 * A RUN line's environment: the machine's PATH, npm's settings (its cache, Node's headers) and how
 * this machine reaches the registry (its CA bundle and proxy, as a build host's would be), then the
 * stage's ENV. npm takes the lockfile's tarballs from this machine's cache when it has
 * them (prefer-offline: checked by their integrity, not revalidated with the registry, which
 * costs a minute here); what the cache lacks still comes from the registry.
 */
function buildEnv(stageEnv: Record<string, string>): NodeJS.ProcessEnv {
  const keep = [
    "HOME",
    "TMPDIR",
    "npm_config_nodedir",
    "npm_config_cache",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
  ];
  const env: NodeJS.ProcessEnv = {
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
    npm_config_prefer_offline: "true",
  };
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...stageEnv };
}

/** ENV values that are paths in the image (under the WORKDIR) made paths in the stage's folder. */
function mapPaths(
  env: Record<string, string>,
  stage: Stage,
  inImage: (path: string) => string,
): Record<string, string> {
  const workdir = workdirOf(stage);
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [
      name,
      isAbsolute(value) && value.startsWith(`${workdir}/`) ? inImage(value) : value,
    ]),
  );
}

/** A compose service's env values under one of its volume mounts, made paths in a folder standing for it. */
function mapVolumes(env: Record<string, string>, service: ComposeService, folder: string): Record<string, string> {
  const targets = (service.volumes ?? []).map((volume) => volume.split(":")[1] ?? "").filter((target) => target !== "");
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => {
      const target = targets.find((t) => value.startsWith(`${t}/`));
      return [name, target === undefined ? value : join(folder, value.slice(target.length))];
    }),
  );
}

interface Running {
  child: ChildProcess;
  output: string[];
}

/** A command as the image's user: setpriv with its uid and gid and no supplementary groups, as Docker runs USER. */
function runAs(
  user: { uid: number; gid: number },
  command: readonly string[],
  cwd: string,
  env: Record<string, string>,
): Running {
  const child = spawn("setpriv", [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--", ...command], {
    cwd,
    env: containerEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr])
    stream?.on("data", (chunk: Buffer) => output.push(...chunk.toString().split("\n")));
  return { child, output };
}

function runAsSync(
  user: { uid: number; gid: number },
  command: readonly string[],
  cwd: string,
  env: Record<string, string>,
): number | null {
  return spawnSync("setpriv", [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--", ...command], {
    cwd,
    env: containerEnv(env),
    stdio: "ignore",
    timeout: 3000,
  }).status;
}

/** A container's environment: its PATH and ENV, nothing of the test's. */
function containerEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { ...env };
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, why: () => string): Promise<void> {
  const deadline = performance.now() + Math.max(timeoutMs, 1000);
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms:\n${why()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  server.close();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { timings } = await rehearse((line) => console.log(line));
  console.log(`the Dockerfile's rehearsal passed: ${JSON.stringify(timings)}`);
}
