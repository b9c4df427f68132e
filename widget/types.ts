/**
 * The shapes of the public API's answers the widget reads (docs/contract/feedback-board-api-v3.md,
 * "Resources and their fields"; docs/contract/engagement-api-v3.md for notifications and similar
 * features). Only the fields the widget draws are listed.
 */

export interface Tag {
  id: number;
  name: string;
}

export interface Column {
  id: number;
  name: string;
  color: string | null;
  is_votable: boolean;
}

export interface BoardEntry {
  id: number;
  kind: "roadmap" | "custom";
  name: string;
  slug: string;
  columns: Column[];
}

export interface ThemeColors {
  accent: string;
  background: string;
  border: string;
  card_background: string;
  text: string;
  text_secondary: string;
}

export interface BoardDocument {
  boards: BoardEntry[];
  tags: Tag[];
  capabilities: { can_comment: boolean; can_like: boolean; can_suggest: boolean; can_vote: boolean };
  project: { name: string; slug: string; description: string | null };
  theme: { light: ThemeColors; dark: ThemeColors; font: string; radius: string };
}

export interface Feature {
  id: number;
  heading: string;
  description: string | null;
  status: string;
  board: { id: number; kind: string; name: string; slug: string };
  column: { id: number; name: string; color: string | null };
  comment_count: number | null;
  vote_count: number | null;
  has_voted: boolean;
  is_approved: boolean;
  developer_response: string | null;
  response_is_denial: boolean;
  release: { id: number; name: string } | null;
  tags: Tag[];
}

export interface Comment {
  id: number;
  feature_id: number;
  parent_id: number | null;
  content: string;
  author_name: string;
  author_role: string | null;
  created_at: string;
  like_count: number;
  has_liked: boolean;
  is_own: boolean;
  replies: Comment[];
}

export interface Release {
  id: number;
  name: string;
  body_html: string | null;
  is_featured: boolean;
  published_at: string | null;
}

export interface Identity {
  voter_id: string;
  kind: "anonymous" | "sso";
  anon_token: string | null;
  banned: boolean;
}

export interface Notification {
  id: string;
  type: string;
  feature: { id: number; heading: string };
  read: boolean;
  created_at: string;
}

export interface Meta {
  page: number;
  per_page: number;
  total: number;
  total_pages: number;
  has_more: boolean;
}

export interface VoteResult {
  feature_id: number;
  has_voted: boolean;
  vote_count: number | null;
}
