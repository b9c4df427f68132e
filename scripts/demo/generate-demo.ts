/**
 * Writes scripts/demo/demo-snapshot.json: the "Lumen" demo project (a notes app on iOS, macOS and
 * the web). Deterministic: a seeded PRNG and a fixed base date, so running it again yields the
 * same bytes and the committed file can be checked for staleness.
 *
 *   npx tsx scripts/demo/generate-demo.ts          # rewrite the file
 *   npx tsx scripts/demo/generate-demo.ts --check  # exit 1 when the file is stale
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  DEMO_ALLOWED_ORIGINS,
  DEMO_ANON_TOKEN,
  DEMO_EMBED_KEY,
  DEMO_SECRET_KEY,
  DEMO_SLUG,
  DEMO_SSO_SECRET,
} from "../../src/admin/demo.ts";
import type { SnapshotInput } from "../../src/admin/snapshot.schema.ts";

export const DEMO_FILE = fileURLToPath(new URL("./demo-snapshot.json", import.meta.url));
const BASE = Date.parse("2026-10-01T00:00:00Z");
const DAY = 86_400_000;

/** mulberry32: small, fast, good enough for demo data, and identical on every platform. */
function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const chance = (p: number) => next() < p;
  const id = (length: number, alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") =>
    Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
  return { next, int, pick, chance, id };
}

const at = (ms: number) => new Date(Math.round(ms / 1000) * 1000).toISOString();

// ---------------------------------------------------------------------------------------------
// Features: [ref, board column, heading, description, tags, heat 1..10, extras]
// ---------------------------------------------------------------------------------------------

interface FeatureSeed {
  ref: string;
  column: string;
  heading: string;
  description: string;
  tags: string[];
  heat: number;
  pinned?: boolean;
  unapproved?: boolean;
  hot?: boolean;
  archived?: boolean;
  progress?: number;
  response?: string;
  denial?: boolean;
  linked?: string;
}

const f = (
  ref: string,
  column: string,
  heading: string,
  description: string,
  tags: string[],
  heat: number,
  extra: Partial<FeatureSeed> = {},
): FeatureSeed => ({ ref, column, heading, description, tags, heat, ...extra });

