/**
 * Release slugs derived from a name, one rule for the snapshot importer and the owner's release
 * routes (docs/contract/project-snapshot.md, "Document": `releases[].slug`;
 * docs/contract/owner-api-v3.md, "Routes": POST /releases, slug "default from name").
 */

/**
 * The slug of a release named `name` when none is given: lower case, runs of anything but ASCII
 * letters and digits as one dash, no dash at either end ("Version 1.4" -> "version-1-4");
 * "release" when nothing is left. Never throws; the length is the caller's to bound.
 */
export function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return slug === "" ? "release" : slug;
}
