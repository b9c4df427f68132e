import { afterEach, describe, expect, it, vi } from "vitest";
import {
  CACHE_CHANNEL,
  CacheNamespace,
  createAppCaches,
  LocalCache,
  listenForCacheInvalidation,
  SeenLookupRevisions,
} from "./app-caches.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("LocalCache.remember", () => {
  it("loads once while fresh and shares a load that is under way", async () => {
    const cache = new LocalCache(5000);
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { n: loads };
    };
    const [a, b] = await Promise.all([cache.remember("k", load), cache.remember("k", load)]);
    expect(a).toBe(b);
    expect(await cache.remember("k", load)).toBe(a);
    expect(loads).toBe(1);
  });

  it("does not keep undefined (nothing negative is cached) nor what `keep` refuses", async () => {
    const cache = new LocalCache(5000);
    let loads = 0;
    await cache.remember("missing", async () => {
      loads++;
      return undefined;
    });
    await cache.remember("missing", async () => {
      loads++;
      return undefined;
    });
    await cache.remember(
      "small",
      async () => {
        loads++;
        return 3;
      },
      (n) => n > 10,
    );
    await cache.remember(
      "small",
      async () => {
        loads++;
        return 3;
      },
      (n) => n > 10,
    );
    expect(loads).toBe(4);
  });

  it("forgets an entry after the TTL", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const cache = new LocalCache(1000);
    let loads = 0;
    await cache.remember("k", async () => ++loads);
    vi.setSystemTime(Date.now() + 999);
    expect(await cache.remember("k", async () => ++loads)).toBe(1);
    vi.setSystemTime(Date.now() + 2);
    expect(await cache.remember("k", async () => ++loads)).toBe(2);
  });

  it("with a TTL of 0 loads every time", async () => {
    const cache = new LocalCache(0);
    let loads = 0;
    await cache.remember("k", async () => ++loads);
    await cache.remember("k", async () => ++loads);
    cache.set("x", 1);
    expect(cache.get("x")).toBeUndefined();
    expect(loads).toBe(2);
  });

  it("does not store a value whose load straddled a clear", async () => {
    const cache = new LocalCache(5000);
    let release!: () => void;
    const slow = cache.remember("k", () => new Promise<string>((resolve) => (release = () => resolve("old"))));
    cache.clear();
    release();
    expect(await slow).toBe("old");
    expect(await cache.remember("k", async () => "new")).toBe("new");
  });
});

const config = { PROJECT_CACHE_SECONDS: 5, READ_CACHE_SECONDS: 5, READ_CACHE_MB: 1 };
const answer = { body: "{}", etag: '"e"', contentType: "application/json" };

describe("app caches", () => {
  it("namespaces keep their keys apart over one store", async () => {
    const store = new LocalCache(5000);
    const keys = new CacheNamespace<[string], number>(store, "a");
    const others = new CacheNamespace<[string], number>(store, "b");
    expect(await keys.remember(["x"], async () => 1)).toBe(1);
    expect(await others.remember(["x"], async () => 2)).toBe(2);
    expect(keys.get(["x"])).toBe(1);
    keys.delete(["x"]);
    expect(keys.get(["x"])).toBeUndefined();
    expect(others.get(["x"])).toBe(2);
  });

  it("clearLookups keeps cached answers; clearAll drops both; two apps share nothing", () => {
    const caches = createAppCaches(config);
    const other = createAppCaches(config);
    caches.tags.set([1], [{ id: 1, name: "t" }]);
    other.tags.set([1], [{ id: 2, name: "u" }]);
    caches.responses!.set("r", answer);
    caches.clearLookups();
    expect(caches.tags.get([1])).toBeUndefined();
    expect(caches.responses!.get("r")).toEqual(answer);
    expect(other.tags.get([1])).toEqual([{ id: 2, name: "u" }]);
    caches.clearAll();
    expect(caches.responses!.get("r")).toBeUndefined();
  });

  it("READ_CACHE_SECONDS=0 leaves no answer cache", () => {
    expect(createAppCaches({ ...config, READ_CACHE_SECONDS: 0 }).responses).toBeNull();
  });

  it("a notification on the channel clears the app's caches", async () => {
    const caches = createAppCaches(config);
    let notify: (() => void) | undefined;
    let channel = "";
    const stop = await listenForCacheInvalidation(async (name, onNotify) => {
      channel = name;
      notify = onNotify;
      return async () => {};
    }, caches);
    caches.tags.set([1], []);
    caches.responses!.set("r", answer);
    notify!();
    expect(channel).toBe(CACHE_CHANNEL);
    expect(caches.tags.get([1])).toBeUndefined();
    expect(caches.responses!.get("r")).toBeUndefined();
    await stop();
  });

  it("clear() forgets every entry however few or many, expired ones too (a clock moved back cannot revive them)", () => {
    for (const count of [3, 5_000]) {
      const cache = new LocalCache(60_000);
      for (let i = 0; i < count; i++) cache.set(`k${i}`, i);
      cache.clear();
      expect(cache.get("k0")).toBeUndefined();
      expect(cache.get(`k${count - 1}`)).toBeUndefined();
    }
    const start = Date.now();
    const clock = vi.spyOn(Date, "now").mockReturnValue(start);
    try {
      const cache = new LocalCache(1_000);
      cache.set("old", 1);
      clock.mockReturnValue(start + 2_000);
      cache.clear();
      clock.mockReturnValue(start + 500);
      expect(cache.get("old")).toBeUndefined();
    } finally {
      clock.mockRestore();
    }
  });
});

describe("SeenLookupRevisions", () => {
  it("records an app's own owner write as seen only when it replaced the revision seen here", () => {
    const seen = new SeenLookupRevisions();
    expect(seen.changed(1, "a")).toBe(true);
    // Own write a -> b: the app cleared its lookups after the commit; b needs no second clear.
    seen.advanced(1, "a", "b");
    expect(seen.changed(1, "b")).toBe(false);
    // Another instance's change c came between: the own write c -> d must not hide it.
    seen.advanced(1, "c", "d");
    expect(seen.changed(1, "d")).toBe(true);
    // A project never seen here, or a write that found no revision, records nothing.
    seen.advanced(2, "x", "y");
    expect(seen.changed(2, "y")).toBe(true);
    seen.advanced(1, null, "e");
    expect(seen.changed(1, "e")).toBe(true);
  });
});