const featureSeeds: FeatureSeed[] = [
  // Roadmap: suggestions
  f(
    "offline-web",
    "c-open",
    "Offline mode for the web app",
    "Let the web app keep working on a plane: read and edit cached notebooks, sync when the connection is back.",
    ["sync", "performance"],
    10,
    { hot: true },
  ),
  f("nested-tags", "c-open", "Nested tags", "Tags like project/client/acme that fold into a tree in the sidebar.", ["editor"], 8),
  f(
    "pdf-search",
    "c-open",
    "Full-text search inside PDFs",
    "Search should find words inside attached PDFs, not only in note text.",
    ["search"],
    9,
  ),
  f(
    "daily-notes",
    "c-open",
    "Daily notes template",
    "One click (or a shortcut) to open today's note, created from a template if it does not exist yet.",
    ["editor"],
    7,
  ),
  f(
    "version-history",
    "c-open",
    "Version history for every note",
    "Browse and restore earlier versions of a note, with a diff view.",
    ["sync"],
    8,
  ),
  f(
    "workspace-permissions",
    "c-open",
    "Shared workspaces with granular permissions",
    "Give a teammate edit rights on one notebook and read-only rights on another.",
    ["collaboration", "security"],
    7,
  ),
  f(
    "vim-keys",
    "c-open",
    "Vim keybindings",
    "An optional Vim mode in the editor (normal/insert/visual, :w does nothing harmful).",
    ["editor"],
    5,
  ),
  f(
    "md-front-matter",
    "c-open",
    "Export to Markdown with front matter",
    "Keep tags, created and updated dates as YAML front matter when exporting.",
    ["export"],
    6,
  ),
  f("backlinks", "c-open", "Backlinks panel", "Show every note that links to the one I'm reading.", ["editor", "search"], 8, { hot: true }),
  f(
    "e2ee-shared",
    "c-open",
    "End-to-end encryption for shared notebooks",
    "Private notebooks are end-to-end encrypted already; shared ones should be too.",
    ["security", "collaboration"],
    6,
  ),
  f("graph-view", "c-open", "Graph view of linked notes", "A zoomable map of how notes link to each other.", [], 5),
  f("mermaid", "c-open", "Mermaid diagrams in code blocks", "Render ```mermaid blocks as diagrams, like GitHub does.", ["editor"], 6),
  f("latex", "c-open", "LaTeX math rendering", "Inline $x^2$ and block $$ math for lecture notes.", ["editor"], 6),
  f(
    "sidebar-labels",
    "c-open",
    "Screen reader labels for the sidebar",
    "VoiceOver reads the sidebar icons as 'button'; they need proper labels.",
    ["accessibility"],
    4,
  ),
  f(
    "reader-font-size",
    "c-open",
    "Adjustable font size in the reader",
    "Reading mode ignores the system text size setting.",
    ["accessibility"],
    4,
  ),
  f(
    "move-shortcut",
    "c-open",
    "Keyboard shortcut to move a note",
    "Something like Cmd+Shift+M to move the current note to another notebook.",
    ["editor"],
    3,
  ),
  f("saved-searches", "c-open", "Saved searches", "Pin a search (tag:client -tag:done) to the sidebar.", ["search"], 5),
  f("bulk-tags", "c-open", "Bulk edit tags", "Select twenty notes and add or remove a tag in one go.", ["editor"], 4),
  f("calendar-view", "c-open", "Calendar view for notes with dates", "Show notes that carry a date on a month calendar.", [], 4),
  f(
    "note-comments",
    "c-open",
    "Comments on shared notes",
    "Leave a comment on a paragraph of a shared note without editing it.",
    ["collaboration"],
    6,
  ),
  f(
    "template-gallery",
    "c-open",
    "Templates gallery",
    "A gallery of community templates: meeting notes, book notes, weekly review.",
    [],
    3,
  ),
  f(
    "startup-speed",
    "c-open",
    "Faster startup on large vaults",
    "With 15k notes the macOS app takes 9 seconds to open.",
    ["performance"],
    7,
    { hot: true },
  ),
  f(
    "table-editing",
    "c-open",
    "Table editing: sort and resize columns",
    "Tables are great but I can't sort them or change column widths.",
    ["editor"],
    5,
  ),
  f(
    "flashcards",
    "c-open",
    "Spaced repetition flashcards from highlights",
    "Turn highlighted lines into flashcards with a review schedule.",
    [],
    3,
  ),
  f(
    "pin-notes",
    "c-open",
    "Pin notes to the top of a notebook",
    "Keep the index note of a notebook at the top of the list.",
    ["editor"],
    5,
  ),
  f(
    "notebook-pdf",
    "c-open",
    "Export notebook as PDF with table of contents",
    "For sharing a handbook with people who don't use Lumen.",
    ["export"],
    4,
  ),
  f("custom-css", "c-open", "Custom CSS themes", "Let me load a CSS file to restyle the editor.", [], 1, { unapproved: true }),
  f(
    "audio-notes",
    "c-open",
    "Audio recording with transcription",
    "Record a voice memo inside a note and get a transcript next to it.",
    [],
    1,
    { unapproved: true },
  ),
  f("word-goals", "c-open", "Word count goals", "Set a daily word goal and see progress in the status bar.", ["editor"], 1, {
    unapproved: true,
  }),
  // Roadmap: planned
  f(
    "co-editing",
    "c-planned",
    "Real-time co-editing",
    "See each other's cursors and edit the same note at the same time.",
    ["collaboration", "sync"],
    10,
    { pinned: true },
  ),
  f(
    "evernote-import",
    "c-planned",
    "Import from Evernote (.enex)",
    "Bring notebooks, tags and attachments over from an Evernote export.",
    ["export"],
    8,
  ),
  f("command-palette", "c-planned", "Command palette", "Cmd+K to reach every action without the mouse.", ["editor"], 7),
  f(
    "wikilinks",
    "c-planned",
    "Note linking with [[wikilinks]] autocomplete",
    "Type [[ and pick a note from a fuzzy list.",
    ["editor", "search"],
    8,
  ),
  f(
    "passkeys",
    "c-planned",
    "Two-factor sign-in with passkeys",
    "Passkeys as a second factor (and eventually instead of passwords).",
    ["security"],
    6,
  ),
  f("macos-tabs", "c-planned", "Tabs on macOS", "Open several notes as tabs in one window.", [], 6),
  f("search-filters", "c-planned", "Search filters by date and notebook", "Narrow a search to a notebook and a date range.", ["search"], 5),
  f(
    "high-contrast",
    "c-planned",
    "High-contrast theme",
    "A theme that meets WCAG AAA contrast for text and controls.",
    ["accessibility"],
    4,
  ),
  // Roadmap: in progress
  f(
    "sync-rewrite",
    "c-progress",
    "Offline-first sync engine rewrite",
    "A new sync engine: conflict-free merges, instant local writes, smaller payloads.",
    ["sync", "performance"],
    9,
    { pinned: true, progress: 70, hot: true },
  ),
  f("canvas", "c-progress", "Canvas: an infinite whiteboard for notes", "Drop notes, images and arrows on an endless board.", [], 8, {
    progress: 35,
  }),
  f(
    "share-links",
    "c-progress",
    "Public sharing links with expiry",
    "Share a read-only link that stops working after a date you choose.",
    ["collaboration", "security"],
    7,
    { progress: 55 },
  ),
  f("search-index", "c-progress", "Faster search index", "Results as you type, even with 50k notes.", ["search", "performance"], 7, {
    progress: 80,
    hot: true,
  }),
  f(
    "keyboard-nav",
    "c-progress",
    "Keyboard navigation everywhere",
    "Every panel reachable and operable from the keyboard, with visible focus.",
    ["accessibility"],
    5,
    { progress: 40 },
  ),
  f("big-attachments", "c-progress", "Attachments up to 1 GB", "The 100 MB limit is too small for video recordings of meetings.", [], 5, {
    progress: 20,
  }),
  // Roadmap: done
  f("dark-mode", "c-done", "Dark mode", "A dark theme that follows the system setting.", ["editor", "accessibility"], 10),
  f(
    "md-paste",
    "c-done",
    "Paste Markdown from the clipboard",
    "Pasting Markdown should produce formatted text, not raw asterisks.",
    ["editor"],
    6,
  ),
  f(
    "quick-capture",
    "c-done",
    "Quick capture from the menu bar",
    "A small window from the menu bar to jot something down without switching apps.",
    [],
    7,
  ),
  f(
    "cursor-jump",
    "c-done",
    "Cursor jumps when editing long lists",
    "In lists of more than ~200 items the cursor jumps to the top after typing.",
    ["editor"],
    5,
  ),
  f(
    "zip-export",
    "c-done",
    "Export notebooks as a .zip of Markdown files",
    "One archive per notebook, attachments included.",
    ["export"],
    8,
  ),
  f(
    "spellcheck",
    "c-done",
    "Spellcheck in languages beyond English",
    "German, French and Spanish at least, picked per note.",
    ["editor", "accessibility"],
    5,
  ),
  f("session-timeout", "c-done", "Session timeout for shared devices", "Sign out automatically after a chosen idle time.", ["security"], 4),
  f("tag-autocomplete", "c-done", "Tag autocomplete", "Suggest existing tags while typing #.", ["editor"], 6),
  f(
    "memory-use",
    "c-done",
    "Reduce memory use on large notebooks",
    "The app uses 3 GB of RAM with a big notebook open.",
    ["performance"],
    6,
  ),
  f(
    "syntax-highlighting",
    "c-done",
    "Syntax highlighting in code blocks",
    "Highlight code by language in fenced code blocks.",
    ["editor"],
    7,
  ),
  f("trash", "c-done", "Trash with 30-day recovery", "Deleted notes go to a trash that empties itself after 30 days.", [], 6),
  f(
    "plain-attachments",
    "c-done",
    "Attachments stored as plain files in the vault",
    "Keep attachments as ordinary files next to the notes so other tools can read them.",
    ["export", "sync"],
    4,
  ),
  // Roadmap: declined
  f(
    "blockchain",
    "c-denied",
    "Blockchain-backed note timestamps",
    "Prove when a note was written by anchoring a hash on a blockchain.",
    ["security"],
    2,
    {
      response:
        'Thanks for the idea. We won\'t build this: signed, exportable version history (see "Version history for every note") covers proving when something was written without a third-party chain.',
      denial: true,
    },
  ),
  f("email-client", "c-denied", "Built-in email client", "Read and answer email inside Lumen.", [], 3, {
    response: "Lumen will stay a notes app. Forwarding an email to your Lumen inbox address already turns it into a note.",
    denial: true,
  }),
  f("self-hosted", "c-denied", "Self-hosted server edition", "Run the sync server on our own hardware.", ["sync", "security"], 6, {
    response: "Not something we can support with a small team. End-to-end encryption means our servers never see note contents.",
    denial: true,
  }),
  f("unlimited-free-devices", "c-denied", "Unlimited devices on the free plan", "The two-device limit is annoying.", [], 5, {
    response: "The free plan keeps its two-device limit; it is what pays for sync for everyone.",
    denial: true,
  }),
  // Roadmap: archived
  f("dark-theme", "c-open", "Dark theme please", "My eyes hurt at night.", [], 3, {
    archived: true,
    linked: "dark-mode",
    response: 'Merged into "Dark mode", which shipped in 3.0.',
  }),
  f("search-attachments", "c-open", "Search in attachments", "Find text in attached files.", ["search"], 2, {
    archived: true,
    linked: "pdf-search",
    response: 'Duplicate of "Full-text search inside PDFs"; please vote there.',
  }),
  f("windows-7", "c-denied", "Windows 7 support", "Our company laptops still run Windows 7.", [], 2, {
    archived: true,
    response: "Windows 7 no longer receives security updates, so we can't ship an app for it.",
    denial: true,
  }),
  f("sync-beta-feedback", "c-progress", "Sync beta 2 feedback", "Collecting feedback on the second sync beta.", ["sync"], 3, {
    archived: true,
    response: "The beta has ended, thank you all. The results went into the sync rewrite.",
  }),
  // Mobile board
  f("widgets", "m-shipped", "Home screen widgets", "Recent notes and a quick-capture button on the home screen.", [], 8),
  f("watch-capture", "m-ideas", "Apple Watch quick capture", "Dictate a note from the watch.", [], 5),
  f("share-sheet", "m-shipped", "Share sheet: save to a chosen notebook", "Pick the notebook when saving from the share sheet.", [], 6),
  f("pencil", "m-next", "Handwriting with Apple Pencil", "Write by hand in a note and keep the ink searchable.", ["editor"], 9, {
    hot: true,
  }),
  f("android-tablet", "m-ideas", "Android tablet layout", "Two-pane layout on Android tablets and foldables.", [], 4),
  f("mobile-offline-search", "m-next", "Offline search on mobile", "Search should work without a connection on the phone.", ["search"], 6),
  f("face-id", "m-shipped", "Face ID lock for notebooks", "Lock individual notebooks behind Face ID.", ["security"], 6),
  f("swipe-actions", "m-ideas", "Swipe actions in the note list", "Swipe to archive, pin or delete.", [], 4),
  f("dictation", "m-ideas", "Dictation with punctuation", "Say 'comma' and 'new paragraph' while dictating.", ["accessibility"], 3),
  f("iphone-landscape", "m-next", "Landscape mode on iPhone", "The editor is portrait only on iPhone.", [], 4),
  f(
    "dark-sync",
    "m-ideas",
    "Sync the dark mode setting between devices",
    "Switch the phone to dark mode and have the iPad and the Mac follow, instead of setting it on every device.",
    ["sync"],
    5,
  ),
  // Integrations board
  f("zapier", "i-live", "Zapier integration", "Create notes from any Zapier trigger.", [], 6),
  f("slack", "i-building", "Slack: save messages to Lumen", "A message action that saves a Slack thread as a note.", ["collaboration"], 8, {
    hot: true,
  }),
  f("gcal", "i-requested", "Google Calendar meeting notes", "Create a meeting note from a calendar event with attendees filled in.", [], 7),
  f("notion-import", "i-building", "Notion import", "Import a Notion workspace export with pages and databases.", ["export"], 7),
  f("readwise", "i-live", "Readwise highlights sync", "Send Readwise highlights into a notebook.", [], 5),
  f("github-embeds", "i-requested", "GitHub issue embeds", "Paste an issue link and see its live status.", [], 4),
  f("obsidian-import", "i-requested", "Obsidian vault import", "Keep links and attachments when moving from Obsidian.", ["export"], 6),
  f("raycast", "i-live", "Raycast extension", "Search and create notes from Raycast.", ["search"], 4),
  f("teams", "i-requested", "Microsoft Teams app", "The Slack integration, for Teams.", ["collaboration"], 3),
  f("webhooks", "i-requested", "Webhooks for note changes", "Call a URL when a note in a notebook changes.", [], 3),
];

