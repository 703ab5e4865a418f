import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

/**
 * Where the package's own files are: the one place that knows the layout, so
 * the sources (src/…, under tsx or vitest), the build (dist/…) and a bundle
 * written into dist/ all find them, whatever depth the module reading them sits at.
 *
 * The root is the folder holding this package's package.json, found by walking
 * up from this module (src/util/ or dist/util/, or wherever a bundler put it),
 * so nothing depends on the depth of the file that asks.
 *
 * Three kinds of files:
 * - the package's data, beside package.json, read from the root by every
 *   layout: package.json, schemas/, 1c/contract/;
 * - files that sit among the code in src/ but are not TypeScript (the PostgreSQL
 *   migrations, the console's stylesheet and script): read from
 *   the tree the code runs from, src/ or dist/. `npm run build` copies them into
 *   dist/ at the same relative paths (scripts/build.mjs). Copied rather than read
 *   from src/ so that dist/ holds all the code a production install needs and src/
 *   need not ship: a production tree is package.json, node_modules/, dist/,
 *   schemas/ and 1c/contract/;
 * - files of an installed dependency that are not code to import (the browser
 *   assets of the API reference page): read from node_modules/, which a
 *   production tree has, wherever Node's resolution finds the package.
 */

const PACKAGE_NAME = "onec-order-gateway";

/** This module's own URL: file:///…/src/util/package-files.ts, …/dist/util/package-files.js, or a bundle's. */
const HERE = new URL(import.meta.url);

/**
 * True when the gateway runs its TypeScript sources (tsx, vitest, Node's type
 * stripping), false when it runs the built JavaScript. The one place that
 * decides how a worker thread loads its module (see spawnWriterThread).
 */
export const RUNNING_FROM_SOURCE = HERE.pathname.endsWith(".ts");

/** The package root, with a trailing slash: the folder of this package's package.json. */
const PACKAGE_ROOT: URL = findPackageRoot(HERE);

/** The tree the code runs from: src/ (sources) or dist/ (the build, or a bundle in it). */
const CODE_ROOT: URL = new URL(
  HERE.href.startsWith(new URL("dist/", PACKAGE_ROOT).href) ? "dist/" : "src/",
  PACKAGE_ROOT,
);

/** A file or folder (end it with "/") of the package's data, from the root: "schemas/order-paid.schema.json". */
export function packageFile(path: string): URL {
  return new URL(path, PACKAGE_ROOT);
}

/**
 * A non-TypeScript file or folder (end it with "/") that lives among the code,
 * from src/ or dist/: "register/postgres/migrations/".
 */
export function codeFile(path: string): URL {
  return new URL(path, CODE_ROOT);
}

/**
 * A file or folder (end it with "/") of an installed dependency, found as Node
 * finds the package from the root (node_modules/…, hoisted or not): the
 * browser assets of @fastify/swagger-ui, which a bundle cannot carry and which
 * the package would otherwise look for beside its own module, not beside the bundle.
 * The package must let its package.json be resolved (no "exports" that hide it).
 */
export function dependencyFile(packageName: string, path: string): URL {
  const requireFromRoot = createRequire(new URL("package.json", PACKAGE_ROOT));
  return new URL(path, pathToFileURL(requireFromRoot.resolve(`${packageName}/package.json`)));
}

/**
 * A module of the code by its path from src/ without extension
 * ("register/sqlite/writer-thread"): the .ts source or the built .js, as the
 * gateway itself runs.
 */
export function codeModule(path: string): URL {
  return codeFile(`${path}${RUNNING_FROM_SOURCE ? ".ts" : ".js"}`);
}

function findPackageRoot(from: URL): URL {
  for (let dir = new URL("./", from); ; dir = new URL("../", dir)) {
    const manifest = new URL("package.json", dir);
    if (existsSync(manifest) && readName(manifest) === PACKAGE_NAME) return dir;
    if (dir.pathname === "/") {
      throw new Error(`no package.json of ${PACKAGE_NAME} above ${from.pathname}`);
    }
  }
}

function readName(manifest: URL): unknown {
  try {
    return (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
}
