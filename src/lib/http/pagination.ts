/**
 * Page arithmetic of the Meta object (contract, "Pagination"): page is one based, per_page
 * defaults to 20 and is at most 100.
 */
import type { Meta } from "./envelope.ts";

export interface PageRequest {
  page: number;
  per_page: number;
}

/** Row offset of the first item of the requested page. */
export function pageOffset({ page, per_page }: PageRequest): number {
  return (page - 1) * per_page;
}

/** Meta for a page given the total number of matching items across all pages. */
export function pageMeta({ page, per_page }: PageRequest, total: number): Meta {
  const total_pages = Math.ceil(total / per_page);
  return { page, per_page, total, total_pages, has_more: page * per_page < total };
}
