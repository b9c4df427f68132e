/**
 * Feed rows -> Atom 1.0 documents (RFC 4287; engagement-api-v3.md, "Feeds"), written by the
 * `feed` library. Board texts pass through `xmlText` first: XML 1.0 cannot carry most control
 * characters even escaped, so they are dropped.
 *
 * What the library leaves to its caller, and is done here:
 * - plain text elements (feed title, author name) go through xml-js, which turns `&amp;` back
 *   into `&` before escaping (so a name holding "&amp;" would lose it): each `&` is written as
 *   `&amp;` first, which that step undoes exactly;
 * - entry titles and contents are declared `type="html"` and written as CDATA: a title is
 *   HTML-escaped (it is plain text; the escaping also removes every `>`, so no `]]>` can end
 *   the section), and in the sanitized HTML of a release note each `]]>` becomes `]]&gt;`
 *   (the same text to an HTML parser; xml-js splits only the first one);
 * - an entry without a link: the library always writes an entry's `<link>`, as `<link/>` (no
 *   href, invalid Atom) when there is none, so those elements are removed from its output.
 *
 * Entries link only where a reader can open the page (the API's own routes need a key): a
 * release to the owner's `changelog_url`, a feature to the owner's `board_url`, each with the
 * slug or id put in; without the setting an entry has no link element.
 */
import { Feed, type Item } from "feed";
import { FEATURE_ID_PLACEHOLDER, fillTemplateUrl, RELEASE_SLUG_PLACEHOLDER } from "../../contract/notification-settings.ts";
import { eventId } from "../../events/outbox.ts";
import type { FeedProjectRow, FeedReleaseRow, FeedStatusChangeRow } from "./feeds.repository.ts";

/** Who the feed is about: the project (slug and name) and where its API is served. */
export interface FeedSubject {
  slug: string;
  name: string;
  /** PUBLIC_BASE_URL without a trailing slash, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  project: FeedProjectRow;
}

// XML 1.0 "Char": tab, newline, carriage return and U+0020 onwards, without surrogates (a lone
// one is no character), U+FFFE and U+FFFF.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;

/** `text` without the characters XML 1.0 cannot hold. */
export function xmlText(text: string): string {
  return text.replace(NOT_XML_CHAR, "");
}

/** `text` as HTML text: &, <, >, " and ' escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "#39" }[char]};`);
}

/** A plain text element's value as the library must receive it (see the module comment). */
function plainText(text: string): string {
  return xmlText(text).replace(/&/g, "&amp;");
}

/** Sanitized HTML as a CDATA section may hold it (see the module comment). */
function htmlContent(html: string): string {
  return xmlText(html).replace(/]]>/g, "]]&gt;");
}

/** Stable id of a project's feed: `urn:feedback-board:{slug}:{kind}`. */
export function feedUrn(slug: string, kind: "changelog" | "roadmap"): string {
  return `urn:feedback-board:${slug}:${kind}`;
}

/** Stable id of a release's entry: `urn:feedback-board:{slug}:release:{id}`. */
export function releaseUrn(slug: string, releaseId: number): string {
  return `urn:feedback-board:${slug}:release:${releaseId}`;
}

/** Stable id of a status change's entry: `urn:feedback-board:{slug}:event:{evt_ id}`. */
export function eventUrn(slug: string, eventPublicId: string): string {
  return `urn:feedback-board:${slug}:event:${eventPublicId}`;
}

/** The library's link element of an entry without a link (see the module comment), on its own line. */
const EMPTY_ENTRY_LINK = /^[ \t]*<link\/>\r?\n/gm;

/** The feed document the library writes for `feed`, without the link elements of entries that have none. */
function atomOf(feed: Feed): string {
  // Board texts cannot produce "<link/>": titles are escaped and contents are sanitized HTML in
  // CDATA, where a line holding only that element is not written by the sanitizer.
  return feed.atom1().replace(EMPTY_ENTRY_LINK, "");
}

function newFeed(subject: FeedSubject, kind: "changelog" | "roadmap", updated: Date | undefined): Feed {
  return new Feed({
    id: feedUrn(subject.slug, kind),
    title: plainText(`${subject.name} ${kind}`),
    updated: updated ?? subject.project.created_at,
    feed: `${subject.baseUrl}/api/v3/projects/${subject.slug}/${kind}.atom`,
    author: { name: plainText(subject.name) },
    generator: false,
  });
}

/**
 * The changelog feed: one entry per release of `releases` (already newest first), id
 * releaseUrn, title its name, updated and published its published_at, content its sanitized
 * body_html, linked to the owner's changelog_url with the release's slug put in (no link when
 * it is unset). A release without a note has no content when it has a link; with neither, its
 * content is its name, since an Atom entry needs a content or an alternate link (RFC 4287, 4.1.2).
 */
export function toChangelogFeed(subject: FeedSubject, releases: readonly FeedReleaseRow[]): string {
  const feed = newFeed(subject, "changelog", releases[0]?.published_at);
  for (const release of releases) {
    const link = fillTemplateUrl(subject.project.changelog_url, RELEASE_SLUG_PLACEHOLDER, release.slug);
    const title = escapeHtml(xmlText(release.name));
    const content = release.body_html !== null ? htmlContent(release.body_html) : link === undefined ? `<p>${title}</p>` : undefined;
    feed.addItem(
      entry({
        id: releaseUrn(subject.slug, release.id),
        title,
        link,
        date: release.published_at,
        published: release.published_at,
        ...(content === undefined ? {} : { content }),
      }),
    );
  }
  return atomOf(feed);
}

/**
 * The roadmap feed: one entry per status change of `changes` (already newest first), id
 * eventUrn of its event, title "{heading}: {new status}", updated the event's time, content
 * naming the statuses before and after, linked to the owner's board_url with the feature's id
 * put in (no link when it is unset).
 */
export function toRoadmapFeed(subject: FeedSubject, changes: readonly FeedStatusChangeRow[]): string {
  const feed = newFeed(subject, "roadmap", changes[0]?.created_at);
  for (const change of changes) {
    const to = escapeHtml(xmlText(change.to_status));
    const from = change.from_status === null ? null : escapeHtml(xmlText(change.from_status));
    feed.addItem(
      entry({
        id: eventUrn(subject.slug, eventId(change.txid, change.seq)),
        title: `${escapeHtml(xmlText(change.heading))}: ${to}`,
        link: fillTemplateUrl(subject.project.board_url, FEATURE_ID_PLACEHOLDER, change.feature_id),
        date: change.created_at,
        content:
          from === null ? `<p>Status: <code>${to}</code></p>` : `<p>Status changed from <code>${from}</code> to <code>${to}</code></p>`,
      }),
    );
  }
  return atomOf(feed);
}

/**
 * An entry as the library takes it, with or without a link: its type demands one, but its Atom
 * writer takes an entry without (writing the `<link/>` that atomOf removes).
 */
function entry(fields: Omit<Item, "link"> & { link: string | undefined }): Item {
  const { link, ...rest } = fields;
  return (link === undefined ? rest : { ...rest, link }) as Item;
}
