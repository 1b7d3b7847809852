/**
 * Hot statements built once. Kysely builds and compiles a query's operation tree on every
 * call (a few per cent of a paid request); the SQL of a hot statement never changes, only
 * its values. So it is built once with a marker in each named value's place, compiled, and
 * each call binds the values by position. Constant values keep what the builder gave them.
 */
import { type Compilable, CompiledQuery } from 'kysely';

const MARK = '\u0000tollgate-value:';

type Slot = { name: string } | { value: unknown };

export function prepared<N extends string>(
  names: readonly N[],
  /** `value(name)` stands for that value wherever the builder takes one. */
  build: (value: (name: N) => never) => Compilable<unknown>,
): (values: Record<N, unknown>) => CompiledQuery {
  let compiled: { sql: string; slots: Slot[] } | null = null;
  return (values) => {
    if (!compiled) {
      const q = build((name) => `${MARK}${name}` as never).compile();
      const slots: Slot[] = q.parameters.map((p) =>
        typeof p === 'string' && p.startsWith(MARK) ? { name: p.slice(MARK.length) } : { value: p },
      );
      for (const n of names) {
        if (!slots.some((s) => 'name' in s && s.name === n))
          throw new Error(`prepared query does not use ${n}`);
      }
      compiled = { sql: q.sql, slots };
    }
    const { sql, slots } = compiled;
    return CompiledQuery.raw(
      sql,
      slots.map((s) => ('name' in s ? values[s.name as N] : s.value)),
    );
  };
}
