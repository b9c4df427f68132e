/** IdentityObject and the body of the identity route (contract, "Taking part" rule 1). */
import { z } from "@hono/zod-openapi";

export const IdentityObject = z
  .object({
    voter_id: z.string().openapi({ description: "Stable for the life of the identity", example: "v_3q2Xo9mQ1bVd7nKp0sTz4A" }),
    kind: z.enum(["anonymous", "sso"]).openapi({ description: "anonymous or sso", example: "anonymous" }),
    anon_token: z.string().nullable().openapi({
      description: "Send as X-VF-Anon afterwards; null for an SSO identity (the SSO token is the identity)",
      example: "fb_anon_Zq8c1m2Yv0rW4tQk7LxH3nJ5pB9sD6fG2aE8uC1oR0",
    }),
    display_name: z
      .string()
      .openapi({ description: "Real name if a token carried one, else a generated handle", example: "Curious Otter 4821" }),
    banned: z.boolean().openapi({
      description: "true: comments and suggestions are refused with voter_banned; reading, voting and liking still work",
      example: false,
    }),
    voted_feature_ids: z
      .array(z.number().int())
      .openapi({ description: "Every feature the voter has a vote on, ascending", example: [41, 57] }),
  })
  .openapi("IdentityObject");

export const IdentityRequest = z
  .object({
    anon_token: z.string().min(1).max(500).optional().openapi({
      description: "Anonymous token to renew (same as sending it in X-VF-Anon)",
      example: "fb_anon_Zq8c1m2Yv0rW4tQk7LxH3nJ5pB9sD6fG2aE8uC1oR0",
    }),
    sso_token: z.string().min(1).max(8192).optional().openapi({
      description: "Voter SSO token (HS256 JWT with exp and sub) to exchange; outranks anon_token (same as X-VF-Token)",
      example: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIiwiZXhwIjoxOTAwMDAwMDAwfQ.c2lnbmF0dXJl",
    }),
  })
  .openapi("IdentityRequest");
