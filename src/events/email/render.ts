/**
 * The message of one email (engagement-api-v3.md, "Email notifications", "Message"): pure, no
 * I/O. Given the project, its settings, the recipient and the notifications the email holds
 * (oldest first), it returns what nodemailer sends: From `"{from_name}" <{from_address}>`,
 * Reply-To when set, To, a subject with the project's name and the oldest notification's
 * feature heading (" and N more" for N further notifications), a text/plain part with the
 * board texts as they are and a text/html part with every board text HTML-escaped, each listing
 * every notification (a link from board_url when set), the Message-ID, and the RFC 2369 /
 * RFC 8058 unsubscribe headers. A status is shown as a person reads it on the board: its
 * column's name (statusLabel), never the raw value.
 */
import { FEATURE_ID_PLACEHOLDER, fillTemplateUrl, RELEASE_SLUG_PLACEHOLDER } from "../../contract/notification-settings.ts";
import { escapeHtml } from "./html-escape.ts";

/** One notification as an email lists it: the row, and its feature as it is now. */
export interface EmailNotification {
  id: string;
  type: string;
  data: Record<string, unknown>;
  feature: { id: number; heading: string };
  /** The slug of the release a `shipped` notification names, when it still exists; else absent. */
  releaseSlug?: string;
}

export interface EmailInput {
  /** `statusNames`: status value -> the name of the roadmap column showing it (see statusNames). */
  project: { name: string; statusNames: ReadonlyMap<string, string> };
  /** The sender settings in effect (from_name already defaulted to the project's name). */
  /** boardUrl / changelogUrl: the notification settings' board_url and changelog_url (null: no such links). */
  sender: { fromName: string; fromAddress: string; replyTo: string | null; boardUrl: string | null; changelogUrl?: string | null };
  to: string;
  /** At least one, oldest first. */
  notifications: readonly EmailNotification[];
  /** `<...@...>`, unique per email. */
  messageId: string;
  /** {PUBLIC_BASE_URL}/api/v3/unsubscribe/{token}. */
  unsubscribeUrl: string;
}

/** What nodemailer's sendMail takes, as this service fills it. */
export interface RenderedEmail {
  from: { name: string; address: string };
  replyTo?: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  headers: { "List-Unsubscribe": string; "List-Unsubscribe-Post": string };
}

/** Header text on one line: a board text's line breaks would otherwise need folding rules. */
function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, " ").trim();
}

function field(data: Record<string, unknown>, key: string): string | undefined {
  const value = data[key];
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined;
}

function nested(data: Record<string, unknown>, key: string, inner: string): string | undefined {
  const value = data[key];
  return value !== null && typeof value === "object" ? field(value as Record<string, unknown>, inner) : undefined;
}

/**
 * The sentence a notification shows, as parts: fixed words (`text`) and board texts (`board`),
 * so the HTML part escapes exactly the board texts and the text part shows them as they are.
 */
type Part = { text: string } | { board: string };

/**
 * How a person reads `status` (a FeatureObject status value): the name of its column on the
 * board, from `names` (statusNames), else the value in words (`in_progress` -> "In progress").
 */