const boardOfColumn: Record<string, string> = {
  "c-open": "roadmap",
  "c-planned": "roadmap",
  "c-progress": "roadmap",
  "c-done": "roadmap",
  "c-denied": "roadmap",
  "m-ideas": "mobile",
  "m-next": "mobile",
  "m-shipped": "mobile",
  "i-requested": "integrations",
  "i-building": "integrations",
  "i-live": "integrations",
};
const customStatus: Record<string, "open" | "planned" | "in_progress" | "done"> = {
  "m-ideas": "open",
  "m-next": "planned",
  "m-shipped": "done",
  "i-requested": "open",
  "i-building": "in_progress",
  "i-live": "done",
};
const shipped = new Set(["c-done", "m-shipped", "i-live"]);

// ---------------------------------------------------------------------------------------------
// Releases: what shipped when; features listed with their changelog type.
// ---------------------------------------------------------------------------------------------

interface ReleaseSeed {
  ref: string;
  name: string;
  slug: string;
  published: string | null;
  featured?: boolean;
  features: Array<[string, "new" | "improvement" | "fix" | "security" | "breaking_change"]>;
  body: string;
}

const releaseSeeds: ReleaseSeed[] = [
  {
    ref: "r-3-0",
    name: "Lumen 3.0",
    slug: "3-0",
    published: "2026-04-14T16:00:00.000Z",
    features: [
      ["dark-mode", "new"],
      ["syntax-highlighting", "new"],
      ["zip-export", "new"],
      ["trash", "new"],
    ],
    body: `## Lumen 3.0: lights off

The biggest release since launch. Highlights:

- **Dark mode** that follows your system setting, with a manual override in *Settings > Appearance*.
- **Syntax highlighting** for more than 40 languages in fenced code blocks.
- **Export** any notebook as a \`.zip\` of Markdown files, attachments included.
- **Trash**: deleted notes stay recoverable for 30 days.

### Code blocks

Name the language after the opening fence:

\`\`\`ts
const greeting: string = "hello, Lumen";
console.log(greeting);
\`\`\`

Read the [full announcement](https://example.com/blog/lumen-3) on our blog.
`,
  },
  {
    ref: "r-3-1",
    name: "Lumen 3.1",
    slug: "3-1",
    published: "2026-05-20T15:30:00.000Z",
    features: [
      ["tag-autocomplete", "new"],
      ["cursor-jump", "fix"],
      ["face-id", "security"],
    ],
    body: `## What's new

- Tag autocomplete: type \`#\` and pick from the tags you already use.
- iOS: lock individual notebooks with **Face ID**.

## Fixes

1. The cursor no longer jumps to the top when editing long lists.
2. Sync no longer stalls after waking a Mac from sleep.

Thanks to everyone who voted on the [roadmap](https://example.com/roadmap)!
`,
  },
  {
    ref: "r-3-2",
    name: "Lumen 3.2",
    slug: "3-2",
    published: "2026-07-02T14:00:00.000Z",
    features: [
      ["quick-capture", "new"],
      ["spellcheck", "improvement"],
      ["widgets", "new"],
      ["zapier", "new"],
    ],
    body: `## Capture anywhere

- **Quick capture** from the macOS menu bar (default shortcut \`Ctrl+Option+N\`).
- **Widgets** for the iOS home screen: recent notes and a capture button.
- Spellcheck now covers German, French, Spanish, Italian and Dutch.

### Zapier

Lumen is now on Zapier. A typical zap:

\`\`\`text
New starred email in Gmail  ->  Create note in "Inbox" notebook
\`\`\`

Setup guide: [docs/zapier](https://example.com/docs/zapier).
`,
  },
  {
    ref: "r-3-3",
    name: "Lumen 3.3",
    slug: "3-3",
    published: "2026-08-18T13:00:00.000Z",
    features: [
      ["session-timeout", "security"],
      ["md-paste", "improvement"],
      ["share-sheet", "improvement"],
      ["readwise", "new"],
    ],
    body: `## Security

- **Session timeout**: sign out automatically after 15, 30 or 60 idle minutes. Admins of Business
  workspaces can enforce it for every member.

## Improvements

- Pasting Markdown produces formatted text. Hold \`Shift\` to paste it raw.
- The iOS share sheet lets you choose the notebook.
- New [Readwise](https://readwise.io) integration: highlights arrive in a notebook of your choice.
`,
  },
  {
    ref: "r-3-4",
    name: "Lumen 3.4",
    slug: "3-4",
    published: "2026-09-24T12:00:00.000Z",
    featured: true,
    features: [
      ["memory-use", "improvement"],
      ["plain-attachments", "breaking_change"],
      ["raycast", "new"],
    ],
    body: `## Lighter and more open

- Large notebooks use up to **60% less memory**.
- A [Raycast extension](https://example.com/raycast) to search and create notes.

### Breaking change: attachments are plain files

Attachments now live as ordinary files in your vault folder:

\`\`\`text
Vault/
  Notebook/
    Meeting 2026-09-20.md
    attachments/
      whiteboard.png
\`\`\`

Scripts that read the old \`.lumenblob\` format must be updated; see the
[migration notes](https://example.com/docs/attachments-3-4).
`,
  },
  {
    ref: "r-3-5",
    name: "Lumen 3.5",
    slug: "3-5",
    published: null,
    features: [],
    body: `## Draft: Lumen 3.5

- [ ] Faster search index
- [ ] Keyboard navigation, part 1
- [ ] Public sharing links with expiry

_Not published yet._
`,
  },
];

