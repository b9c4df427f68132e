/**
 * Dates as the sources write them (imports-v3.md, "Sources", CSV `created_at`): RFC 3339
 * (`2024-01-15T14:05:02.331Z`, any offset, any fraction, `t`/`z`/a space accepted as RFC 3339
 * allows) and `YYYY-MM-DD HH:MM:SS` read as UTC. The result is RFC 3339 in UTC with milliseconds
 * (`Date#toISOString`); finer fractions (Fider writes microseconds) are cut to milliseconds.
 */

const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const PLAIN_UTC = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** `text` as RFC 3339 UTC, or null when it is neither form or names no real instant (2024-02-30). */
export function parseSourceDate(text: string): string | null {
  const value = text.trim();
  const match = RFC_3339.exec(value) ?? PLAIN_UTC.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const fraction = match[7] ? Math.floor(Number(`0${match[7]}`) * 1000) : 0;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, fraction);
  const check = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    check.getUTCHours() !== hour ||
    check.getUTCMinutes() !== minute ||
    check.getUTCSeconds() !== second
  ) {
    return null;
  }
  const zone = match[8];
  let offsetMinutes = 0;
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const hours = Number(zone.slice(1, 3));
    const minutes = Number(zone.slice(4, 6));
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = sign * (hours * 60 + minutes);
  }
  return new Date(utc - offsetMinutes * 60_000).toISOString();
}

/**
 * A Canny `eta` as a target date `YYYY-MM-DD`: `MM/YYYY` (the form Canny's API takes) is the
 * first day of that month; an ISO date or an RFC 3339 time gives its (UTC) day. Null otherwise.
 */
export function parseEta(text: string): string | null {
  const value = text.trim();
  const monthYear = /^(\d{1,2})\/(\d{4})$/.exec(value);
  if (monthYear) {
    const month = Number(monthYear[1]);
    if (month < 1 || month > 12) return null;
    return `${monthYear[2]}-${String(month).padStart(2, "0")}-01`;
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const full = parseSourceDate(`${value}T00:00:00Z`);
    return full === null ? null : full.slice(0, 10);
  }
  const full = parseSourceDate(value);
  return full === null ? null : full.slice(0, 10);
}
