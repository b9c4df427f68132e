/**
 * HTML escaping of board texts for the text/html part of an email (engagement-api-v3.md,
 * "Message": every board text HTML-escaped). The five characters that can open markup, end an
 * attribute value or start an entity become character references, in element content and in
 * double- or single-quoted attribute values alike (HTML Living Standard, 13.1.2.6 and 13.1.4).
 */
const REFERENCES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** `text` with & < > " ' replaced by their references; anything else unchanged. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => REFERENCES[character] as string);
}
