/**
 * Timestamps on the wire (contract, "Response envelope": all timestamps are RFC 3339 in UTC).
 * Accepts what the drivers return: a Date, or a timestamp string (JSON built inside a query).
 */
export function rfc3339(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

export function rfc3339OrNull(value: Date | string | null): string | null {
  return value === null ? null : rfc3339(value);
}
