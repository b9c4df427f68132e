/**
 * A cached JSON answer whose items each carry one boolean field as false (has_voted in the
 * anonymous features list or detail), prepared once so that a reader's copy, with the field
 * true on some items, is made by splicing text instead of JSON.parse + JSON.stringify of the
 * whole body. On a 14 KB features page, parse + stringify was 18 % of the server's busy time
 * in an identity read.
 *
 * Why splicing is exact: JSON.stringify writes no whitespace, and a `"` inside a JSON string is
 * always escaped, so the text `"<field>":false` occurs only where an object has that key with
 * that value. The overlay is refused (`of` returns undefined) unless each item has the field,
 * false, and the text holds exactly one such occurrence per item, in item order.
 */

/** The items of an envelope: `data` itself when it is one object, else its elements. */
export function itemsOf(envelope: { data?: unknown }): unknown[] {
  return Array.isArray(envelope.data) ? envelope.data : [envelope.data];
}

export class BooleanFieldOverlay {
  private constructor(
    /** The items' `id`s, in the order they appear in the body. */
    readonly ids: readonly number[],
    private readonly body: string,
    /** Where each item's `false` starts in the body (UTF-16 offsets), in item order. */
    private readonly offsets: readonly number[],
  ) {}

  /**
   * Prepares `body` (an envelope `{ data: item | item[] }` as JSON.stringify wrote it) for
   * `field`; undefined when its items do not each carry a numeric `id` and `field: false`
   * exactly once in the text.
   */
  static of(body: string, field: string): BooleanFieldOverlay | undefined {
    const ids: number[] = [];
    for (const item of itemsOf(JSON.parse(body) as { data?: unknown })) {
      if (typeof item !== "object" || item === null) return undefined;
      const { id, [field]: value } = item as Record<string, unknown>;
      if (typeof id !== "number" || value !== false) return undefined;
      ids.push(id);
    }
    const needle = `${JSON.stringify(field)}:false`;
    const offsets: number[] = [];
    for (let at = body.indexOf(needle); at !== -1; at = body.indexOf(needle, at + needle.length)) {
      offsets.push(at + needle.length - "false".length);
    }
    return offsets.length === ids.length ? new BooleanFieldOverlay(ids, body, offsets) : undefined;
  }

  /** The body with the field true on every item whose id is in `trueIds`, false elsewhere. */
  render(trueIds: ReadonlySet<number>): string {
    if (trueIds.size === 0) return this.body;
    let text = "";
    let from = 0;
    for (let i = 0; i < this.ids.length; i++) {
      if (!trueIds.has(this.ids[i]!)) continue;
      const at = this.offsets[i]!;
      text += `${this.body.slice(from, at)}true`;
      from = at + "false".length;
    }
    return text + this.body.slice(from);
  }
}
