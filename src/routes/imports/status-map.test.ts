/** mapSourceStatus: the per-source status tables of imports-v3.md, "Sources", and status_map first. */
import { describe, expect, it } from "vitest";
import { mapSourceStatus } from "./status-map.ts";

describe("mapSourceStatus", () => {
  it("maps Canny's statuses by its table", () => {
    const got = ["open", "under review", "planned", "in progress", "complete", "closed"].map((s) => mapSourceStatus("canny", s, {}).status);
    expect(got).toEqual(["open", "open", "planned", "in_progress", "done", "denied"]);
  });

  it("maps Fider's names (and duplicate to merged)", () => {
    const got = ["open", "started", "completed", "declined", "planned", "duplicate"].map((s) => mapSourceStatus("fider", s, {}).status);
    expect(got).toEqual(["open", "in_progress", "done", "denied", "planned", "merged"]);
  });

  it("maps a CSV status value or a name as boards show it", () => {
    const got = ["in_progress", "In progress", "Complete", "Declined", "done", "Planned"].map((s) => mapSourceStatus("csv", s, {}).status);
    expect(got).toEqual(["in_progress", "in_progress", "done", "denied", "done", "planned"]);
  });

  it("lets status_map win, and answers open with known false for a name neither knows", () => {
    expect(mapSourceStatus("canny", "complete", { complete: "archived" })).toEqual({ status: "archived", known: true });
    expect(mapSourceStatus("canny", "Needs Triage", { "needs triage": "planned" })).toEqual({ status: "planned", known: true });
    expect(mapSourceStatus("fider", "someday", {})).toEqual({ status: "open", known: false });
    expect(mapSourceStatus("csv", null, {})).toEqual({ status: "open", known: true });
  });
});
