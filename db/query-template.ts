/**
 * Hot statements that kysely builds and compiles once per shape instead of once per request.
 *
 * Building and compiling a statement of several CTEs costs kysely about 0.1 ms of CPU (in a
 * profile of the vote cycle, kysely was 17 % of the server's busy time). The SQL text changes
 * only with the statement's shape (which project settings add conditions), so a template keeps
 * the compiled text per shape and binds new parameter values on each call. The package
 * kysely-params does this too, but it depends on kysely 0.24.
 *
 * Rule for `build`: every value that changes between calls goes through `param(name)`; the
 * statement's structure may depend only on the `shape` argument, and `shapeKey` must tell
 * every shape that builds a different statement apart.
 */
import { type Compilable, type CompiledQuery, createQueryId, type QueryResult } from "kysely";
import type { Db } from "./connect.ts";
import { GENERIC_PLAN_COMMENT, LOCK_BOUND_COMMENT } from "./prepared-statement-client.ts";

/** Stands in for a parameter value while the template is compiled. */
class Slot {
  constructor(readonly name: string) {}
}

export type ParamOf<Values> = <K extends keyof Values & string>(name: K) => Values[K];

export class QueryTemplate<Shape, Values extends object, Row> {
  readonly #compiled = new Map<string, CompiledQuery<Row>>();

  /**
   * @param shapeKey the cache key of a shape (e.g. "d1a0" for two flags)
   * @param build the query for `shape`, with `param(name)` in place of each per-call value
   */
  constructor(
    private readonly shapeKey: (shape: Shape) => string,
    private readonly build: (db: Db, shape: Shape, param: ParamOf<Values>) => Compilable<Row>,
    private readonly options: {
      /**
       * Shapes to run with a generic plan (db/prepared-statement-client.ts GENERIC_PLAN_COMMENT):
       * those Postgres would otherwise re-plan on every run although its one generic plan costs
       * less, measured per shape (scripts/bench/plan-modes.ts).
       */
      genericPlan?: (shape: Shape) => boolean;
      /**
       * The statement takes a row lock other writes contend for, inside a transaction: it and the
       * rest of its transaction run with the lock bound as statement bound
       * (db/prepared-statement-client.ts LOCK_BOUND_COMMENT), so that it waits at most the lock
       * bound in all, however many waiters queue for the row.
       */
      lockBound?: boolean;
    } = {},
  ) {}

  /**
   * Runs the statement of `shape` with `values`. Rejects (a programming error, before anything
   * is sent) when the template names a parameter `values` lacks; database errors reject as
   * with any kysely query.
   */
  async execute(db: Db, shape: Shape, values: Values): Promise<QueryResult<Row>> {
    const template = this.#templateFor(db, shape);
    const parameters = template.parameters.map((parameter) => {
      if (!(parameter instanceof Slot)) return parameter;
      const value = (values as Record<string, unknown>)[parameter.name];
      if (value === undefined) throw new Error(`query template: no value for parameter "${parameter.name}"`);
      return value;
    });
    // A fresh query id per run: plugins key per-execution state by it.
    return db.executeQuery<Row>({ ...template, parameters, queryId: createQueryId() });
  }

  /** Runs the statement and returns its first row (undefined when it returned none). */
  async executeTakeFirst(db: Db, shape: Shape, values: Values): Promise<Row | undefined> {
    return (await this.execute(db, shape, values)).rows[0];
  }

  #templateFor(db: Db, shape: Shape): CompiledQuery<Row> {
    const key = this.shapeKey(shape);
    let template = this.#compiled.get(key);
    if (!template) {
      // Every connection compiles to Postgres SQL (postgres driver or PGlite), so one text per shape.
      template = this.build(db, shape, ((name: string) => new Slot(name)) as ParamOf<Values>).compile();
      const generic = this.options.genericPlan?.(shape) ? GENERIC_PLAN_COMMENT : "";
      const lockBound = this.options.lockBound ? LOCK_BOUND_COMMENT : "";
      if (generic || lockBound) template = { ...template, sql: `${generic}${lockBound}${template.sql}` };
      this.#compiled.set(key, template);
    }
    return template;
  }
}