export function statusLabel(status: string, names: ReadonlyMap<string, string>): string {
  const name = names.get(status);
  if (name !== undefined && name.trim() !== "") return name;
  const words = status.replaceAll("_", " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The column name of each status (owner-api-v3.md, Rule 1: setting a status alone files the
 * feature in the roadmap's first column by position with that status), given the project's
 * roadmap columns in any order; `archived` is the archived column's, "Archived"
 * (feedback-board-api-v3.md, column -1).
 */
export function statusNames(roadmapColumns: readonly { status: string | null; name: string; position: number; id: number }[]) {
  const names = new Map<string, string>([["archived", "Archived"]]);
  const ordered = [...roadmapColumns].sort((a, b) => a.position - b.position || a.id - b.id);
  for (const column of ordered) {
    if (column.status !== null && column.status !== "archived" && !names.has(column.status)) names.set(column.status, column.name);
  }
  return names;
}

function describe(notification: EmailNotification, names: ReadonlyMap<string, string>): Part[] {
  const { data, type } = notification;
  const feature: Part = { board: notification.feature.heading };
  const status = (key: string): Part => {
    const value = field(data, key);
    return { board: value === undefined ? "?" : statusLabel(value, names) };
  };
  switch (type) {
    case "status_changed":
      return [feature, { text: ": status changed from " }, status("from"), { text: " to " }, status("to")];
    case "responded": {
      const denial = data.response_is_denial === true ? " (declined)" : "";
      return [feature, { text: `: the team responded${denial}: ` }, { board: field(data, "developer_response") ?? "" }];
    }
    case "shipped":
      return [feature, { text: ": shipped in " }, { board: nested(data, "release", "name") ?? "a release" }];
    case "merged":
      return [feature, { text: ": merged into " }, { board: nested(data, "into", "heading") ?? "another feature" }];
    case "replied":
      return [
        { board: field(data, "author_name") ?? "Someone" },
        { text: " replied to your comment on " },
        feature,
        { text: ": " },
        { board: field(data, "excerpt") ?? "" },
      ];
    case "team_commented":
      return [
        { board: field(data, "author_name") ?? "The team" },
        { text: " (team) commented on " },
        feature,
        { text: ": " },
        { board: field(data, "excerpt") ?? "" },
      ];
    default:
      return [feature, { text: `: ${type.replaceAll("_", " ")}` }];
  }
}

/**
 * The links of a notification, only to pages a reader can open: the feature on board_url, and
 * for a shipped one the release on changelog_url; none for a setting that is unset.
 */
function linksOf(sender: EmailInput["sender"], notification: EmailNotification): { label: string; url: string }[] {
  const links: { label: string; url: string }[] = [];
  const feature = fillTemplateUrl(sender.boardUrl, FEATURE_ID_PLACEHOLDER, notification.feature.id);
  if (feature) links.push({ label: "View", url: feature });
  if (notification.type === "shipped" && notification.releaseSlug !== undefined) {
    const release = fillTemplateUrl(sender.changelogUrl, RELEASE_SLUG_PLACEHOLDER, notification.releaseSlug);
    if (release) links.push({ label: "Release notes", url: release });
  }
  return links;
}

/** The subject: `[{project}] {oldest feature heading}` and " and N more" for N further notifications. */
export function emailSubject(projectName: string, notifications: readonly Pick<EmailNotification, "feature">[]): string {
  const [oldest] = notifications;
  const more = notifications.length - 1;
  const heading = oldest ? oneLine(oldest.feature.heading) : "";
  return `[${oneLine(projectName)}] ${heading}${more > 0 ? ` and ${more} more` : ""}`;
}

/** The message of `input` (see the module comment). */
export function renderEmail(input: EmailInput): RenderedEmail {
  const { project, sender, notifications, unsubscribeUrl } = input;
  const count = notifications.length;
  const intro = `${count === 1 ? "An update" : `${count} updates`} from ${project.name} on features you follow:`;
  const footer = "You receive this because you follow these features. To stop these emails, unsubscribe:";

  const textItems = notifications.map((notification) => {
    const sentence = describe(notification, project.statusNames)
      .map((part) => ("text" in part ? part.text : part.board))
      .join("");
    const links = linksOf(sender, notification).map((link) => `\n  ${link.url}`);
    return `- ${sentence}${links.join("")}`;
  });
  const text = `${intro}\n\n${textItems.join("\n\n")}\n\n--\n${footer}\n${unsubscribeUrl}\n`;

  const htmlItems = notifications.map((notification) => {
    const links = linksOf(sender, notification).map((link) => ` <a href="${escapeHtml(link.url)}">${link.label}</a>`);
    const sentence = describe(notification, project.statusNames)
      .map((part) => escapeHtml("text" in part ? part.text : part.board))
      .join("");
    return `<li>${sentence}${links.join("")}</li>`;
  });
  const html =
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(emailSubject(project.name, notifications))}</title></head>` +
    `<body><p>${escapeHtml(intro)}</p><ul>${htmlItems.join("")}</ul>` +
    `<p style="color:#6b7280;font-size:12px">${escapeHtml(footer)} <a href="${escapeHtml(unsubscribeUrl)}">Unsubscribe</a></p></body></html>`;

  return {
    from: { name: oneLine(sender.fromName), address: sender.fromAddress },
    ...(sender.replyTo ? { replyTo: sender.replyTo } : {}),
    to: input.to,
    subject: emailSubject(project.name, notifications),
    text,
    html,
    messageId: input.messageId,
    headers: { "List-Unsubscribe": `<${unsubscribeUrl}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" },
  };
}
