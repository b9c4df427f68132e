/**
 * The response envelope (contract, "Response envelope"): every body has exactly data, meta and
 * error, each present and null when it does not apply.
 */
import type { ApiError } from "./errors.ts";

export interface Meta {
  page: number;
  per_page: number;
  total: number;
  total_pages: number;
  has_more: boolean;
}

export interface Envelope<T> {
  data: T | null;
  meta: Meta | null;
  error: { code: string; field: string | null; message: string } | null;
}

export function success<T>(data: T): { data: T; meta: null; error: null } {
  return { data, meta: null, error: null };
}

export function page<T>(data: T[], meta: Meta): { data: T[]; meta: Meta; error: null } {
  return { data, meta, error: null };
}

export function failure(error: ApiError): { data: null; meta: null; error: { code: string; field: string | null; message: string } } {
  return { data: null, meta: null, error: { code: error.code, field: error.field, message: error.message } };
}
