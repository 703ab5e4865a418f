interface Pending<In, Out> {
  item: In;
  resolve: (value: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for PostgreSQL. Calls submitted in the same turn of the event
 * loop go to the server as one statement, so one round trip and one commit
 * (one WAL flush) serve all of them, and none resolves before that commit.
 * `run` answers each item in order; if it throws, every item of the batch
 * rejects with that error.
 */
export class TickBatcher<In, Out> {
  readonly #run: (items: readonly In[]) => Promise<readonly Out[]>;
  readonly #maxBatch: number;
  #queue: Pending<In, Out>[] = [];
  #scheduled = false;

  constructor(run: (items: readonly In[]) => Promise<readonly Out[]>, maxBatch = 500) {
    this.#run = run;
    this.#maxBatch = maxBatch;
  }

  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      // After the I/O callbacks of this turn: requests that arrived together commit together.
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      this.#run(batch.map((pending) => pending.item)).then(
        (results) =>
          batch.forEach((pending, index) => {
            const result = results[index];
            if (result === undefined) pending.reject(new Error("the batch gave no answer for this item"));
            else pending.resolve(result);
          }),
        (error: unknown) => {
          for (const pending of batch) pending.reject(error);
        },
      );
    }
  }
}
