/**
 * The service's public address, for the links it sends and serves (engagement-api-v3.md, "Common
 * rules"): PUBLIC_BASE_URL without its trailing slash, else http://{HOST}:{PORT} (an IPv6 host in
 * brackets). Never the request's Host header: feeds are cached for every reader and emails leave
 * the request behind, so a forged Host must not reach anyone's links.
 */
export function publicBaseUrl(config: { PUBLIC_BASE_URL?: string | undefined; HOST: string; PORT: number }): string {
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, "");
  const host = config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}`;
}
