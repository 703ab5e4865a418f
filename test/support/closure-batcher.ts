import type Database from "better-sqlite3";
import { batchTransaction } from "../../src/register/sqlite/batch-transaction.ts";
import { WriteBatcher } from "../../src/register/write-batcher.ts";

export type Work = () => unknown;

/** Group commit of plain closures on one connection: the batcher's contract without the register's operations. */
export function closureBatcher(db: Database.Database, maxBatch?: number): WriteBatcher<Work> {
  return new WriteBatcher(
    batchTransaction(db, (work: Work) => work()),
    maxBatch,
  );
}