// ---------------------------------------------------------------------------------------------
// People and words
// ---------------------------------------------------------------------------------------------

const firstNames = [
  "Ada",
  "Ben",
  "Chloe",
  "Dario",
  "Elif",
  "Farah",
  "Gustav",
  "Hana",
  "Ivan",
  "Jade",
  "Kofi",
  "Lena",
  "Mateo",
  "Nia",
  "Omar",
  "Priya",
  "Quinn",
  "Rosa",
  "Sven",
  "Tomás",
  "Uma",
  "Viktor",
  "Wen",
  "Ximena",
  "Yusuf",
  "Zoe",
  "Amara",
  "Bruno",
  "Camille",
  "Diego",
  "Emma",
  "Felix",
  "Greta",
  "Hugo",
  "Ines",
  "Jonas",
  "Kaia",
  "Luca",
  "Mira",
  "Noah",
  "Olga",
  "Paulo",
  "Rin",
  "Sara",
  "Theo",
  "Valeria",
  "Yara",
  "Aiko",
  "Bilal",
  "Clara",
];
const lastNames = [
  "Abara",
  "Berg",
  "Costa",
  "Dubois",
  "Eriksen",
  "Fischer",
  "García",
  "Hayashi",
  "Ivanova",
  "Jensen",
  "Kim",
  "Larsen",
  "Moreau",
  "Novak",
  "Okafor",
  "Petrov",
  "Quist",
  "Rossi",
  "Schmidt",
  "Tanaka",
  "Urban",
  "Varga",
  "Weber",
  "Xu",
  "Yilmaz",
  "Zimmer",
  "Alves",
  "Brandt",
  "Chen",
  "Dahl",
  "Evans",
  "Ferreira",
  "Gomez",
  "Horvat",
];
const handleAdjectives = ["Amber", "Brisk", "Cosmic", "Dusky", "Fuzzy", "Golden", "Jolly", "Misty", "Rusty", "Sunny"];
const handleAnimals = ["Albatross", "Bison", "Cougar", "Gecko", "Ibis", "Jackal", "Lemur", "Narwhal", "Ocelot", "Yak"];
const companies = [
  "Northwind Labs",
  "Bluefin Analytics",
  "Acme Studio",
  "Harbor & Pine",
  "Kestrel Health",
  "Orbital Freight",
  "Quillworks",
  "Redwood Legal",
  "Solstice Media",
  "Tidewater Bank",
  "Umber Architects",
  "Vantage Schools",
];

