#!/usr/bin/env node
import { setTimeout as sleep } from "node:timers/promises";
import { runCli } from "./cli.ts";

/** Entry of the `gateway` command line (the bin: dist/cli/main.js, built): all process I/O lives here. */

// `gateway list … | head` closes the pipe early: that is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  now: Date.now,
  sleep: (ms) => sleep(ms),
});
