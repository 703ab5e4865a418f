#!/usr/bin/env node
// The `gateway` bin: runs the TypeScript CLI through tsx, so no build step is needed.
import { register } from "tsx/esm/api";

register();
await import("./main.ts");