const comments = [
  "This is the one thing keeping me from moving my whole team over.",
  "+1, I'd use this every single day.",
  "Would love this. Right now I work around it with a separate app and it's clunky.",
  "Any update on this?",
  "Please make sure it works offline too.",
  "We're on the Business plan with 40 seats and this comes up in every feedback session.",
  "Same request from our whole design team.",
  "If this lands I'd happily switch to the yearly plan.",
  "Adding my vote. Ideally it would be on iOS as well, not only the Mac.",
  "Big yes. Bonus points for a keyboard shortcut.",
  "Could this be a setting rather than the default? Some of us like it the way it is.",
  "How would this work with shared notebooks?",
  "I'm switching from another tool and this is the main thing I miss.",
  "My use case: lecture notes, about 30 a week, and I need to find things again before exams.",
  "I'd pay extra for this, honestly.",
  "Tried a workaround with templates but it breaks as soon as the note gets long.",
  "This would make Lumen perfect for our support team's knowledge base.",
  "Please don't forget keyboard-only users when designing it.",
];
const teamReplies = [
  "Thanks for the detail, that helps us scope it.",
  "We hear you. It's on the list for the next planning round.",
  "Good question: it will follow the sharing settings of the notebook.",
  "There's an early version in the beta channel; feedback there is very welcome.",
  "Noted! Could you tell us roughly how many notes you have? It matters for how we build it.",
  "We're looking at this together with the sync rewrite, since they touch the same code.",
];
const voterReplies = [
  "Agreed, same problem here.",
  "For now you can get close with a template and a keyboard shortcut.",
  "Seconding this.",
  "That's exactly my use case too.",
  "Same, and on both my Mac and iPad.",
];

// ---------------------------------------------------------------------------------------------

