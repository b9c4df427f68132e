/**
 * Reading the Atom feeds (engagement-api-v3.md, "Feeds") in tests: the document is parsed by a
 * real XML parser (jsdom's DOMParser, application/xml), which refuses anything not well-formed.
 */
import { JSDOM } from "jsdom";
import { expect } from "vitest";

export const ATOM_NS = "http://www.w3.org/2005/Atom";

const window = new JSDOM("").window;

export interface AtomLink {
  rel: string | null;
  href: string | null;
}

export interface AtomEntry {
  id: string;
  title: string;
  titleType: string | null;
  updated: string;
  published: string | null;
  content: string | null;
  contentType: string | null;
  links: AtomLink[];
}

export interface AtomFeed {
  id: string;
  title: string;
  updated: string;
  authorName: string | null;
  links: AtomLink[];
  entries: AtomEntry[];
}

/** The Atom children named `name` of `parent` (direct children only). */
function children(parent: Element, name: string): Element[] {
  return Array.from(parent.children).filter((child) => child.namespaceURI === ATOM_NS && child.localName === name);
}

function text(parent: Element, name: string): string | null {
  const [element] = children(parent, name);
  return element === undefined ? null : (element.textContent ?? "");
}

function links(parent: Element): AtomLink[] {
  return children(parent, "link").map((link) => ({ rel: link.getAttribute("rel"), href: link.getAttribute("href") }));
}

/** Parses `xml` as an Atom feed document, failing the test when it is not well-formed XML or not Atom. */
export function parseAtom(xml: string): AtomFeed {
  const document = new window.DOMParser().parseFromString(xml, "application/xml");
  const error = document.getElementsByTagName("parsererror")[0];
  expect(error?.textContent ?? null, "well-formed XML").toBeNull();
  const feed = document.documentElement;
  expect(feed.namespaceURI).toBe(ATOM_NS);
  expect(feed.localName).toBe("feed");
  const [author] = children(feed, "author");
  return {
    id: text(feed, "id") ?? "",
    title: text(feed, "title") ?? "",
    updated: text(feed, "updated") ?? "",
    authorName: author === undefined ? null : text(author, "name"),
    links: links(feed),
    entries: children(feed, "entry").map((entry) => {
      const [title] = children(entry, "title");
      const [content] = children(entry, "content");
      return {
        id: text(entry, "id") ?? "",
        title: title?.textContent ?? "",
        titleType: title?.getAttribute("type") ?? null,
        updated: text(entry, "updated") ?? "",
        published: text(entry, "published"),
        content: content?.textContent ?? null,
        contentType: content?.getAttribute("type") ?? null,
        links: links(entry),
      };
    }),
  };
}

/** What a reader shows of an Atom text construct of type html: the text of the HTML it holds. */
export function htmlText(html: string): string {
  const template = window.document.createElement("template");
  template.innerHTML = html;
  return template.content.textContent ?? "";
}

/** Reads a 200 feed answer: checks its media type and parses it. */
export async function readFeed(response: Response): Promise<AtomFeed> {
  expect(response.status).toBe(200);
  expect(response.headers.get("Content-Type")).toBe("application/atom+xml; charset=utf-8");
  return parseAtom(await response.text());
}
