import { afterEach, describe, expect, it, vi } from "vitest";
import { invalidateLocalCaches, listenForCacheInvalidation, LocalCache, projectCache, CACHE_CHANNEL } from "./project-cache.ts";

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

describe("invalidation", () => {
  it("invalidateLocalCaches clears every cache of the process", async () => {
    const first = projectCache({ db: {}, config: { PROJECT_CACHE_SECONDS: 5 } });
    const second = projectCache({ db: {}, config: { PROJECT_CACHE_SECONDS: 5 } });
    first.set("a", 1);
    second.set("b", 2);
    invalidateLocalCaches();
    expect(first.get("a")).toBeUndefined();
    expect(second.get("b")).toBeUndefined();
  });

  it("one cache per database handle", () => {
    const db = {};
    expect(projectCache({ db, config: { PROJECT_CACHE_SECONDS: 5 } })).toBe(projectCache({ db, config: { PROJECT_CACHE_SECONDS: 5 } }));
  });

  it("a notification on the channel clears the caches", async () => {
    const cache = projectCache({ db: {}, config: { PROJECT_CACHE_SECONDS: 5 } });
    let notify: (() => void) | undefined;
    let channel = "";
    const stop = await listenForCacheInvalidation(async (name, onNotify) => {
      channel = name;
      notify = onNotify;
      return async () => {};
    });
    cache.set("k", 1);
    notify!();
    expect(channel).toBe(CACHE_CHANNEL);
    expect(cache.get("k")).toBeUndefined();
    await stop();
  });
});