/** Builds the demo snapshot; the same object on every run. */
export function buildDemoSnapshot(): SnapshotInput {
  const rnd = prng(20261001);

  const tiers = [
    { ref: "pro", name: "Pro", mrr_cents: 800, multiplier: 2 },
    { ref: "business", name: "Business", mrr_cents: 2_400, multiplier: 4 },
    { ref: "enterprise", name: "Enterprise", mrr_cents: 49_900, multiplier: 10 },
  ];

  // Voters: the team first, then the demo voter, then customers.
  type Voter = NonNullable<SnapshotInput["voters"]>[number] & { ref: string; created: number };
  const voters: Voter[] = [];
  const team: Array<[string, "owner" | "editor" | "viewer"]> = [
    ["Maya Lindqvist", "owner"],
    ["Jonah Okoye", "editor"],
    ["Sofia Marchetti", "editor"],
    ["Lars Holm", "viewer"],
  ];
  team.forEach(([name, role], i) => {
    const created = BASE - (420 - i * 10) * DAY;
    voters.push({
      ref: `team-${i + 1}`,
      kind: "sso",
      sso_id: `lumen-staff-${i + 1}`,
      display_name: name,
      email: `${name.split(" ")[0]!.toLowerCase()}@lumen.example.com`,
      role,
      company: "Lumen",
      created,
      created_at: at(created),
    });
  });
  const demoCreated = BASE - 200 * DAY;
  voters.push({
    ref: "demo-voter",
    kind: "anonymous",
    anon_token: DEMO_ANON_TOKEN,
    display_name: "Alex Rivera",
    tier: "pro",
    stripe_customer_id: "cus_DemoAlexRivera",
    subscription_id: "sub_DemoAlexRivera",
    subscription_status: "active",
    subscribed_at: at(demoCreated + 3 * DAY),
    last_synced_at: at(BASE - DAY),
    created: demoCreated,
    created_at: at(demoCreated),
  });
  for (let n = 1; voters.length < 400; n++) {
    // Older accounts are more common than new ones: skew creation towards the past.
    const created = BASE - Math.floor((1 - rnd.next() ** 1.6) * 380 * DAY) - 2 * DAY;
    const roll = rnd.next();
    const tier = roll < 0.58 ? null : roll < 0.84 ? "pro" : roll < 0.96 ? "business" : "enterprise";
    const sso = tier === "business" || tier === "enterprise" ? rnd.chance(0.8) : rnd.chance(0.2);
    const first = rnd.pick(firstNames);
    const last = rnd.pick(lastNames);
    const named = sso || rnd.chance(0.7);
    const voter: Voter = {
      ref: `v${String(n).padStart(3, "0")}`,
      kind: sso ? "sso" : "anonymous",
      display_name: named
        ? `${first} ${last}`
        : `${rnd.pick(handleAdjectives)} ${rnd.pick(handleAnimals)} ${String(rnd.int(0, 9999)).padStart(4, "0")}`,
      created,
      created_at: at(created),
    };
    if (sso) {
      voter.sso_id = `lumen-user-${10_000 + n}`;
      voter.email = `${first.toLowerCase()}.${last.toLowerCase()}@example.com`.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
    }
    if (tier !== null) {
      voter.tier = tier;
      if (tier !== "pro") voter.company = rnd.pick(companies);
      const stripe = rnd.chance(0.7);
      const since = created + rnd.int(0, 20) * DAY;
      if (stripe) {
        voter.stripe_customer_id = `cus_${rnd.id(14)}`;
        voter.subscription_id = `sub_${rnd.id(24)}`;
      } else {
        voter.paddle_customer_id = `ctm_01h${rnd.id(23, "0123456789abcdefghjkmnpqrstvwxyz")}`;
        voter.subscription_id = `sub_01h${rnd.id(23, "0123456789abcdefghjkmnpqrstvwxyz")}`;
      }
      voter.subscribed_at = at(since);
      voter.last_synced_at = at(BASE - rnd.int(1, 36) * 3_600_000);
      if (tier === "enterprise" && rnd.chance(0.4)) voter.mrr_override_cents = rnd.pick([35_000, 62_500, 99_000]);
      if (rnd.chance(0.1)) {
        const churnedAt = Math.min(BASE - DAY, since + rnd.int(30, 200) * DAY);
        voter.churned = true;
        voter.churned_at = at(churnedAt);
        voter.canceled_at = at(churnedAt - rnd.int(0, 5) * DAY);
        voter.churn_source = rnd.chance(0.2) ? "manual" : stripe ? "stripe" : "paddle";
        voter.subscription_status = "canceled";
      } else if (since > BASE - 14 * DAY) {
        voter.subscription_status = "trialing";
        voter.trial_ends_at = at(since + 14 * DAY);
      } else {
        voter.subscription_status = rnd.chance(0.05) ? "past_due" : "active";
      }
    }
    if (n === 57 || n === 211) voter.banned = true;
    voters.push(voter);
  }
  const customers = voters.filter((v) => v.role === undefined || v.role === null);
  const staff = voters.filter((v) => v.role === "owner" || v.role === "editor");
  // Some people vote a lot, most a little: an activity weight per voter.
  const activity = new Map(customers.map((v) => [v.ref, v.ref === "demo-voter" ? 6 : 0.3 + rnd.next() ** 3 * 6]));

  const releaseDate = new Map<string, number>();
  for (const release of releaseSeeds) {
    for (const [feature] of release.features) releaseDate.set(feature, Date.parse(release.published ?? "2026-10-15T00:00:00Z"));
  }

  type Feature = NonNullable<SnapshotInput["features"]>[number] & { ref: string; created: number; until: number };
  const positions = new Map<string, number>();
  const features: Feature[] = featureSeeds.map((seed) => {
    const board = boardOfColumn[seed.column]!;
    const shippedAt = releaseDate.get(seed.ref);
    // A shipped feature was suggested well before its release.
    const created =
      (seed.unapproved ? BASE - rnd.int(1, 5) * DAY : (shippedAt ?? BASE) - rnd.int(40, 240) * DAY) - rnd.int(0, 86_399) * 1000;
    const done = shipped.has(seed.column) && !seed.archived;
    const updated =
      shippedAt ?? (done || seed.response ? created + rnd.int(10, 30) * DAY : Math.min(BASE - DAY, created + rnd.int(1, 60) * DAY));
    const position = positions.get(seed.column) ?? 0;
    positions.set(seed.column, position + 1);
    const author = rnd.chance(0.85) ? rnd.pick(customers).ref : rnd.pick(staff).ref;
    const feature: Feature = {
      ref: seed.ref,
      board,
      column: seed.archived ? null : seed.column,
      heading: seed.heading,
      description: seed.description,
      author,
      position,
      view_count: seed.heat * rnd.int(25, 70) + rnd.int(0, 40),
      tags: seed.tags,
      created,
      until: Math.max(created + DAY, Math.min(updated, BASE)),
      created_at: at(created),
      updated_at: at(updated),
    };
    if (seed.archived) feature.status = "archived";
    else if (board !== "roadmap") feature.status = customStatus[seed.column]!;
    if (seed.unapproved) feature.is_approved = false;
    if (seed.pinned) feature.is_pinned = true;
    if (seed.progress !== undefined) feature.progress = seed.progress;
    if (seed.response) feature.developer_response = seed.response;
    if (seed.denial) feature.response_is_denial = true;
    if (seed.linked) feature.linked_feature = seed.linked;
    if (["c-planned", "c-progress", "m-next", "i-building"].includes(seed.column)) {
      feature.effort = rnd.pick([1, 2, 3, 5, 8, 13]);
      if (seed.column !== "c-planned" && seed.column !== "m-next") feature.start_date = at(BASE - rnd.int(10, 60) * DAY);
      feature.target_date = at(Date.UTC(2026, 9 + rnd.int(1, 5), 1));
    }
    return feature;
  });
  const featureBySeed = new Map(features.map((feature, i) => [feature.ref, { feature, seed: featureSeeds[i]! }]));

  // Votes: a feature's heat sets how many; active voters are picked more often; hot features
  // collect most of theirs in the last ten days, which is what the trending sort shows off.
  const votes: Array<{ voter: string; feature: string; created_at: string }> = [];
  const votedBy = new Map<string, Set<string>>();
  const totalActivity = [...activity.values()].reduce((a, b) => a + b, 0);
  const weightedVoter = () => {
    let r = rnd.next() * totalActivity;
    for (const [ref, weight] of activity) {
      r -= weight;
      if (r <= 0) return ref;
    }
    return customers[customers.length - 1]!.ref;
  };
  const voterCreated = new Map(voters.map((v) => [v.ref, v.created]));
  for (const { feature, seed } of featureBySeed.values()) {
    const target = Math.round(seed.heat ** 1.75 * 2.2 * (0.7 + rnd.next() * 0.6));
    const chosen = new Set<string>();
    for (let attempt = 0; chosen.size < target && attempt < target * 20; attempt++) {
      const voter = weightedVoter();
      if (chosen.has(voter)) continue;
      const from = Math.max(feature.created, voterCreated.get(voter)!);
      if (from >= feature.until) continue;
      chosen.add(voter);
      const recent = seed.hot && rnd.chance(0.6) && feature.until >= BASE - 10 * DAY;
      const start = recent ? Math.max(from, BASE - 10 * DAY) : from;
      votes.push({ voter, feature: feature.ref, created_at: at(start + rnd.next() * (feature.until - start)) });
    }
    votedBy.set(feature.ref, chosen);
  }
  votes.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.feature.localeCompare(b.feature) || a.voter.localeCompare(b.voter));

  // Comments: top-level ones from voters of the feature, replies one level deep, some from staff.
  const commentList: Array<{ ref: string; feature: string; voter: string; parent: string | null; content: string; created_at: string }> =
    [];
  let commentNo = 0;
  for (const { feature, seed } of featureBySeed.values()) {
    if (seed.heat < 4) continue;
    const voterPool = [...(votedBy.get(feature.ref) ?? [])];
    if (voterPool.length === 0) continue;
    const topLevel = rnd.int(1, Math.ceil(seed.heat / 2));
    for (let t = 0; t < topLevel; t++) {
      const voter = rnd.pick(voterPool);
      const from = Math.max(feature.created, voterCreated.get(voter)!);
      const when = from + rnd.next() * (feature.until - from);
      const ref = `c${String(++commentNo).padStart(3, "0")}`;
      commentList.push({ ref, feature: feature.ref, voter, parent: null, content: rnd.pick(comments), created_at: at(when) });
      const replies = rnd.chance(0.45) ? rnd.int(1, 2) : 0;
      let last = when;
      for (let r = 0; r < replies; r++) {
        const fromStaff = rnd.chance(0.5);
        const author = fromStaff ? rnd.pick(staff).ref : rnd.pick(voterPool);
        last = Math.min(BASE - 60_000, last + rnd.int(1, 96) * 3_600_000);
        commentList.push({
          ref: `c${String(++commentNo).padStart(3, "0")}`,
          feature: feature.ref,
          voter: author,
          parent: ref,
          content: rnd.pick(fromStaff ? teamReplies : voterReplies),
          created_at: at(Math.max(last, voterCreated.get(author)!)),
        });
      }
    }
  }
  const demoFeature = features.find((feature) => feature.ref === "offline-web")!;
  commentList.push({
    ref: "c-demo",
    feature: demoFeature.ref,
    voter: "demo-voter",
    parent: null,
    content: "Writing this from a train with spotty Wi-Fi. Offline mode would be a lifesaver.",
    created_at: at(BASE - 3 * DAY),
  });
  commentList.push({
    ref: "c-demo-reply",
    feature: demoFeature.ref,
    voter: "team-2",
    parent: "c-demo",
    content: "It's part of the sync rewrite that's in progress now. Hang in there!",
    created_at: at(BASE - 2 * DAY),
  });
  if (!votedBy.get("offline-web")!.has("demo-voter")) {
    votes.push({ voter: "demo-voter", feature: "offline-web", created_at: at(BASE - 3 * DAY) });
  }

  const likes: Array<{ voter: string; comment: string }> = [];
  for (const comment of commentList) {
    const count = Math.floor(rnd.next() ** 2 * 9);
    const likedBy = new Set<string>([comment.voter]);
    for (let i = 0; i < count; i++) {
      const voter = rnd.pick(customers).ref;
      if (likedBy.has(voter)) continue;
      likedBy.add(voter);
      likes.push({ voter, comment: comment.ref });
    }
  }

  const messages: NonNullable<SnapshotInput["messages"]> = [
    {
      ref: "m-maintenance",
      title: "Scheduled maintenance on Sunday",
      body: "Sync pauses for about 20 minutes on Sunday between 02:00 and 03:00 UTC. Notes stay editable offline.",
      kind: "info",
      presentation: "banner",
      priority: 10,
      platforms: null,
      starts_at: "2026-09-28T00:00:00.000Z",
      ends_at: "2027-12-31T00:00:00.000Z",
      created_at: "2026-09-27T09:00:00.000Z",
    },
    {
      ref: "m-ios-update",
      title: "Lumen 3.4 is here",
      body: "Update to get lighter memory use and the new attachments folder.",
      kind: "info",
      presentation: "banner",
      priority: 5,
      action_label: "Update now",
      action_url: "https://apps.apple.com/app/id0000000000",
      platforms: ["ios"],
      max_app_version: "3.3.99",
      created_at: "2026-09-24T12:00:00.000Z",
    },
    {
      ref: "m-macos-support",
      title: "macOS 12 support ends with Lumen 3.6",
      body: "Lumen 3.5 will be the last version for macOS 12 Monterey. Your notes stay safe and keep syncing.",
      kind: "warning",
      presentation: "banner",
      priority: 3,
      action_label: "Learn more",
      action_url: "https://example.com/docs/system-requirements",
      platforms: ["macos"],
      min_app_version: "3.0.0",
      max_app_version: "3.5.99",
      created_at: "2026-09-15T08:00:00.000Z",
    },
    {
      ref: "m-web-editor",
      title: "Try the new web editor",
      body: "The new editor loads twice as fast and supports tables. Switch back any time from Settings.",
      kind: "info",
      presentation: "alert",
      priority: 1,
      action_label: "Try it",
      action_url: "https://app.example.com/?editor=next",
      platforms: ["web"],
      starts_at: "2026-09-20T00:00:00.000Z",
      created_at: "2026-09-19T17:00:00.000Z",
    },
    {
      ref: "m-security-update",
      title: "Security update required",
      body: "Versions before 3.2.2 have a flaw in shared-link handling. Please update now.",
      kind: "critical",
      presentation: "alert",
      priority: 100,
      is_dismissible: false,
      action_label: "Update",
      action_url: "https://example.com/download",
      platforms: ["ios", "macos"],
      max_app_version: "3.2.1",
      created_at: "2026-08-30T07:30:00.000Z",
    },
  ];
  const dismissals = [
    { voter: "demo-voter", message: "m-maintenance" },
    { voter: "v001", message: "m-maintenance" },
    { voter: "v002", message: "m-web-editor" },
  ];

  const strip = <T extends { created?: number; until?: number }>(row: T) => {
    const { created: _created, until: _until, ...rest } = row;
    return rest;
  };

  return {
    format: "feedback-board-snapshot/1",
    project: {
      slug: DEMO_SLUG,
      name: "Lumen",
      description: "Notes that light up your ideas. Tell us what to build next.",
      logo_url: "https://example.com/lumen/logo.png",
      banner_url: "https://example.com/lumen/banner.png",
      currency_symbol: "$",
      show_branding: true,
      is_private: false,
      plan: "pro",
      sso_secret: DEMO_SSO_SECRET,
      allowed_origins: DEMO_ALLOWED_ORIGINS,
      settings: {
        allow_comments: true,
        allow_suggestions: true,
        allow_voting: true,
        allow_likes: true,
        default_mode: "roadmap",
        score_is_weighted: true,
        show_archived: true,
        show_comments: true,
        show_denied: true,
        show_progress: true,
        show_views: true,
        show_votes: true,
      },
      theme: {
        font: "Inter",
        radius: "10px",
        light: {
          accent: "#d97706",
          background: "#ffffff",
          border: "#e7e5e4",
          card_background: "#fafaf9",
          text: "#1c1917",
          text_secondary: "#78716c",
        },
        dark: {
          accent: "#fbbf24",
          background: "#1c1917",
          border: "#44403c",
          card_background: "#292524",
          text: "#fafaf9",
          text_secondary: "#a8a29e",
        },
      },
    },
    keys: [
      { kind: "secret", key: DEMO_SECRET_KEY },
      { kind: "embed", key: DEMO_EMBED_KEY },
    ],
    tags: [
      { ref: "editor", name: "Editor" },
      { ref: "sync", name: "Sync" },
      { ref: "search", name: "Search" },
      { ref: "collaboration", name: "Collaboration" },
      { ref: "performance", name: "Performance" },
      { ref: "accessibility", name: "Accessibility" },
      { ref: "export", name: "Import & export" },
      { ref: "security", name: "Security" },
    ],
    tiers,
    boards: [
      {
        ref: "roadmap",
        kind: "roadmap",
        name: "Roadmap",
        slug: "roadmap",
        columns: [
          { ref: "c-open", name: "Suggestions", color: "#9ca3af", position: 0, is_votable: true, status: "open" },
          { ref: "c-planned", name: "Planned", color: "#3b82f6", position: 1, is_votable: true, status: "planned" },
          { ref: "c-progress", name: "In progress", color: "#f59e0b", position: 2, is_votable: true, status: "in_progress" },
          { ref: "c-done", name: "Done", color: "#10b981", position: 3, is_votable: false, status: "done" },
          { ref: "c-denied", name: "Declined", color: "#ef4444", position: 4, is_votable: false, status: "denied" },
        ],
      },
      {
        ref: "mobile",
        kind: "custom",
        name: "Mobile",
        slug: "mobile",
        columns: [
          { ref: "m-ideas", name: "Ideas", color: "#a78bfa", position: 0, is_votable: true },
          { ref: "m-next", name: "Next up", color: "#60a5fa", position: 1, is_votable: true },
          { ref: "m-shipped", name: "Shipped", color: "#34d399", position: 2, is_votable: false },
        ],
      },
      {
        ref: "integrations",
        kind: "custom",
        name: "Integrations",
        slug: "integrations",
        columns: [
          { ref: "i-requested", name: "Requested", color: null, position: 0, is_votable: true },
          { ref: "i-building", name: "Building", color: "#f472b6", position: 1, is_votable: true },
          { ref: "i-live", name: "Live", color: "#22c55e", position: 2, is_votable: false },
        ],
      },
    ],
    voters: voters.map(strip),
    features: features.map(strip),
    votes,
    comments: commentList,
    likes,
    releases: releaseSeeds.map((release) => ({
      ref: release.ref,
      name: release.name,
      slug: release.slug,
      body: release.body,
      is_featured: release.featured ?? false,
      published_at: release.published,
      view_count: release.published ? 150 + release.features.length * 90 : 0,
      features: release.features.map(([feature, changelog_type]) => ({ feature, changelog_type })),
    })),
    messages,
    dismissals,
  };
}

/**
 * Serialises a snapshot with one line per list element: readable, and a change to the data
 * shows up as a small diff.
 */
export function formatSnapshot(doc: SnapshotInput): string {
  const parts = Object.entries(doc).map(([key, value]) => {
    const body = Array.isArray(value)
      ? value.length === 0
        ? "[]"
        : `[\n${value.map((item) => `    ${JSON.stringify(item)}`).join(",\n")}\n  ]`
      : JSON.stringify(value, null, 2).replaceAll("\n", "\n  ");
    return `  ${JSON.stringify(key)}: ${body}`;
  });
  return `{\n${parts.join(",\n")}\n}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = formatSnapshot(buildDemoSnapshot());
  if (process.argv.includes("--check")) {
    const current = readFileSync(DEMO_FILE, "utf8");
    if (current !== text) {
      console.error(`${DEMO_FILE} is stale: run npx tsx scripts/demo/generate-demo.ts`);
      process.exitCode = 1;
    }
  } else {
    writeFileSync(DEMO_FILE, text);
    console.log(`wrote ${DEMO_FILE}`);
  }
}
